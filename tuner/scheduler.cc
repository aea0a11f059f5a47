// The scheduler's loop: proposing, building, dispatching, committing and finishing jobs.
#include "tuner/scheduler.h"

#include <algorithm>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/version.h"
#include "proto/convert.h"
#include "tuner/proto_convert.h"

namespace tune::tuner {
namespace {

// Completion times kept for the ETA.
constexpr size_t kRecentTrials = 16;
// Events kept per job for watchers that fall behind.
constexpr size_t kKeptEvents = 256;
// Longest error message stored with a record.
constexpr size_t kMaxMessage = 4000;

std::string ClaimKey(const JobRuntime& job, const KernelTemplate& tpl, std::string_view config) {
  return StrCat(job.row.spec.workload, "|", job.row.spec.target, "|", tpl.name, "|", tpl.version,
                "|", config);
}

std::string Truncate(std::string text) {
  if (text.size() > kMaxMessage) {
    text.resize(kMaxMessage);
    text += " ...";
  }
  return text;
}

// Artifact.needed_libs must name preloaded libraries; runtime libraries the shared object
// depends on anyway (libgomp) are resolved by the dynamic loader and are left out.
std::vector<std::string> ExternalLibs(const Artifact& artifact, const Target& target) {
  std::vector<std::string> out;
  for (const std::string& lib : artifact.needed_libs) {
    for (const std::string& wanted : target.libs) {
      if (lib == wanted || lib.starts_with(StrCat("lib", wanted, ".so"))) {
        out.push_back(lib);
      }
    }
  }
  return out;
}

std::shared_ptr<const v1::Artifact> ToProto(const Artifact& artifact, const Target& target) {
  auto out = std::make_shared<v1::Artifact>();
  for (std::string& lib : ExternalLibs(artifact, target)) {
    out->add_needed_libs(std::move(lib));
  }
  out->set_hash(artifact.hash);
  out->set_entry_symbol(artifact.entry_symbol);
  out->set_template_name(artifact.template_name);
  out->set_config(artifact.config);
  out->set_format(ArtifactFormatToProto(artifact.format));
  out->set_code_bytes(static_cast<int64_t>(artifact.code.size()));
  return out;
}

Measurement Failure(ErrorKind kind, std::string message) {
  Measurement m;
  m.error = kind;
  m.message = Truncate(std::move(message));
  return m;
}

}  // namespace

Scheduler::Scheduler(TuningLog* log, SchedulerOptions options)
    : log_(log), options_(std::move(options)) {}

Scheduler::~Scheduler() { Shutdown(); }

absl::Status Scheduler::Start() {
  auto logger = Logger("daemon");
  ASSIGN_OR_RETURN(std::vector<Job> active, log_->ActiveJobs());
  int resumed = 0;
  for (Job& row : active) {
    if (row.state == JobState::kRunning) {
      RETURN_IF_ERROR(log_->UpdateJobState(row.id, JobState::kQueued));
      row.state = JobState::kQueued;
    }
    absl::StatusOr<std::unique_ptr<JobRuntime>> runtime = LoadRuntime(row);
    if (!runtime.ok()) {
      std::string why = StrCat("cannot resume: ", std::string(runtime.status().message()));
      logger->error("job {}: {}", row.id, why);
      RETURN_IF_ERROR(log_->UpdateJobState(row.id, JobState::kFailed, why));
      continue;
    }
    std::lock_guard lock(mu_);
    jobs_[row.id] = std::move(*runtime);
    ++resumed;
  }
  if (resumed > 0) {
    logger->info("resuming {} queued or running job(s) from {}", resumed, log_->path());
  }
  pool_ = std::make_unique<BuildPool>(
      options_.build_threads,
      [this](uint64_t id, absl::StatusOr<Artifact> artifact) { OnBuilt(id, std::move(artifact)); });
  monitor_ = std::thread([this] { MonitorLoop(); });
  std::lock_guard lock(mu_);
  PumpLocked();
  return absl::OkStatus();
}

void Scheduler::StopAcceptingWork() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
}

