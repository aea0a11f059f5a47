// The quarantine rule as records land (db/quarantine.h): two workers' crashes or wrong answers
// with one code on one device key and fingerprint quarantine it; one worker, a timeout or
// another fingerprint do not; lifting forgives what came before.
#include <sstream>

#include "common/artifact_hash.h"
#include "db/record_json.h"
#include "gmock/gmock.h"
#include "tests/db/test_util.h"

namespace tune::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kCode = Sha256Hex("the crashing kernel");
const std::string kOtherCode = Sha256Hex("another kernel");

Record Crash(const std::string& worker, const std::string& hash = kCode,
             ErrorKind kind = ErrorKind::kRuntimeCrash) {
  Record r = FailedRecord(kind);
  r.measurement.message = "the kernel was killed by signal 11 (SIGSEGV)";
  r.worker = worker;
  r.artifact_hash = hash;
  return r;
}

class QuarantineTest : public ::testing::Test {
 protected:
  Record Commit(Record r) {
    absl::StatusOr<Record> stored = log_->CommitRecord(std::move(r));
    EXPECT_TRUE(stored.ok()) << stored.status();
    return stored.ok() ? *stored : Record{};
  }
  std::vector<QuarantineEntry> Holding() {
    absl::StatusOr<std::vector<QuarantineEntry>> entries = log_->ListQuarantine();
    EXPECT_TRUE(entries.ok()) << entries.status();
    return entries.ok() ? *entries : std::vector<QuarantineEntry>{};
  }

  TempDir dir_ = TempDir::Create().value();
  std::unique_ptr<TuningLog> log_ = OpenLog(dir_.File("tuning.db"));
};

TEST_F(QuarantineTest, TwoWorkersCrashingTheSameCodeQuarantineItForTheirDeviceAndFingerprint) {
  Record first = Commit(Crash("worker-a"));
  EXPECT_THAT(Holding(), IsEmpty()) << "one worker's crash may be a sick device";
  Record second = Commit(Crash("worker-b"));

  std::vector<QuarantineEntry> entries = Holding();
  ASSERT_EQ(entries.size(), 1u);
  const QuarantineEntry& e = entries[0];
  EXPECT_EQ(e.artifact_hash, kCode);
  EXPECT_EQ(e.device_key, kDevice);
  EXPECT_EQ(e.fingerprint, first.measurement.device_fingerprint);
  EXPECT_EQ(e.workload, kGemm);
  EXPECT_EQ(e.template_name, "gemm.cpu.blocked");
  EXPECT_EQ(e.config, first.config);
  EXPECT_EQ(e.error, ErrorKind::kRuntimeCrash);
  EXPECT_EQ(e.message, "the kernel was killed by signal 11 (SIGSEGV)");
  EXPECT_THAT(e.workers, ElementsAre("worker-a", "worker-b"));
  EXPECT_THAT(e.record_uids, ElementsAre(first.uid, second.uid));
  EXPECT_TRUE(e.active());
  EXPECT_GT(e.created_at_ms, 0);

  Commit(Crash("worker-c"));
  EXPECT_EQ(Holding().size(), 1u) << "one entry per code, device and fingerprint";
}

TEST_F(QuarantineTest, AWrongAnswerCountsLikeACrash) {
  Commit(Crash("worker-a", kCode, ErrorKind::kWrongAnswer));
  Commit(Crash("worker-b", kCode, ErrorKind::kRuntimeCrash));
  ASSERT_EQ(Holding().size(), 1u);
  EXPECT_EQ(Holding()[0].error, ErrorKind::kWrongAnswer);
}

TEST_F(QuarantineTest, OneWorkerTimeoutsOtherCodeOrAnotherFingerprintQuarantineNothing) {
  Commit(Crash("worker-a"));
  Commit(Crash("worker-a"));  // the same worker twice
  Commit(Crash("worker-b", kCode, ErrorKind::kTimeout));
  Commit(Crash("worker-b", kCode, ErrorKind::kUnsupported));
  Commit(Crash("worker-b", kOtherCode));
  Record new_driver = Crash("worker-b");
  new_driver.measurement.device_fingerprint = "AMD EPYC 9654 96-Core; microcode 0xa101148";
  Commit(new_driver);
  Record unnamed = Crash("");  // made by the daemon, not measured on a worker
  Commit(unnamed);
  Record before_hashes = Crash("worker-b", "");
  Commit(before_hashes);
  EXPECT_THAT(Holding(), IsEmpty());
}

