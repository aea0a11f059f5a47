// The scheduler's jobs: loading them, and the client-facing calls (submit, describe, list,
// cancel, watch) and the dashboard's snapshots. Each answer is a snapshot (JobView) copied under
// the lock and formatted after it (job_messages.h), or read from the log for a finished job.
#include <algorithm>
#include <future>
#include <limits>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/api/proto_convert.h"
#include "tuner/scheduler/job_messages.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {
namespace {

constexpr int kDefaultListLimit = 100;
// How often a watcher checks whether its client went away.
constexpr auto kWatchPoll = std::chrono::milliseconds(200);

absl::Status UnknownJob(uint64_t id) {
  return absl::NotFoundError(StrCat("job ", id, " does not exist"));
}

// Ids of the log are int64 and start at 1.
bool ValidId(uint64_t id) {
  return id >= 1 && id <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

bool IsFinal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

}  // namespace

absl::StatusOr<Scheduler::JobPtr> Scheduler::LoadRuntime(const Job& row) {
  auto job = std::make_shared<JobRuntime>();
  job->row = row;
  if (row.IsModel()) {
    ASSIGN_OR_RETURN(job->driver, ModelJob::Load(*log_, job->row));
  } else {
    ASSIGN_OR_RETURN(job->driver,
                     SearchJob::Load(*log_, row,
                                     SearchJobOptions{
                                         .catalog = options_.catalog,
                                         .remeasure_finalists = options_.remeasure_finalists,
                                         .features = features_.get(),
                                     }));
  }
  job->row.search_state.clear();  // the search holds it now; snapshots need not copy it
  job->events = events_.For(row.id);
  return job;
}

std::map<uint64_t, double> Scheduler::Etas() {
  std::map<uint64_t, double> etas;
  std::lock_guard lock(mu_);
  for (const JobRuntime* job : jobs_.All()) {
    etas.emplace(static_cast<uint64_t>(job->row.id), job->EtaSeconds());
  }
  return etas;
}

QueueDepth Scheduler::Depth() {
  QueueDepth depth;
  std::lock_guard lock(mu_);
  for (const JobRuntime* job : jobs_.All()) {
    depth.jobs_queued += job->row.state == JobState::kQueued;
    depth.jobs_running += job->row.state == JobState::kRunning;
    depth.trials_building += job->building;
    depth.trials_waiting += static_cast<int>(job->ready.size());
    depth.trials_following += job->following;
    depth.trials_in_flight += job->in_flight;
    depth.trials_committing += job->committing;
  }
  return depth;
}

absl::StatusOr<v1::Job> Scheduler::SubmitJob(const v1::JobSpec& spec, std::string_view client) {
  ASSIGN_OR_RETURN(ValidatedJob valid, ValidateJobSpec(spec, ValidationOptions{options_.catalog}));
  return SubmitValidated(std::move(valid), client);
}

absl::StatusOr<v1::Job> Scheduler::SubmitValidated(ValidatedJob valid, std::string_view client) {
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) {
      return absl::UnavailableError("the daemon is shutting down");
    }
    if (valid.target.kind == TargetKind::kLlvm) {
      RETURN_IF_ERROR(
          CheckThreadsFitCores(workers_.All(), valid.spec.device_key, valid.target.threads));
    }
  }
  valid.spec.client = std::string(client);
  // One transaction holds the whole spec (template restriction, early stopping, name).
  ASSIGN_OR_RETURN(Job row, log_->CreateJob(valid.spec));
  // A model job's tasks are jobs of their own: each loads (templates, search) like one.
  std::vector<JobPtr> runtimes;
  absl::Status loaded = absl::OkStatus();
  for (const JobTask& task : row.spec.tasks) {
    absl::StatusOr<Job> task_row = log_->GetJob(task.job_id);
    absl::StatusOr<JobPtr> runtime = task_row.ok() ? LoadRuntime(*task_row) : task_row.status();
    if (!runtime.ok()) {
      loaded = runtime.status();
      break;
    }
    runtimes.push_back(*std::move(runtime));
  }
  if (loaded.ok()) {
    absl::StatusOr<JobPtr> runtime = LoadRuntime(row);
    loaded = runtime.status();
    if (runtime.ok()) {
      runtimes.insert(runtimes.begin(), *std::move(runtime));
    }
  }
  if (!loaded.ok()) {
    std::string why = StrCat("cannot start: ", std::string(loaded.message()));
    Logger("daemon")->error("job {}: {}", row.id, why);
    (void)log_->UpdateJobState(row.id, JobState::kFailed, why);
    for (const JobTask& task : row.spec.tasks) {
      (void)log_->UpdateJobState(task.job_id, JobState::kFailed, why);
    }
    return loaded;
  }
  if (row.IsModel()) {
    Logger("daemon")->info(
        "model job {} queued: {} workloads (jobs {} to {}) on {} ({}), {} "
        "trials, {} search, priority {}",
        row.id, row.spec.tasks.size(), row.spec.tasks.front().job_id, row.spec.tasks.back().job_id,
        row.spec.target, row.spec.device_key, row.spec.trials, row.spec.strategy,
        row.spec.priority);
  } else {
    Logger("daemon")->info("job {} queued: {} on {} ({}), {} trials, {} search, priority {}",
                           row.id, row.spec.workload, row.spec.target, row.spec.device_key,
                           row.spec.trials, row.spec.strategy, row.spec.priority);
  }
  JobView view;
  {
    std::lock_guard lock(mu_);
    JobRuntime& job = *runtimes.front();
    for (JobPtr& runtime : runtimes) {
      JobRuntime& added = *runtime;
      jobs_.Add(std::move(runtime));
      PushEventLocked(added);
    }
    PumpLocked();
    view = ViewLocked(job);
  }
  return JobProtoOf(view);
}

