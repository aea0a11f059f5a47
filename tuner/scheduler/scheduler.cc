// The scheduler's loop: starting and stopping, deciding what each job does next, and dispatch.
#include "tuner/scheduler/scheduler.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/logging.h"
#include "common/runtime_libs.h"
#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "tuner/scheduler/finalists.h"

namespace tune::tuner {

Scheduler::Scheduler(TuningLog* log, SchedulerOptions options)
    : log_(log), options_(std::move(options)), trials_(options_.share_measurements) {}

Scheduler::~Scheduler() { Shutdown(); }

BuilderOptions Scheduler::BuilderOptionsOf(const SchedulerOptions& options) {
  return BuilderOptions{.executable = options.builder_executable,
                        .processes = std::max(1, options.build_threads),
                        .build_timeout_ms = options.build_timeout_ms,
                        .sources = options.catalog.sources()};
}

absl::Status Scheduler::Start() {
  auto logger = Logger("daemon");
  // Before any job is loaded: a job's search describes configs through it.
  features_ = std::make_unique<BuilderFeatureSource>(BuilderOptionsOf(options_));
  ASSIGN_OR_RETURN(std::vector<Job> active, log_->ActiveJobs());
  ASSIGN_OR_RETURN(std::vector<QuarantineEntry> quarantined, log_->ListQuarantine());
  {
    std::lock_guard lock(mu_);
    for (const QuarantineEntry& entry : quarantined) {
      quarantine_.Put(entry);
    }
  }
  if (log_->read_only() && !active.empty()) {
    // Running them would record trials that cannot be written.
    logger->warn("{} queued or running job(s) of {} are not resumed: the log is read-only",
                 active.size(), log_->path());
    active.clear();
  }
  std::vector<JobPtr> resumed;
  for (Job& row : active) {
    if (row.state == JobState::kRunning) {
      RETURN_IF_ERROR(log_->UpdateJobState(row.id, JobState::kQueued));
      row.state = JobState::kQueued;
    }
    absl::StatusOr<JobPtr> runtime = LoadRuntime(row);
    if (!runtime.ok()) {
      std::string why = StrCat("cannot resume: ", std::string(runtime.status().message()));
      logger->error("job {}: {}", row.id, why);
      RETURN_IF_ERROR(log_->UpdateJobState(row.id, JobState::kFailed, why));
      continue;
    }
    resumed.push_back(std::move(*runtime));
  }
  if (!resumed.empty()) {
    logger->info("resuming {} queued or running job(s) from {}", resumed.size(), log_->path());
  }
  writer_ = std::make_unique<SerialExecutor>();
  planner_ = std::make_unique<SerialExecutor>();
  if (!options_.artifact_store_dir.empty() && options_.artifact_store_bytes > 0) {
    absl::StatusOr<std::unique_ptr<ArtifactStore>> store =
        ArtifactStore::Open(options_.artifact_store_dir, options_.artifact_store_bytes,
                            ArtifactStore::BuildEnvironment(options_.catalog.sources()));
    if (store.ok()) {
      store_ = std::move(*store);
      logger->info("artifact store {}: {:.1f} of {:.0f} MiB", store_->dir(),
                   store_->bytes() / 1048576.0, options_.artifact_store_bytes / 1048576.0);
    } else {
      logger->warn("{}; every candidate will be built", store.status().message());
    }
  }
  builders_ = std::make_unique<BuilderPool>(
      BuilderOptionsOf(options_),
      [this](uint64_t id, BuildOutcome outcome) { OnBuilt(id, std::move(outcome)); }, store_.get(),
      features_.get());
  monitor_ = std::thread([this] { MonitorLoop(); });
  std::lock_guard lock(mu_);
  for (JobPtr& job : resumed) {
    jobs_.Add(std::move(job));
  }
  PumpLocked();
  return absl::OkStatus();
}

void Scheduler::StopAcceptingWork() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
}

