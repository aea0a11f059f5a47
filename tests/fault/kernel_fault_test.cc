// Deliberately broken kernels (the daemon's hidden fault templates): a kernel that segfaults, one
// that never returns and one with a wrong answer are recorded as RUNTIME_CRASH, TIMEOUT and
// WRONG_ANSWER, the worker survives, and the jobs complete.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

struct FaultRig {
  TempDir dir;
  std::string db = dir.File("tuning.db");
  std::unique_ptr<Daemon> daemon;
  std::unique_ptr<Process> worker;
};

void Start(FaultRig& s) {
  auto daemon = Daemon::Start(s.dir, s.db, {.fault_templates = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  s.daemon = std::move(*daemon);
  auto worker = StartWorker(s.dir, s.daemon->address(), "sturdy");
  ASSERT_TRUE(worker.ok()) << worker.status();
  s.worker = std::move(*worker);
}

// Runs a job of `trials` trials of template `tpl` and returns its records.
std::vector<Record> RunFaultJob(FaultRig& s, const std::string& tpl, int trials, int timeout_ms) {
  v1::JobSpec spec = FastSpec("gemm:M=16,N=16,K=16", trials);
  spec.add_templates(tpl);
  spec.mutable_timing()->set_timeout_ms(timeout_ms);
  auto job = SubmitJob(s.daemon->address(), spec);
  EXPECT_TRUE(job.ok()) << job.status();
  if (!job.ok()) {
    return {};
  }
  auto done = WaitForJob(s.daemon->address(), job->job_id(), seconds(120));
  EXPECT_TRUE(done.ok()) << done.status() << s.daemon->process().Log();
  if (!done.ok()) {
    return {};
  }
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_failed(), trials);
  auto records = RecordsOfJob(s.db, static_cast<int64_t>(job->job_id()));
  EXPECT_TRUE(records.ok()) << records.status();
  return records.ok() ? *records : std::vector<Record>{};
}

// The worker still measures: a normal job succeeds on it.
void ExpectWorkerStillMeasures(FaultRig& s) {
  EXPECT_TRUE(s.worker->Running()) << s.worker->Log();
  auto job = SubmitJob(s.daemon->address(), FastSpec("gemm:M=16,N=16,K=8", 1));
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(s.daemon->address(), job->job_id(), seconds(120));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(done->has_best()) << done->message();
}

TEST(KernelFaultTest, CrashingKernelIsRecordedAsRuntimeCrashAndTheWorkerSurvives) {
  FaultRig s;
  ASSERT_NO_FATAL_FAILURE(Start(s));
  std::vector<Record> records = RunFaultJob(s, "fault.crash", 2, 5000);
  ASSERT_EQ(records.size(), 2u);
  for (const Record& r : records) {
    EXPECT_EQ(r.measurement.error, ErrorKind::kRuntimeCrash) << r.measurement.message;
    EXPECT_EQ(r.worker, "sturdy");
  }
  ExpectWorkerStillMeasures(s);
}

TEST(KernelFaultTest, HangingKernelIsRecordedAsTimeoutAndTheWorkerSurvives) {
  FaultRig s;
  ASSERT_NO_FATAL_FAILURE(Start(s));
  std::vector<Record> records = RunFaultJob(s, "fault.hang", 1, 300);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].measurement.error, ErrorKind::kTimeout) << records[0].measurement.message;
  ExpectWorkerStillMeasures(s);
}

TEST(KernelFaultTest, WrongAnswerIsRecordedAsSuchAndNeverBecomesTheBest) {
  FaultRig s;
  ASSERT_NO_FATAL_FAILURE(Start(s));
  std::vector<Record> records = RunFaultJob(s, "fault.wrong", 2, 5000);
  ASSERT_EQ(records.size(), 2u);
  for (const Record& r : records) {
    EXPECT_EQ(r.measurement.error, ErrorKind::kWrongAnswer) << r.measurement.message;
    EXPECT_TRUE(r.measurement.round_secs.empty()) << "no time counts before the check passes";
  }
  CommandResult best = RunClient(s.daemon->address(), {"best", "--workload", "gemm:M=16,N=16,K=16",
                                                       "--target", "llvm -mcpu=native -threads=1"});
  EXPECT_EQ(best.exit_code, 1) << "no successful record, so no best: " << best.out << best.err;
  ExpectWorkerStillMeasures(s);
}

TEST(KernelFaultTest, TuneDaemonKnowsNoFaultTemplates) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"));
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  CommandResult r = RunClient((*daemon)->address(),
                              {"submit", "--workload", "gemm:M=16,N=16,K=16", "--target",
                               "llvm -mcpu=native", "--trials", "1", "--template", "fault.crash"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_THAT(r.err, HasSubstr("spec.templates"));
}

}  // namespace
}  // namespace tune::testing
