// The scheduler's model jobs: a model job spreads its trial budget over its task jobs (one per
// workload) a chunk at a time, where the task scheduler (search/task_scheduler.h) expects the
// largest gain in weighted total time per trial. The tasks propose, build and measure as any
// job does; a task whose chunk is spent waits, QUEUED, for its next one, and the model job ends
// them all once its budget is spent or no task can take more.
#include <algorithm>

#include "common/clock.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/api/proto_convert.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {
namespace {

search::TaskInfo TaskInfoOf(const JobTask& task) {
  absl::StatusOr<Workload> workload = Workload::Parse(task.workload);
  if (!workload.ok()) {
    return search::TaskInfo{.weight = task.weight};
  }
  return search::TaskInfoOf(*workload, task.weight);
}

// Σ weight · seconds over the tasks, or 0 when some task has none.
double WeightedTotal(const std::vector<std::pair<double, std::optional<double>>>& parts) {
  double total = 0;
  for (const auto& [weight, secs] : parts) {
    if (!secs) {
      return 0;
    }
    total += weight * *secs;
  }
  return total;
}

}  // namespace

absl::StatusOr<Scheduler::JobPtr> Scheduler::LoadModelRuntime(const Job& row) {
  std::vector<search::TaskInfo> infos;
  for (const JobTask& task : row.spec.tasks) {
    infos.push_back(TaskInfoOf(task));
  }
  const search::TaskChunks chunks =
      search::ChunksFor(row.spec.trials, static_cast<int>(infos.size()));
  auto model = std::make_unique<ModelRuntime>(
      ModelRuntime{search::TaskScheduler(infos, search::TaskPolicy::kGradient, chunks), {}});
  auto job = std::make_shared<JobRuntime>();
  job->row = row;
  job->row.trials_done = 0;
  job->row.trials_failed = 0;
  // The allocator replays what the tasks were given and measured, in the order they measured
  // it, so a resumed model job decides as the uninterrupted one would.
  for (size_t i = 0; i < row.spec.tasks.size(); ++i) {
    const int64_t task_id = row.spec.tasks[i].job_id;
    model->task_ids.push_back(task_id);
    ASSIGN_OR_RETURN(Job task, log_->GetJob(task_id));
    model->allocator.Allocate(static_cast<int>(i), task.spec.trials);
    ASSIGN_OR_RETURN(std::vector<Record> records,
                     log_->ListRecords(RecordFilter{.job_id = task_id}));
    for (const Record& r : records) {
      model->allocator.Observe(static_cast<int>(i), r.measurement.ok()
                                                        ? std::optional(r.measurement.MedianSecs())
                                                        : std::nullopt);
    }
    if (IsTerminal(task.state)) {
      model->allocator.Close(static_cast<int>(i));
    }
    job->row.trials_done += task.trials_done;
    job->row.trials_failed += task.trials_failed;
  }
  job->model = std::move(model);
  job->events = events_.For(row.id);
  return job;
}

JobRuntime* Scheduler::ModelOfLocked(const JobRuntime& task) const {
  if (task.model_id == 0) {
    return nullptr;
  }
  JobRuntime* model = jobs_.Find(task.model_id);
  return model != nullptr && model->model != nullptr ? model : nullptr;
}

bool Scheduler::AwaitsChunkLocked(const JobRuntime& task) const {
  const JobRuntime* model = ModelOfLocked(task);
  return model != nullptr && !IsTerminal(model->row.state) && !model->model->allocation_done;
}

void Scheduler::OnTaskTrialLocked(JobRuntime& task, const Trial& trial, const TrialOutcome& outcome,
                                  ErrorKind kind) {
  if (outcome.ok() && trial.tpl == task.templates.front() &&
      trial.config_text == task.default_config) {
    task.default_secs = outcome.secs;
  }
  JobRuntime* model = ModelOfLocked(task);
  if (model == nullptr) {
    return;
  }
  const std::vector<int64_t>& ids = model->model->task_ids;
  const auto index = std::find(ids.begin(), ids.end(), task.row.id) - ids.begin();
  model->model->allocator.Observe(static_cast<int>(index),
                                  outcome.ok() ? std::optional(outcome.secs) : std::nullopt);
  ++model->row.trials_done;
  if (kind != ErrorKind::kNone) {
    ++model->row.trials_failed;
    model->last_error = StrCat("job ", task.row.id, ": ", task.last_error);
  }
  model->recent.push_back(Clock::now());
  if (model->recent.size() > kRecentTrials) {
    model->recent.pop_front();
  }
  LendToSiblingsLocked(*model, task, trial, outcome);
}