void Scheduler::BeginShutdown() {
  {
    std::lock_guard lock(mu_);
    if (streams_closed_) {
      return;
    }
    shutting_down_ = true;
    streams_closed_ = true;
    for (WorkerEntry* worker : workers_.All()) {
      worker->channel->Close();
    }
    monitor_cv_.notify_all();
  }
  events_.CloseAll();
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
  if (builders_) {
    builders_->Stop();
  }
  if (features_) {
    features_->Stop();  // a proposal waiting for features gets rows without IR at once
  }
  if (planner_) {
    planner_->Stop();
  }
  if (writer_) {
    writer_->Stop();  // every result already taken reaches the log
  }
  std::lock_guard lock(mu_);
  for (JobRuntime* job : jobs_.All()) {
    if (job->row.state != JobState::kRunning) {
      continue;
    }
    // The next daemon resumes it from the log.
    if (absl::Status s = log_->UpdateJobState(job->row.id, JobState::kQueued); !s.ok()) {
      Logger("daemon")->warn("job {}: {}", job->row.id, s.message());
    }
  }
}

void Scheduler::Quiesce() {
  // A planner task may post writes and a write may post proposals: settle both.
  while (true) {
    planner_->Flush();
    writer_->Flush();
    if (planner_->Pending() == 0 && writer_->Pending() == 0) {
      return;
    }
  }
}

void Scheduler::QuiesceWithBuilds() {
  // Proposals start builds, and builds (through the pump) may ask for proposals.
  while (true) {
    Quiesce();
    builders_->WaitIdle();
    if (planner_->Pending() == 0 && writer_->Pending() == 0 && builders_->Queued() == 0) {
      return;
    }
  }
}

Scheduler::MemoryUse Scheduler::Memory() {
  std::lock_guard lock(mu_);
  return MemoryUse{jobs_.size(), trials_.size(), trials_.claims()};
}

std::set<const KernelTemplate*> Scheduler::UnusableTemplatesLocked(const JobRuntime& job,
                                                                   const SearchJob& search) const {
  std::set<const KernelTemplate*> unusable;
  for (const KernelTemplate* tpl : search.templates()) {
    std::optional<TemplateLibrary> lib = search.LibraryOf(*tpl);
    const std::vector<std::string>& features = search.FeaturesOf(*tpl);
    if (!lib && features.empty()) {
      continue;
    }
    WorkerNeeds needs = search.Needs(job, nullptr);
    if (lib) {
      needs.needed_libs = {lib->file};
    }
    needs.features = features;
    if (workers_.Capacity(needs) == 0) {
      unusable.insert(tpl);
    }
  }
  return unusable;
}

void Scheduler::PumpLocked() {
  if (shutting_down_) {
    return;
  }
  Admission admission(!storage_paused_.empty());
  for (JobRuntime* job : jobs_.ActiveInDispatchOrder()) {
    if (IsTerminal(job->row.state)) {
      continue;  // ended earlier in this pass (a model job ends its tasks)
    }
    if (ModelJob* model = job->driver->AsModel(); model != nullptr) {
      // Before its tasks, which come after it in dispatch order.
      ApplyStepLocked(*job, model->Next(*job, jobs_));
    } else {
      PumpSearchLocked(*job, *job->driver->AsSearch(), admission);
    }
  }
  DispatchLocked();
  for (JobRuntime* job : jobs_.ActiveInDispatchOrder()) {
    AdmitQueuedFinalistLocked(*job);  // its build overlaps the measurement just dispatched
  }
}

void Scheduler::PumpSearchLocked(JobRuntime& job, SearchJob& search, Admission& admission) {
  // Templates no connected worker can run (for want of their library or CPU features) are left
  // out for now; a job all of whose templates are such waits like a job without a worker.
  std::set<const KernelTemplate*> unusable = UnusableTemplatesLocked(job, search);
  const bool none_usable = unusable.size() == search.templates().size();
  const Admission::Ticket ticket =
      admission.Ask(job, workers_.Capacity(search.Needs(job, nullptr)), none_usable);
  JobStep step = search.Next(job, ticket, unusable, AwaitsChunkLocked(job));
  if (step.action == JobStep::Action::kPropose) {
    ProposeLocked(job, step.n, std::move(unusable));
    step.action = JobStep::Action::kNone;
  }
  admission.Passed(job, ticket, search.WantsMore(job));
  ApplyStepLocked(job, std::move(step));
}

