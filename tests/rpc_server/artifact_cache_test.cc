#include "rpc_server/artifact_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/rpc_server/test_support.h"

namespace tune::rpc {
namespace {

class ArtifactCacheTest : public ::testing::Test {
 protected:
  TempDir tmp_ = TempDir::Create("tune-rpc-test-").value();
  std::string dir_ = tmp_.path();
};

std::string HashOf(std::string_view code) { return ArtifactHash(CodeFormat::kSharedObject, code); }

std::optional<std::string> FoundPath(ArtifactCache& cache, std::string_view hash,
                                     CodeFormat format = CodeFormat::kSharedObject) {
  std::optional<CachedCode> found = cache.Find(hash, format);
  return found ? std::optional<std::string>(found->path()) : std::nullopt;
}

// Stores `code` and returns its path (the pin is dropped at once).
std::string StoreUnpinned(ArtifactCache& cache, const std::string& code) {
  absl::StatusOr<CachedCode> stored = cache.Store(HashOf(code), CodeFormat::kSharedObject, code);
  EXPECT_TRUE(stored.ok()) << stored.status();
  return stored.ok() ? stored->path() : "";
}

// Sets a file's last use (its mtime) to `seconds` after the epoch, so that the LRU order does
// not depend on how fast the test runs.
void SetLastUse(const std::string& path, time_t seconds) {
  struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST_F(ArtifactCacheTest, StoresCodeUnderItsHashAndLeavesNoTemporaryFiles) {
  auto cache = ArtifactCache::Open(dir_ + "/nested/cache");
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string hash = HashOf("payload");
  absl::StatusOr<CachedCode> stored = (*cache)->Store(hash, CodeFormat::kSharedObject, "payload");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->path(), dir_ + "/nested/cache/" + hash + ".so");
  EXPECT_EQ(testing::ReadFileBytes(stored->path()), "payload");
  EXPECT_EQ(FoundPath(**cache, hash), stored->path());
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
  EXPECT_EQ(FoundPath(**cache, HashOf("never stored")), std::nullopt);
  EXPECT_EQ(FoundPath(**cache, "../../etc/passwd"), std::nullopt);
}

TEST_F(ArtifactCacheTest, ReusesIdenticalCodeWithoutRewritingIt) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string path = StoreUnpinned(**cache, "first");
  struct stat before{};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  EXPECT_EQ(StoreUnpinned(**cache, "first"), path);
  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, before.st_ino)
      << "identical code is not rewritten (no new file renamed over it)";
}

TEST_F(ArtifactCacheTest, RefusesCodeThatDoesNotMatchItsHashAndStoresNothing) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string hash = HashOf("the real code");
  absl::StatusOr<CachedCode> stored =
      (*cache)->Store(hash, CodeFormat::kSharedObject, "tampered code");
  EXPECT_TRUE(absl::IsDataLoss(stored.status())) << stored.status();
  EXPECT_EQ(FoundPath(**cache, hash), std::nullopt);
  // The same bytes under another format are another artifact.
  stored = (*cache)->Store(hash, CodeFormat::kPtx, "the real code");
  EXPECT_TRUE(absl::IsDataLoss(stored.status())) << stored.status();
}

TEST_F(ArtifactCacheTest, AFileChangedOnDiskIsDroppedInsteadOfRun) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string path = StoreUnpinned(**cache, "genuine");
  std::ofstream(path, std::ios::trunc) << "swapped";
  EXPECT_EQ(FoundPath(**cache, HashOf("genuine")), std::nullopt);
  EXPECT_FALSE(std::filesystem::exists(path)) << "the changed file is removed";
}

TEST_F(ArtifactCacheTest, RejectsHashesThatAreNotSha256Hex) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  for (std::string bad : {std::string(), std::string("abc"), std::string("../../../etc/x"),
                          std::string(64, 'A'), std::string(63, 'a') + "/", std::string(64, 'z')}) {
    absl::StatusOr<CachedCode> stored = (*cache)->Store(bad, CodeFormat::kSharedObject, "x");
    EXPECT_TRUE(absl::IsInvalidArgument(stored.status())) << bad;
  }
}

TEST_F(ArtifactCacheTest, OpenFailsUnderARegularFile) {
  auto cache = ArtifactCache::Open(dir_);
  ASSERT_TRUE(cache.ok());
  const std::string file = StoreUnpinned(**cache, "x");
  auto nested = ArtifactCache::Open(file + "/sub");
  EXPECT_TRUE(absl::IsInvalidArgument(nested.status())) << nested.status();
}