void Scheduler::LendToSiblingsLocked(const JobRuntime& model, const JobRuntime& task,
                                     const Trial& trial, const TrialOutcome& outcome) {
  const TemplateTrial lent{task.workload.ToString(), trial.config_text, outcome.error,
                           outcome.secs};
  for (int64_t id : model.model->task_ids) {
    JobRuntime* sibling = jobs_.Find(id);
    if (sibling == nullptr || sibling == &task || IsTerminal(sibling->row.state) ||
        !sibling->row.spec.transfer ||
        std::find(sibling->templates.begin(), sibling->templates.end(), trial.tpl) ==
            sibling->templates.end()) {
      continue;
    }
    planner_->Post([job = jobs_.Shared(id), tpl = trial.tpl, lent] {
      std::lock_guard search_lock(job->search_mu);
      job->search->Lend(tpl, lent);
    });
  }
}

void Scheduler::PumpModelLocked(JobRuntime& model) {
  if (IsTerminal(model.row.state)) {
    return;
  }
  ModelRuntime& m = *model.model;
  int allocated = 0;
  bool chunk_open = false;  // a task still proposes its chunk
  bool running = false;
  int outstanding = 0;
  std::vector<JobRuntime*> live;
  for (size_t i = 0; i < m.task_ids.size(); ++i) {
    JobRuntime* task = jobs_.Find(m.task_ids[i]);
    const int index = static_cast<int>(i);
    if (task == nullptr || IsTerminal(task->row.state)) {
      m.allocator.Close(index);  // it failed (or was never loaded)
      continue;
    }
    live.push_back(task);
    if (task->exhausted || task->EarlyStopped()) {
      m.allocator.Close(index);
    }
    chunk_open = chunk_open || task->WantsMore();
    running = running || task->row.state == JobState::kRunning;
    outstanding += task->Outstanding();
  }
  for (int i = 0; i < m.allocator.size(); ++i) {
    allocated += m.allocator.allocated(i);  // tasks that ended included
  }
  if (!m.allocation_done && !chunk_open && allocated < model.row.spec.trials) {
    if (std::optional<int> next = m.allocator.Next()) {
      JobRuntime* task = jobs_.Find(m.task_ids[*next]);
      const int n = std::min(m.allocator.ChunkOf(*next), model.row.spec.trials - allocated);
      m.allocator.Allocate(*next, n);
      task->row.spec.trials += n;
      chunk_open = true;
      Logger("daemon")->debug("model job {}: {} more trials to job {} ({})", model.row.id, n,
                              task->row.id, task->row.spec.workload);
      PostWriteLocked([this, id = task->row.id, trials = task->row.spec.trials] {
        if (absl::Status s = log_->SetJobTrials(id, trials); !s.ok()) {
          Logger("daemon")->error("job {}: cannot store its budget: {}", id, s);
        }
      });
    }
  }
  if (!m.allocation_done && !chunk_open && outstanding == 0) {
    // Nothing more to give: each task re-measures its finalists and ends on its own.
    m.allocation_done = true;
    m.tasks_failed = live.empty();
    if (model.row.trials_done < model.row.spec.trials) {
      m.why = m.tasks_failed ? "every task failed"
                             : StrCat("no task can take more trials after ", model.row.trials_done);
    }
    Logger("daemon")->info("model job {}: its {} trials are spent{}", model.row.id,
                           model.row.trials_done, m.why.empty() ? "" : StrCat(" (", m.why, ")"));
  }
  if (m.allocation_done) {
    // Its tasks re-measure their finalists and end; then it ends.
    if (live.empty()) {
      FinishLocked(model, m.tasks_failed ? JobState::kFailed : JobState::kDone, m.why);
    }
    return;
  }
  if (running && model.row.state != JobState::kRunning) {
    model.waiting.clear();
    SetActiveStateLocked(model, JobState::kRunning);
  } else if (!running) {
    // Why nothing runs: what the task holding the chunk waits for.
    std::string waiting;
    for (JobRuntime* task : live) {
      if (task->WantsMore()) {
        waiting = task->waiting;
      }
    }
    SetWaitingLocked(model, std::move(waiting));
  }
}

