#include "search/task_scheduler.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

#include "common/strings.h"

namespace tune::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
  const double before = history.empty() ? kInf : history.back();
  double best = before;
  if (secs && *secs > 0) {
    best = std::min(best, *secs);
  }
  if (best < before && before != kInf) {
    ++improvements_;
    improvement_sum_ += (before - best) / before;
  }
  history.push_back(best);
}

void TaskScheduler::Close(int task) { state_[task].closed = true; }

void TaskScheduler::Reopen(int task) { state_[task].closed = false; }

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

double TaskScheduler::Chance(int task) const {
  const std::vector<double>& history = state_[task].history;
  const int n = static_cast<int>(history.size());
  const int from = std::max(0, n - kChanceWindow);
  int improvements = 0;
  for (int i = from; i < n; ++i) {
    improvements += history[i] < (i == 0 ? kInf : history[i - 1]) ? 1 : 0;
  }
  return (improvements + 1.0) / (n - from + 2.0);
}

double TaskScheduler::MeanImprovement() const {
  return (improvement_sum_ + kPriorImprovement) / (improvements_ + 1.0);
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
  const double chance = Chance(task);
  // The chance that one of the next kHorizon trials improves, per trial.
  const double per_trial = (1 - std::pow(1 - chance, kHorizon)) / kHorizon;
  double gain = *b * MeanImprovement() * per_trial;
  const TaskInfo& info = tasks_[task];
  if (double rate = BestThroughput(info.group); rate > 0 && info.flops > 0) {
    gain = std::max(gain, std::max(0.0, *b - info.flops / rate) * chance * chance);
  }
  return info.weight * gain;
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
