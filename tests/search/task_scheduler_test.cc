#include "search/task_scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace tune::search {
namespace {

constexpr int kChunk = 4;

// A task whose k-th trial (from 0) measures `floor + (start - floor) * noise / (1 + k / pace)`:
// the search keeps finding faster configs, more slowly as it goes.
struct World {
  double start, floor, pace;
  double Trial(int k, std::mt19937& rng) const {
    double noise = std::uniform_real_distribution<double>(1.0, 1.6)(rng);
    return floor + (start - floor) * noise / (1.0 + k / pace);
  }
};

// Runs `budget` trials through the scheduler, a chunk at a time, and returns the weighted total
// of the bests.
double Spend(TaskScheduler& scheduler, const std::vector<World>& worlds, int budget) {
  std::mt19937 rng(7);
  std::vector<int> done(worlds.size(), 0);
  for (int spent = 0; spent < budget; spent += kChunk) {
    std::optional<int> task = scheduler.Next();
    if (!task) {
      break;
    }
    scheduler.Allocate(*task, kChunk);
    for (int i = 0; i < kChunk; ++i) {
      scheduler.Observe(*task, worlds[*task].Trial(done[*task]++, rng));
    }
  }
  return *scheduler.EstimatedTotal();
}

TEST(TaskScheduler, GivesEveryTaskOneChunkFirstTheHeaviestFirst) {
  TaskScheduler scheduler({{.weight = 1, .flops = 1e9, .group = "gemm"},
                           {.weight = 3, .flops = 1e9, .group = "gemm"},
                           {.weight = 1, .flops = 5e9, .group = "conv2d"}});
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) {
    std::optional<int> task = scheduler.Next();
    ASSERT_TRUE(task.has_value());
    order.push_back(*task);
    scheduler.Allocate(*task, kChunk);
  }
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));
}

TEST(TaskScheduler, ReachesALowerWeightedTotalThanRoundRobinWhenOneTaskDominates) {
  // A ResNet-like mix: one layer runs 6 times and is slow, the others are light.
  std::vector<World> worlds = {
      {10e-3, 2e-3, 8}, {1e-3, 0.6e-3, 8}, {1e-3, 0.6e-3, 8}, {0.5e-3, 0.3e-3, 8}};
  std::vector<TaskInfo> tasks = {{.weight = 6}, {.weight = 1}, {.weight = 1}, {.weight = 1}};
  TaskScheduler gradient(tasks);
  TaskScheduler uniform(tasks, TaskPolicy::kRoundRobin);
  double gradient_total = Spend(gradient, worlds, 96);
  double uniform_total = Spend(uniform, worlds, 96);
  EXPECT_LT(gradient_total, uniform_total * 0.9);
  EXPECT_GT(gradient.allocated(0), uniform.allocated(0));
  for (int i = 1; i < 4; ++i) {
    EXPECT_GE(gradient.allocated(i), kChunk) << "every task gets its first chunk";
  }
}

TEST(TaskScheduler, ATasksFirstDecisionGivesItTheFirstChunkAndEveryLaterOneTheUsualChunk) {
  for (TaskPolicy policy : {TaskPolicy::kGradient, TaskPolicy::kRoundRobin}) {
    TaskScheduler scheduler({{.weight = 1, .flops = 1e9}, {.weight = 1, .flops = 1e9}}, policy,
                            {.first = 2, .then = 8});
    EXPECT_EQ(scheduler.ChunkOf(0), 2);
    EXPECT_EQ(scheduler.ChunkOf(1), 2);
    scheduler.Allocate(0, scheduler.ChunkOf(0));
    EXPECT_EQ(scheduler.ChunkOf(0), 8);
    EXPECT_EQ(scheduler.ChunkOf(1), 2);
  }
}

TEST(TaskScheduler, ABudgetBelowAFirstChunkPerTaskCutsTheFirstChunkSoEveryTaskIsMeasured) {
  EXPECT_EQ(ChunksFor(10, 3, {.first = 8, .then = 8}).first, 3);
  EXPECT_EQ(ChunksFor(10, 3, {.first = 8, .then = 8}).then, 8);
  EXPECT_EQ(ChunksFor(2, 3, {.first = 8, .then = 8}).first, 1);
  EXPECT_EQ(ChunksFor(384, 24, {.first = 4, .then = 8}).first, 4);
}

