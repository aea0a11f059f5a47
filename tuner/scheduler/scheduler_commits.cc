// The scheduler's log writer: trials that reach it while it is busy are committed together
// (record, counters and search state in one transaction), then counted in their jobs; a full
// disk pauses every job until a write succeeds again.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/version.h"
#include "tuner/scheduler/job_messages.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {

bool Scheduler::PostWriteLocked(std::function<void()> write) {
  open_group_.reset();
  return writer_->Post(std::move(write));
}

void Scheduler::CommitLocked(PendingCommit pending) {
  const Trial* trial = trials_.Find(pending.trial_id);
  TUNE_CHECK(trial != nullptr && trial->stage == TrialStage::kCommitting)
      << "trial " << pending.trial_id << " is not ready to commit";
  if (open_group_ == nullptr) {
    auto group = std::make_shared<CommitGroup>();
    if (!writer_->Post([this, group] { WriteTrials(group); })) {
      Logger("daemon")->warn("trial {} of job {} not recorded: the daemon is stopping", trial->id,
                             trial->job_id);
      return;
    }
    open_group_ = std::move(group);
  }
  open_group_->trials.emplace_back(jobs_.Shared(trial->job_id), std::move(pending));
}

void Scheduler::WriteTrials(const std::shared_ptr<CommitGroup>& group) {
  std::vector<PreparedTrial> prepared;
  // One per prepared trial, each preceded by the first worker's answer it confirms or
  // contradicts, if any (PendingCommit::earlier); `at` holds each prepared trial's index.
  std::vector<TuningLog::TrialCommit> commits;
  std::vector<size_t> at;
  {
    std::lock_guard lock(mu_);
    if (open_group_ == group) {
      open_group_.reset();  // what reaches committing from now on goes to the next group
    }
    // Each job's best and run without improvement as they stand after the group's trials so far.
    std::map<const JobRuntime*, std::pair<std::optional<double>, int>> running;
    for (auto& [job, pending] : group->trials) {
      const Trial* trial = trials_.Find(pending.trial_id);
      if (trial == nullptr || trial->stage != TrialStage::kCommitting) {
        continue;
      }
      const SearchJob& search = *job->driver->AsSearch();
      auto [it, fresh] = running.try_emplace(
          job.get(), search.best() ? std::optional<double>(search.best()->secs) : std::nullopt,
          search.since_improvement());
      auto& [best_secs, since_improvement] = it->second;
      PreparedTrial& p = prepared.emplace_back();
      p.job = job;
      p.tpl = trial->tpl;
      p.final = trial->final;
      const bool ok = pending.measurement.ok();
      const double secs = LearnedSecs(pending.measurement, job->row.spec.timing.timeout_ms);
      p.outcome = TrialOutcome{trial->config, pending.measurement.error, secs};
      TuningLog::TrialCommit commit;
      commit.progress.counts = !p.final;
      commit.progress.since_improvement = since_improvement;
      if (!p.final && IsVerdict(p.outcome.error)) {
        p.improved = ok && (!best_secs || secs < *best_secs);
        if (p.improved) {
          best_secs = secs;
        }
        since_improvement = p.improved ? 0 : since_improvement + 1;
        commit.progress.since_improvement = since_improvement;
      }
      Record& record = commit.record;
      record.artifact_hash = trial->artifact ? trial->artifact->hash() : "";
      record.final = p.final;
      record.workload = job->row.spec.workload;
      record.target = job->row.spec.target;
      record.device_key = pending.device_key;
      record.template_name = std::string(p.tpl->name);
      record.template_version = p.tpl->version;
      record.config = trial->config_text;
      record.measurement = pending.measurement;
      record.timing = job->row.spec.timing;
      record.tune_version = kTuneVersion;
      record.llvm_version = kLlvmVersion;
      record.job_id = job->row.id;
      record.worker = pending.worker;
      if (pending.earlier) {
        // The first worker's answer that this one confirms or contradicts: recorded beside it
        // (before it, so that it reads first), as no trial of the budget.
        TuningLog::TrialCommit earlier;
        earlier.record = record;
        earlier.record.measurement = pending.earlier->measurement;
        earlier.record.worker = pending.earlier->worker;
        earlier.record.device_key = pending.earlier->device_key;
        earlier.progress.counts = false;
        commits.push_back(std::move(earlier));
      }
      at.push_back(commits.size());
      commits.push_back(std::move(commit));
      p.pending = std::move(pending);
    }
  }
  if (prepared.empty()) {
    return;
  }
  // The searches learn of the verdicts, and forget the trials given up; each job's search state,
  // outstanding proposals included, is saved once, after its last trial of the group, and
  // written in the same transaction.
  for (const PreparedTrial& p : prepared) {
    if (!p.final) {
      SearchJob& search = *p.job->driver->AsSearch();
      if (IsVerdict(p.outcome.error)) {
        search.Observe(p.tpl, p.outcome);
      } else {
        search.GiveUp(p.tpl, p.outcome.config);
      }
    }
  }
  std::set<const JobRuntime*> saved;
  for (size_t i = prepared.size(); i-- > 0;) {
    if (!prepared[i].final && saved.insert(prepared[i].job.get()).second) {
      commits[at[i]].progress.search_state = prepared[i].job->driver->AsSearch()->SaveState();
    }
  }
  const Clock::time_point write_started = Clock::now();
  std::vector<absl::StatusOr<Record>> results = CommitWhenSpaceAllows(std::move(commits));
  metrics_.ObserveDbWrite(std::chrono::duration<double>(Clock::now() - write_started).count());
  NoteQuarantineOf(results);
  std::vector<absl::StatusOr<Record>> committed;
  committed.reserve(at.size());
  for (size_t index : at) {
    committed.push_back(std::move(results[index]));
  }

  std::lock_guard lock(mu_);
  std::set<JobRuntime*> touched;
  for (size_t i = 0; i < prepared.size(); ++i) {
    CountTrialLocked(*prepared[i].job, prepared[i], committed[i]);
    touched.insert(prepared[i].job.get());
  }
  for (JobRuntime* job : touched) {
    PruneLocked(*job);
  }
  PumpLocked();
}

