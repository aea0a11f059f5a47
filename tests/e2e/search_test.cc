// How jobs end short of their budget: a grid search over a tiny space stops when the space is
// exhausted, a second job on the same workload and target re-measures nothing, and early
// stopping ends a job that stopped improving.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

TEST(SearchTest, ExhaustedSpaceEndsTheJobAndARepeatJobMeasuresNothingTwice) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  v1::JobSpec spec = FastSpec("gemm:M=1,N=1,K=1", 1000);
  spec.set_strategy("grid");
  auto first = SubmitJob((*daemon)->address(), spec);
  ASSERT_TRUE(first.ok()) << first.status();
  auto done = WaitForJob((*daemon)->address(), first->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_GT(done->trials_done(), 0);
  EXPECT_LT(done->trials_done(), 1000);
  EXPECT_THAT(done->message(), HasSubstr("search space exhausted"));

  auto second = SubmitJob((*daemon)->address(), spec);
  ASSERT_TRUE(second.ok()) << second.status();
  auto again = WaitForJob((*daemon)->address(), second->job_id(), seconds(60));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(again->trials_done(), 0);
  EXPECT_THAT(again->message(), HasSubstr("exhausted after 0 trials"));

  auto records = AllRecords(db);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(static_cast<int>(records->size()), done->trials_done());
  for (const auto& [config, count] : CountPerConfig(*records)) {
    EXPECT_EQ(count, 1) << config;
  }
}

TEST(SearchTest, EarlyStoppingEndsAJobThatStoppedImproving) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"), {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  v1::JobSpec spec = FastSpec("gemm:M=32,N=32,K=32", 60);
  spec.set_early_stopping(2);
  auto job = SubmitJob((*daemon)->address(), spec);
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob((*daemon)->address(), job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_LT(done->trials_done(), 60);
  EXPECT_THAT(done->message(), HasSubstr("early stopping"));
  EXPECT_EQ(done->spec().early_stopping(), 2);
}

}  // namespace
}  // namespace tune::testing
