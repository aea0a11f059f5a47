// The daemon SIGKILLed in the middle of a job and restarted on the same database: the job
// finishes, every record from before the kill is kept, and no config is measured twice.
#include <gtest/gtest.h>

#include <set>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

TEST(DaemonRestartTest, ResumedJobKeepsEveryRecordAndMeasuresNoConfigTwice) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  constexpr int kTrials = 8;
  v1::JobSpec spec = FastSpec("gemm:M=64,N=64,K=64", kTrials);
  spec.mutable_timing()->set_min_repeat_ms(30);
  spec.mutable_timing()->set_repeat(3);
  uint64_t job_id = 0;
  std::set<std::string> before;
  {
    auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
    ASSERT_TRUE(daemon.ok()) << daemon.status();
    auto job = SubmitJob((*daemon)->address(), spec);
    ASSERT_TRUE(job.ok()) << job.status();
    job_id = job->job_id();
    ASSERT_TRUE(WaitFor(
        [&] {
          auto j = GetJob((*daemon)->address(), job_id);
          return j.ok() && j->trials_done() >= 3;
        },
        seconds(120)))
        << (*daemon)->process().Log();
    (*daemon)->process().Kill();  // SIGKILL: no chance to clean up
    auto records = RecordsOfJob(db, static_cast<int64_t>(job_id));
    ASSERT_TRUE(records.ok()) << records.status();
    ASSERT_GE(records->size(), 3u);
    ASSERT_LT(records->size(), static_cast<size_t>(kTrials));
    for (const Record& r : *records) {
      before.insert(r.uid);
    }
  }

  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto done = WaitForJob((*daemon)->address(), job_id, seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), kTrials);

  auto records = RecordsOfJob(db, static_cast<int64_t>(job_id));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(static_cast<int>(records->size()), kTrials);
  std::set<std::string> after;
  for (const Record& r : *records) {
    after.insert(r.uid);
  }
  for (const std::string& uid : before) {
    EXPECT_TRUE(after.contains(uid)) << "lost " << uid;
  }
  for (const auto& [config, count] : CountPerConfig(*records)) {
    EXPECT_EQ(count, 1) << config;
  }
}

}  // namespace
}  // namespace tune::testing