void Scheduler::CountTrialLocked(JobRuntime& job, const PreparedTrial& p,
                                 const absl::StatusOr<Record>& committed) {
  Trial& trial = *trials_.Find(p.pending.trial_id);
  const PendingCommit& pending = p.pending;
  const KernelTemplate* tpl = p.tpl;
  const TrialOutcome& outcome = p.outcome;
  if (!committed.ok() && committed.status().code() == absl::StatusCode::kResourceExhausted) {
    // The daemon stops while the disk is full: the trial is not recorded, and the job, still
    // queued in the log, proposes its config again when it resumes.
    Logger("daemon")->warn("job {}: trial {} not recorded, the daemon stops: {}", job.row.id,
                           trial.id, committed.status().message());
    const std::string claim = trials_.Erase(trial.id, job, nullptr);
    ReleaseClaimLocked(claim, false);
    return;
  }
  const ErrorKind kind = pending.measurement.error;
  if (committed.ok() && p.final && !pending.worker.empty()) {
    job.finalist_workers[StrCat(tpl->name, " ", trial.config_text)].insert(pending.worker);
  }
  if (committed.ok() && p.final) {
    // A finalist's re-measurement: no trial of the budget; the verdict comes once all are in.
    Logger("daemon")->info(
        "job {}: finalist {} {} re-measured: {}", job.row.id, tpl->name, trial.config_text,
        kind == ErrorKind::kNone ? fmt::format("{:.4g} s", outcome.secs)
                                 : StrCat(ErrorKindName(kind), ": ", pending.measurement.message));
    const std::string claim = trials_.Erase(trial.id, job, nullptr);
    ReleaseClaimLocked(claim, true);
    PushEventLocked(job);
  } else if (committed.ok() && !IsVerdict(kind)) {
    GiveUpLocked(job, trial, pending.measurement.message);
  } else if (committed.ok()) {
    metrics_.CountTrial(kind);
    SearchJob& search = *job.driver->AsSearch();
    ++job.row.trials_done;
    if (kind != ErrorKind::kNone) {
      ++job.row.trials_failed;
      job.last_error = StrCat(ErrorKindName(kind), ": ", pending.measurement.message);
    }
    search.Counted(trial, outcome, p.improved, committed->uid);
    job.NoteCompleted(Clock::now());
    Logger("daemon")->info(
        "job {}: trial {}/{} {} {} {}: {}", job.row.id, job.row.trials_done, job.row.spec.trials,
        tpl->name, trial.config_text, pending.worker.empty() ? "(daemon)" : pending.worker,
        kind == ErrorKind::kNone
            ? fmt::format("{:.3f} GFLOPS", search.workload().Flops() / outcome.secs / 1e9)
            : job.last_error);
    ShareRecordLocked(job, trial, outcome);
    OnTaskTrialLocked(job, trial, outcome, kind);
    const std::string claim = trials_.Erase(trial.id, job, nullptr);
    ReleaseClaimLocked(claim, true);
    PushEventLocked(job);
  } else {
    std::string why = StrCat("cannot record trial ", trial.id, " in ", log_->path(), ": ",
                             std::string(committed.status().message()));
    Logger("daemon")->error("job {}: {}", job.row.id, why);
    const std::string claim = trials_.Erase(trial.id, job, nullptr);
    ReleaseClaimLocked(claim, false);
    if (!IsTerminal(job.row.state)) {
      FinishLocked(job, JobState::kFailed, why);
    }
  }
}