absl::StatusOr<v1::Job> Scheduler::GetJob(uint64_t id) {
  if (!ValidId(id)) {
    return UnknownJob(id);
  }
  std::optional<JobView> live;
  {
    std::lock_guard lock(mu_);
    if (const JobRuntime* job = jobs_.Find(static_cast<int64_t>(id)); job != nullptr) {
      live = ViewLocked(*job);
    }
  }
  if (live) {
    return JobProtoOf(*live);
  }
  absl::StatusOr<Job> row = log_->GetJob(static_cast<int64_t>(id));
  if (absl::IsNotFound(row.status())) {
    return UnknownJob(id);
  }
  if (!row.ok()) {
    return row.status();
  }
  ASSIGN_OR_RETURN(JobView view, ViewFromLog(*log_, *row, options_.catalog));
  return JobProtoOf(view);
}

absl::StatusOr<std::vector<v1::Job>> Scheduler::ListJobs(const std::vector<JobState>& states,
                                                         int limit) {
  if (limit < 0) {
    return absl::InvalidArgumentError(StrCat("limit: ", limit, " is negative; expected >= 0"));
  }
  if (limit == 0) {
    limit = kDefaultListLimit;
  }
  ASSIGN_OR_RETURN(std::vector<Job> rows, log_->ListJobs());
  std::map<int64_t, JobView> views;
  {
    std::lock_guard lock(mu_);
    for (const JobRuntime* job : jobs_.All()) {
      views.emplace(job->row.id, ViewLocked(*job));
    }
  }
  std::map<int64_t, v1::Job> live;
  for (const auto& [id, view] : views) {
    live.emplace(id, JobProtoOf(view));
  }
  std::vector<v1::Job> out;
  for (auto row = rows.rbegin(); row != rows.rend() && static_cast<int>(out.size()) < limit;
       ++row) {
    auto found = live.find(row->id);
    JobState state = row->state;
    if (found != live.end()) {
      ASSIGN_OR_RETURN(state, JobStateFromProto(found->second.state(), "state"));
    }
    if (!states.empty() && std::find(states.begin(), states.end(), state) == states.end()) {
      continue;
    }
    if (found != live.end()) {
      out.push_back(found->second);
    } else {
      ASSIGN_OR_RETURN(JobView view, ViewFromLog(*log_, *row, options_.catalog));
      out.push_back(JobProtoOf(view));
    }
  }
  return out;
}

