// The tuning log's writer refuses files another local user could have written; readers open a
// log of any owner; a new log is 0640.
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

// uid and gid 65534: nobody and nogroup, another user than the test's.
constexpr uid_t kOtherUser = 65534;
constexpr gid_t kOtherGroup = 65534;

mode_t ModeOf(const std::string& path) {
  struct stat st{};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A log with one record, closed.
std::string MakeLog(const TempDir& dir) {
  const std::string path = dir.File("tuning.db");
  EXPECT_TRUE(OpenLog(path)->CommitRecord(SampleRecord()).ok());
  return path;
}

TEST(LogOwnershipTest, ANewLogAndItsWalAndSharedMemoryAre0640) {
  TempDir dir = *TempDir::Create("tune-db-test-");
  const mode_t old_umask = umask(022);
  const std::string path = dir.File("tuning.db");
  absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
  umask(old_umask);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_TRUE((*log)->CommitRecord(SampleRecord()).ok());
  EXPECT_EQ(ModeOf(path), 0640u);
  EXPECT_EQ(ModeOf(path + "-wal"), 0640u);
  EXPECT_EQ(ModeOf(path + "-shm"), 0640u);
}

TEST(LogOwnershipTest, TheWriterRefusesALogEveryUserCanWriteNamingItsModeAndTheFix) {
  TempDir dir = *TempDir::Create("tune-db-test-");
  const std::string path = MakeLog(dir);
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);  // how another user would have left it
  absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
  ASSERT_TRUE(absl::IsFailedPrecondition(log.status())) << log.status();
  EXPECT_THAT(log.status().message(), HasSubstr("tuning log " + path + ": owned by uid "));
  EXPECT_THAT(log.status().message(), HasSubstr("mode 0666"));
  EXPECT_THAT(log.status().message(), HasSubstr("fix: `chmod o-w " + path + "`"));
  EXPECT_EQ(ModeOf(path), 0666u) << "a refused log is left as it was";
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  EXPECT_TRUE(TuningLog::Open(path).ok()) << "the fix it names works";
}

TEST(LogOwnershipTest, TheWriterRefusesALogOfAnotherUserEvenWhenRunAsRoot) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a file to another user needs root";
  }
  TempDir dir = *TempDir::Create("tune-db-test-");
  const std::string path = MakeLog(dir);
  ASSERT_EQ(chown(path.c_str(), kOtherUser, kOtherGroup), 0);
  absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
  ASSERT_TRUE(absl::IsFailedPrecondition(log.status())) << log.status();
  EXPECT_THAT(log.status().message(), HasSubstr("owned by uid 65534"));
  EXPECT_THAT(log.status().message(), HasSubstr("fix: `chown root " + path + "`"));
}

TEST(LogOwnershipTest, TheWriterRefusesAWalOrJournalOfAnotherUser) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a file to another user needs root";
  }
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    TempDir dir = *TempDir::Create("tune-db-test-");
    const std::string path = MakeLog(dir);
    const std::string planted = path + suffix;
    ASSERT_TRUE(WriteFileAtomically(planted, "", 0644).ok());
    ASSERT_EQ(chown(planted.c_str(), kOtherUser, kOtherGroup), 0);
    absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
    ASSERT_TRUE(absl::IsFailedPrecondition(log.status())) << suffix << ": " << log.status();
    EXPECT_THAT(log.status().message(),
                HasSubstr("tuning log " + planted + ": owned by uid 65534"));
  }
}

TEST(LogOwnershipTest, AReaderOpensALogOfAnotherUserReadOnly) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a file to another user needs root";
  }
  TempDir dir = *TempDir::Create("tune-db-test-");
  const std::string path = MakeLog(dir);
  ASSERT_EQ(chown(path.c_str(), kOtherUser, kOtherGroup), 0);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  absl::StatusOr<std::unique_ptr<TuningLog>> log =
      TuningLog::Open(path, TuningLog::Mode::kReadOnly);
  ASSERT_TRUE(log.ok()) << log.status();
  absl::StatusOr<int64_t> records = (*log)->CountRecords();
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(*records, 1);
}

TEST(LogOwnershipTest, ALogItsOwnGroupMayWriteIsOpenedAsOnAnFsGroupVolume) {
  TempDir dir = *TempDir::Create("tune-db-test-");
  const std::string path = MakeLog(dir);
  ASSERT_EQ(chown(path.c_str(), -1, getegid()), 0);
  ASSERT_EQ(chmod(path.c_str(), 0660), 0);
  EXPECT_TRUE(TuningLog::Open(path).ok());
}

}  // namespace
}  // namespace tune::testing