void Scheduler::BeginShutdown() {
  std::lock_guard lock(mu_);
  if (streams_closed_) {
    return;
  }
  shutting_down_ = true;
  streams_closed_ = true;
  for (auto& [id, worker] : workers_) {
    worker->channel->Close();
  }
  events_cv_.notify_all();
  monitor_cv_.notify_all();
}

void Scheduler::Shutdown() {
  BeginShutdown();
  if (stopped_) {
    return;
  }
  stopped_ = true;
  if (monitor_.joinable()) {
    monitor_.join();
  }
  if (pool_) {
    pool_->Stop();
  }
  std::lock_guard lock(mu_);
  for (auto& [id, job] : jobs_) {
    if (job->row.state != JobState::kRunning) {
      continue;
    }
    // The next daemon resumes it from the log.
    if (absl::Status s = log_->UpdateJobState(id, JobState::kQueued); !s.ok()) {
      Logger("daemon")->warn("job {}: {}", id, s.message());
    }
  }
}

void Scheduler::PumpLocked() {
  if (shutting_down_) {
    return;
  }
  std::map<std::string, int> capacity;  // live workers' slots per device key
  for (const auto& [id, worker] : workers_) {
    capacity[worker->reg.device_key()] += worker->capacity;
  }
  // Artifacts that may still be built or wait for a worker, per device key.
  std::map<std::string, int> pipeline = capacity;
  // The first job on a device key that still wants to propose: later jobs wait for it.
  std::map<std::string, const JobRuntime*> blocker;

  std::vector<JobRuntime*> order;
  for (auto& [id, job] : jobs_) {
    if (!IsTerminal(job->row.state)) {
      order.push_back(job.get());
    }
  }
  std::stable_sort(order.begin(), order.end(), [](const JobRuntime* a, const JobRuntime* b) {
    return a->row.spec.priority > b->row.spec.priority;  // ties keep id order (FIFO)
  });

  for (JobRuntime* job : order) {
    const std::string& key = job->row.spec.device_key;
    const bool no_worker = capacity[key] == 0;
    auto blocked_by = blocker.find(key);
    const bool blocked = blocked_by != blocker.end();
    if (job->WantsMore() && !no_worker && !blocked) {
      int room = pipeline[key] - job->building - static_cast<int>(job->ready.size());
      int n = std::min(room, job->row.spec.trials - job->Allocated());
      if (n > 0) {
        ProposeLocked(*job, n);
      }
    }
    pipeline[key] -= job->building + static_cast<int>(job->ready.size());
    if (job->WantsMore() && !blocked) {
      blocker[key] = job;
    }

    if (!job->WantsMore() && job->Outstanding() == 0) {
      std::string why;
      if (job->row.trials_done < job->row.spec.trials) {
        why = job->EarlyStopped()
                  ? StrCat("early stopping: ", job->since_improvement,
                           " trials in a row without improvement")
                  : StrCat("search space exhausted after ", job->row.trials_done, " trials");
      }
      FinishLocked(*job, JobState::kDone, why);
      continue;
    }
    const bool active =
        job->in_flight + job->committing > 0 || (!no_worker && job->Outstanding() > 0);
    if (active) {
      job->waiting.clear();
      if (job->row.state == JobState::kQueued) {
        SetStateLocked(*job, JobState::kRunning);
      }
      continue;
    }
    std::string waiting;
    if (no_worker) {
      waiting = StrCat("waiting for a worker with device key ", key, " (none connected)");
    } else if (blocked) {
      waiting = StrCat("waiting for job ", blocked_by->second->row.id, " (priority ",
                       blocked_by->second->row.spec.priority, ") on ", key);
    } else {
      waiting = StrCat("waiting for a free worker with device key ", key);
    }
    if (waiting != job->waiting) {
      job->waiting = waiting;
      if (job->row.state == JobState::kRunning) {
        SetStateLocked(*job, JobState::kQueued);
      } else {
        PushEventLocked(*job);
      }
    }
  }
  DispatchLocked();
}

