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
                        .allow_fault_templates = options.allow_fault_templates,
                        .extern_kernel_manifests = options.extern_kernel_manifests,
                        .codegen_plugins = options.codegen_plugins};
}

absl::Status Scheduler::Start() {
  auto logger = Logger("daemon");
  // Before any job is loaded: a job's search describes configs through it.
  features_ = std::make_unique<BuilderFeatureSource>(BuilderOptionsOf(options_));
  ASSIGN_OR_RETURN(std::vector<Job> active, log_->ActiveJobs());
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
    absl::StatusOr<std::unique_ptr<ArtifactStore>> store = ArtifactStore::Open(
        options_.artifact_store_dir, options_.artifact_store_bytes,
        ArtifactStore::BuildEnvironment(options_.extern_kernel_manifests, options_.codegen_plugins,
                                        options_.allow_fault_templates));
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

std::set<const KernelTemplate*> Scheduler::UnusableTemplatesLocked(const JobRuntime& job) const {
  std::set<const KernelTemplate*> unusable;
  for (const KernelTemplate* tpl : job.templates) {
    std::optional<TemplateLibrary> lib = LibraryOf(*tpl, job.target);
    if (!lib) {
      continue;
    }
    WorkerNeeds needs = NeedsOf(job, nullptr);
    needs.needed_libs = {lib->file};
    if (workers_.Capacity(needs) == 0) {
      unusable.insert(tpl);
    }
  }
  return unusable;
}

std::string Scheduler::LibrariesOf(const JobRuntime& job) {
  std::set<std::string> libs;
  for (const KernelTemplate* tpl : job.templates) {
    if (std::optional<TemplateLibrary> lib = LibraryOf(*tpl, job.target)) {
      libs.insert(lib->name);
    }
  }
  return Join(std::vector<std::string>(libs.begin(), libs.end()), " or ");
}

std::string Scheduler::SkippedNote(const JobRuntime& job,
                                   const std::set<const KernelTemplate*>& unusable) {
  std::vector<std::string> parts;
  for (const KernelTemplate* tpl : unusable) {
    std::optional<TemplateLibrary> lib = LibraryOf(*tpl, job.target);
    parts.push_back(StrCat(tpl->name, " (no worker with ", lib ? lib->name : "its library", ")"));
  }
  std::sort(parts.begin(), parts.end());
  return StrCat("skipped ", Join(parts, ", "));
}

WorkerNeeds Scheduler::NeedsOf(const JobRuntime& job, const Trial* trial) {
  WorkerNeeds needs;
  needs.device_key = job.row.spec.device_key;
  needs.threads = job.target.threads;
  if (trial != nullptr && trial->artifact) {
    needs.needed_libs.assign(trial->artifact->needed_libs().begin(),
                             trial->artifact->needed_libs().end());
  }
  return needs;
}

void Scheduler::PumpLocked() {
  if (shutting_down_) {
    return;
  }
  // Artifacts proposed, building or waiting for a worker, per device key, of the jobs so far.
  std::map<std::string, int> pipelined;
  // The first job on a device key that still wants to propose: later jobs of a lower priority,
  // and later jobs of the same client, wait for it (other clients of its priority share the
  // workers with it: the dispatch order puts the least served client first).
  std::map<std::string, const JobRuntime*> blocker;
  std::map<std::string, const JobRuntime*> client_blocker;  // by device key and client

  for (JobRuntime* job : jobs_.ActiveInDispatchOrder()) {
    if (IsTerminal(job->row.state)) {
      continue;  // ended earlier in this pass (a model job ends its tasks)
    }
    if (job->model != nullptr) {
      PumpModelLocked(*job);  // before its tasks, which come after it in dispatch order
      continue;
    }
    const std::string& key = job->row.spec.device_key;
    const int capacity = workers_.Capacity(NeedsOf(*job, nullptr));
    // Library templates no connected worker can run are left out for now; a job all of whose
    // templates are such waits like a job without a worker.
    std::set<const KernelTemplate*> unusable = UnusableTemplatesLocked(*job);
    const bool none_usable = unusable.size() == job->templates.size();
    job->skipped = unusable.empty() || none_usable ? "" : SkippedNote(*job, unusable);
    const bool no_worker = capacity == 0 || none_usable;
    const std::string client_key = StrCat(key, "|", job->client_key);
    const JobRuntime* blocking = nullptr;
    if (auto first = blocker.find(key); first != blocker.end()) {
      if (first->second->row.spec.priority > job->row.spec.priority) {
        blocking = first->second;
      } else if (auto own = client_blocker.find(client_key); own != client_blocker.end()) {
        blocking = own->second;
      }
    }
    const bool blocked = blocking != nullptr;
    auto pipeline = [job] {
      return job->proposing + static_cast<int>(job->deferred.size()) + job->building +
             static_cast<int>(job->ready.size());
    };
    if (job->WantsMore() && !no_worker && !blocked && storage_paused_.empty()) {
      int room = capacity - pipelined[key] - pipeline();
      int n = std::min(room, job->row.spec.trials - job->Allocated());
      if (n > 0) {
        ProposeLocked(*job, n, std::move(unusable));
      }
    }
    pipelined[key] += pipeline();  // with what was just proposed: later jobs wait behind it
    if (job->WantsMore() && !blocked) {
      blocker.emplace(key, job);
      client_blocker.emplace(client_key, job);
    }

    if (!job->WantsMore() && job->Outstanding() == 0) {
      if (AwaitsChunkLocked(*job)) {
        // A task whose chunk is spent: its model job gives it more, or ends it.
        SetWaitingLocked(*job,
                         StrCat("waiting for model job ", job->model_id, " to give it trials"));
        continue;
      }
      if (FinalizeLocked(*job)) {
        continue;  // its finalists are being re-measured
      }
      std::string why;
      if (job->row.trials_done < job->row.spec.trials) {
        why = job->EarlyStopped()
                  ? StrCat("early stopping: ", job->since_improvement,
                           " trials in a row without improvement")
                  : StrCat("search space exhausted after ", job->row.trials_done, " trials");
      }
      for (const std::string& note : {job->skipped, GivenUpNote(*job)}) {
        if (!note.empty()) {
          why = why.empty() ? note : StrCat(why, "; ", note);
        }
      }
      if (!job->verdict.empty()) {
        why = why.empty() ? job->verdict : StrCat(why, "; ", job->verdict);
      }
      FinishLocked(*job, JobState::kDone, why);
      continue;
    }
    const bool active =
        job->in_flight + job->committing > 0 || (!no_worker && job->Outstanding() > 0);
    if (active) {
      job->waiting.clear();
      if (job->row.state == JobState::kQueued) {
        SetActiveStateLocked(*job, JobState::kRunning);
      }
      continue;
    }
    std::string waiting;
    if (capacity > 0 && none_usable) {
      waiting = StrCat("waiting for a worker with device key ", key, " and ", LibrariesOf(*job),
                       " (every template of this job calls one; start tune-server with --libs)");
    } else if (no_worker) {
      waiting = StrCat("waiting for a worker with device key ", key,
                       job->target.threads > 1
                           ? StrCat(" offering at least ", job->target.threads, " threads")
                           : "",
                       " (none connected)");
    } else if (blocked) {
      waiting = StrCat("waiting for job ", blocking->row.id, " (priority ",
                       blocking->row.spec.priority, ") on ", key);
    } else {
      waiting = StrCat("waiting for a free worker with device key ", key);
    }
    SetWaitingLocked(*job, std::move(waiting));
  }
  DispatchLocked();
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
  auto other_could_run = [&](const WorkerEntry& worker, const JobRuntime& job, const Trial& trial) {
    return std::any_of(workers.begin(), workers.end(), [&](const WorkerEntry* other) {
      return other != &worker && CanRun(*other, NeedsOf(job, &trial)) &&
             !trial.failed_on.contains(other->reg.name());
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
          trial = trials_.TakeReady(*candidate, [&](const Trial& t) {
            return CanRun(worker, NeedsOf(*candidate, &t)) &&
                   (!t.failed_on.contains(worker.reg.name()) ||
                    !other_could_run(worker, *candidate, t));
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
