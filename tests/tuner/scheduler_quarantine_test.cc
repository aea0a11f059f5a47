// The scheduler's quarantine through its WorkerChannel seam (db/quarantine.h): a crash or wrong
// answer gets a second opinion from another worker of the same device key and fingerprint
// before it is the verdict; code two workers failed on is kept from their fingerprint and
// recorded unmeasured, while a worker of another fingerprint measures it again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tuner/scheduler_fixture.h"
#include "tests/tuner/test_worker.h"

namespace tune::tuner {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using testing::TestWorker;

constexpr char kOldFingerprint[] = "cpu test fingerprint; driver 1";
constexpr char kNewFingerprint[] = "cpu test fingerprint; driver 2";

void RegisterWith(TestWorker& worker, Scheduler& scheduler, const std::string& name,
                  const std::string& fingerprint) {
  v1::Register reg;
  reg.set_name(name);
  reg.set_device_key(testing::HostDeviceKey());
  reg.mutable_capabilities()->set_threads(1);
  reg.mutable_capabilities()->set_capacity(1);
  reg.mutable_capabilities()->set_device_fingerprint(fingerprint);
  worker.Register(scheduler, reg);
}

class SchedulerQuarantineTest : public SchedulerTest {
 protected:
  // One trial: `first` answers it with `kind`, then `second` must get the same trial and
  // answers it with `second_kind` (a success when ERROR_KIND_NONE).
  void CrashThenSecondOpinion(TestWorker& first, TestWorker& second, uint64_t job,
                              v1::ErrorKind second_kind) {
    std::optional<v1::MeasureRequest> request = first.NextRequest();
    ASSERT_TRUE(request.has_value());
    first.AnswerFailure(*request, v1::ERROR_KIND_RUNTIME_CRASH, "SIGSEGV");
    std::optional<v1::MeasureRequest> again = second.NextRequest();
    ASSERT_TRUE(again.has_value()) << "no second opinion";
    EXPECT_EQ(again->trial_id(), request->trial_id());
    EXPECT_EQ(again->artifact().hash(), request->artifact().hash());
    if (second_kind == v1::ERROR_KIND_NONE) {
      second.Answer(*again, 1e-4);
    } else {
      second.AnswerFailure(*again, second_kind, "SIGSEGV again");
    }
    EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);
  }
  // `left` and `right` of the old fingerprint; a job whose one trial crashes on `left`, then
  // gives `second_kind` on `right`; the one entry that makes, in `entry`.
  void QuarantineOnBoth(TestWorker& left, TestWorker& right, v1::ErrorKind second_kind,
                        QuarantineEntry& entry) {
    RegisterWith(left, *scheduler_, "left", kOldFingerprint);
    RegisterWith(right, *scheduler_, "right", kOldFingerprint);
    const uint64_t first = Submit(Spec(1));
    ASSERT_NO_FATAL_FAILURE(CrashThenSecondOpinion(left, right, first, second_kind));
    absl::StatusOr<std::vector<QuarantineEntry>> entries = scheduler_->ListQuarantine({});
    ASSERT_TRUE(entries.ok());
    ASSERT_THAT(*entries, SizeIs(1));
    entry = (*entries)[0];
  }
};

TEST_F(SchedulerQuarantineTest, ASecondOpinionThatSucceedsIsTheVerdictAndTheCrashIsKeptBesideIt) {
  Start();
  TestWorker sick, sound;
  RegisterWith(sick, *scheduler_, "sick", kOldFingerprint);
  RegisterWith(sound, *scheduler_, "sound", kOldFingerprint);
  const uint64_t job = Submit(Spec(1));
  ASSERT_NO_FATAL_FAILURE(CrashThenSecondOpinion(sick, sound, job, v1::ERROR_KIND_NONE));

  std::vector<Record> records = RecordsOf(job);
  ASSERT_THAT(records, SizeIs(2));
  EXPECT_EQ(records[0].worker, "sick");
  EXPECT_EQ(records[0].measurement.error, ErrorKind::kRuntimeCrash);
  EXPECT_EQ(records[1].worker, "sound");
  EXPECT_TRUE(records[1].measurement.ok());
  EXPECT_EQ(records[0].artifact_hash, records[1].artifact_hash);
  absl::StatusOr<Job> row = log_->GetJob(static_cast<int64_t>(job));
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->trials_done, 1) << "the first answer is no trial of the budget";
  EXPECT_EQ(row->trials_failed, 0);
  absl::StatusOr<std::vector<QuarantineEntry>> entries = scheduler_->ListQuarantine({});
  ASSERT_TRUE(entries.ok());
  EXPECT_THAT(*entries, IsEmpty());
}