void Scheduler::GiveUpLocked(JobRuntime& job, Trial& trial, const std::string& why) {
  // Recorded, but no verdict: no trial of the budget (the job proposes another config), and
  // nobody learns of it; other jobs waiting on its claim measure the config themselves.
  metrics_.CountTrial(ErrorKind::kWorkerLost);
  const int in_a_row = job.driver->AsSearch()->GaveUp(trial, why);
  Logger("daemon")->warn("job {}: trial {} ({} {}) given up, not counted in the budget: {}",
                         job.row.id, trial.id, trial.tpl->name, trial.config_text, why);
  const std::string claim = trials_.Erase(trial.id, job, nullptr);
  ReleaseClaimLocked(claim, false);
  if (in_a_row >= options_.max_given_up_in_a_row && !IsTerminal(job.row.state)) {
    FinishLocked(job, JobState::kFailed,
                 GaveUpInARow(in_a_row, options_.max_dispatch_attempts, why));
    return;
  }
  PushEventLocked(job);
}

std::vector<absl::StatusOr<Record>> Scheduler::CommitWhenSpaceAllows(
    std::vector<TuningLog::TrialCommit> trials) {
  const size_t n = trials.size();
  absl::StatusOr<std::vector<Record>> group = CommitGroupWhenSpaceAllows(trials);
  std::vector<absl::StatusOr<Record>> results;
  results.reserve(n);
  if (group.ok()) {
    for (Record& record : *group) {
      results.emplace_back(std::move(record));
    }
    return results;
  }
  if (n == 1 || group.status().code() == absl::StatusCode::kResourceExhausted) {
    results.assign(n, group.status());
    return results;
  }
  // One transaction per trial. Each counted trial carries its job's latest search state, so
  // that whichever of them is written last leaves the job resumable.
  std::map<int64_t, std::string> states;
  for (const TuningLog::TrialCommit& trial : trials) {
    if (trial.progress.counts && !trial.progress.search_state.empty()) {
      states[*trial.record.job_id] = trial.progress.search_state;
    }
  }
  for (TuningLog::TrialCommit& trial : trials) {
    if (trial.progress.counts) {
      trial.progress.search_state = states[*trial.record.job_id];
    }
    std::vector<TuningLog::TrialCommit> one;
    one.push_back(std::move(trial));
    absl::StatusOr<std::vector<Record>> committed = CommitGroupWhenSpaceAllows(one);
    if (committed.ok()) {
      results.emplace_back(std::move(committed->front()));
    } else {
      results.emplace_back(committed.status());
    }
  }
  return results;
}

absl::StatusOr<std::vector<Record>> Scheduler::CommitGroupWhenSpaceAllows(
    const std::vector<TuningLog::TrialCommit>& trials) {
  constexpr auto kFirstRetry = std::chrono::milliseconds(200);
  constexpr auto kLastRetry = std::chrono::seconds(5);
  auto retry = std::chrono::duration_cast<std::chrono::milliseconds>(kFirstRetry);
  while (true) {
    absl::StatusOr<std::vector<Record>> committed = log_->CommitTrials(trials);
    std::unique_lock lock(mu_);
    if (committed.ok() || committed.status().code() != absl::StatusCode::kResourceExhausted) {
      if (!storage_paused_.empty()) {
        Logger("daemon")->info("{} can be written again: jobs resume", log_->path());
        storage_paused_.clear();
        for (JobRuntime* job : jobs_.All()) {
          PushEventLocked(*job);
        }
      }
      return committed;
    }
    // Nothing of the trials was written (one transaction); they wait here, and every job with
    // them.
    if (storage_paused_.empty()) {
      storage_paused_ = StrCat("paused: the tuning log cannot be written (",
                               committed.status().message(), "); resumes when space returns");
      Logger("daemon")->error("{}", storage_paused_);
      for (JobRuntime* job : jobs_.All()) {
        PushEventLocked(*job);
      }
    }
    monitor_cv_.wait_for(lock, retry,
                         [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return shutting_down_; });
    if (shutting_down_) {
      return committed;
    }
    retry = std::min<std::chrono::milliseconds>(retry * 2, kLastRetry);
  }
}

}  // namespace tune::tuner
