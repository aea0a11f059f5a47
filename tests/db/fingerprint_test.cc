// Fingerprint generations (db/fingerprints.h): best prefers the newest fingerprint's records,
// older ones answer only where the newest has none, and nothing is rewritten.
#include <string>
#include <vector>

#include "db/fingerprints.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "db/tuning_log.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune {
namespace {

using testing::kDevice;
using testing::kGemm;
using testing::kTarget;
using testing::OpenLog;
using testing::SampleRecord;

constexpr char kOld[] = "cpu/x86_64/znver4 fp=2 threads=1 lib.dnnl=2.6.0";
constexpr char kNew[] = "cpu/x86_64/znver4 fp=2 threads=1 lib.dnnl=2.7.3";

Record Measured(const std::string& config, double secs, const std::string& fingerprint,
                const std::string& workload = kGemm) {
  Record r = SampleRecord(config, secs);
  r.workload = workload;
  r.measurement.device_fingerprint = fingerprint;
  return r;
}

class FingerprintLogTest : public ::testing::Test {
 protected:
  TempDir dir_ = TempDir::Create("tune-fingerprint-test-").value();
  std::unique_ptr<TuningLog> log_ = OpenLog(dir_.File("tuning.db"));
};

TEST_F(FingerprintLogTest, ANewFingerprintIsNotedOnceAndSaysWhichItSupersedes) {
  absl::StatusOr<FingerprintNote> first = log_->NoteFingerprint(kDevice, kOld);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->first_seen);
  EXPECT_FALSE(first->superseded.has_value());
  absl::StatusOr<FingerprintNote> upgrade = log_->NoteFingerprint(kDevice, kNew);
  ASSERT_TRUE(upgrade.ok()) << upgrade.status();
  EXPECT_TRUE(upgrade->first_seen);
  EXPECT_EQ(upgrade->superseded, kOld);
  // A worker of the old fingerprint that registers again does not make it the newest.
  absl::StatusOr<FingerprintNote> again = log_->NoteFingerprint(kDevice, kOld);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->first_seen);
  EXPECT_EQ(*log_->NewestFingerprint(kDevice), kNew);
  std::vector<SeenFingerprint> seen = *log_->ListFingerprints(kDevice);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].text, kNew);
  EXPECT_TRUE(seen[0].newest);
  EXPECT_EQ(seen[1].text, kOld);
  EXPECT_FALSE(seen[1].newest);
  EXPECT_EQ(*log_->NewestFingerprint("cuda/sm_90"), std::nullopt);
}

TEST_F(FingerprintLogTest, BestIsTheNewestFingerprintsFastestAndAnOlderOneOnlyWhereItHasNone) {
  ASSERT_TRUE(log_->CommitRecord(Measured(R"({"mc":32})", 1e-3, kOld)).ok());
  ASSERT_TRUE(log_->CommitRecord(Measured(R"({"mc":64})", 2e-3, kOld)).ok());
  const std::string other = "gemm:M=128,N=128,K=128";
  ASSERT_TRUE(log_->CommitRecord(Measured(R"({"mc":32})", 4e-3, kOld, other)).ok());
  // The library is upgraded: workers of the new fingerprint register and measure one config,
  // slower than the old reading of another.
  ASSERT_TRUE(log_->NoteFingerprint(kDevice, kNew).ok());
  ASSERT_TRUE(log_->CommitRecord(Measured(R"({"mc":64})", 3e-3, kNew)).ok());

  const BestQuery by_target{.workload = kGemm, .target = kTarget};
  std::vector<Record> top = *log_->QueryTopK(by_target, 5);
  ASSERT_EQ(top.size(), 1u) << "the old fingerprint's records are not compared with the new";
  EXPECT_EQ(top[0].config, R"({"mc":64})");
  EXPECT_EQ(top[0].measurement.device_fingerprint, kNew);
  top = *log_->QueryTopK({.workload = kGemm, .device_key = kDevice}, 5);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].measurement.device_fingerprint, kNew);
  // Where the new fingerprint has measured nothing, the old records answer (unverified).
  std::optional<Record> fallback = *log_->QueryBest({.workload = other, .target = kTarget});
  ASSERT_TRUE(fallback.has_value());
  EXPECT_EQ(fallback->measurement.device_fingerprint, kOld);
  // Asked for, the old fingerprint's records are all still there: nothing was rewritten.
  BestQuery old_only = by_target;
  old_only.fingerprint = kOld;
  top = *log_->QueryTopK(old_only, 5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].config, R"({"mc":32})");
  EXPECT_EQ(*log_->CountRecords(), 4);
}