void Scheduler::ProposeLocked(JobRuntime& job, int n) {
  int got = 0;
  for (int round = 0; round < 8 && got < n; ++round) {
    std::vector<Candidate> candidates = job.search->Propose(n - got);
    if (candidates.empty()) {
      // A strategy proposes nothing only when its space is used up (for random search over a
      // large space: after a long run of draws found nothing new).
      job.exhausted = true;
      return;
    }
    for (Candidate& c : candidates) {
      std::string text = ConfigToString(c.config);
      if (!claimed_.insert(ClaimKey(job, *c.tpl, text)).second) {
        continue;  // another job has it
      }
      Trial trial;
      trial.id = next_trial_id_++;
      trial.job_id = job.row.id;
      trial.tpl = c.tpl;
      trial.config = std::move(c.config);
      trial.config_text = std::move(text);
      pool_->Submit(BuildTask{trial.id, job.row.spec.priority, job.row.id, job.compiler,
                              job.workload, trial.tpl, trial.config,
                              DefaultFunctionName(job.workload)});
      ++job.building;
      trials_.emplace(trial.id, std::move(trial));
      ++got;
    }
  }
}

void Scheduler::DispatchLocked() {
  std::vector<JobRuntime*> order;
  for (auto& [id, job] : jobs_) {
    if (!IsTerminal(job->row.state) && !job->ready.empty()) {
      order.push_back(job.get());
    }
  }
  if (order.empty()) {
    return;
  }
  std::stable_sort(order.begin(), order.end(), [](const JobRuntime* a, const JobRuntime* b) {
    return a->row.spec.priority > b->row.spec.priority;
  });
  // The least loaded worker first, so that trials spread over every worker.
  std::vector<WorkerEntry*> workers;
  for (auto& [id, worker] : workers_) {
    workers.push_back(worker.get());
  }
  std::stable_sort(workers.begin(), workers.end(), [](const WorkerEntry* a, const WorkerEntry* b) {
    if (a->in_flight.size() != b->in_flight.size()) {
      return a->in_flight.size() < b->in_flight.size();
    }
    return a->trials_done < b->trials_done;
  });
  // One trial per worker per round, so that the load spreads over the workers.
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto w = workers.begin(); w != workers.end();) {
      WorkerEntry& worker = **w;
      JobRuntime* job = nullptr;
      if (static_cast<int>(worker.in_flight.size()) < worker.capacity) {
        for (JobRuntime* candidate : order) {
          if (!candidate->ready.empty() &&
              candidate->row.spec.device_key == worker.reg.device_key()) {
            job = candidate;
            break;
          }
        }
      }
      if (job == nullptr) {
        ++w;
        continue;
      }
      uint64_t id = job->ready.front();
      job->ready.pop_front();
      if (!SendTrialLocked(worker, trials_.at(id))) {
        job->ready.push_front(id);
        w = workers.erase(w);  // its stream is closing; RemoveWorker follows
        continue;
      }
      progress = true;
      ++w;
    }
  }
}

bool Scheduler::SendTrialLocked(WorkerEntry& worker, Trial& trial) {
  JobRuntime& job = *jobs_.at(trial.job_id);
  v1::DaemonMessage message;
  v1::MeasureRequest* request = message.mutable_request();
  request->set_trial_id(trial.id);
  request->set_workload(job.row.spec.workload);
  request->set_target(job.row.spec.target);
  *request->mutable_artifact() = *trial.artifact;
  *request->mutable_timing() = TimingOptionsToProto(job.row.spec.timing);
  if (!worker.channel->Send(std::move(message))) {
    return false;
  }
  trial.stage = TrialStage::kInFlight;
  trial.worker_id = worker.id;
  trial.dispatched_at = Clock::now();
  trial.missed_heartbeats = 0;
  ++trial.attempts;
  worker.in_flight.insert(trial.id);
  ++job.in_flight;
  Logger("daemon")->debug("trial {} of job {} -> {} ({} {})", trial.id, job.row.id,
                          worker.reg.name(), trial.tpl->name, trial.config_text);
  return true;
}

