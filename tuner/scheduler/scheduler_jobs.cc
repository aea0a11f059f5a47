// The scheduler's jobs: loading, state changes, and the client-facing calls (submit, describe,
// list, cancel, watch).
#include <algorithm>
#include <future>
#include <limits>

#include "common/clock.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/api/proto_convert.h"
#include "tuner/scheduler/finalists.h"
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

std::optional<BestSoFar> BestOf(const Record& record) {
  double secs = record.measurement.MedianSecs();
  absl::StatusOr<Workload> workload = Workload::Parse(record.workload);
  if (!record.measurement.ok() || secs <= 0 || !workload.ok()) {
    return std::nullopt;
  }
  return BestSoFar{secs, workload->Flops() / secs / 1e9, record.template_name, record.config,
                   record.uid};
}

void FillFromRow(const Job& row, v1::Job* out) {
  out->set_job_id(static_cast<uint64_t>(row.id));
  out->set_model_job_id(static_cast<uint64_t>(row.spec.parent));
  *out->mutable_spec() = JobSpecToProto(row.spec);
  out->set_state(JobStateToProto(row.state));
  out->set_device_key(row.spec.device_key);
  out->set_trials_done(row.trials_done);
  out->set_trials_failed(row.trials_failed);
  out->set_created_at_ms(row.created_at_ms);
  out->set_started_at_ms(row.started_at_ms);
  out->set_finished_at_ms(row.finished_at_ms);
}

v1::JobEvent EventOf(const v1::Job& job, double eta_seconds, const std::string& last_error) {
  v1::JobEvent event;
  event.set_job_id(job.job_id());
  event.set_state(job.state());
  event.set_trials_done(job.trials_done());
  event.set_trials_failed(job.trials_failed());
  event.set_trials_total(job.spec().trials());
  if (job.has_best()) {
    event.set_best_gflops(job.best().gflops());
    event.set_best_secs(job.best().secs());
    event.set_best_template(job.best().template_name());
    event.set_best_config(job.best().config());
  }
  *event.mutable_tasks() = job.tasks();
  event.set_estimated_total_secs(job.estimated_total_secs());
  event.set_default_total_secs(job.default_total_secs());
  event.set_eta_seconds(eta_seconds);
  event.set_last_error(last_error);
  event.set_event_time_ms(UnixNowMs());
  return event;
}

bool IsFinal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

// What a job whose budget is spent is doing about its finalists, for people; empty otherwise.
std::string FinalsNote(const JobRuntime& job) {
  using Stage = JobRuntime::FinalStage;
  if (IsTerminal(job.row.state)) {
    return "";
  }
  switch (job.final_stage) {
    case Stage::kPlanning:
      return "picking its finalists";
    case Stage::kMeasuring:
      return StrCat("re-measuring its ", job.finalists.size(), " finalists: pass ",
                    std::min(job.final_pass + 1, kFinalPasses), " of ", kFinalPasses);
    case Stage::kDeciding:
      return "deciding its best from the re-measurements";
    case Stage::kSearching:
    case Stage::kDecided:
      return "";
  }
  return "";
}

// Seconds until the job's budget is spent at the rate of its latest trials; negative when
// unknown, 0 once the job has ended.
double EtaSeconds(const JobRuntime& job) {
  if (IsTerminal(job.row.state)) {
    return 0;
  }
  if (job.recent.size() < 2) {
    return -1;
  }
  const double span = std::chrono::duration<double>(job.recent.back() - job.recent.front()).count();
  if (span <= 0) {
    return -1;
  }
  const double rate = static_cast<double>(job.recent.size() - 1) / span;
  return std::max(0, job.row.spec.trials - job.row.trials_done) / rate;
}

// How many given-up trials a job's message names; the others are counted.
constexpr size_t kGivenUpNamed = 3;

// The most trials of other workloads a job's search learns from, per template (the newest).
constexpr int kTransferTrials = 2000;

// The log's verdicts (IsVerdict) on configs of the job's workload on its exact target and cache
// state, oldest first: what its search learns from before proposing, as a running search learns
// from them (Scheduler::WriteTrials).
// With `given_up`, also the job's own trials given up (JobRuntime::given_up and
// given_up_in_a_row), as a running job counts them.
absl::StatusOr<std::vector<PastTrial>> PastTrials(TuningLog& log, const Job& row,
                                                  JobRuntime* given_up = nullptr) {
  ASSIGN_OR_RETURN(std::vector<Record> records,
                   log.ListRecords(RecordFilter{.workload = row.spec.workload,
                                                .device_key = row.spec.device_key}));
  std::vector<PastTrial> trials;
  for (const Record& r : records) {
    if (given_up != nullptr && r.job_id == row.id && !r.final) {
      if (IsVerdict(r.measurement.error)) {
        given_up->given_up_in_a_row = 0;
      } else {
        given_up->given_up.push_back(
            StrCat(r.template_name, " ", r.config, ": ", r.measurement.message));
        ++given_up->given_up_in_a_row;
      }
    }
    if (r.target != row.spec.target || ColdCache(r) != row.spec.timing.flush_cache || r.final ||
        !IsVerdict(r.measurement.error)) {
      continue;
    }
    const int timeout_ms = r.timing.value_or(TimingOptions()).timeout_ms;
    trials.push_back(PastTrial{ConfigKey{r.template_name, r.template_version, r.config},
                               r.measurement.error, LearnedSecs(r.measurement, timeout_ms)});
  }
  return trials;
}

