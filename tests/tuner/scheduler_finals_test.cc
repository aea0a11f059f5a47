// A spent job's finals on a real scheduler and log, with a scripted worker: the first pass
// screens the configs the search read fastest, and the screen's figures, not the search's
// readings, choose the finalists that the later passes measure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/tuner/scheduler_fixture.h"
#include "tests/tuner/test_worker.h"
#include "tuner/scheduler/finalists.h"

namespace tune::tuner {
namespace {

using testing::TestWorker;

TEST_F(SchedulerTest, TheScreensFiguresNotTheSearchReadingsChooseTheFinalists) {
  SchedulerOptions options;
  options.remeasure_finalists = true;
  Start(options);
  TestWorker worker;
  worker.Register(*scheduler_, "only", /*threads=*/1, /*capacity=*/2);
  uint64_t job = Submit(Spec(5));
  // The search reads the configs at 1..5 x 1e-4 s, in the order it proposes them.
  std::vector<std::string> configs;
  for (int i = 0; i < 5; ++i) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    ASSERT_TRUE(request.has_value());
    configs.push_back(request->artifact().config());
    worker.Answer(*request, (i + 1) * 1e-4);
  }
  // Re-measured, the slowest reading was an unlucky one (it is the fastest) and the fastest
  // reading was lucky (it is the slowest).
  std::map<std::string, double> truth = {{configs[0], 9e-4},
                                         {configs[1], 2e-4},
                                         {configs[2], 3e-4},
                                         {configs[3], 8e-4},
                                         {configs[4], 1e-4}};
  std::map<std::string, int> measured;
  for (int pass = 0; pass < kFinalPasses; ++pass) {
    const int count = pass == 0 ? 5 : 3;  // the screen, then the three fastest by its figures
    for (int i = 0; i < count; ++i) {
      std::optional<v1::MeasureRequest> request = worker.NextRequest();
      ASSERT_TRUE(request.has_value()) << "pass " << pass << ", request " << i;
      ++measured[request->artifact().config()];
      worker.Answer(*request, truth.at(request->artifact().config()));
    }
    if (pass == 0) {
      absl::StatusOr<v1::Job> running = scheduler_->GetJob(job);
      ASSERT_TRUE(running.ok());
      EXPECT_EQ(running->state(), v1::JOB_STATE_RUNNING);
    }
  }
  v1::JobEvent end = WaitForEnd(job);
  EXPECT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(worker.NoRequestWaiting());
  EXPECT_EQ(measured, (std::map<std::string, int>{{configs[0], 1},
                                                  {configs[1], kFinalPasses},
                                                  {configs[2], kFinalPasses},
                                                  {configs[3], 1},
                                                  {configs[4], kFinalPasses}}))
      << "the search's fastest reading and a slow one are screened out";
  absl::StatusOr<std::optional<BestDecision>> decision = log_->GetBestDecision(
      kWorkload, Target::Parse(Spec(1).target())->Resolved().ToString(), false);
  ASSERT_TRUE(decision.ok() && decision->has_value());
  absl::StatusOr<std::optional<Record>> best = log_->GetRecord((*decision)->record_id);
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->config, configs[4]) << "the config the search read slowest wins";
  EXPECT_DOUBLE_EQ((*decision)->median_secs, 1e-4);
}

}  // namespace
}  // namespace tune::tuner