void Scheduler::OnBuilt(uint64_t trial_id, absl::StatusOr<Artifact> artifact) {
  Commits commits;
  {
    std::lock_guard lock(mu_);
    auto it = trials_.find(trial_id);
    if (it == trials_.end() || it->second.stage != TrialStage::kBuilding) {
      return;  // dropped
    }
    Trial& trial = it->second;
    JobRuntime& job = *jobs_.at(trial.job_id);
    --job.building;
    if (!artifact.ok()) {
      Logger("daemon")->debug("trial {} ({} {}) did not build: {}", trial_id, trial.tpl->name,
                              trial.config_text, artifact.status());
      trial.stage = TrialStage::kCommitting;
      ++job.committing;
      commits.push_back(PendingCommit{
          trial_id, Failure(ErrorKind::kBuildError, std::string(artifact.status().message())), "",
          job.row.spec.device_key});
    } else {
      trial.artifact = ToProto(*artifact, job.target);
      trial.code = std::make_shared<const v1::ArtifactCode>(
          ArtifactCodeToProto(artifact->hash, artifact->format, std::move(artifact->code)));
      trial.stage = TrialStage::kReady;
      job.ready.push_back(trial_id);
    }
    PumpLocked();
  }
  CommitAll(std::move(commits));
}

void Scheduler::CommitAll(Commits commits) {
  for (const PendingCommit& pending : commits) {
    Commit(pending);
  }
}

void Scheduler::Commit(const PendingCommit& pending) {
  std::lock_guard commit_lock(commit_mu_);
  Record record;
  JobProgress progress;
  bool improved = false;
  int since = 0;
  double secs = 0;
  {
    std::lock_guard lock(mu_);
    auto it = trials_.find(pending.trial_id);
    if (it == trials_.end() || it->second.stage != TrialStage::kCommitting) {
      return;
    }
    const Trial& trial = it->second;
    JobRuntime& job = *jobs_.at(trial.job_id);
    const bool ok = pending.measurement.ok();
    secs = ok ? pending.measurement.MedianSecs() : 0;
    if (job.search) {
      job.search->Observe(trial.tpl, TrialOutcome{trial.config, ok, secs});
    }
    improved = ok && (!job.best || secs < job.best->secs);
    since = improved ? 0 : job.since_improvement + 1;
    progress = JobProgress{job.search ? job.search->SaveState() : "", since};
    record.workload = job.row.spec.workload;
    record.target = job.row.spec.target;
    record.device_key = pending.device_key;
    record.template_name = std::string(trial.tpl->name);
    record.template_version = trial.tpl->version;
    record.config = trial.config_text;
    record.measurement = pending.measurement;
    record.timing = job.row.spec.timing;
    record.tune_version = kTuneVersion;
    record.llvm_version = kLlvmVersion;
    record.job_id = job.row.id;
    record.worker = pending.worker;
  }
  // The record, the job's counters and its search state reach the disk together, before the
  // trial is counted anywhere.
  absl::StatusOr<Record> committed = log_->CommitTrial(std::move(record), progress);

  std::lock_guard lock(mu_);
  Trial& trial = trials_.at(pending.trial_id);
  JobRuntime& job = *jobs_.at(trial.job_id);
  --job.committing;
  if (committed.ok()) {
    ++job.row.trials_done;
    if (!pending.measurement.ok()) {
      ++job.row.trials_failed;
      job.last_error =
          StrCat(ErrorKindName(pending.measurement.error), ": ", pending.measurement.message);
    }
    job.since_improvement = since;
    if (improved) {
      job.best = BestSoFar{secs, job.workload.Flops() / secs / 1e9, std::string(trial.tpl->name),
                           trial.config_text, committed->uid};
    }
    job.recent.push_back(Clock::now());
    if (job.recent.size() > kRecentTrials) {
      job.recent.pop_front();
    }
    Logger("daemon")->info(
        "job {}: trial {}/{} {} {} {}: {}", job.row.id, job.row.trials_done, job.row.spec.trials,
        trial.tpl->name, trial.config_text, pending.worker.empty() ? "(build)" : pending.worker,
        pending.measurement.ok() ? fmt::format("{:.3f} GFLOPS", job.workload.Flops() / secs / 1e9)
                                 : job.last_error);
    PushEventLocked(job);
  } else {
    std::string why = StrCat("cannot record trial ", trial.id, " in ", log_->path(), ": ",
                             std::string(committed.status().message()));
    Logger("daemon")->error("job {}: {}", job.row.id, why);
    if (!IsTerminal(job.row.state)) {
      FinishLocked(job, JobState::kFailed, why);
    }
  }
  trials_.erase(pending.trial_id);
  PumpLocked();
}

