// TaskScheduler: spends the trials of a model job across its workloads (tasks) where the
// expected gain in weighted total time per trial is largest.
//
// The job's objective is the weighted total Σ weight_i · best_i. Each decision gives one task
// the next chunk of trials:
//   - every task first gets one chunk, the heaviest (weight x flops) first, so that each has a
//     measured best;
//   - then the task with the largest expected gain per trial over its next kHorizon trials,
//     weight_i · max(best_i · ρ · (1 - (1 - chance_i)^kHorizon) / kHorizon, gap_i · chance_i²),
//     where
//       chance_i is the chance that its next trial finds a faster config, by Laplace's rule over
//         its latest kChanceWindow trials ((improvements + 1) / (trials + 2)): a task whose
//         recent trials found nothing expects little, whatever its earlier ones found; over two
//         trials rather than one, a task whose latest trials missed is not starved for as long
//         while its search still has a faster config a few trials on;
//       ρ is the mean relative size of an improvement over every task's trials after its first
//         (what a faster config has been worth in this job);
//       gap_i is how much faster the task would run at the best throughput among tasks of its
//         group (ThroughputGroupOf). The gap is what its whole search might still win, not what
//         one trial wins, and some layers cannot reach their group's best at all (Winograd's
//         tiles on a 7x7 image): it counts only while the task keeps improving, hence the
//         square of the chance. On replays of ResNet-50 it moved the trials to 95% by one at
//         most (with the chance unsquared it poured trials into 512 3x3 7x7); it guards a layer
//         far below its kind;
//   - a task whose search is exhausted or stopped is closed and gets nothing more.
// `kRoundRobin` gives each chunk to the open task with the fewest trials instead (uniform
// allocation, the baseline it is measured against); so does the gradient policy when no task
// expects a gain (e.g. every result is still to come).
//
// The rule replaced Ansor's (Zheng et al., OSDI 2020, section 6: a mix of each task's recent
// improvement per trial and the larger of its mean improvement and its group gap), which cycled
// through nearly every layer of ResNet-50 like weighted round robin: on ResNet-50 this rule
// reaches 95% of the per-layer best total in 140 trials where that one took 201 and uniform
// allocation one trial at a time 263 (bench/RESULTS.md, 2026-11-29, fourth session). The window
// of 4 trials was chosen on replays of logged searches; 6 or 8 cost 35-60% more trials. The
// horizon of 2 trials took 6-15% fewer trials than 1 on the replays of four logs (1.5 to 2.5
// about as few), and live 114-127 to 95% where uniform allocation one trial at a time took
// 235-338 (bench/RESULTS.md, 2026-11-29, fifth session).
//
// Deterministic: the same allocations and observations in the same order give the same
// decisions, so a resumed job that replays its tasks' records decides as the uninterrupted one
// would. Not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/workload.h"

namespace tune::search {

struct TaskInfo {
  double weight = 1;       // how often the workload runs per inference
  double flops = 0;        // floating-point operations of one run (0: unknown)
  std::string group = {};  // tasks whose throughputs compare (ThroughputGroupOf)
};

/// The group of workloads whose best throughput a task's optimistic guess compares with: the
/// operator, for conv2d with its filter size and stride ("conv2d 1x1/2"), for GEMM with
/// matrix-vector (M = 1) apart. Workloads of different groups need not reach the same
/// throughput at all: a 1x1 convolution of stride 2 uses one input position in four, and
/// matrix-vector is bound by memory. Compared with the whole job, such a task looked forever
/// slow and took 504 of 768 ResNet-50 trials (bench/RESULTS.md, 2026-11-27).
std::string ThroughputGroupOf(const Workload& workload);

/// The task of `workload`, run `weight` times per inference.
TaskInfo TaskInfoOf(const Workload& workload, double weight);

enum class TaskPolicy { kGradient, kRoundRobin };

/// Trials per decision: a task's first chunk, then every later one. One trial per decision: the
/// first times every layer's default (24 trials for ResNet-50), and each later one goes where the
/// latest results say; in replays of ResNet-50's logged searches, later chunks of 2 took 143
/// trials to 95% where chunks of 1 took 131 (bench/RESULTS.md, 2026-11-29, fourth session). The
/// daemon decides again as soon as a chunk is proposed, not measured, so workers stay busy.
struct TaskChunks {
  int first = 1;
  int then = 1;
};

/// The chunks of a model job of `budget` trials over `tasks` tasks: `usual`, with the first
/// chunk cut to budget / tasks (at least 1) where the budget cannot give every task the usual
/// one, so that every task is measured before any gets a second chunk.
TaskChunks ChunksFor(int budget, int tasks, TaskChunks usual = {});

class TaskScheduler {
 public:
  /// The latest trials whose improvements give a task's chance that its next trial improves.
  static constexpr int kChanceWindow = 4;
  /// How many of a task's next trials its expected gain looks over: the chance that one of them
  /// improves, per trial.
  static constexpr int kHorizon = 2;
  /// The relative size of an improvement assumed before any task's trials have shown one, with
  /// the weight of one observed improvement.
  static constexpr double kPriorImprovement = 0.1;

  explicit TaskScheduler(std::vector<TaskInfo> tasks, TaskPolicy policy = TaskPolicy::kGradient,
                         TaskChunks chunks = {});

  int size() const { return static_cast<int>(tasks_.size()); }

  /// The trials that the next decision for `task` gives it: chunks.first before the task has
  /// any, then chunks.then.
  int ChunkOf(int task) const;

  /// The task that should get the next chunk of trials; nullopt when every task is closed.
  std::optional<int> Next() const;
  /// Records that `trials` more trials were given to `task` (whether or not Next chose it).
  void Allocate(int task, int trials);
  /// One finished trial of `task`, in the order they finished: its median seconds, or nullopt
  /// when it failed.
  void Observe(int task, std::optional<double> secs);
  /// `task` takes no more trials (its search is exhausted or stopped).
  void Close(int task);
  /// `task` takes trials again (a task held back until others showed it is worth tuning).
  void Reopen(int task);

  bool closed(int task) const { return state_[task].closed; }
  int allocated(int task) const { return state_[task].allocated; }
  int observed(int task) const { return static_cast<int>(state_[task].history.size()); }
  /// The task's fastest successful trial so far.
  std::optional<double> best(int task) const;
  /// Σ weight · best over the tasks; nullopt until every task has a best.
  std::optional<double> EstimatedTotal() const;
  /// The expected gain per trial of the task's next kHorizon trials that Next ranks by (0 for a
  /// closed task; +inf before its first chunk). Exposed for people (status) and tests.
  double ExpectedGain(int task) const;
  /// The chance that the task's next trial finds a faster config (Laplace's rule over its latest
  /// kChanceWindow trials; 1/2 before any).
  double Chance(int task) const;
  /// ρ: the mean relative size of an improvement after a task's first trial, over every task.
  double MeanImprovement() const;

 private:
  struct State {
    int allocated = 0;
    bool closed = false;
    std::vector<double> history;  // best-so-far after each observed trial (+inf before one)
  };
  double BestThroughput(const std::string& group) const;

  std::vector<TaskInfo> tasks_;
  TaskPolicy policy_;
  TaskChunks chunks_;
  std::vector<State> state_;
  int improvements_ = 0;        // improvements after a task's first success, over every task
  double improvement_sum_ = 0;  // the sum of their relative sizes
};

}  // namespace tune::search
