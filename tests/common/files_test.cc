#include "common/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

namespace tune {
namespace {

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

}  // namespace
}  // namespace tune
