#include "rpc_server/artifact_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/rpc_server/test_support.h"

namespace tune::rpc {
namespace {

class ArtifactCacheTest : public ::testing::Test {
 protected:
  TempDir tmp_ = TempDir::Create("tune-rpc-test-").value();
  std::string dir_ = tmp_.path();
};

TEST_F(ArtifactCacheTest, StoresBytesUnderTheirHashAndLeavesNoTemporaryFiles) {
  auto cache = ArtifactCache::Open(dir_ + "/nested/cache");
  ASSERT_TRUE(cache.ok()) << cache.status();
  absl::StatusOr<std::string> path = (*cache)->Store("0123abcd", "payload");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, dir_ + "/nested/cache/0123abcd.so");
  EXPECT_EQ(testing::ReadFileBytes(*path), "payload");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/nested/cache")) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(ArtifactCacheTest, ReusesIdenticalBytesAndReplacesDifferentOnes) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  std::string path = *(*cache)->Store("deadbeef", "first");
  auto inode = std::filesystem::last_write_time(path);
  EXPECT_EQ(*(*cache)->Store("deadbeef", "first"), path);
  EXPECT_EQ(std::filesystem::last_write_time(path), inode) << "identical bytes are not rewritten";
  EXPECT_EQ(*(*cache)->Store("deadbeef", "second"), path);
  EXPECT_EQ(testing::ReadFileBytes(path), "second");
}

TEST_F(ArtifactCacheTest, RejectsHashesThatAreNotLowercaseHex) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  for (const char* bad : {"", "abc", "../../../etc/x", "DEADBEEF", "deadbeef/x", "0123456z"}) {
    absl::StatusOr<std::string> path = (*cache)->Store(bad, "x");
    EXPECT_TRUE(absl::IsInvalidArgument(path.status())) << bad;
  }
}

TEST_F(ArtifactCacheTest, OpenFailsUnderARegularFile) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok());
  std::string file = *(*cache)->Store("00000000", "x");
  auto nested = ArtifactCache::Open(file + "/sub");
  EXPECT_TRUE(absl::IsInvalidArgument(nested.status())) << nested.status();
}

}  // namespace
}  // namespace tune::rpc