TEST_F(ArtifactCacheTest, ADirectoryOthersCanWriteIsRefusedNamingTheMode) {
  const std::string shared = dir_ + "/shared";
  ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
  for (mode_t mode : {mode_t{0777}, mode_t{01777}, mode_t{0770}}) {
    ASSERT_EQ(chmod(shared.c_str(), mode), 0);
    auto cache = ArtifactCache::Open(shared);
    ASSERT_TRUE(absl::IsInvalidArgument(cache.status())) << std::oct << mode;
    EXPECT_NE(cache.status().message().find(mode == 0770 ? "writable by its group"
                                                         : "writable by every user"),
              std::string::npos)
        << cache.status();
    EXPECT_NE(cache.status().message().find("-w " + shared), std::string::npos)
        << "names the chmod that fixes it: " << cache.status();
    EXPECT_NE(cache.status().message().find(shared), std::string::npos) << cache.status();
  }
  ASSERT_EQ(chmod(shared.c_str(), 0755), 0);
  EXPECT_TRUE(ArtifactCache::Open(shared).ok()) << "readable by others is fine";
}

TEST_F(ArtifactCacheTest, ADirectoryOfAnotherUserIsRefused) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a directory to another user needs root";
  }
  const std::string theirs = dir_ + "/theirs";
  ASSERT_EQ(mkdir(theirs.c_str(), 0700), 0);
  ASSERT_EQ(chown(theirs.c_str(), 4242, 4242), 0);
  auto cache = ArtifactCache::Open(theirs);
  ASSERT_TRUE(absl::IsInvalidArgument(cache.status()));
  EXPECT_NE(cache.status().message().find("owned by uid 4242"), std::string::npos)
      << cache.status();
}

TEST_F(ArtifactCacheTest, OverItsLimitTheLeastRecentlyUsedFilesGoFirst) {
  // Four artifacts of 100 bytes in a cache of 350: the fourth store evicts one.
  auto cache = ArtifactCache::Open(dir_, 350);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string a(100, 'a'), b(100, 'b'), c(100, 'c'), d(100, 'd');
  SetLastUse(StoreUnpinned(**cache, a), 1000);
  SetLastUse(StoreUnpinned(**cache, b), 2000);
  SetLastUse(StoreUnpinned(**cache, c), 3000);
  // Using a makes b the least recently used.
  ASSERT_TRUE(FoundPath(**cache, HashOf(a)).has_value());
  StoreUnpinned(**cache, d);
  EXPECT_TRUE(FoundPath(**cache, HashOf(a)).has_value());
  EXPECT_FALSE(FoundPath(**cache, HashOf(b)).has_value()) << "b was the least recently used";
  EXPECT_TRUE(FoundPath(**cache, HashOf(c)).has_value());
  EXPECT_TRUE(FoundPath(**cache, HashOf(d)).has_value());
  EXPECT_EQ((*cache)->bytes(), 300);
}

TEST_F(ArtifactCacheTest, CodeInUseIsNeverEvicted) {
  auto cache = ArtifactCache::Open(dir_, 250);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string a(100, 'a'), b(100, 'b'), c(100, 'c');
  absl::StatusOr<CachedCode> in_use = (*cache)->Store(HashOf(a), CodeFormat::kSharedObject, a);
  ASSERT_TRUE(in_use.ok());
  SetLastUse(in_use->path(), 1000);  // the oldest, but pinned
  SetLastUse(StoreUnpinned(**cache, b), 2000);
  StoreUnpinned(**cache, c);
  EXPECT_TRUE(std::filesystem::exists(in_use->path()));
  EXPECT_FALSE(FoundPath(**cache, HashOf(b)).has_value()) << "the oldest unpinned file goes";
}

TEST_F(ArtifactCacheTest, OpeningAnOversizedDirectoryTrimsItAndLeavesOtherFilesAlone) {
  {
    auto big = ArtifactCache::Open(dir_);
    ASSERT_TRUE(big.ok());
    SetLastUse(StoreUnpinned(**big, std::string(100, 'a')), 1000);
    SetLastUse(StoreUnpinned(**big, std::string(100, 'b')), 2000);
  }
  std::ofstream(dir_ + "/notes.txt") << std::string(500, 'n');
  auto small = ArtifactCache::Open(dir_, 150);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_FALSE(FoundPath(**small, HashOf(std::string(100, 'a'))).has_value());
  EXPECT_TRUE(FoundPath(**small, HashOf(std::string(100, 'b'))).has_value());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/notes.txt")) << "not an artifact: not the cache's";
}

TEST_F(ArtifactCacheTest, CodeLargerThanTheLimitIsRefusedAndNothingIsEvicted) {
  auto cache = ArtifactCache::Open(dir_, 150);
  ASSERT_TRUE(cache.ok());
  const std::string kept = StoreUnpinned(**cache, std::string(100, 'k'));
  const std::string huge(200, 'h');
  absl::StatusOr<CachedCode> stored =
      (*cache)->Store(HashOf(huge), CodeFormat::kSharedObject, huge);
  EXPECT_TRUE(absl::IsResourceExhausted(stored.status())) << stored.status();
  EXPECT_TRUE(std::filesystem::exists(kept));
}

TEST_F(ArtifactCacheTest, ANonPositiveLimitIsRefused) {
  auto cache = ArtifactCache::Open(dir_, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(cache.status())) << cache.status();
}

}  // namespace
}  // namespace tune::rpc
