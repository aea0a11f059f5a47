#include "search/task_scheduler.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>

#include "common/strings.h"

namespace tune::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The backward gradient looks at the improvement over the latest half of a task's trials, at
// most this many.
constexpr int kMaxWindow = 16;

}  // namespace

TaskScheduler::TaskScheduler(std::vector<TaskInfo> tasks, TaskPolicy policy, TaskChunks chunks)
    : tasks_(std::move(tasks)), policy_(policy), chunks_(chunks), state_(tasks_.size()) {
  assert(chunks_.first > 0 && chunks_.then > 0);
}

int TaskScheduler::ChunkOf(int task) const {
  return state_[task].allocated == 0 ? chunks_.first : chunks_.then;
}

void TaskScheduler::Allocate(int task, int trials) { state_[task].allocated += trials; }

void TaskScheduler::Observe(int task, std::optional<double> secs) {
  std::vector<double>& history = state_[task].history;
  double best = history.empty() ? kInf : history.back();
  if (secs && *secs > 0) {
    best = std::min(best, *secs);
  }
  history.push_back(best);
}

void TaskScheduler::Close(int task) { state_[task].closed = true; }

std::optional<double> TaskScheduler::best(int task) const {
  const std::vector<double>& history = state_[task].history;
  if (history.empty() || history.back() == kInf) {
    return std::nullopt;
  }
  return history.back();
}

std::string ThroughputGroupOf(const Workload& workload) {
  if (workload.op() == OpKind::kConv2d) {
    const Conv2dShape& s = workload.conv2d();
    return StrCat("conv2d ", s.r, "x", s.s, "/", s.stride);
  }
  if (workload.op() == OpKind::kGemm && workload.gemm().m == 1) {
    return "gemm M=1";
  }
  return std::string(OpKindName(workload.op()));
}

TaskChunks ChunksFor(int budget, int tasks, TaskChunks usual) {
  if (tasks > 0) {
    usual.first = std::clamp(budget / tasks, 1, usual.first);
  }
  return usual;
}

TaskInfo TaskInfoOf(const Workload& workload, double weight) {
  return {.weight = weight, .flops = workload.Flops(), .group = ThroughputGroupOf(workload)};
}

std::optional<double> TaskScheduler::EstimatedTotal() const {
  double total = 0;
  for (int i = 0; i < size(); ++i) {
    std::optional<double> b = best(i);
    if (!b) {
      return std::nullopt;
    }
    total += tasks_[i].weight * *b;
  }
  return total;
}

double TaskScheduler::BestThroughput(const std::string& group) const {
  double rate = 0;
  for (int i = 0; i < size(); ++i) {
    std::optional<double> b = best(i);
    if (b && tasks_[i].group == group && tasks_[i].flops > 0) {
      rate = std::max(rate, tasks_[i].flops / *b);
    }
  }
  return rate;
}

double TaskScheduler::ExpectedGain(int task) const {
  const State& s = state_[task];
  if (s.closed) {
    return 0;
  }
  if (s.allocated == 0) {
    return kInf;
  }
  std::optional<double> b = best(task);
  if (!b) {
    return 0;  // its results are still to come, or every one failed
  }
  const int n = static_cast<int>(s.history.size());
  const int window = std::clamp(n / 2, 1, kMaxWindow);
  double backward = 0;
  if (n > window && s.history[n - 1 - window] != kInf) {
    backward = (s.history[n - 1 - window] - *b) / window;
  }
  double forward = *b / s.allocated;
  const TaskInfo& info = tasks_[task];
  if (double rate = BestThroughput(info.group); rate > 0 && info.flops > 0) {
    // What the task would take at the group's best throughput, with slack: a task far slower
    // than its group's best may gain more than its mean so far (Ansor takes the more optimistic
    // of the two guesses). The gap is what the whole search might still win, not one trial's
    // share: it counts in proportion to the chance that a trial of this task finds a faster
    // config, estimated from its own trials by Laplace's rule. A layer that its group's best
    // kernels do not suit (Winograd's tiles on a 7x7 image) stops drawing trials once its
    // trials stop finding anything, rather than taking the rest of the budget (584 of 768 on
    // ResNet-50, bench/RESULTS.md).
    int improvements = 0;
    for (int i = 0; i < n; ++i) {
      improvements += s.history[i] < (i == 0 ? kInf : s.history[i - 1]) ? 1 : 0;
    }
    const double chance = (improvements + 1.0) / (n + 2.0);
    forward = std::max(forward, (*b - kBeta * info.flops / rate) * chance);
  }
  return info.weight * (kAlpha * backward + (1 - kAlpha) * forward);
}

std::optional<int> TaskScheduler::Next() const {
  std::optional<int> fewest;  // the open task with the fewest trials (first on ties)
  for (int i = 0; i < size(); ++i) {
    if (!state_[i].closed && (!fewest || state_[i].allocated < state_[*fewest].allocated)) {
      fewest = i;
    }
  }
  if (!fewest || policy_ == TaskPolicy::kRoundRobin) {
    return fewest;
  }
  // First one chunk each, the heaviest task first.
  std::optional<int> first;
  for (int i = 0; i < size(); ++i) {
    if (!state_[i].closed && state_[i].allocated == 0 &&
        (!first ||
         tasks_[i].weight * tasks_[i].flops > tasks_[*first].weight * tasks_[*first].flops)) {
      first = i;
    }
  }
  if (first) {
    return first;
  }
  std::optional<int> chosen;
  double best_gain = 0;
  for (int i = 0; i < size(); ++i) {
    double gain = ExpectedGain(i);
    if (gain > best_gain) {
      best_gain = gain;
      chosen = i;
    }
  }
  return chosen ? chosen : fewest;
}

}  // namespace tune::search
