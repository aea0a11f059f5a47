// Workers over the life of a daemon: a worker that outlives its daemon reconnects to the
// restarted one, a local worker that dies is restarted and the job completes, and a measurement
// that lasts longer than the heartbeat deadline does not make its worker look dead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <iterator>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"
#include "tests/fault/fault_templates.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The tune-server children of the daemon (its builder processes are children too).
std::vector<pid_t> LocalWorkerPids(Daemon& daemon) {
  std::vector<pid_t> workers;
  for (pid_t pid : ChildPids(daemon.process().pid())) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.substr(0, cmdline.find('\0')) == Binaries::Server()) {
      workers.push_back(pid);
    }
  }
  return workers;
}

TEST(WorkerLifecycleTest, AWorkerReconnectsToTheRestartedDaemonAndMeasuresItsJobs) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto first = Daemon::Start(dir, db);
  ASSERT_TRUE(first.ok()) << first.status();
  const int port = (*first)->port();
  auto worker = StartWorker(dir, (*first)->address(), "steady");
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE(
      WaitFor([&] { return ConnectedWorker((*first)->address(), "steady").ok(); }, seconds(60)))
      << (*worker)->Log();

  (*first)->process().Kill();
  auto second = Daemon::Start(dir, db, {.port = port});
  ASSERT_TRUE(second.ok()) << second.status();
  const std::string address = (*second)->address();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorker(address, "steady").ok(); }, seconds(120)))
      << (*worker)->Log();
  EXPECT_TRUE((*worker)->Running()) << "the same worker process, not a new one";

  auto job = SubmitJob(address, FastSpec("gemm:M=16,N=16,K=16", 2));
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(address, job->job_id(), seconds(120));
  ASSERT_TRUE(done.ok()) << done.status() << (*second)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  for (const Record& r : *records) {
    EXPECT_EQ(r.worker, "steady");
  }
}

TEST(WorkerLifecycleTest, ALocalWorkerThatDiesMidJobIsRestartedAndTheJobCompletes) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 1; }, seconds(60)));
  std::vector<pid_t> before = LocalWorkerPids(**daemon);
  ASSERT_EQ(before.size(), 1u);

  constexpr int kTrials = 6;
  v1::JobSpec spec = FastSpec("gemm:M=64,N=64,K=64", kTrials);
  spec.mutable_timing()->set_min_repeat_ms(30);
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
  ASSERT_EQ(kill(before[0], SIGKILL), 0);

  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), kTrials);
  std::vector<pid_t> after = LocalWorkerPids(**daemon);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0], before[0]) << "a new worker process took the dead one's place";
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(static_cast<int>(records->size()), kTrials);
  for (const auto& [config, count] : CountPerConfig(*records)) {
    EXPECT_EQ(count, 1) << config;
  }
}

TEST(WorkerLifecycleTest, AMeasurementLongerThanTheHeartbeatDeadlineKeepsItsWorker) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  constexpr int kDeadlineMs = 1000;
  auto daemon = Daemon::Start(
      dir, db, {.heartbeat_ms = 200, .worker_deadline_ms = kDeadlineMs, .fault_templates = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto worker = StartWorker(dir, address, "patient");
  ASSERT_TRUE(worker.ok()) << worker.status();

  // One warm-up call and one timed call, each longer than the deadline.
  static_assert(tuner::kFaultSlowMicros / 1000 > kDeadlineMs);
  v1::JobSpec spec = FastSpec("gemm:M=16,N=16,K=16", 1);
  spec.add_templates(std::string(tuner::kFaultSlowTemplate));
  spec.mutable_timing()->set_repeat(1);
  spec.mutable_timing()->set_timeout_ms(600000);
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_failed(), 0) << done->message();

  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_TRUE(records->front().measurement.ok()) << records->front().measurement.message;
  EXPECT_EQ(records->front().worker, "patient");
  EXPECT_GE(records->front().measurement.MedianSecs(), tuner::kFaultSlowMicros / 1e6);
  EXPECT_THAT((*daemon)->process().Log(), Not(HasSubstr("lost")))
      << "the worker was never dropped while it measured";
  auto info = ConnectedWorker(address, "patient");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->trials_done(), 1u) << "answered on its first stream";
}

}  // namespace
}  // namespace tune::testing
