// The scheduler's trials: proposals on the planner, builds in the builder processes, the claims
// that keep two trials from measuring one config, and what happens to a trial when its worker
// fails it or its job ends. Commits are scheduler_commits.cc's.
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
  if (message.size() > kMaxMessage) {
    message.resize(kMaxMessage);
    message += " ...";
  }
  return Measurement::Failed(kind, std::move(message));
}

}  // namespace

void Scheduler::ProposeLocked(JobRuntime& job, int n, std::set<const KernelTemplate*> unusable) {
  job.proposing += n;
  planner_->Post([this, job = jobs_.Shared(job.row.id), n, unusable = std::move(unusable)] {
    Plan(job, n, unusable);
  });
}

void Scheduler::Plan(const JobPtr& job, int n, const std::set<const KernelTemplate*>& unusable) {
  SearchJob& search = *job->driver->AsSearch();
  std::vector<Candidate> candidates = search.Propose(n, unusable);
  std::lock_guard lock(mu_);
  job->proposing -= n;
  search.Proposed(n, static_cast<int>(candidates.size()));
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
  if (job.driver->AsSearch()->TakeSharedRecord(
          ClaimKey(job, *candidate.tpl, ConfigToString(candidate.config)))) {
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
  task.task.set_func_name(DefaultFunctionName(job.driver->AsSearch()->workload()));
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

void Scheduler::ShareRecordLocked(const JobRuntime& source, const Trial& trial,
                                  const TrialOutcome& outcome) {
  for (JobRuntime* other : jobs_.All()) {
    SearchJob* search = other->driver->AsSearch();
    if (other == &source || search == nullptr || IsTerminal(other->row.state) ||
        other->row.spec.workload != source.row.spec.workload ||
        other->row.spec.target != source.row.spec.target ||
        TimingToJson(other->row.spec.timing) != TimingToJson(source.row.spec.timing) ||
        !search->Searches(trial.tpl)) {
      continue;
    }
    search->NoteSharedRecord(trial.claim);
    planner_->Post([job = jobs_.Shared(other->row.id), tpl = trial.tpl, outcome] {
      job->driver->AsSearch()->Observe(tpl, outcome);
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
  if (trial.unconfirmed) {
    // No second opinion came: the first worker's answer is the verdict.
    Logger("daemon")->warn(
        "trial {} of job {}: no other worker confirmed {} on {}; the last "
        "attempt: {}",
        trial.id, job.row.id, ErrorKindName(trial.unconfirmed->measurement.error),
        trial.unconfirmed->worker, reason);
    PendingCommit verdict = *trial.unconfirmed;
    trial.unconfirmed.reset();
    CommitWithFollowersLocked(trial, std::move(verdict));
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

void Scheduler::CommitWithFollowersLocked(Trial& leader, PendingCommit verdict) {
  for (uint64_t id : trials_.Unlead(leader)) {
    Trial& follower = *trials_.Find(id);
    Logger("daemon")->debug("trial {} ({} {}) shares the verdict of trial {}: same artifact {}", id,
                            follower.tpl->name, follower.config_text, leader.id,
                            leader.artifact ? leader.artifact->hash() : "");
    trials_.Shared(follower, *jobs_.Find(follower.job_id));
    PendingCommit shared = verdict;
    shared.trial_id = id;
    shared.earlier.reset();  // a first worker's answer is recorded once, with its own trial
    CommitLocked(std::move(shared));
  }
  CommitLocked(std::move(verdict));
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