absl::StatusOr<v1::Job> Scheduler::CancelJob(uint64_t id) {
  if (!ValidId(id)) {
    return UnknownJob(id);
  }
  auto written = std::make_shared<std::promise<void>>();
  std::future<void> on_disk = written->get_future();
  std::optional<JobView> cancelled;
  {
    std::lock_guard lock(mu_);
    JobRuntime* job = jobs_.Find(static_cast<int64_t>(id));
    if (job != nullptr) {
      if (IsTerminal(job->row.state)) {
        return absl::FailedPreconditionError(
            StrCat("job ", id, " is already ", WireStateName(job->row.state),
                   "; only QUEUED or RUNNING jobs can be cancelled"));
      }
      if (AwaitsChunkLocked(*job)) {
        const int64_t model_id = job->row.spec.parent;
        return absl::FailedPreconditionError(
            StrCat("job ", id, " is a task of model job ", model_id,
                   ", which decides its trials; cancel model job ", model_id));
      }
      Logger("daemon")->info("job {}: cancelled by a client", id);
      if (job->driver->AsModel() != nullptr) {
        CancelModelTasksLocked(*job, StrCat("model job ", id, " was cancelled"));
      }
      FinishLocked(*job, JobState::kCancelled, "cancelled by a client",
                   [written] { written->set_value(); });
      cancelled = ViewLocked(*job);
      PumpLocked();
    }
  }
  if (cancelled) {
    on_disk.wait();  // the client hears CANCELLED once a restart cannot resume the job
    return JobProtoOf(*cancelled);
  }
  // Every job that is not final is in memory, so a job found only in the log has finished.
  absl::StatusOr<Job> row = log_->GetJob(static_cast<int64_t>(id));
  if (absl::IsNotFound(row.status())) {
    return UnknownJob(id);
  }
  if (!row.ok()) {
    return row.status();
  }
  return absl::FailedPreconditionError(StrCat("job ", id, " is already ", WireStateName(row->state),
                                              "; only QUEUED or RUNNING jobs can be cancelled"));
}

absl::Status Scheduler::WatchJob(uint64_t id, const std::function<bool(const v1::JobEvent&)>& sink,
                                 const std::function<bool()>& cancelled) {
  if (!ValidId(id)) {
    return UnknownJob(id);
  }
  std::shared_ptr<JobEvents> stream;
  JobView snapshot;
  uint64_t seen = 0;
  {
    std::lock_guard lock(mu_);
    if (const JobRuntime* job = jobs_.Find(static_cast<int64_t>(id)); job != nullptr) {
      stream = job->events;
      snapshot = ViewLocked(*job);
      seen = stream->LatestSeq();  // the snapshot covers every earlier event
    }
  }
  if (stream == nullptr) {
    absl::StatusOr<Job> row = log_->GetJob(static_cast<int64_t>(id));
    if (absl::IsNotFound(row.status())) {
      return UnknownJob(id);
    }
    if (!row.ok()) {
      return row.status();
    }
    ASSIGN_OR_RETURN(JobView view, ViewFromLog(*log_, *row, options_.catalog));
    sink(EventOf(view));
    return absl::OkStatus();
  }
  const v1::JobEvent first = EventOf(snapshot);
  if (!sink(first)) {
    return absl::CancelledError("the watcher went away");
  }
  if (IsFinal(first.state())) {
    return absl::OkStatus();
  }
  while (true) {
    JobEvents::Batch batch = stream->WaitAfter(seen, kWatchPoll);
    seen = batch.last_seq;
    for (const JobView& view : batch.events) {
      const v1::JobEvent event = EventOf(view);
      if (!sink(event)) {
        return absl::CancelledError("the watcher went away");
      }
      if (IsFinal(event.state())) {
        return absl::OkStatus();
      }
    }
    if (batch.closed) {
      return absl::UnavailableError("the daemon is shutting down");
    }
    if (cancelled()) {
      return absl::CancelledError("the watcher went away");
    }
  }
}

}  // namespace tune::tuner