TEST_F(FingerprintLogTest, ADecidedBestOfAnOlderFingerprintGivesWayToTheNewestsRecords) {
  Record old_best = *log_->CommitRecord(Measured(R"({"mc":32})", 1e-3, kOld));
  ASSERT_TRUE(log_->SetBestDecision({.workload = kGemm,
                                     .target = kTarget,
                                     .record_id = old_best.id,
                                     .median_secs = 1e-3,
                                     .relative_ci = 0.01})
                  .ok());
  EXPECT_EQ((*log_->QueryBest({.workload = kGemm, .target = kTarget}))->id, old_best.id);
  ASSERT_TRUE(log_->CommitRecord(Measured(R"({"mc":64})", 2e-3, kNew)).ok());
  std::optional<Record> best = *log_->QueryBest({.workload = kGemm, .target = kTarget});
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->config, R"({"mc":64})");
}

TEST_F(FingerprintLogTest, ConfigsMeasuredUnderAnOlderFingerprintAreWorthMeasuringAgain) {
  ASSERT_TRUE(log_->CommitRecord(Measured(R"({"mc":32})", 1e-3, kOld)).ok());
  ASSERT_TRUE(log_->CommitRecord(Measured(R"({"mc":64})", 2e-3, kOld)).ok());
  EXPECT_EQ(log_->MeasuredConfigs(kGemm, kTarget)->size(), 2u);
  ASSERT_TRUE(log_->NoteFingerprint(kDevice, kNew).ok());
  EXPECT_TRUE(log_->MeasuredConfigs(kGemm, kTarget)->empty());
  ASSERT_TRUE(log_->CommitRecord(Measured(R"({"mc":64})", 2e-3, kNew)).ok());
  std::vector<ConfigKey> measured = *log_->MeasuredConfigs(kGemm, kTarget);
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured[0].config, R"({"mc":64})");
}

TEST_F(FingerprintLogTest, ALogOfSchema10SeesItsFingerprintsWhenTheirFirstRecordsWereMade) {
  const std::string path = dir_.File("old.db");
  {
    auto log = OpenLog(path);
    Record a = Measured(R"({"mc":32})", 1e-3, "AMD EPYC 9654; 1 thread");  // free text
    a.created_at_ms = 1000;
    Record b = Measured(R"({"mc":64})", 2e-3, kNew);
    b.created_at_ms = 2000;
    ASSERT_TRUE(log->CommitRecord(b).ok());
    ASSERT_TRUE(log->CommitRecord(a).ok());
  }
  {  // back to schema 10: no fingerprints table
    absl::StatusOr<std::unique_ptr<sqlite::Connection>> raw =
        sqlite::Connection::Open(path, sqlite::Connection::Access::kReadWriteCreate);
    ASSERT_TRUE(raw.ok()) << raw.status();
    ASSERT_TRUE(
        (*raw)
            ->Execute(
                "ALTER TABLE jobs DROP COLUMN shape_range; DELETE FROM schema_version WHERE "
                "version = 12; DROP INDEX records_by_target_fingerprint; DROP INDEX "
                "records_by_device_fingerprint; DROP TABLE fingerprints; ALTER TABLE jobs DROP "
                "COLUMN reverify; DELETE "
                "FROM schema_version WHERE version = 11;")
            .ok());
  }
  auto log = OpenLog(path);
  EXPECT_EQ(log->SchemaVersion(), kSchemaVersion);
  std::vector<SeenFingerprint> seen = *log->ListFingerprints(kDevice);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].text, kNew);
  EXPECT_EQ(seen[0].first_seen_ms, 2000);
  EXPECT_EQ(seen[1].text, "AMD EPYC 9654; 1 thread");
  EXPECT_EQ((*log->QueryBest({.workload = kGemm, .target = kTarget}))->config, R"({"mc":64})");
}

}  // namespace
}  // namespace tune