TEST(TaskScheduler, RoundRobinGivesTheOpenTaskWithFewestTrials) {
  TaskScheduler scheduler({{}, {}, {}}, TaskPolicy::kRoundRobin);
  scheduler.Allocate(0, 8);
  scheduler.Allocate(2, 4);
  EXPECT_EQ(scheduler.Next(), 1);
  scheduler.Close(1);
  EXPECT_EQ(scheduler.Next(), 2);
}

TEST(TaskScheduler, AClosedTaskGetsNothingAndAllClosedEndsTheJob) {
  TaskScheduler scheduler({{.weight = 100}, {.weight = 1}});
  scheduler.Close(0);
  EXPECT_EQ(scheduler.Next(), 1);
  EXPECT_EQ(scheduler.ExpectedGain(0), 0);
  scheduler.Close(1);
  EXPECT_FALSE(scheduler.Next().has_value());
}

TEST(TaskScheduler, ATaskWhoseResultsAreStillToComeWaitsWhileOthersExpectAGain) {
  TaskScheduler scheduler({{.weight = 1}, {.weight = 1}});
  scheduler.Allocate(0, kChunk);
  scheduler.Allocate(1, kChunk);
  for (int i = 0; i < kChunk; ++i) {
    scheduler.Observe(1, 1e-3 / (i + 1));
  }
  EXPECT_EQ(scheduler.ExpectedGain(0), 0);
  EXPECT_GT(scheduler.ExpectedGain(1), 0);
  EXPECT_EQ(scheduler.Next(), 1);
}

TEST(TaskScheduler, FailedTrialsDoNotCountAsABest) {
  TaskScheduler scheduler({{.weight = 2}, {.weight = 1}});
  scheduler.Observe(0, std::nullopt);
  EXPECT_FALSE(scheduler.best(0).has_value());
  scheduler.Observe(0, 3e-3);
  scheduler.Observe(0, std::nullopt);
  EXPECT_EQ(scheduler.best(0), 3e-3);
  EXPECT_FALSE(scheduler.EstimatedTotal().has_value()) << "task 1 has no best yet";
  scheduler.Observe(1, 1e-3);
  EXPECT_DOUBLE_EQ(*scheduler.EstimatedTotal(), 7e-3);
}

TEST(TaskScheduler, ATaskFarFromItsGroupsBestThroughputExpectsMore) {
  // Tasks 0 and 1 have the same flops and history, but task 2 runs the same work 10x faster
  // than task 1 in its group: task 1 is far from what its group reaches and expects more than
  // task 0, which is the best of its group.
  TaskScheduler scheduler({{.weight = 1, .flops = 1e9, .group = "a"},
                           {.weight = 1, .flops = 1e9, .group = "b"},
                           {.weight = 1, .flops = 1e9, .group = "b"}});
  for (int task : {0, 1, 2}) {
    scheduler.Allocate(task, kChunk);
  }
  for (int i = 0; i < kChunk; ++i) {
    scheduler.Observe(0, 10e-3);
    scheduler.Observe(1, 10e-3);
    scheduler.Observe(2, 1e-3);
  }
  EXPECT_GT(scheduler.ExpectedGain(1), scheduler.ExpectedGain(0));
}

