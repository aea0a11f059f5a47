// Jobs that need more than a plain worker, or that are stopped: a job cancelled from
// tune-client while its kernel runs on another process, a job at two threads that only a worker
// offering two may run, and a kernel that calls into a library only one worker preloaded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"
#include "tests/fault/fault_templates.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

TEST(JobControlTest, CancellingARunningJobFromTheClientStopsItsKernelAndFreesTheWorker) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.fault_templates = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto worker = StartWorker(dir, address, "only");
  ASSERT_TRUE(worker.ok()) << worker.status();

  // A trial that would run for about 25 minutes: only a cancel that kills it frees the worker.
  v1::JobSpec spec = FastSpec("gemm:M=16,N=16,K=16", 2);
  spec.add_templates(std::string(tuner::kFaultSlowTemplate));
  spec.mutable_timing()->set_repeat(1000);
  spec.mutable_timing()->set_timeout_ms(3600000);
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto w = ConnectedWorker(address, "only");
        return w.ok() && w->in_flight() >= 1;
      },
      seconds(120)))
      << (*daemon)->process().Log();

  CommandResult cancel = RunClient(address, {"cancel", std::to_string(job->job_id())});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_THAT(cancel.out, HasSubstr("cancelled"));
  auto state = GetJob(address, job->job_id());
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->state(), v1::JOB_STATE_CANCELLED) << "durable when the client returns";

  // The same worker measures the next job, which it could not do while the kernel ran.
  auto next = SubmitJob(address, FastSpec("gemm:M=16,N=16,K=8", 1));
  ASSERT_TRUE(next.ok()) << next.status();
  auto done = WaitForJob(address, next->job_id(), seconds(120));
  ASSERT_TRUE(done.ok()) << done.status() << (*worker)->Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  auto cancelled_records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(cancelled_records.ok()) << cancelled_records.status();
  EXPECT_TRUE(cancelled_records->empty()) << "the cancelled trial left no record";
  EXPECT_TRUE((*worker)->Running());
}

TEST(JobControlTest, AJobAtTwoThreadsWaitsForAWorkerOfferingTwoAndRunsOnlyThere) {
  if (std::thread::hardware_concurrency() < 2) {
    GTEST_SKIP() << "needs 2 cores";
  }
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto narrow = StartWorker(dir, address, "narrow", {"--threads", "1"});
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorker(address, "narrow").ok(); }, seconds(60)));

  constexpr int kTrials = 3;
  v1::JobSpec spec = FastSpec("gemm:M=128,N=128,K=128", kTrials);
  spec.set_target("llvm -mcpu=native -threads=2");
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = GetJob(address, job->job_id());
        return j.ok() && j->message().find("offering at least 2 threads") != std::string::npos;
      },
      seconds(120)))
      << GetJob(address, job->job_id())->DebugString();

  auto wide = StartWorker(dir, address, "wide", {"--threads", "2"});
  ASSERT_TRUE(wide.ok()) << wide.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_failed(), 0);
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(static_cast<int>(records->size()), kTrials);
  for (const Record& r : *records) {
    EXPECT_EQ(r.worker, "wide");
    EXPECT_THAT(r.target, HasSubstr("-threads=2"));
    EXPECT_TRUE(r.measurement.ok()) << r.measurement.message;
  }
}

TEST(JobControlTest, AKernelCallingAPreloadedLibraryRunsOnTheWorkerThatPreloadedIt) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.fault_templates = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto plain = StartWorker(dir, address, "plain");
  auto equipped = StartWorker(dir, address, "equipped", {"--preload", TUNE_TEST_MICROKERNEL});
  ASSERT_TRUE(plain.ok() && equipped.ok());
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 2; }, seconds(60)));

  constexpr int kTrials = 3;
  v1::JobSpec spec = FastSpec("gemm:M=32,N=32,K=32", kTrials);
  spec.add_templates(std::string(tuner::kFaultExternCallTemplate));
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_failed(), 0) << done->message();
  EXPECT_TRUE(done->has_best());
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(static_cast<int>(records->size()), kTrials);
  for (const Record& r : *records) {
    EXPECT_EQ(r.worker, "equipped");
    EXPECT_TRUE(r.measurement.ok()) << r.measurement.message;
  }
}

}  // namespace
}  // namespace tune::testing
