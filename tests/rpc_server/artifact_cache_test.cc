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

std::string HashOf(std::string_view code) { return ArtifactHash(CodeFormat::kSharedObject, code); }

TEST_F(ArtifactCacheTest, StoresCodeUnderItsHashAndLeavesNoTemporaryFiles) {
  auto cache = ArtifactCache::Open(dir_ + "/nested/cache");
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string hash = HashOf("payload");
  absl::StatusOr<std::string> path = (*cache)->Store(hash, CodeFormat::kSharedObject, "payload");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, dir_ + "/nested/cache/" + hash + ".so");
  EXPECT_EQ(testing::ReadFileBytes(*path), "payload");
  EXPECT_EQ((*cache)->Find(hash, CodeFormat::kSharedObject), *path);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/nested/cache")) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(ArtifactCacheTest, FindsNothingForCodeItWasNeverGiven) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_EQ((*cache)->Find(HashOf("never stored"), CodeFormat::kSharedObject), std::nullopt);
  EXPECT_EQ((*cache)->Find("../../etc/passwd", CodeFormat::kSharedObject), std::nullopt);
}

TEST_F(ArtifactCacheTest, ReusesIdenticalCodeWithoutRewritingIt) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string hash = HashOf("first");
  std::string path = *(*cache)->Store(hash, CodeFormat::kSharedObject, "first");
  auto written = std::filesystem::last_write_time(path);
  EXPECT_EQ(*(*cache)->Store(hash, CodeFormat::kSharedObject, "first"), path);
  EXPECT_EQ(std::filesystem::last_write_time(path), written) << "identical code is not rewritten";
}

TEST_F(ArtifactCacheTest, RefusesCodeThatDoesNotMatchItsHashAndStoresNothing) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string hash = HashOf("the real code");
  absl::StatusOr<std::string> path =
      (*cache)->Store(hash, CodeFormat::kSharedObject, "tampered code");
  EXPECT_TRUE(absl::IsDataLoss(path.status())) << path.status();
  EXPECT_EQ((*cache)->Find(hash, CodeFormat::kSharedObject), std::nullopt);
  // The same bytes under another format are another artifact.
  path = (*cache)->Store(hash, CodeFormat::kPtx, "the real code");
  EXPECT_TRUE(absl::IsDataLoss(path.status())) << path.status();
}

TEST_F(ArtifactCacheTest, RejectsHashesThatAreNotSha256Hex) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  for (std::string bad : {std::string(), std::string("abc"), std::string("../../../etc/x"),
                          std::string(64, 'A'), std::string(63, 'a') + "/", std::string(64, 'z')}) {
    absl::StatusOr<std::string> path = (*cache)->Store(bad, CodeFormat::kSharedObject, "x");
    EXPECT_TRUE(absl::IsInvalidArgument(path.status())) << bad;
  }
}

TEST_F(ArtifactCacheTest, OpenFailsUnderARegularFile) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok());
  std::string file = *(*cache)->Store(HashOf("x"), CodeFormat::kSharedObject, "x");
  auto nested = ArtifactCache::Open(file + "/sub");
  EXPECT_TRUE(absl::IsInvalidArgument(nested.status())) << nested.status();
}

}  // namespace
}  // namespace tune::rpc
