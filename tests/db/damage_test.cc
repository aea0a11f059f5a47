// A damaged tuning log is refused at open with a clear error and never written to.
#include <fstream>
#include <string>

#include "common/artifact_hash.h"
#include "common/files.h"
#include "db/tuning_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune {
namespace {

using ::testing::HasSubstr;
using testing::OpenLog;
using testing::SampleRecord;

std::string Hash(const std::string& path) { return Sha256Hex(*ReadFile(path)); }

// A log of `records` records, closed (checkpointed into the main file).
void WriteLog(const std::string& path, int records) {
  auto log = OpenLog(path);
  for (int i = 0; i < records; ++i) {
    Record record = SampleRecord(R"({"mc":)" + std::to_string(i % 8 + 1) + "}");
    record.uid = "record-" + std::to_string(i);
    ASSERT_TRUE(log->CommitRecord(record).ok());
  }
}

// Overwrites `length` bytes at `offset` with a pattern.
void Scribble(const std::string& path, std::streamoff offset, int length) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(offset);
  for (int i = 0; i < length; ++i) {
    file.put(static_cast<char>(0xA5 ^ i));
  }
}

TEST(DamageTest, ALogWithDamagedPagesIsRefusedNamingTheCheckAndLeftUntouched) {
  TempDir dir = TempDir::Create("tune-db-test-").value();
  const std::string path = dir.File("tuning.db");
  WriteLog(path, 400);
  const auto size = static_cast<std::streamoff>(ReadFile(path)->size());
  ASSERT_GT(size, 8 * 4096);
  // Pages in the middle of the file: records and their indexes.
  Scribble(path, size / 2, 3 * 4096);
  const std::string before = Hash(path);

  absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(log.status().message(), HasSubstr(path));
  EXPECT_THAT(log.status().message(), HasSubstr("integrity check"));
  EXPECT_THAT(log.status().message(), HasSubstr(".recover"));
  EXPECT_EQ(Hash(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(DamageTest, AFileThatIsNoDatabaseIsRefusedAndLeftUntouched) {
  TempDir dir = TempDir::Create("tune-db-test-").value();
  const std::string path = dir.File("tuning.db");
  ASSERT_TRUE(WriteFileAtomically(path, std::string(10000, 'x')).ok());
  absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(log.status().message(), HasSubstr("not a database"));
  EXPECT_EQ(*ReadFile(path), std::string(10000, 'x'));
}

TEST(DamageTest, AnIntactLogPassesTheCheckAndOpens) {
  TempDir dir = TempDir::Create("tune-db-test-").value();
  const std::string path = dir.File("tuning.db");
  WriteLog(path, 50);
  absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->CountRecords().value(), 50);
}

}  // namespace
}  // namespace tune
