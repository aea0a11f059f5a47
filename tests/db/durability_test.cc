// A committed record and trial survive the committing process being killed with SIGKILL the
// moment the commit returns.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "db/tuning_log.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune {
namespace {

using testing::OpenLog;
using testing::SampleRecord;
using tune::TempDir;

TEST(DurabilityTest, CommitsSurviveSigkillRightAfterTheyReturn) {
  TempDir dir = TempDir::Create("tune-db-test-").value();
  std::string path = dir.File("tuning.db");
  int64_t job_id;
  {
    auto log = OpenLog(path);
    JobSpec spec{.workload = testing::kGemm,
                 .target = "llvm -mcpu=znver4",
                 .device_key = testing::kDevice,
                 .strategy = "random",
                 .trials = 5};
    job_id = log->CreateJob(spec)->id;
  }

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child opens its own log, commits, and dies without closing anything.
    absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
    if (!log.ok()) {
      _exit(2);
    }
    Record record = SampleRecord(R"({"mc":1})");
    record.uid = "survives-sigkill";
    if (!(*log)->CommitRecord(record).ok()) {
      _exit(3);
    }
    Record trial = SampleRecord(R"({"mc":2})");
    trial.uid = "trial-survives-sigkill";
    trial.job_id = job_id;
    if (!(*log)->CommitTrial(trial, {"state-before-kill"}).ok()) {
      _exit(4);
    }
    raise(SIGKILL);
    _exit(5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  auto log = OpenLog(path);
  std::vector<Record> records = *log->ListRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].uid, "survives-sigkill");
  EXPECT_EQ(records[1].uid, "trial-survives-sigkill");
  Job job = *log->GetJob(job_id);
  EXPECT_EQ(job.trials_done, 1);
  EXPECT_EQ(job.search_state, "state-before-kill");
}

}  // namespace
}  // namespace tune
