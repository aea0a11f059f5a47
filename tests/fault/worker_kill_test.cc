// A worker SIGKILLed in the middle of a job: its trials go to the other worker, the job
// completes, and every trial is recorded exactly once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

TEST(WorkerKillTest, JobCompletesAndEveryTrialIsRecordedExactlyOnce) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.heartbeat_ms = 200, .worker_deadline_ms = 30000});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto victim = StartWorker(dir, address, "victim");
  auto survivor = StartWorker(dir, address, "survivor");
  ASSERT_TRUE(victim.ok() && survivor.ok());
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 2; }, seconds(30)));

  // Slow enough trials (rounds of >= 40 ms) that the kill lands while one is in flight.
  constexpr int kTrials = 8;
  v1::JobSpec spec = FastSpec("gemm:M=64,N=64,K=64", kTrials);
  spec.mutable_timing()->set_min_repeat_ms(40);
  spec.mutable_timing()->set_repeat(3);
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();

  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = GetJob(address, job->job_id());
        return j.ok() && j->trials_done() >= 2;
      },
      seconds(120)))
      << (*daemon)->process().Log();
  // Frozen, the victim can answer nothing: once the daemon lists a trial in flight on it, that
  // trial is certainly the victim's when it dies.
  (*victim)->Signal(SIGSTOP);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto w = ConnectedWorker(address, "victim");
        return w.ok() && w->in_flight() >= 1;
      },
      seconds(120)))
      << (*daemon)->process().Log();
  (*victim)->Kill();

  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), kTrials);

  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(static_cast<int>(records->size()), kTrials);
  for (const auto& [config, count] : CountPerConfig(*records)) {
    EXPECT_EQ(count, 1) << config;
  }
  EXPECT_TRUE((*survivor)->Running());
  // The victim's trial was taken back and measured by the survivor: the count above holds it.
  EXPECT_THAT(
      (*daemon)->process().Log(),
      ::testing::ContainsRegex("worker victim .* lost: .*; [1-9][0-9]* trial\\(s\\) re-queued"));
}

TEST(WorkerKillTest, SilentWorkerIsDroppedAtItsHeartbeatDeadlineAndItsTrialsRunElsewhere) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.heartbeat_ms = 200, .worker_deadline_ms = 1000});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto frozen = StartWorker(dir, address, "frozen");
  auto awake = StartWorker(dir, address, "awake");
  ASSERT_TRUE(frozen.ok() && awake.ok());
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 2; }, seconds(30)));

  constexpr int kTrials = 6;
  v1::JobSpec spec = FastSpec("gemm:M=48,N=48,K=48", kTrials);
  spec.mutable_timing()->set_min_repeat_ms(40);
  spec.mutable_timing()->set_repeat(3);
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = GetJob(address, job->job_id());
        return j.ok() && j->trials_done() >= 1 && j->trials_in_flight() >= 1;
      },
      seconds(120)));
  // SIGSTOP: the stream stays open but the worker says nothing more.
  (*frozen)->Signal(SIGSTOP);
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  (*frozen)->Signal(SIGCONT);
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();

  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(static_cast<int>(records->size()), kTrials);
  for (const auto& [config, count] : CountPerConfig(*records)) {
    EXPECT_EQ(count, 1) << config;
  }
  EXPECT_THAT((*daemon)->process().Log(),
              ::testing::ContainsRegex("worker frozen \\(w[0-9]+\\) lost: no message for 1000 ms"));
}

}  // namespace
}  // namespace tune::testing
