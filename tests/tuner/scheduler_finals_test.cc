// A spent job's finals on a real scheduler and log, with a scripted worker: the first pass
// screens the configs the search read fastest, and the screen's figures, not the search's
// readings, choose the finalists that the later passes measure; each pass reaches the worker in
// its order, alternated between the finalists' passes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "tests/tuner/scheduler_fixture.h"
#include "tests/tuner/test_worker.h"
#include "tuner/scheduler/finalists.h"

namespace tune::tuner {
namespace {

using testing::TestWorker;

// A job of five trials whose search reads its configs at 1..5 x 1e-4 s in the order it proposes
// them, and whose re-measurements read `truth` (by proposal order and pass, the screen pass 0).
// Runs the job to its end;
// the configs in proposal order, and the configs each pass of the finals measured, in the order
// the worker got them.
struct Finals {
  std::vector<std::string> configs;
  std::vector<std::vector<std::string>> passes;
};

// A target named outright, not the host's: the configs the search proposes first are the same
// five distinct kernels on every host (on a Zen 3 host's -mcpu=native two of them compiled to
// one kernel for 16 x 16 x 16, which the scheduler measures once), and the scripted worker
// registers for it.
constexpr char kFinalsTarget[] = "llvm -mcpu=znver4 -threads=1";
constexpr char kFinalsDeviceKey[] = "cpu/x86_64/znver4";

class SchedulerFinalsTest : public SchedulerTest {
 protected:
  using Truth = std::function<double(size_t config, int pass)>;
  Finals RunFinals(const std::vector<double>& truth) {
    return RunFinals([&](size_t config, int) { return truth.at(config); });
  }
  Finals RunFinals(const Truth& truth) {
    SchedulerOptions options;
    options.remeasure_finalists = true;
    Start(options);
    TestWorker worker;
    v1::Register reg;
    reg.set_name("only");
    reg.set_device_key(kFinalsDeviceKey);
    reg.mutable_capabilities()->set_threads(1);
    reg.mutable_capabilities()->set_capacity(2);
    worker.Register(*scheduler_, reg);
    job_ = Submit(Spec(5, kFinalsTarget));
    Finals finals;
    for (int i = 0; i < 5; ++i) {
      std::optional<v1::MeasureRequest> request = worker.NextRequest();
      if (!request.has_value()) {
        ADD_FAILURE() << "no search request " << i;
        return finals;
      }
      finals.configs.push_back(request->artifact().config());
      worker.Answer(*request, (i + 1) * 1e-4);
    }
    for (int pass = 0; pass < kFinalPasses; ++pass) {
      const int count = pass == 0 ? 5 : 3;  // the screen, then the three fastest by its figures
      finals.passes.emplace_back();
      for (int i = 0; i < count; ++i) {
        std::optional<v1::MeasureRequest> request = worker.NextRequest();
        if (!request.has_value()) {
          ADD_FAILURE() << "pass " << pass << ", no request " << i;
          return finals;
        }
        const std::string& config = request->artifact().config();
        finals.passes.back().push_back(config);
        const size_t index = std::find(finals.configs.begin(), finals.configs.end(), config) -
                             finals.configs.begin();
        worker.Answer(*request, truth(index, pass));
      }
      if (pass == 0) {
        absl::StatusOr<v1::Job> running = scheduler_->GetJob(job_);
        EXPECT_TRUE(running.ok() && running->state() == v1::JOB_STATE_RUNNING);
      }
    }
    EXPECT_EQ(WaitForEnd(job_).state(), v1::JOB_STATE_SUCCEEDED);
    EXPECT_TRUE(worker.NoRequestWaiting());
    return finals;
  }

  uint64_t job_ = 0;
};

// Re-measured, the slowest reading was an unlucky one (it is the fastest) and the fastest
// reading was lucky (it is the slowest).
const std::vector<double> kTruth = {9e-4, 2e-4, 3e-4, 8e-4, 1e-4};

TEST_F(SchedulerFinalsTest, TheScreensFiguresNotTheSearchReadingsChooseTheFinalists) {
  Finals finals = RunFinals(kTruth);
  ASSERT_EQ(finals.passes.size(), static_cast<size_t>(kFinalPasses));
  std::map<std::string, int> measured;
  for (const auto& pass : finals.passes) {
    for (const std::string& config : pass) {
      ++measured[config];
    }
  }
  const std::vector<std::string>& configs = finals.configs;
  EXPECT_EQ(measured, (std::map<std::string, int>{{configs[0], 1},
                                                  {configs[1], kFinalPasses},
                                                  {configs[2], kFinalPasses},
                                                  {configs[3], 1},
                                                  {configs[4], kFinalPasses}}))
      << "the search's fastest reading and a slow one are screened out";
  absl::StatusOr<std::optional<BestDecision>> decision =
      log_->GetBestDecision(kWorkload, Target::Parse(kFinalsTarget)->Resolved().ToString(), false);
  ASSERT_TRUE(decision.ok() && decision->has_value());
  absl::StatusOr<std::optional<Record>> best = log_->GetRecord((*decision)->record_id);
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->config, configs[4]) << "the config the search read slowest wins";
  EXPECT_DOUBLE_EQ((*decision)->median_secs, 1e-4);
}

TEST_F(SchedulerFinalsTest, TheDecisionRestsOnThePassesAfterTheScreen) {
  // The winner read 1.5e-4 in the screen (late in it, on a slowing machine) and 1e-4 in both
  // passes after it.
  Finals finals = RunFinals([](size_t config, int pass) {
    return config == 4 && pass == 0 ? 1.5e-4 : kTruth.at(config);
  });
  ASSERT_EQ(finals.configs.size(), 5u);
  absl::StatusOr<std::optional<BestDecision>> decision =
      log_->GetBestDecision(kWorkload, Target::Parse(kFinalsTarget)->Resolved().ToString(), false);
  ASSERT_TRUE(decision.ok() && decision->has_value());
  absl::StatusOr<std::optional<Record>> best = log_->GetRecord((*decision)->record_id);
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->config, finals.configs[4]);
  EXPECT_DOUBLE_EQ((*decision)->median_secs, 1e-4);
  EXPECT_LT((*decision)->relative_ci, 0.01) << "the screen's reading widened the interval";
}

TEST_F(SchedulerFinalsTest, EachPassReachesTheWorkerInOrderAndTheFinalistsOrderAlternates) {
  Finals finals = RunFinals(kTruth);
  ASSERT_EQ(finals.passes.size(), 3u) << "the test follows the screen and two passes";
  const std::vector<std::string>& c = finals.configs;
  // The screen in the order of the search's readings, whatever its builds took; the finalists
  // fastest first by the screen's figures, then slowest first: a drift within a pass (a GPU
  // slowing as it heats) touches each finalist alike over the two.
  EXPECT_EQ(finals.passes[0], (std::vector<std::string>{c[0], c[1], c[2], c[3], c[4]}));
  EXPECT_EQ(finals.passes[1], (std::vector<std::string>{c[4], c[1], c[2]}));
  EXPECT_EQ(finals.passes[2], (std::vector<std::string>{c[2], c[1], c[4]}));
}

}  // namespace
}  // namespace tune::tuner