TEST_F(SchedulerQuarantineTest, QuarantinedCodeIsRecordedUnmeasuredUnlessAnotherFingerprintCanRun) {
  Start();
  TestWorker left, right;
  QuarantineEntry entry;
  ASSERT_NO_FATAL_FAILURE(QuarantineOnBoth(left, right, v1::ERROR_KIND_WRONG_ANSWER, entry));
  const std::string code = entry.artifact_hash;
  EXPECT_EQ(entry.fingerprint, kOldFingerprint);

  // The same config on another target text: the same code, recorded without a worker.
  const uint64_t second = Submit(Spec(1, "llvm -mcpu=native -threads=1 -libs=openblas"));
  EXPECT_EQ(WaitForEnd(second).state(), v1::JOB_STATE_SUCCEEDED);
  std::vector<Record> skipped = RecordsOf(second);
  ASSERT_THAT(skipped, SizeIs(1));
  EXPECT_EQ(skipped[0].worker, "");
  EXPECT_EQ(skipped[0].artifact_hash, code);
  EXPECT_EQ(skipped[0].measurement.error, ErrorKind::kRuntimeCrash);
  EXPECT_THAT(skipped[0].measurement.message, HasSubstr("skipped, not measured"));
  EXPECT_TRUE(left.NoRequestWaiting());
  EXPECT_TRUE(right.NoRequestWaiting());

  // A worker of a new fingerprint (a new driver) measures the code again; its one crash is the
  // verdict for that fingerprint, with no worker of its kind to confirm it.
  TestWorker upgraded;
  RegisterWith(upgraded, *scheduler_, "upgraded", kNewFingerprint);
  const uint64_t third = Submit(Spec(1, "llvm -mcpu=native -threads=1 -libs=dnnl"));
  std::optional<v1::MeasureRequest> request = upgraded.NextRequest();
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->artifact().hash(), code);
  upgraded.AnswerFailure(*request, v1::ERROR_KIND_RUNTIME_CRASH, "SIGSEGV");
  EXPECT_EQ(WaitForEnd(third).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(left.NoRequestWaiting());
  EXPECT_TRUE(right.NoRequestWaiting());

  // The entry outlives the daemon: a scheduler started on the log keeps the code from them.
  left.Disconnect("restart");
  right.Disconnect("restart");
  upgraded.Disconnect("restart");
  Restart();
  TestWorker left_again;
  RegisterWith(left_again, *scheduler_, "left", kOldFingerprint);
  const uint64_t fourth = Submit(Spec(1, "llvm -mcpu=native -threads=1 -libs=dnnl,openblas"));
  EXPECT_EQ(WaitForEnd(fourth).state(), v1::JOB_STATE_SUCCEEDED);
  std::vector<Record> after_restart = RecordsOf(fourth);
  ASSERT_THAT(after_restart, SizeIs(1));
  EXPECT_EQ(after_restart[0].worker, "");
  EXPECT_TRUE(left_again.NoRequestWaiting());
}

TEST_F(SchedulerQuarantineTest, ALiftedEntryLetsItsWorkersMeasureTheCodeAgain) {
  Start();
  TestWorker left, right;
  QuarantineEntry entry;
  ASSERT_NO_FATAL_FAILURE(QuarantineOnBoth(left, right, v1::ERROR_KIND_RUNTIME_CRASH, entry));

  absl::StatusOr<QuarantineEntry> lifted = scheduler_->LiftQuarantine(entry.id, "root");
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_EQ(lifted->lifted_by, "root");
  right.Disconnect("gone");
  const uint64_t second = Submit(Spec(1, "llvm -mcpu=native -threads=1 -libs=openblas"));
  std::optional<v1::MeasureRequest> request = left.NextRequest();
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->artifact().hash(), entry.artifact_hash);
  left.Answer(*request, 1e-4);
  EXPECT_EQ(WaitForEnd(second).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(scheduler_->LiftQuarantine(entry.id, "root").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(SchedulerQuarantineTest, ACrashWithNoOtherWorkerOfItsFingerprintIsTheVerdictAtOnce) {
  Start();
  TestWorker old_driver, new_driver;
  RegisterWith(old_driver, *scheduler_, "old", kOldFingerprint);
  RegisterWith(new_driver, *scheduler_, "new", kNewFingerprint);
  const uint64_t job = Submit(Spec(1));
  std::optional<v1::MeasureRequest> request = old_driver.NextRequest();
  ASSERT_TRUE(request.has_value());
  old_driver.AnswerFailure(*request, v1::ERROR_KIND_RUNTIME_CRASH, "SIGSEGV");
  EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_THAT(RecordsOf(job), SizeIs(1));
  EXPECT_TRUE(new_driver.NoRequestWaiting());
}

}  // namespace
}  // namespace tune::tuner
