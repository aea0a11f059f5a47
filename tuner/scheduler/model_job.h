// ModelJob: the driver of a model job (job_driver.h): a model's workloads tuned under one trial
// budget. It has no search of its own: the log creates a task job per workload with it (search
// jobs, each with finalists of its own), and the model job owns their budgets: a chunk at a
// time (search::TaskChunks), it gives the next trials to the task where the task scheduler
// (search/task_scheduler.h) expects the largest gain in weighted total time per trial, once the
// previous chunk has been proposed. A task whose chunk is spent waits, QUEUED, for its next one.
//
//   allocating ──kAllocate (task, n): the task's budget grows by n, stored by the writer──┐
//       │  ◀───────────────────────────────────────────────────────────────────────────────┘
//       │ its budget spent, or no task can take more, and nothing outstanding
//       ▼
//   allocation done: each task re-measures its finalists and ends on its own
//       │ every task ended
//       ▼
//   kEnded DONE (FAILED when every task had failed before the budget was spent)
//
// A range job (JobSpec::range) holds the range's midpoints back (ShapeRange::Midpoints): while
// allocating its first share of the budget (the tuned sizes' part of it) only the tuned sizes
// take trials; then each midpoint whose two neighbouring sizes' bests differ (template or config)
// (the lower's carried over to the upper's size, ConfigSpace::Nearest) is reopened, and the
// others end untuned, so the rest of the budget goes where the best config
// changes, with the tuned sizes.
//
// While allocating it is RUNNING when a task runs, else QUEUED saying what the task holding the
// chunk waits for. A resumed model job replays its tasks' budgets and records into the
// allocator, so it decides as the uninterrupted one would. Guarded by the scheduler's lock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/tuning_log.h"
#include "search/task_scheduler.h"
#include "tuner/scheduler/job_driver.h"
#include "tuner/scheduler/job_queue.h"

namespace tune::tuner {

class ModelJob final : public JobDriver {
 public:
  /// Loads the model job `row` from the log: its allocator, told what each task was given and
  /// measured, in the order it measured it. Sets `row`'s trial counters to its tasks' sums. A
  /// log error is returned as is.
  static absl::StatusOr<std::unique_ptr<ModelJob>> Load(TuningLog& log, Job& row);

  ModelJob* AsModel() override { return this; }
  const ModelJob* AsModel() const override { return this; }
  void Snapshot(const JobRuntime& job, const JobQueue& jobs, JobView& view) const override;

  /// What the model job `model` does next (the diagram above). Gives a task its next chunk
  /// itself (its row's budget grows; the step says which task, for the writer to store), and
  /// closes in the allocator the tasks that ended, ran out of configs or stopped early.
  JobStep Next(JobRuntime& model, JobQueue& jobs);

  /// The task jobs, in the order of spec.tasks.
  const std::vector<int64_t>& task_ids() const { return task_ids_; }
  /// True while it may still give its tasks trials: a task whose chunk is spent waits for it.
  bool allocating() const { return !allocation_done_; }
  /// True while the model may still give `task_id` trials (false for a range's midpoint found
  /// not worth tuning).
  bool AwaitsChunk(int64_t task_id) const;
  /// A trial of `task` was counted with `outcome` (failed: `kind` is no kNone): the allocator
  /// learns of it, and the model job counts it in its own counters and ETA.
  void TaskTrialCounted(JobRuntime& model, const JobRuntime& task, const TrialOutcome& outcome,
                        ErrorKind kind);

 private:
  explicit ModelJob(search::TaskScheduler allocator) : allocator_(std::move(allocator)) {}

  // A range job's phases (the diagram's note): which tasks are midpoints, the neighbours each
  // sits between, and whether the midpoints were decided.
  struct RangePhases {
    std::vector<bool> midpoint;
    std::vector<std::pair<int, int>> around;  // per midpoint: the tasks of its neighbours
    std::vector<bool> skipped;                // midpoints found not worth tuning
    int first_share = 0;                      // the budget of the tuned sizes' phase
    bool decided = false;
  };
  /// Decides the midpoints from the tuned sizes' bests: reopens those between differing bests.
  void DecideMidpoints(const JobRuntime& model, const JobQueue& jobs);

  search::TaskScheduler allocator_;
  std::vector<int64_t> task_ids_;
  std::optional<RangePhases> range_;
  // The budget is spent (or no task can take more): the tasks re-measure their finalists and
  // end, then the model job ends.
  bool allocation_done_ = false;
  bool tasks_failed_ = false;  // every task had ended (failed) before the budget was spent
  std::string why_;            // why it ended short of its budget, if it did
};

}  // namespace tune::tuner