// The gap to the group's best throughput counts with the square of the chance that the task's
// next trial improves, by Laplace's rule over its latest trials: a task whose latest trials
// found nothing expects 1/36 of its gap; one whose every trial improved, 25/36.
TEST(TaskScheduler, ATaskWhoseLatestTrialsFoundNothingExpectsLittleOfItsGroupsGap) {
  constexpr int kTrials = 40;
  auto after = [&](bool improving) {
    TaskScheduler scheduler(
        {{.weight = 1, .flops = 1e9, .group = "g"}, {.weight = 1, .flops = 1e9, .group = "g"}});
    scheduler.Allocate(0, kChunk);
    for (int i = 0; i < kChunk; ++i) {
      scheduler.Observe(0, 1e-3);  // the group's best: 1 TFLOPS
    }
    scheduler.Allocate(1, kTrials);
    for (int i = 0; i < kTrials; ++i) {
      scheduler.Observe(1, improving ? 20e-3 - i * 1e-6 : 20e-3);
    }
    return scheduler;
  };
  const TaskScheduler stuck = after(false);
  const TaskScheduler improving = after(true);
  static_assert(TaskScheduler::kChanceWindow == 4);
  EXPECT_DOUBLE_EQ(stuck.Chance(1), 1.0 / 6);
  EXPECT_DOUBLE_EQ(improving.Chance(1), 5.0 / 6);
  const double gap = *stuck.best(1) - 1e-3;
  EXPECT_DOUBLE_EQ(stuck.ExpectedGain(1), gap / 36);
  EXPECT_DOUBLE_EQ(improving.ExpectedGain(1), (*improving.best(1) - 1e-3) * 25 / 36);
}

// Only the latest kChanceWindow trials count: a task whose first trials improved a lot and whose
// latest four found nothing expects what one that never improved expects.
TEST(TaskScheduler, OnlyATasksLatestTrialsSayWhetherItsNextWillImprove) {
  TaskScheduler scheduler({{.weight = 1}, {.weight = 1}});
  scheduler.Allocate(0, 8);
  scheduler.Allocate(1, 8);
  for (double secs : {8e-3, 4e-3, 2e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3}) {
    scheduler.Observe(0, secs);
  }
  for (int i = 0; i < 8; ++i) {
    scheduler.Observe(1, 1e-3);
  }
  EXPECT_DOUBLE_EQ(scheduler.Chance(0), scheduler.Chance(1));
  EXPECT_DOUBLE_EQ(scheduler.ExpectedGain(0), scheduler.ExpectedGain(1));
  scheduler.Observe(1, 0.5e-3);
  EXPECT_GT(scheduler.Chance(1), scheduler.Chance(0));
}

// A task's expected gain counts the chance that one of its next two trials improves, shared
// over them: a task four times as heavy whose latest four trials missed (chance 1/6) gets the
// next trial before one whose every trial improves (chance 5/6), as it would not if only the
// next trial counted (4 / 6 < 5 / 6, but 4 · 11/72 > 35/72).
TEST(TaskScheduler, AHeavyTaskWhoseLatestTrialsMissedIsNotStarvedByALightOneThatKeepsImproving) {
  static_assert(TaskScheduler::kHorizon == 2);
  TaskScheduler scheduler({{.weight = 4}, {.weight = 1}});
  constexpr int kTrials = 8;
  scheduler.Allocate(0, kTrials);
  scheduler.Allocate(1, kTrials);
  for (int i = 0; i < kTrials; ++i) {
    scheduler.Observe(0, 1e-3);
    scheduler.Observe(1, 1e-3 - i * 1e-6);  // keeps improving, by almost nothing each time
  }
  ASSERT_DOUBLE_EQ(scheduler.Chance(0), 1.0 / 6);
  ASSERT_DOUBLE_EQ(scheduler.Chance(1), 5.0 / 6);
  const double rho = scheduler.MeanImprovement();
  EXPECT_DOUBLE_EQ(scheduler.ExpectedGain(0), 4 * *scheduler.best(0) * rho * 11 / 72);
  EXPECT_DOUBLE_EQ(scheduler.ExpectedGain(1), *scheduler.best(1) * rho * 35 / 72);
  EXPECT_EQ(scheduler.Next(), 0);
}

// ρ, what an improvement has been worth in this job, is the mean relative size of the
// improvements after every task's first trial (a prior of 0.1 counted as one of them).
TEST(TaskScheduler, AnImprovementIsExpectedToBeWorthWhatImprovementsHaveBeenWorthSoFar) {
  TaskScheduler scheduler({{.weight = 1}, {.weight = 1}});
  EXPECT_DOUBLE_EQ(scheduler.MeanImprovement(), TaskScheduler::kPriorImprovement);
  scheduler.Observe(0, 4e-3);  // a first trial: no improvement on anything
  scheduler.Observe(0, 3e-3);  // a quarter faster
  scheduler.Observe(1, 2e-3);
  scheduler.Observe(1, std::nullopt);
  scheduler.Observe(1, 1e-3);  // half
  EXPECT_DOUBLE_EQ(scheduler.MeanImprovement(),
                   (0.25 + 0.5 + TaskScheduler::kPriorImprovement) / 3);
}

