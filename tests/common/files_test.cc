#include "common/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace tune {
namespace {

using ::testing::HasSubstr;

// uid and gid 65534: nobody and nogroup, another user than the test's.
constexpr uid_t kOtherUser = 65534;
constexpr gid_t kOtherGroup = 65534;

TEST(FilesTest, WriteFileAtomicallyReplacesTheWholeFileWithTheGivenMode) {
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-files-test-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string path = dir->File("f");
  ASSERT_TRUE(WriteFileAtomically(path, "first, longer").ok());
  ASSERT_TRUE(WriteFileAtomically(path, std::string("second\0", 7), 0600).ok());
  EXPECT_EQ(ReadFile(path).value_or(""), std::string("second\0", 7));
  struct stat st = {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Nothing but the file is left in the directory.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir->path())) {
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(FilesTest, FailuresNameThePathAndLeaveNothingBehind) {
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-files-test-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  absl::Status s = WriteFileAtomically(dir->File("missing/f"), "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find(dir->File("missing/f")), std::string::npos) << s;
  absl::StatusOr<std::string> read = ReadFile(dir->File("absent"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find("absent"), std::string::npos) << read.status();
}

TEST(FilesTest, TempDirIsRemovedWithItsContentsAndMovesOwnership) {
  std::string path;
  {
    absl::StatusOr<TempDir> dir = TempDir::Create("tune-files-test-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    TempDir moved = std::move(*dir);
    path = moved.path();
    EXPECT_TRUE(dir->path().empty());
    ASSERT_TRUE(WriteFileAtomically(moved.File("inside"), "x").ok());
    EXPECT_TRUE(std::filesystem::exists(moved.File("inside")));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

// A file of `mode` (exactly, whatever the umask) holding "bytes", in `dir`.
std::string FileOfMode(const TempDir& dir, const std::string& name, mode_t mode) {
  const std::string path = dir.File(name);
  EXPECT_TRUE(WriteFileAtomically(path, "bytes").ok());
  EXPECT_EQ(chmod(path.c_str(), mode), 0);
  return path;
}

TEST(TrustedPathTest, AFileOrDirectoryOnlyThisUserCanWriteIsTrusted) {
  TempDir dir = *TempDir::Create("tune-files-test-");
  EXPECT_TRUE(CheckTrustedPath(FileOfMode(dir, "a", 0644), "test file").ok());
  EXPECT_TRUE(CheckTrustedPath(FileOfMode(dir, "b", 0600), "test file").ok());
  EXPECT_TRUE(CheckTrustedPath(dir.path(), "test directory").ok());
  EXPECT_TRUE(absl::IsNotFound(CheckTrustedPath(dir.File("missing"), "test file")));
}

TEST(TrustedPathTest, AFileEveryUserCanWriteIsRefusedNamingItsOwnerModeAndTheFix) {
  TempDir dir = *TempDir::Create("tune-files-test-");
  const std::string path = FileOfMode(dir, "open", 0666);
  absl::Status status = CheckTrustedPath(path, "test file");
  ASSERT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("test file " + path + ": owned by uid "));
  EXPECT_THAT(status.message(), HasSubstr("mode 0666"));
  EXPECT_THAT(status.message(), HasSubstr("writable by every user"));
  EXPECT_THAT(status.message(), HasSubstr("fix: `chmod o-w " + path + "`"));
  EXPECT_TRUE(absl::IsFailedPrecondition(ReadTrustedFile(path, "test file").status()));
}

TEST(TrustedPathTest, AFileOfAnotherUserIsRefusedEvenWhenThisProcessIsRoot) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a file to another user needs root";
  }
  TempDir dir = *TempDir::Create("tune-files-test-");
  const std::string path = FileOfMode(dir, "theirs", 0644);
  ASSERT_EQ(chown(path.c_str(), kOtherUser, kOtherGroup), 0);
  absl::Status status = CheckTrustedPath(path, "test file");
  ASSERT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("owned by uid 65534"));
  EXPECT_THAT(status.message(), HasSubstr("not owned by this process's user, uid 0"));
  EXPECT_THAT(status.message(), HasSubstr("fix: `chown root " + path + "`"));
  // What is read is what was checked: the descriptor's owner, not the path's a moment before.
  EXPECT_TRUE(absl::IsFailedPrecondition(ReadTrustedFile(path, "test file").status()));
  // A directory's fix is recursive.
  const std::string theirs = dir.File("dir");
  ASSERT_EQ(mkdir(theirs.c_str(), 0700), 0);
  ASSERT_EQ(chown(theirs.c_str(), kOtherUser, kOtherGroup), 0);
  EXPECT_THAT(CheckTrustedPath(theirs, "test directory").message(),
              HasSubstr("fix: `chown -R root " + theirs + "`"));
}

TEST(TrustedPathTest, GroupWriteIsTrustedOnlyForThisProcesssOwnGroupAndWhereTheRuleAllows) {
  TempDir dir = *TempDir::Create("tune-files-test-");
  const std::string path = FileOfMode(dir, "group", 0660);
  ASSERT_EQ(chown(path.c_str(), -1, getegid()), 0);
  EXPECT_TRUE(CheckTrustedPath(path, "test file").ok()) << "as on a Kubernetes fsGroup volume";
  absl::Status strict = CheckTrustedPath(path, "test file", {.own_group_may_write = false});
  ASSERT_TRUE(absl::IsFailedPrecondition(strict)) << strict;
  EXPECT_THAT(strict.message(), HasSubstr("writable by its group"));
  EXPECT_THAT(strict.message(), HasSubstr("fix: `chmod g-w " + path + "`"));
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a file to another group needs root";
  }
  ASSERT_EQ(chown(path.c_str(), -1, kOtherGroup), 0);
  absl::Status foreign = CheckTrustedPath(path, "test file");
  ASSERT_TRUE(absl::IsFailedPrecondition(foreign)) << foreign;
  EXPECT_THAT(foreign.message(), HasSubstr("gid 65534"));
  EXPECT_THAT(foreign.message(), HasSubstr("not this process's group"));
}

TEST(TrustedPathTest, CodeInADirectoryOthersCanRenameFilesInIsRefusedUnlessSticky) {
  TempDir dir = *TempDir::Create("tune-files-test-");
  const std::string shared = dir.File("shared");
  ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
  const std::string plugin = shared + "/plugin";
  ASSERT_TRUE(WriteFileAtomically(plugin, "#!/bin/sh\n", 0755).ok());
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  EXPECT_TRUE(CheckTrustedPath(plugin, "test plugin").ok()) << "the file alone is this user's";
  absl::Status status = CheckTrustedPath(plugin, "test plugin", kCodeFileRule);
  ASSERT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("its directory " + shared));
  EXPECT_THAT(status.message(), HasSubstr("mode 0777"));
  EXPECT_THAT(status.message(), HasSubstr("chmod go-w " + shared));
  EXPECT_TRUE(
      absl::IsFailedPrecondition(ReadTrustedFile(plugin, "test plugin", kCodeFileRule).status()));
  ASSERT_EQ(chmod(shared.c_str(), 01777), 0);  // as /tmp: nobody renames another's file
  EXPECT_TRUE(CheckTrustedPath(plugin, "test plugin", kCodeFileRule).ok());
  EXPECT_EQ(ReadTrustedFile(plugin, "test plugin", kCodeFileRule).value_or(""), "#!/bin/sh\n");
}

}  // namespace
}  // namespace tune