void Scheduler::SetStateLocked(JobRuntime& job, JobState state, std::string_view error) {
  if (job.row.state == state) {
    return;
  }
  if (absl::Status s = log_->UpdateJobState(job.row.id, state, error); !s.ok()) {
    Logger("daemon")->error("job {}: cannot store state {}: {}", job.row.id, WireStateName(state),
                            s);
  }
  absl::StatusOr<Job> stored = log_->GetJob(job.row.id);
  if (stored.ok()) {
    job.row.state = stored->state;
    job.row.error = stored->error;
    job.row.started_at_ms = stored->started_at_ms;
    job.row.finished_at_ms = stored->finished_at_ms;
    job.row.updated_at_ms = stored->updated_at_ms;
  } else {
    job.row.state = state;
    job.row.error = std::string(error);
  }
  Logger("daemon")->info("job {}: {}{}", job.row.id, WireStateName(job.row.state),
                         job.waiting.empty() ? "" : StrCat(" (", job.waiting, ")"));
  PushEventLocked(job);
}

void Scheduler::FinishLocked(JobRuntime& job, JobState state, std::string_view why) {
  std::vector<uint64_t> mine;
  for (const auto& [id, trial] : trials_) {
    if (trial.job_id == job.row.id && trial.stage != TrialStage::kCommitting) {
      mine.push_back(id);
    }
  }
  for (uint64_t id : mine) {
    DropTrialLocked(id, StrCat("job ", job.row.id, " ", WireStateName(state)));
  }
  job.waiting = std::string(why);
  SetStateLocked(job, state, state == JobState::kFailed ? why : "");
  job.search.reset();
  job.compiler.reset();
}

void Scheduler::PushEventLocked(JobRuntime& job) {
  job.events.push_back(JobEventEntry{job.next_seq++, EventLocked(job)});
  if (job.events.size() > kKeptEvents) {
    job.events.pop_front();
  }
  events_cv_.notify_all();
}

void Scheduler::DropTrialLocked(uint64_t trial_id, std::string_view reason) {
  auto it = trials_.find(trial_id);
  if (it == trials_.end()) {
    return;
  }
  Trial& trial = it->second;
  JobRuntime& job = *jobs_.at(trial.job_id);
  switch (trial.stage) {
    case TrialStage::kBuilding:
      --job.building;  // OnBuilt finds no trial and drops the artifact
      break;
    case TrialStage::kReady:
      std::erase(job.ready, trial_id);
      break;
    case TrialStage::kInFlight: {
      --job.in_flight;
      auto worker = workers_.find(trial.worker_id);
      if (worker != workers_.end()) {
        worker->second->in_flight.erase(trial_id);
        v1::DaemonMessage cancel;
        cancel.mutable_cancel()->set_trial_id(trial_id);
        cancel.mutable_cancel()->set_reason(std::string(reason));
        worker->second->channel->Send(std::move(cancel));
      }
      break;
    }
    case TrialStage::kCommitting:
      return;  // its outcome is being recorded
  }
  claimed_.erase(ClaimKey(job, *trial.tpl, trial.config_text));
  trials_.erase(it);
}

void Scheduler::RequeueLocked(Trial& trial, std::string_view why, Commits* commits) {
  JobRuntime& job = *jobs_.at(trial.job_id);
  --job.in_flight;
  trial.worker_id.clear();
  if (trial.attempts >= options_.max_dispatch_attempts) {
    trial.stage = TrialStage::kCommitting;
    ++job.committing;
    commits->push_back(PendingCommit{
        trial.id,
        Failure(ErrorKind::kWorkerLost, StrCat("given up after ", trial.attempts,
                                               " workers could not measure it; the last: ", why)),
        "", job.row.spec.device_key});
    return;
  }
  trial.stage = TrialStage::kReady;
  job.ready.push_front(trial.id);
}

}  // namespace tune::tuner