void Scheduler::DispatchLocked() {
  std::vector<JobRuntime*> order;
  for (JobRuntime* job : jobs_.ActiveInDispatchOrder()) {
    if (!job->ready.empty()) {
      order.push_back(job);
    }
  }
  if (order.empty()) {
    return;
  }
  std::vector<WorkerEntry*> workers = workers_.ByLoad();
  // Another worker than `worker` that can run `trial` and has not failed it.
  auto other_could_run = [&](const WorkerEntry& worker, const WorkerNeeds& needs,
                             const Trial& trial) {
    return std::any_of(workers.begin(), workers.end(), [&](const WorkerEntry* other) {
      return other != &worker && CanRun(*other, needs) &&
             !trial.failed_on.contains(other->reg.name());
    });
  };
  // Another worker that can run `trial` and has not measured an earlier pass of its finalist.
  auto fresh_could_run = [&](const WorkerEntry& worker, const WorkerNeeds& needs,
                             const Trial& trial) {
    return std::any_of(workers.begin(), workers.end(), [&](const WorkerEntry* other) {
      return other != &worker && CanRun(*other, needs) &&
             !trial.measured_on.contains(other->reg.name()) &&
             !trial.failed_on.contains(other->reg.name());
    });
  };
  // Another worker that can run `trial` and whose fingerprint no quarantine entry binds.
  auto unbound_could_run = [&](const WorkerEntry& worker, const WorkerNeeds& needs,
                               const Trial& trial) {
    return std::any_of(workers.begin(), workers.end(), [&](const WorkerEntry* other) {
      return other != &worker && CanRun(*other, needs) &&
             QuarantinedForLocked(*other, trial) == nullptr;
    });
  };
  // One trial per worker per round, so that the load spreads over the workers.
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto w = workers.begin(); w != workers.end();) {
      WorkerEntry& worker = **w;
      Trial* trial = nullptr;
      JobRuntime* job = nullptr;
      if (static_cast<int>(worker.in_flight.size()) < worker.capacity) {
        for (JobRuntime* candidate : order) {
          const SearchJob& search = *candidate->driver->AsSearch();
          trial = trials_.TakeReady(*candidate, [&](const Trial& t) {
            const WorkerNeeds needs = search.Needs(*candidate, &t);
            if (!CanRun(worker, needs)) {
              return false;
            }
            if (QuarantinedForLocked(worker, t) != nullptr) {
              // Taken to be recorded unmeasured, unless a worker of another fingerprint can
              // measure it.
              return !unbound_could_run(worker, needs, t);
            }
            if (t.measured_on.contains(worker.reg.name()) && fresh_could_run(worker, needs, t)) {
              return false;  // a finalist's pass for another worker
            }
            return !t.failed_on.contains(worker.reg.name()) || !other_could_run(worker, needs, t);
          });
          if (trial != nullptr) {
            job = candidate;
            break;
          }
        }
      }
      if (trial == nullptr) {
        ++w;
        continue;
      }
      if (const QuarantineEntry* held = QuarantinedForLocked(worker, *trial); held != nullptr) {
        SkipQuarantinedLocked(*trial, *job, *held);
        progress = true;
        continue;  // the worker's slot is still free
      }
      if (!SendTrialLocked(worker, *trial, *job)) {
        trials_.Untake(*trial, *job);
        w = workers.erase(w);  // its stream is closing; RemoveWorker follows
        continue;
      }
      progress = true;
      ++w;
    }
  }
}

bool Scheduler::SendTrialLocked(WorkerEntry& worker, Trial& trial, JobRuntime& job) {
  v1::DaemonMessage message;
  v1::MeasureRequest* request = message.mutable_request();
  request->set_trial_id(trial.id);
  request->set_workload(job.row.spec.workload);
  request->set_target(job.row.spec.target);
  *request->mutable_artifact() = *trial.artifact;  // names the code; no code is copied here
  *request->mutable_timing() =
      TimingOptionsToProto(trial.final ? FinalTiming(job.row.spec.timing) : job.row.spec.timing);
  if (!worker.channel->Send(std::move(message))) {
    return false;
  }
  trials_.Dispatched(trial, job, worker, Clock::now());
  Logger("daemon")->debug("trial {} of job {} -> {} ({} {})", trial.id, job.row.id,
                          worker.reg.name(), trial.tpl->name, trial.config_text);
  return true;
}

}  // namespace tune::tuner