TEST_F(QuarantineTest, ALiftedEntryStaysListedAndOnlyNewCrashesOnTwoWorkersQuarantineAgain) {
  Commit(Crash("worker-a"));
  Commit(Crash("worker-b"));
  ASSERT_EQ(Holding().size(), 1u);
  const int64_t id = Holding()[0].id;

  absl::StatusOr<QuarantineEntry> lifted = log_->LiftQuarantine(id, "alice");
  ASSERT_TRUE(lifted.ok()) << lifted.status();
  EXPECT_EQ(lifted->lifted_by, "alice");
  EXPECT_FALSE(lifted->active());
  EXPECT_THAT(Holding(), IsEmpty());
  absl::StatusOr<std::vector<QuarantineEntry>> all = log_->ListQuarantine({.include_lifted = true});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].lifted_by, "alice");

  absl::StatusOr<QuarantineEntry> again = log_->LiftQuarantine(id, "alice");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(again.status().message(), HasSubstr("no quarantine entry"));

  Commit(Crash("worker-a"));
  EXPECT_THAT(Holding(), IsEmpty()) << "the crashes before the lift were forgiven";
  Record third = Commit(Crash("worker-c"));
  ASSERT_EQ(Holding().size(), 1u);
  EXPECT_THAT(Holding()[0].workers, ElementsAre("worker-a", "worker-c"));
  EXPECT_EQ(Holding()[0].record_uids.back(), third.uid);
}

TEST_F(QuarantineTest, ImportedCrashRecordsQuarantineAsTrialsDo) {
  std::stringstream lines;
  for (const char* worker : {"remote-1", "remote-2"}) {
    Record r = Crash(worker);
    r.uid = NewRecordUid();
    lines << RecordToJsonLine(r) << "\n";
  }
  absl::StatusOr<TuningLog::ImportStats> imported = log_->ImportJsonl(lines);
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(Holding().size(), 1u);
  EXPECT_THAT(Holding()[0].workers, ElementsAre("remote-1", "remote-2"));
}

TEST_F(QuarantineTest, ListingFiltersByDeviceKeyAndCode) {
  Commit(Crash("worker-a"));
  Commit(Crash("worker-b"));
  absl::StatusOr<std::vector<QuarantineEntry>> other_device =
      log_->ListQuarantine({.device_key = std::string("cpu/x86_64/sapphirerapids")});
  ASSERT_TRUE(other_device.ok());
  EXPECT_THAT(*other_device, IsEmpty());
  absl::StatusOr<std::vector<QuarantineEntry>> by_code =
      log_->ListQuarantine({.artifact_hash = kCode});
  ASSERT_TRUE(by_code.ok());
  EXPECT_EQ(by_code->size(), 1u);
}

TEST(RecordArtifactHash, IsKeptCheckedAndCarriedByJsonLines) {
  TempDir dir = TempDir::Create().value();
  std::unique_ptr<TuningLog> log = OpenLog(dir.File("tuning.db"));
  Record r = SampleRecord();
  r.artifact_hash = kCode;
  absl::StatusOr<Record> stored = log->CommitRecord(r);
  ASSERT_TRUE(stored.ok()) << stored.status();
  absl::StatusOr<std::optional<Record>> back = log->GetRecord(stored->id);
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ((*back)->artifact_hash, kCode);
  absl::StatusOr<Record> line = RecordFromJsonLine(RecordToJsonLine(**back));
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->artifact_hash, kCode);

  r.artifact_hash = "ABC";
  absl::StatusOr<Record> bad = log->CommitRecord(r);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("record.artifact_hash: 'ABC' is not an artifact hash (64 lowercase hex"));
}

}  // namespace
}  // namespace tune::testing
