// Several jobs at once: a job waits while no worker has its device key, and the higher-priority
// job runs first even when it was submitted second.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

TEST(PriorityTest, HigherPriorityJobIsMeasuredFirstAndJobsWaitForAWorker) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  v1::JobSpec low_spec = FastSpec("gemm:M=32,N=32,K=32", 3);
  low_spec.set_priority(0);
  v1::JobSpec high_spec = FastSpec("gemm:M=48,N=48,K=48", 3);
  high_spec.set_priority(10);
  auto low = SubmitJob(address, low_spec);
  auto high = SubmitJob(address, high_spec);
  ASSERT_TRUE(low.ok() && high.ok());

  // No worker yet: both wait, and say why.
  auto waiting = GetJob(address, low->job_id());
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->state(), v1::JOB_STATE_QUEUED);
  EXPECT_THAT(waiting->message(), HasSubstr("waiting for a worker with device key cpu/x86_64/"));
  CommandResult status = RunClient(address, {"status", std::to_string(high->job_id())});
  EXPECT_THAT(status.out, HasSubstr("QUEUED"));

  auto worker = StartWorker(dir, address, "only-worker");
  ASSERT_TRUE(worker.ok());
  auto low_done = WaitForJob(address, low->job_id(), seconds(240));
  auto high_done = WaitForJob(address, high->job_id(), seconds(240));
  ASSERT_TRUE(low_done.ok() && high_done.ok()) << (*daemon)->process().Log();
  EXPECT_EQ(low_done->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(high_done->state(), v1::JOB_STATE_SUCCEEDED);

  // One worker of capacity 1: every trial of the high-priority job is recorded before any of
  // the other's.
  auto high_records = RecordsOfJob(db, static_cast<int64_t>(high->job_id()));
  auto low_records = RecordsOfJob(db, static_cast<int64_t>(low->job_id()));
  ASSERT_TRUE(high_records.ok() && low_records.ok());
  ASSERT_EQ(high_records->size(), 3u);
  ASSERT_EQ(low_records->size(), 3u);
  EXPECT_LT(high_records->back().id, low_records->front().id) << (*daemon)->process().Log();
  EXPECT_LE(high_done->started_at_ms(), low_done->started_at_ms());
}

}  // namespace
}  // namespace tune::testing