// The time of `tpl`'s `config` among `history`, when it was measured successfully.
std::optional<double> SecsOf(const std::vector<PastTrial>& history, const KernelTemplate& tpl,
                             const std::string& config) {
  for (const PastTrial& trial : history) {
    if (trial.ok() && trial.key.template_name == tpl.name &&
        trial.key.template_version == tpl.version && trial.key.config == config) {
      return trial.secs;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string GivenUpNote(const JobRuntime& job) {
  if (job.given_up.empty()) {
    return "";
  }
  std::string note = StrCat("gave up ", job.given_up.size(),
                            " trial(s) without a verdict, not counted in the budget: ");
  for (size_t i = 0; i < job.given_up.size() && i < kGivenUpNamed; ++i) {
    StrAppend(&note, i == 0 ? "" : "; ", job.given_up[i]);
  }
  if (job.given_up.size() > kGivenUpNamed) {
    StrAppend(&note, "; and ", job.given_up.size() - kGivenUpNamed, " more");
  }
  return note;
}

absl::StatusOr<std::optional<double>> Scheduler::DefaultSecsFromLog(const Job& task) {
  ASSIGN_OR_RETURN(Workload workload, Workload::Parse(task.spec.workload));
  ASSIGN_OR_RETURN(Target target, Target::Parse(task.spec.target));
  absl::StatusOr<std::vector<const KernelTemplate*>> templates =
      ResolveTemplates(workload, target, task.spec.templates, options_.allow_fault_templates);
  if (!templates.ok()) {
    return std::nullopt;  // the templates are gone: no default to speak of
  }
  const KernelTemplate& tpl = *templates->front();
  ASSIGN_OR_RETURN(std::vector<PastTrial> history, PastTrials(*log_, task));
  return SecsOf(history, tpl, ConfigToString(tpl.default_config(workload, target)));
}

absl::StatusOr<Scheduler::JobPtr> Scheduler::LoadRuntime(const Job& row) {
  if (row.IsModel()) {
    return LoadModelRuntime(row);
  }
  ASSIGN_OR_RETURN(Workload workload, Workload::Parse(row.spec.workload));
  ASSIGN_OR_RETURN(Target target, Target::Parse(row.spec.target));
  ASSIGN_OR_RETURN(
      std::vector<const KernelTemplate*> templates,
      ResolveTemplates(workload, target, row.spec.templates, options_.allow_fault_templates));
  ASSIGN_OR_RETURN(std::vector<ConfigKey> measured,
                   log_->MeasuredConfigs(row.spec.workload, row.spec.target));
  auto job = std::make_shared<JobRuntime>();
  ASSIGN_OR_RETURN(std::vector<PastTrial> history, PastTrials(*log_, row, job.get()));
  std::map<std::string, std::vector<TemplateTrial>, std::less<>> transfer;
  if (row.spec.transfer) {
    for (const KernelTemplate* tpl : templates) {
      ASSIGN_OR_RETURN(
          transfer[std::string(tpl->name)],
          log_->TrialsOfTemplate(std::string(tpl->name), tpl->version, row.spec.target,
                                 row.spec.timing.flush_cache, row.spec.workload, kTransferTrials));
    }
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<JobSearch> search,
      JobSearch::Create(workload, target, templates, row.spec.strategy, row.spec.seed, measured,
                        row.search_state, history, transfer, features_.get()));
  {
    std::lock_guard search_lock(job->search_mu);
    job->search = std::move(search);
  }
  job->row = row;
  job->workload = workload;
  job->target = target;
  job->templates = std::move(templates);
  job->since_improvement = row.since_improvement;
  job->events = events_.For(row.id);
  if (row.IsTask()) {
    job->model_id = row.spec.parent;
    const KernelTemplate& first = *job->templates.front();
    job->default_config = ConfigToString(first.default_config(workload, target));
    job->default_secs = SecsOf(history, first, job->default_config);
  }
  if (row.best_record_id) {
    ASSIGN_OR_RETURN(std::optional<Record> best, log_->GetRecord(*row.best_record_id));
    if (best) {
      job->best = BestOf(*best);
    }
  }
  return job;
}

void Scheduler::SetActiveStateLocked(JobRuntime& job, JobState state) {
  if (job.row.state == state) {
    return;
  }
  job.row.state = state;
  if (state == JobState::kRunning && job.row.started_at_ms == 0) {
    job.row.started_at_ms = UnixNowMs();
  }
  Logger("daemon")->info("job {}: {}{}", job.row.id, WireStateName(state),
                         job.waiting.empty() ? "" : StrCat(" (", job.waiting, ")"));
  PushEventLocked(job);
  PostWriteLocked([this, id = job.row.id, state] {
    if (absl::Status s = log_->UpdateJobState(id, state); !s.ok()) {
      Logger("daemon")->error("job {}: cannot store state {}: {}", id, WireStateName(state), s);
    }
  });
}

void Scheduler::FinishLocked(JobRuntime& job, JobState state, std::string_view why,
                             std::function<void()> done) {
  const int64_t id = job.row.id;
  for (uint64_t trial_id : trials_.OfJob(id)) {
    if (Trial* trial = trials_.Find(trial_id); trial != nullptr) {
      DropTrialLocked(*trial, StrCat("job ", id, " ", WireStateName(state)));
    }
  }
  job.deferred.clear();
  builders_->DropJob(id);
  job.row.state = state;
  job.row.finished_at_ms = UnixNowMs();
  if (state == JobState::kFailed) {
    job.row.error = std::string(why);
  }
  job.waiting = std::string(why);
  Logger("daemon")->info("job {}: {}{}", id, WireStateName(state),
                         why.empty() ? "" : StrCat(" (", why, ")"));
  // Stored with the state: why the job failed, stopped short of its budget or was cancelled.
  std::string error(why);
  const bool posted = PostWriteLocked([this, job = jobs_.Shared(id), state, error, done] {
    if (absl::Status s = log_->UpdateJobState(job->row.id, state, error); !s.ok()) {
      Logger("daemon")->error("job {}: cannot store state {}: {}", job->row.id,
                              WireStateName(state), s);
    }
    {
      std::lock_guard lock(mu_);
      job->state_written = true;
      PushEventLocked(*job);  // the final event, once the final state is on disk
      PruneLocked(*job);
      if (job->model_id != 0) {
        PumpLocked();  // its model job may end now
      }
    }
    if (done) {
      done();
    }
  });
  if (!posted && done) {
    done();
  }
}

void Scheduler::PruneLocked(JobRuntime& job) {
  if (!IsTerminal(job.row.state) || !job.state_written || job.Outstanding() > 0 ||
      jobs_.Find(job.row.id) != &job) {
    return;
  }
  events_.Drop(job.row.id);
  jobs_.Remove(job.row.id);  // `job` lives on while a task still holds it
}

void Scheduler::SetWaitingLocked(JobRuntime& job, std::string waiting) {
  if (waiting == job.waiting) {
    return;
  }
  job.waiting = std::move(waiting);
  if (job.row.state == JobState::kRunning && !job.waiting.empty()) {
    SetActiveStateLocked(job, JobState::kQueued);
  } else {
    PushEventLocked(job);
  }
}

void Scheduler::PushEventLocked(JobRuntime& job) {
  job.events->Push(EventLocked(job));
  if (JobRuntime* model = ModelOfLocked(job); model != nullptr) {
    model->events->Push(EventLocked(*model));  // a model job's watchers see its tasks move
  }
}

v1::Job Scheduler::JobProtoLocked(const JobRuntime& job) const {
  v1::Job out;
  FillFromRow(job.row, &out);
  out.set_trials_in_flight(job.in_flight);
  if (job.best) {
    job.best->ToProto(out.mutable_best());
  }
  if (job.model != nullptr) {
    FillModelLocked(job, &out);
  }
  if (job.row.state == JobState::kFailed) {
    out.set_message(job.row.error);
  } else if (!storage_paused_.empty() && !IsTerminal(job.row.state)) {
    out.set_message(storage_paused_);
  } else if (!job.waiting.empty()) {
    out.set_message(job.waiting);
  } else if (std::string finals = FinalsNote(job); !finals.empty()) {
    out.set_message(finals);
  } else {
    std::string message;
    for (const std::string& part : {job.skipped, GivenUpNote(job), job.last_error}) {
      if (!part.empty()) {
        StrAppend(&message, message.empty() ? "" : "; ", part);
      }
    }
    out.set_message(message);
  }
  return out;
}

absl::StatusOr<v1::Job> Scheduler::JobProtoFromLog(const Job& row) {
  v1::Job out;
  FillFromRow(row, &out);
  out.set_message(row.error);
  if (row.IsModel()) {
    RETURN_IF_ERROR(FillModelFromLog(row, &out));
  }
  // A job whose finalists' re-measurement decided the best reports that figure.
  std::optional<BestDecision> decision;
  if (row.state == JobState::kDone && row.best_record_id) {
    ASSIGN_OR_RETURN(decision, log_->GetBestDecision(row.spec.workload, row.spec.target,
                                                     row.spec.timing.flush_cache));
    if (decision && decision->job_id != row.id) {
      decision.reset();
    }
  }
  if (row.best_record_id) {
    ASSIGN_OR_RETURN(std::optional<Record> record,
                     log_->GetRecord(decision ? decision->record_id : *row.best_record_id));
    std::optional<BestSoFar> best = record ? BestOf(*record) : std::nullopt;
    if (best && decision) {
      best->secs = decision->median_secs;
      best->gflops = best->gflops * record->measurement.MedianSecs() / decision->median_secs;
    }
    if (best) {
      best->ToProto(out.mutable_best());
    }
  }
  return out;
}

v1::JobEvent Scheduler::EventLocked(const JobRuntime& job) const {
  v1::JobEvent event = EventOf(JobProtoLocked(job), EtaSeconds(job), job.last_error);
  event.set_message(job.waiting.empty() ? FinalsNote(job) : job.waiting);
  return event;
}

std::map<uint64_t, double> Scheduler::Etas() {
  std::map<uint64_t, double> etas;
  std::lock_guard lock(mu_);
  for (const JobRuntime* job : jobs_.All()) {
    etas.emplace(static_cast<uint64_t>(job->row.id), EtaSeconds(*job));
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
  ASSIGN_OR_RETURN(ValidatedJob valid,
                   ValidateJobSpec(spec, ValidationOptions{options_.allow_fault_templates}));
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
  std::lock_guard lock(mu_);
  JobRuntime& job = *runtimes.front();
  for (JobPtr& runtime : runtimes) {
    JobRuntime& added = *runtime;
    jobs_.Add(std::move(runtime));
    PushEventLocked(added);
  }
  PumpLocked();
  return JobProtoLocked(job);
}

absl::StatusOr<v1::Job> Scheduler::GetJob(uint64_t id) {
  if (!ValidId(id)) {
    return UnknownJob(id);
  }
  {
    std::lock_guard lock(mu_);
    if (const JobRuntime* job = jobs_.Find(static_cast<int64_t>(id)); job != nullptr) {
      return JobProtoLocked(*job);
    }
  }
  absl::StatusOr<Job> row = log_->GetJob(static_cast<int64_t>(id));
  if (absl::IsNotFound(row.status())) {
    return UnknownJob(id);
  }
  if (!row.ok()) {
    return row.status();
  }
  return JobProtoFromLog(*row);
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
  std::map<int64_t, v1::Job> live;
  {
    std::lock_guard lock(mu_);
    for (const JobRuntime* job : jobs_.All()) {
      live.emplace(job->row.id, JobProtoLocked(*job));
    }
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
      ASSIGN_OR_RETURN(v1::Job job, JobProtoFromLog(*row));
      out.push_back(std::move(job));
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
  v1::Job cancelled;
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
        return absl::FailedPreconditionError(
            StrCat("job ", id, " is a task of model job ", job->model_id,
                   ", which decides its trials; cancel model job ", job->model_id));
      }
      Logger("daemon")->info("job {}: cancelled by a client", id);
      if (job->model != nullptr) {
        CancelModelTasksLocked(*job, StrCat("model job ", id, " was cancelled"));
      }
      FinishLocked(*job, JobState::kCancelled, "cancelled by a client",
                   [written] { written->set_value(); });
      cancelled = JobProtoLocked(*job);
      PumpLocked();
    }
  }
  if (cancelled.job_id() != 0) {
    on_disk.wait();  // the client hears CANCELLED once a restart cannot resume the job
    return cancelled;
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
  v1::JobEvent first;
  uint64_t seen = 0;
  {
    std::lock_guard lock(mu_);
    if (const JobRuntime* job = jobs_.Find(static_cast<int64_t>(id)); job != nullptr) {
      stream = job->events;
      first = EventLocked(*job);
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
    ASSIGN_OR_RETURN(v1::Job job, JobProtoFromLog(*row));
    sink(EventOf(job, 0, ""));
    return absl::OkStatus();
  }
  if (!sink(first)) {
    return absl::CancelledError("the watcher went away");
  }
  if (IsFinal(first.state())) {
    return absl::OkStatus();
  }
  while (true) {
    JobEvents::Batch batch = stream->WaitAfter(seen, kWatchPoll);
    seen = batch.last_seq;
    for (const v1::JobEvent& event : batch.events) {
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
