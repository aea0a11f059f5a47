#include "tuner/scheduler/model_job.h"

#include <algorithm>
#include <map>

#include "common/logging.h"
#include "common/shape_range.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/scheduler/job_messages.h"
#include "tuner/scheduler/search_job.h"

namespace tune::tuner {
namespace {

search::TaskInfo TaskInfoOf(const JobTask& task) {
  absl::StatusOr<Workload> workload = Workload::Parse(task.workload);
  if (!workload.ok()) {
    return search::TaskInfo{.weight = task.weight};
  }
  return search::TaskInfoOf(*workload, task.weight);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelJob>> ModelJob::Load(TuningLog& log, Job& row) {
  std::vector<search::TaskInfo> infos;
  for (const JobTask& task : row.spec.tasks) {
    infos.push_back(TaskInfoOf(task));
  }
  const int tasks = static_cast<int>(infos.size());
  // A reverify model job gives each task its whole share at once (its winner and runners-up),
  // in turn: there is nothing to learn about where trials pay.
  const int share = std::max(row.spec.trials / std::max(tasks, 1), 1);
  const search::TaskChunks chunks = row.spec.reverify ? search::TaskChunks{share, share}
                                                      : search::ChunksFor(row.spec.trials, tasks);
  std::unique_ptr<ModelJob> model(new ModelJob(search::TaskScheduler(
      infos, row.spec.reverify ? search::TaskPolicy::kRoundRobin : search::TaskPolicy::kGradient,
      chunks)));
  row.trials_done = 0;
  row.trials_failed = 0;
  // The allocator replays what the tasks were given and measured, in the order they measured
  // it, so a resumed model job decides as the uninterrupted one would.
  for (size_t i = 0; i < row.spec.tasks.size(); ++i) {
    const int64_t task_id = row.spec.tasks[i].job_id;
    model->task_ids_.push_back(task_id);
    ASSIGN_OR_RETURN(Job task, log.GetJob(task_id));
    model->allocator_.Allocate(static_cast<int>(i), task.spec.trials);
    ASSIGN_OR_RETURN(std::vector<Record> records, log.ListRecords(RecordFilter{.job_id = task_id}));
    for (const Record& r : records) {
      model->allocator_.Observe(static_cast<int>(i), r.measurement.ok()
                                                         ? std::optional(r.measurement.MedianSecs())
                                                         : std::nullopt);
    }
    if (IsTerminal(task.state)) {
      model->allocator_.Close(static_cast<int>(i));
    }
    row.trials_done += task.trials_done;
    row.trials_failed += task.trials_failed;
  }
  if (!row.spec.range.empty()) {
    ASSIGN_OR_RETURN(ShapeRange range, ShapeRange::Parse(row.spec.range));
    // Each size's task; each midpoint sits between the two tuned sizes it was made from.
    std::map<int64_t, int> task_of;
    for (size_t i = 0; i < row.spec.tasks.size(); ++i) {
      absl::StatusOr<Workload> w = Workload::Parse(row.spec.tasks[i].workload);
      if (const int64_t size = w.ok() ? range.SizeOf(*w) : 0; size > 0) {
        task_of[size] = static_cast<int>(i);
      }
    }
    const size_t tasks = row.spec.tasks.size();
    RangePhases phases{std::vector<bool>(tasks, false),
                       std::vector<std::pair<int, int>>(tasks, {-1, -1}),
                       std::vector<bool>(tasks, false)};
    const std::vector<int64_t> tuned = range.TunedSizes();
    auto task = [&](int64_t size) { return task_of.contains(size) ? task_of[size] : -1; };
    for (size_t t = 1; t < tuned.size(); ++t) {
      const int i = task(ShapeRange::MidpointBetween(tuned[t - 1], tuned[t]));
      if (i >= 0) {
        phases.midpoint[i] = true;
        phases.around[i] = {task(tuned[t - 1]), task(tuned[t])};
      }
    }
    const int held =
        static_cast<int>(std::count(phases.midpoint.begin(), phases.midpoint.end(), true));
    const int first = static_cast<int>(tasks) - held;
    phases.first_share =
        std::max(first, static_cast<int>(static_cast<int64_t>(row.spec.trials) * first / tasks));
    // Resumed after the decision: a midpoint was given trials or ended. Before it, every
    // midpoint is held back; after it, those given no trials were left untuned.
    for (size_t i = 0; i < tasks; ++i) {
      const int index = static_cast<int>(i);
      phases.decided =
          phases.decided || (phases.midpoint[i] && (model->allocator_.allocated(index) > 0 ||
                                                    model->allocator_.closed(index)));
    }
    for (size_t i = 0; i < tasks; ++i) {
      const int index = static_cast<int>(i);
      if (phases.midpoint[i] && (!phases.decided || model->allocator_.allocated(index) == 0)) {
        phases.skipped[i] = phases.decided;
        model->allocator_.Close(index);
      }
    }
    model->range_ = std::move(phases);
  }
  return model;
}

bool ModelJob::AwaitsChunk(int64_t task_id) const {
  if (allocation_done_) {
    return false;
  }
  if (!range_ || !range_->decided) {
    return true;
  }
  const auto index = std::find(task_ids_.begin(), task_ids_.end(), task_id) - task_ids_.begin();
  return index >= static_cast<long>(task_ids_.size()) || !range_->skipped[index];
}

namespace {

// The best of `from` carried over to `to` (ConfigSpace::Nearest on `to`'s space: knobs that
// follow the size, such as a tile clamped to M, move with it) equals `to`'s best: the best config
// does not change between the two sizes.
bool SameBest(const SearchJob& from, const SearchJob& to) {
  const std::optional<BestSoFar>& a = from.best();
  const std::optional<BestSoFar>& b = to.best();
  if (!a || !b || a->template_name != b->template_name) {
    return false;
  }
  for (const KernelTemplate* tpl : to.templates()) {
    if (tpl->name != b->template_name || tpl->build_object) {
      continue;
    }
    absl::StatusOr<Config> config = ParseConfig(a->config);
    std::optional<Config> carried =
        config.ok() ? tpl->space(to.workload(), to.target()).Nearest(*config) : std::nullopt;
    return carried && ConfigToString(*carried) == b->config;
  }
  return a->config == b->config;
}

}  // namespace

void ModelJob::DecideMidpoints(const JobRuntime& model, const JobQueue& jobs) {
  range_->decided = true;
  auto search_of = [&](int index) -> const SearchJob* {
    const JobRuntime* task = index < 0 ? nullptr : jobs.Find(task_ids_[index]);
    return task == nullptr ? nullptr : task->driver->AsSearch();
  };
  std::vector<std::string> tuned, skipped;
  for (size_t i = 0; i < task_ids_.size(); ++i) {
    if (!range_->midpoint[i]) {
      continue;
    }
    const auto [below, above] = range_->around[i];
    const SearchJob* a = search_of(below);
    const SearchJob* b = search_of(above);
    const std::string& workload = model.row.spec.tasks[i].workload;
    if (a != nullptr && b != nullptr && SameBest(*a, *b)) {
      range_->skipped[i] = true;  // stays closed; ends untuned once it stops awaiting a chunk
      skipped.push_back(workload);
    } else {
      allocator_.Reopen(static_cast<int>(i));
      tuned.push_back(workload);
    }
  }
  Logger("daemon")->info(
      "range job {}: tuning {} midpoint(s) where the best config changes ({}); {} left untuned "
      "(the same best on both sides)",
      model.row.id, tuned.size(), Join(tuned, "; "), skipped.size());
}

JobStep ModelJob::Next(JobRuntime& model, JobQueue& jobs) {
  int allocated = 0;
  bool chunk_open = false;  // a task still proposes its chunk
  bool running = false;
  int outstanding = 0;
  std::vector<JobRuntime*> live;
  for (size_t i = 0; i < task_ids_.size(); ++i) {
    JobRuntime* task = jobs.Find(task_ids_[i]);
    const int index = static_cast<int>(i);
    if (task == nullptr || IsTerminal(task->row.state)) {
      allocator_.Close(index);  // it failed (or was never loaded)
      continue;
    }
    const SearchJob& search = *task->driver->AsSearch();
    live.push_back(task);
    if (search.exhausted() || search.EarlyStopped(*task)) {
      allocator_.Close(index);
    }
    chunk_open = chunk_open || search.WantsMore(*task);
    running = running || task->row.state == JobState::kRunning;
    outstanding += task->Outstanding();
  }
  for (int i = 0; i < allocator_.size(); ++i) {
    allocated += allocator_.allocated(i);  // tasks that ended included
  }
  JobStep step;
  if (range_ && !range_->decided && !chunk_open && outstanding == 0 &&
      (allocated >= range_->first_share || !allocator_.Next())) {
    // The tuned sizes have their share: the midpoints where their bests differ are next.
    DecideMidpoints(model, jobs);
  }
  // A range job's first phase spends the tuned sizes' share only.
  const int budget = range_ && !range_->decided ? range_->first_share : model.row.spec.trials;
  if (!allocation_done_ && !chunk_open && allocated < budget) {
    if (std::optional<int> next = allocator_.Next()) {
      JobRuntime* task = jobs.Find(task_ids_[*next]);
      const int n = std::min(allocator_.ChunkOf(*next), budget - allocated);
      allocator_.Allocate(*next, n);
      task->row.spec.trials += n;
      chunk_open = true;
      Logger("daemon")->debug("model job {}: {} more trials to job {} ({})", model.row.id, n,
                              task->row.id, task->row.spec.workload);
      step.action = JobStep::Action::kAllocate;
      step.task = task->row.id;
      step.n = task->row.spec.trials;
    }
  }
  if (!allocation_done_ && !chunk_open && outstanding == 0) {
    // Nothing more to give: each task re-measures its finalists and ends on its own.
    allocation_done_ = true;
    tasks_failed_ = live.empty();
    if (model.row.trials_done < model.row.spec.trials) {
      why_ = ModelEndedShort(tasks_failed_, model.row.trials_done);
    }
    Logger("daemon")->info("model job {}: its {} trials are spent{}", model.row.id,
                           model.row.trials_done, why_.empty() ? "" : StrCat(" (", why_, ")"));
  }
  if (allocation_done_) {
    // Its tasks re-measure their finalists and end; then it ends.
    if (live.empty()) {
      return JobStep::Ended(tasks_failed_ ? JobState::kFailed : JobState::kDone, why_);
    }
    return step;
  }
  if (running) {
    step.standing = model.row.state == JobState::kRunning ? JobStep::Standing::kUnchanged
                                                          : JobStep::Standing::kRunning;
    return step;
  }
  // Why nothing runs: what the task holding the chunk waits for.
  step.standing = JobStep::Standing::kWaiting;
  for (JobRuntime* task : live) {
    if (task->driver->AsSearch()->WantsMore(*task)) {
      step.why = task->waiting;
    }
  }
  return step;
}

void ModelJob::TaskTrialCounted(JobRuntime& model, const JobRuntime& task,
                                const TrialOutcome& outcome, ErrorKind kind) {
  const auto index = std::find(task_ids_.begin(), task_ids_.end(), task.row.id) - task_ids_.begin();
  allocator_.Observe(static_cast<int>(index),
                     outcome.ok() ? std::optional(outcome.secs) : std::nullopt);
  ++model.row.trials_done;
  if (kind != ErrorKind::kNone) {
    ++model.row.trials_failed;
    model.last_error = StrCat("job ", task.row.id, ": ", task.last_error);
  }
  model.NoteCompleted(Clock::now());
}

void ModelJob::Snapshot(const JobRuntime& model, const JobQueue& jobs, JobView& view) const {
  int in_flight = 0;
  for (size_t i = 0; i < task_ids_.size(); ++i) {
    const JobTask& spec = model.row.spec.tasks[i];
    TaskView& t = view.tasks.emplace_back();
    t.job_id = spec.job_id;
    t.workload = spec.workload;
    t.weight = spec.weight;
    const JobRuntime* task = jobs.Find(spec.job_id);
    if (task == nullptr) {
      // Finished and pruned: what the model job knows of it.
      t.state = model.row.state;
      t.trials_allocated = allocator_.allocated(static_cast<int>(i));
      t.trials_done = allocator_.observed(static_cast<int>(i));
      t.best_secs = allocator_.best(static_cast<int>(i));
      continue;
    }
    const SearchJob& search = *task->driver->AsSearch();
    t.state = task->row.state;
    t.trials_allocated = task->row.spec.trials;
    t.trials_done = task->row.trials_done;
    t.in_flight = task->in_flight;
    t.best = search.best();
    t.best_secs = search.best() ? std::optional(search.best()->secs) : std::nullopt;
    t.default_secs = search.default_secs();
    in_flight += task->in_flight;
  }
  view.trials_in_flight = in_flight;
}

}  // namespace tune::tuner