void Scheduler::CancelModelTasksLocked(JobRuntime& model, std::string_view why) {
  for (int64_t id : model.model->task_ids) {
    if (JobRuntime* task = jobs_.Find(id); task != nullptr && !IsTerminal(task->row.state)) {
      FinishLocked(*task, JobState::kCancelled, why);
    }
  }
}

void Scheduler::FillModelLocked(const JobRuntime& model, v1::Job* out) const {
  std::vector<std::pair<double, std::optional<double>>> best, defaults;
  int in_flight = 0;
  for (size_t i = 0; i < model.model->task_ids.size(); ++i) {
    const JobTask& spec = model.row.spec.tasks[i];
    v1::TaskProgress* t = out->add_tasks();
    t->set_job_id(static_cast<uint64_t>(spec.job_id));
    t->set_workload(spec.workload);
    t->set_weight(spec.weight);
    const JobRuntime* task = jobs_.Find(spec.job_id);
    if (task == nullptr) {
      // Finished and pruned: what the model job knows of it.
      t->set_state(JobStateToProto(model.row.state));
      t->set_trials_allocated(model.model->allocator.allocated(static_cast<int>(i)));
      t->set_trials_done(model.model->allocator.observed(static_cast<int>(i)));
      best.emplace_back(spec.weight, model.model->allocator.best(static_cast<int>(i)));
      defaults.emplace_back(spec.weight, std::nullopt);
      continue;
    }
    t->set_state(JobStateToProto(task->row.state));
    t->set_trials_allocated(task->row.spec.trials);
    t->set_trials_done(task->row.trials_done);
    if (task->best) {
      task->best->ToProto(t->mutable_best());
    }
    t->set_default_secs(task->default_secs.value_or(0));
    in_flight += task->in_flight;
    best.emplace_back(spec.weight,
                      task->best ? std::optional(task->best->secs) : std::optional<double>());
    defaults.emplace_back(spec.weight, task->default_secs);
  }
  out->set_trials_in_flight(in_flight);
  out->set_estimated_total_secs(WeightedTotal(best));
  out->set_default_total_secs(WeightedTotal(defaults));
}

absl::Status Scheduler::FillModelFromLog(const Job& row, v1::Job* out) {
  std::vector<std::pair<double, std::optional<double>>> best, defaults;
  int done = 0, failed = 0;
  for (const JobTask& spec : row.spec.tasks) {
    ASSIGN_OR_RETURN(Job task, log_->GetJob(spec.job_id));
    ASSIGN_OR_RETURN(v1::Job proto, JobProtoFromLog(task));
    v1::TaskProgress* t = out->add_tasks();
    t->set_job_id(static_cast<uint64_t>(spec.job_id));
    t->set_workload(spec.workload);
    t->set_weight(spec.weight);
    t->set_state(proto.state());
    t->set_trials_allocated(task.spec.trials);
    t->set_trials_done(task.trials_done);
    if (proto.has_best()) {
      *t->mutable_best() = proto.best();
    }
    ASSIGN_OR_RETURN(std::optional<double> default_secs, DefaultSecsFromLog(task));
    t->set_default_secs(default_secs.value_or(0));
    done += task.trials_done;
    failed += task.trials_failed;
    best.emplace_back(spec.weight,
                      proto.has_best() ? std::optional(proto.best().secs()) : std::nullopt);
    defaults.emplace_back(spec.weight, default_secs);
  }
  out->set_trials_done(done);
  out->set_trials_failed(failed);
  out->set_estimated_total_secs(WeightedTotal(best));
  out->set_default_total_secs(WeightedTotal(defaults));
  return absl::OkStatus();
}

}  // namespace tune::tuner
