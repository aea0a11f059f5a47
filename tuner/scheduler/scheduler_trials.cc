// The scheduler's trials: proposals on the planner, builds in the builder processes, commits on
// the log writer, and what happens to a trial when its worker fails it or its job ends.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/version.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {
namespace {

// Longest error message stored with a record.
constexpr size_t kMaxMessage = 4000;

Measurement Failure(ErrorKind kind, std::string message) {
  Measurement m;
  m.error = kind;
  if (message.size() > kMaxMessage) {
    message.resize(kMaxMessage);
    message += " ...";
  }
  m.message = std::move(message);
  return m;
}

}  // namespace

void Scheduler::ProposeLocked(JobRuntime& job, int n, std::set<const KernelTemplate*> unusable) {
  job.proposing += n;
  planner_->Post([this, job = jobs_.Shared(job.row.id), n, unusable = std::move(unusable)] {
    Plan(job, n, unusable);
  });
}

void Scheduler::Plan(const JobPtr& job, int n, const std::set<const KernelTemplate*>& unusable) {
  std::vector<Candidate> candidates;
  {
    std::lock_guard search_lock(job->search_mu);
    candidates = job->search->Propose(
        n, [&unusable](const KernelTemplate* tpl) { return !unusable.contains(tpl); });
  }
  std::lock_guard lock(mu_);
  job->proposing -= n;
  if (static_cast<int>(candidates.size()) < n) {
    // A strategy proposes fewer than asked only when its space is used up (for random search
    // over a large space: after a long run of draws found nothing new).
    job->exhausted = true;
  }
  if (IsTerminal(job->row.state)) {
    PruneLocked(*job);
    return;
  }
  if (shutting_down_) {
    return;
  }
  for (Candidate& candidate : candidates) {
    AdmitLocked(*job, std::move(candidate));
  }
  PumpLocked();
}

void Scheduler::AdmitLocked(JobRuntime& job, Candidate candidate) {
  if (!job.shared_records.empty() &&
      job.shared_records.erase(ClaimKey(job, *candidate.tpl, ConfigToString(candidate.config)))) {
    return;  // another job recorded it after this job's search proposed it; the search learns
  }
  Trial* trial = trials_.Create(job, candidate);
  if (trial == nullptr) {
    // Another job's trial measures this config: wait for it (ReleaseClaimLocked).
    std::string claim = ClaimKey(job, *candidate.tpl, ConfigToString(candidate.config));
    job.deferred.emplace_back(std::move(claim), std::move(candidate));
    return;
  }
  SubmitBuildLocked(job, *trial);
}

void Scheduler::SubmitBuildLocked(JobRuntime& job, const Trial& trial) {
  BuildTask task;
  task.trial_id = trial.id;
  task.priority = job.row.spec.priority;
  task.job_id = job.row.id;
  task.task.set_workload(job.row.spec.workload);
  task.task.set_target(job.row.spec.target);
  task.task.set_template_name(std::string(trial.tpl->name));
  task.task.set_template_version(trial.tpl->version);
  task.task.set_config(trial.config_text);
  task.task.set_func_name(DefaultFunctionName(job.workload));
  builders_->Submit(std::move(task));
}