Workload ParseWorkload(const char* text) { return *Workload::Parse(text); }

TEST(TaskScheduler, ConvolutionsGroupByFilterAndStrideAndMatrixVectorStandsApart) {
  EXPECT_EQ(
      ThroughputGroupOf(ParseWorkload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1")),
      "conv2d 3x3/1");
  EXPECT_EQ(ThroughputGroupOf(ParseWorkload(
                "conv2d:N=1,C=1024,H=14,W=14,K=2048,R=1,S=1,stride=2,pad=0,layout=NCHW16c")),
            "conv2d 1x1/2");
  EXPECT_EQ(ThroughputGroupOf(ParseWorkload("gemm:M=1,N=1000,K=2048")), "gemm M=1");
  EXPECT_EQ(ThroughputGroupOf(ParseWorkload("gemm:M=128,N=768,K=768")), "gemm");
  TaskInfo info = TaskInfoOf(ParseWorkload("gemm:M=2,N=3,K=4"), 5);
  EXPECT_EQ(info.weight, 5);
  EXPECT_EQ(info.flops, 2.0 * 2 * 3 * 4);
  EXPECT_EQ(info.group, "gemm");
}

// A 1x1 stride-2 layer at a twelfth of the throughput of a 3x3 layer (whose Winograd kernel
// reads above the FMA peak in nominal flops): measured against it, it would expect a share of
// the gap; against its own kind it expects only what an improvement has been worth.
TEST(TaskScheduler, ALayerIsComparedOnlyWithLayersOfItsKind) {
  const Workload fast = ParseWorkload("conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1");
  const Workload slow = ParseWorkload("conv2d:N=1,C=1024,H=14,W=14,K=2048,R=1,S=1,stride=2,pad=0");
  const double fast_secs = fast.Flops() / 250e9, slow_secs = slow.Flops() / 20e9;
  TaskScheduler scheduler({TaskInfoOf(fast, 1), TaskInfoOf(slow, 1)});
  for (int task : {0, 1}) {
    scheduler.Allocate(task, kChunk);
  }
  for (int i = 0; i < kChunk; ++i) {
    scheduler.Observe(0, fast_secs);
    scheduler.Observe(1, slow_secs);
  }
  const double chance = scheduler.Chance(1);
  EXPECT_DOUBLE_EQ(scheduler.ExpectedGain(1),
                   slow_secs * scheduler.MeanImprovement() * (1 - (1 - chance) * (1 - chance)) / 2);
  // The same two tasks in one group: the slow one expects the gap to the fast one's throughput.
  TaskScheduler one_group({{.weight = 1, .flops = fast.Flops(), .group = "conv2d"},
                           {.weight = 1, .flops = slow.Flops(), .group = "conv2d"}});
  for (int task : {0, 1}) {
    one_group.Allocate(task, kChunk);
  }
  for (int i = 0; i < kChunk; ++i) {
    one_group.Observe(0, fast_secs);
    one_group.Observe(1, slow_secs);
  }
  EXPECT_GT(one_group.ExpectedGain(1), scheduler.ExpectedGain(1));
}

TEST(TaskScheduler, TheSameAllocationsAndObservationsGiveTheSameDecisions) {
  std::vector<World> worlds = {{5e-3, 1e-3, 4}, {2e-3, 1e-3, 16}, {9e-3, 8e-3, 2}};
  std::vector<TaskInfo> tasks = {{.weight = 1}, {.weight = 2}, {.weight = 1}};
  TaskScheduler a(tasks), b(tasks);
  EXPECT_EQ(Spend(a, worlds, 64), Spend(b, worlds, 64));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.allocated(i), b.allocated(i));
  }
}

}  // namespace
}  // namespace tune::search