void Scheduler::OnBuilt(uint64_t trial_id, BuildOutcome outcome) {
  std::lock_guard lock(mu_);
  Trial* trial = trials_.Find(trial_id);
  if (trial == nullptr || trial->stage != TrialStage::kBuilding) {
    return;  // dropped with its job
  }
  JobRuntime& job = *jobs_.Find(trial->job_id);
  if (!outcome.infra_error.empty()) {
    // Nothing can be built on this daemon: the job cannot go on, and no config is to blame.
    std::string why = StrCat("cannot build candidates: ", outcome.infra_error);
    Logger("daemon")->error("job {}: {}", job.row.id, why);
    FinishLocked(job, JobState::kFailed, why);
    PumpLocked();
    return;
  }
  if (outcome.from_store) {
    metrics_.CountStoredArtifact();
  } else {
    metrics_.ObserveBuild(outcome.build_secs);
  }
  if (!outcome.build_error.empty()) {
    Logger("daemon")->debug("trial {} ({} {}) did not build: {}", trial_id, trial->tpl->name,
                            trial->config_text, outcome.build_error);
    trials_.BuildFailed(*trial, job);
    CommitLocked(PendingCommit{trial_id, Failure(ErrorKind::kBuildError, outcome.build_error), "",
                               job.row.spec.device_key});
  } else if (std::optional<PendingCommit> recalled =
                 trials_.Recall(*trial, job, outcome.artifact, outcome.code)) {
    Logger("daemon")->debug("trial {} ({} {}) takes the measurement of artifact {} made earlier",
                            trial_id, trial->tpl->name, trial->config_text,
                            trial->artifact->hash());
    CommitLocked(*std::move(recalled));
  } else {
    trials_.Built(*trial, job, std::move(outcome.artifact), std::move(outcome.code));
  }
  PumpLocked();
}

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
  std::vector<TuningLog::TrialCommit> commits;
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
      auto [it, fresh] = running.try_emplace(
          job.get(), job->best ? std::optional<double>(job->best->secs) : std::nullopt,
          job->since_improvement);
      auto& [best_secs, since_improvement] = it->second;
      PreparedTrial& p = prepared.emplace_back();
      p.job = job;
      p.tpl = trial->tpl;
      p.final = trial->final;
      const bool ok = pending.measurement.ok();
      const double secs = LearnedSecs(pending.measurement, job->row.spec.timing.timeout_ms);
      p.outcome = TrialOutcome{trial->config, pending.measurement.error, secs};
      TuningLog::TrialCommit& commit = commits.emplace_back();
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
      std::lock_guard search_lock(p.job->search_mu);
      if (IsVerdict(p.outcome.error)) {
        p.job->search->Observe(p.tpl, p.outcome);
      } else {
        p.job->search->GiveUp(p.tpl, p.outcome.config);
      }
    }
  }
  std::set<const JobRuntime*> saved;
  for (size_t i = prepared.size(); i-- > 0;) {
    if (!prepared[i].final && saved.insert(prepared[i].job.get()).second) {
      std::lock_guard search_lock(prepared[i].job->search_mu);
      commits[i].progress.search_state = prepared[i].job->search->SaveState();
    }
  }
  const Clock::time_point write_started = Clock::now();
  std::vector<absl::StatusOr<Record>> committed = CommitWhenSpaceAllows(std::move(commits));
  metrics_.ObserveDbWrite(std::chrono::duration<double>(Clock::now() - write_started).count());

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
    job.given_up_in_a_row = 0;
    ++job.row.trials_done;
    if (kind != ErrorKind::kNone) {
      ++job.row.trials_failed;
      job.last_error = StrCat(ErrorKindName(kind), ": ", pending.measurement.message);
    }
    job.since_improvement = p.improved ? 0 : job.since_improvement + 1;
    if (p.improved) {
      job.best = BestSoFar{outcome.secs, job.workload.Flops() / outcome.secs / 1e9,
                           std::string(tpl->name), trial.config_text, committed->uid};
    }
    job.recent.push_back(Clock::now());
    if (job.recent.size() > kRecentTrials) {
      job.recent.pop_front();
    }
    Logger("daemon")->info(
        "job {}: trial {}/{} {} {} {}: {}", job.row.id, job.row.trials_done, job.row.spec.trials,
        tpl->name, trial.config_text, pending.worker.empty() ? "(daemon)" : pending.worker,
        kind == ErrorKind::kNone
            ? fmt::format("{:.3f} GFLOPS", job.workload.Flops() / outcome.secs / 1e9)
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
  job.given_up.push_back(StrCat(trial.tpl->name, " ", trial.config_text, ": ", why));
  ++job.given_up_in_a_row;
  Logger("daemon")->warn("job {}: trial {} ({} {}) given up, not counted in the budget: {}",
                         job.row.id, trial.id, trial.tpl->name, trial.config_text, why);
  const std::string claim = trials_.Erase(trial.id, job, nullptr);
  ReleaseClaimLocked(claim, false);
  if (job.given_up_in_a_row >= options_.max_given_up_in_a_row && !IsTerminal(job.row.state)) {
    FinishLocked(job, JobState::kFailed,
                 StrCat("gave up ", job.given_up_in_a_row,
                        " trials in a row: its workers were lost or could not measure them (",
                        options_.max_dispatch_attempts, " attempts each); the last: ", why));
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

void Scheduler::ShareRecordLocked(const JobRuntime& source, const Trial& trial,
                                  const TrialOutcome& outcome) {
  for (JobRuntime* other : jobs_.All()) {
    if (other == &source || IsTerminal(other->row.state) ||
        other->row.spec.workload != source.row.spec.workload ||
        other->row.spec.target != source.row.spec.target ||
        TimingToJson(other->row.spec.timing) != TimingToJson(source.row.spec.timing) ||
        std::find(other->templates.begin(), other->templates.end(), trial.tpl) ==
            other->templates.end()) {
      continue;
    }
    other->shared_records.insert(trial.claim);
    planner_->Post([job = jobs_.Shared(other->row.id), tpl = trial.tpl, outcome] {
      std::lock_guard search_lock(job->search_mu);
      job->search->Observe(tpl, outcome);
    });
  }
}

void Scheduler::ReleaseClaimLocked(const std::string& claim, bool recorded) {
  if (claim.empty()) {
    return;
  }
  for (JobRuntime* job : jobs_.ActiveInDispatchOrder()) {
    auto it = std::find_if(job->deferred.begin(), job->deferred.end(),
                           [&](const auto& entry) { return entry.first == claim; });
    if (it == job->deferred.end()) {
      continue;
    }
    Candidate candidate = std::move(it->second);
    job->deferred.erase(it);
    if (!recorded) {
      // The other trial was dropped: the config is this job's to measure (AdmitLocked defers
      // it again if yet another job claimed it first).
      AdmitLocked(*job, std::move(candidate));
    }
  }
}

void Scheduler::RequeueLocked(Trial& trial, WorkerEntry* worker, std::string_view worker_name,
                              std::string why) {
  JobRuntime& job = *jobs_.Find(trial.job_id);
  const std::string reason = StrCat(worker_name, ": ", why);
  if (!trials_.Requeue(trial, job, worker, worker_name, reason, options_.max_dispatch_attempts)) {
    return;
  }
  Logger("daemon")->warn("trial {} of job {} given up after {} attempts; the last: {}", trial.id,
                         job.row.id, trial.attempts, reason);
  RejoinFollowersLocked(trial);  // no verdict on the code: another trial of it is measured
  CommitLocked(PendingCommit{
      trial.id,
      Failure(ErrorKind::kWorkerLost,
              StrCat("given up after ", trial.attempts,
                     " attempts on workers that were lost or could not measure it; the last: ",
                     reason)),
      "", job.row.spec.device_key});
}

void Scheduler::DropTrialLocked(Trial& trial, std::string_view reason) {
  if (trial.stage == TrialStage::kCommitting) {
    return;  // its outcome is being recorded
  }
  JobRuntime& job = *jobs_.Find(trial.job_id);
  WorkerEntry* worker = nullptr;
  if (trial.stage == TrialStage::kInFlight) {
    worker = workers_.Find(trial.worker_id);
    if (worker != nullptr) {
      v1::DaemonMessage cancel;
      cancel.mutable_cancel()->set_trial_id(trial.id);
      cancel.mutable_cancel()->set_reason(std::string(reason));
      worker->channel->Send(std::move(cancel));
    }
  }
  RejoinFollowersLocked(trial);
  const std::string claim = trials_.Erase(trial.id, job, worker);
  ReleaseClaimLocked(claim, false);
}

void Scheduler::RejoinFollowersLocked(Trial& trial) {
  for (uint64_t id : trials_.Unlead(trial)) {
    Trial& follower = *trials_.Find(id);
    trials_.Rejoin(follower, *jobs_.Find(follower.job_id));
  }
}

}  // namespace tune::tuner
