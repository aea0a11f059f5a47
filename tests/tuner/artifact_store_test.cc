// The daemon's artifact store: keyed by build task and build environment, checked on read,
// bounded by bytes, and refusing what another local user could have planted.
#include "tuner/builder/artifact_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/artifact_hash.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune::tuner {
namespace {

using ::testing::HasSubstr;

// uid and gid 65534: nobody and nogroup, another user than the test's.
constexpr uid_t kOtherUser = 65534;
constexpr gid_t kOtherGroup = 65534;

v1::BuildChildTask Task(const std::string& config) {
  v1::BuildChildTask task;
  task.set_workload("gemm:M=8,N=8,K=8");
  task.set_target("llvm -mcpu=znver4 -threads=1");
  task.set_template_name("gemm.cpu.blocked");
  task.set_template_version(3);
  task.set_config(config);
  task.set_func_name("tune_gemm");
  return task;
}

v1::BuildChildResult Built(const std::string& code) {
  v1::BuildChildResult result;
  result.mutable_artifact()->set_hash(ArtifactHash(CodeFormat::kSharedObject, code));
  result.mutable_artifact()->set_entry_symbol("tune_gemm");
  result.mutable_artifact()->set_format(v1::ARTIFACT_FORMAT_SHARED_OBJECT);
  result.mutable_code()->set_hash(result.artifact().hash());
  result.mutable_code()->set_shared_object(code);
  return result;
}

std::unique_ptr<ArtifactStore> OpenStore(const TempDir& dir, uint64_t max_bytes = 1 << 20,
                                         const std::string& environment = "env-1") {
  absl::StatusOr<std::unique_ptr<ArtifactStore>> store =
      ArtifactStore::Open(dir.File("store"), max_bytes, environment);
  EXPECT_TRUE(store.ok()) << store.status();
  return std::move(*store);
}

TEST(ArtifactStoreTest, AStoredBuildIsFoundByItsTaskAcrossReopeningAndNotByAnotherTask) {
  TempDir dir = *TempDir::Create();
  {
    std::unique_ptr<ArtifactStore> store = OpenStore(dir);
    store->Insert(store->Key(Task(R"({"mc":4})")), Built("code of mc=4"));
  }
  std::unique_ptr<ArtifactStore> store = OpenStore(dir);
  EXPECT_GT(store->bytes(), 0u);
  std::optional<v1::BuildChildResult> found = store->Find(store->Key(Task(R"({"mc":4})")));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->code().shared_object(), "code of mc=4");
  EXPECT_EQ(found->artifact().hash(), Built("code of mc=4").artifact().hash());

  EXPECT_FALSE(store->Find(store->Key(Task(R"({"mc":8})"))).has_value());
  v1::BuildChildTask other_version = Task(R"({"mc":4})");
  other_version.set_template_version(4);
  EXPECT_FALSE(store->Find(store->Key(other_version)).has_value());
  EXPECT_EQ(store->counts().hits, 1u);
  EXPECT_EQ(store->counts().misses, 2u);
}

TEST(ArtifactStoreTest, AnotherBuildEnvironmentDoesNotSeeTheArtifacts) {
  TempDir dir = *TempDir::Create();
  std::unique_ptr<ArtifactStore> before = OpenStore(dir, 1 << 20, "llvm 19.1.7");
  before->Insert(before->Key(Task("{}")), Built("code"));
  std::unique_ptr<ArtifactStore> after = OpenStore(dir, 1 << 20, "llvm 19.1.8");
  EXPECT_FALSE(after->Find(after->Key(Task("{}"))).has_value());
}

TEST(ArtifactStoreTest, RebuildingACodegenPluginChangesTheBuildEnvironment) {
  TempDir dir = *TempDir::Create();
  const std::string plugin = dir.File("plugin");
  ASSERT_TRUE(WriteFileAtomically(plugin, "version 1", 0755).ok());
  const std::string first = ArtifactStore::BuildEnvironment({.codegen_plugins = {plugin}});
  ASSERT_TRUE(WriteFileAtomically(plugin, "version 2, longer", 0755).ok());
  EXPECT_NE(ArtifactStore::BuildEnvironment({.codegen_plugins = {plugin}}), first);
}

TEST(ArtifactStoreTest, AProgramsOwnTemplatesChangeTheBuildEnvironment) {
  const KernelTemplate* blocked = Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
  EXPECT_NE(ArtifactStore::BuildEnvironment({}),
            ArtifactStore::BuildEnvironment({.extra_templates = {blocked}}));
}

TEST(ArtifactStoreTest, ADamagedEntryIsAMissAndIsRemoved) {
  TempDir dir = *TempDir::Create();
  std::unique_ptr<ArtifactStore> store = OpenStore(dir);
  const std::string key = store->Key(Task("{}"));
  v1::BuildChildResult built = Built("the real code");
  store->Insert(key, built);
  // The same message with other code under the original hash: what a flipped bit on disk gives.
  v1::BuildChildResult damaged = built;
  damaged.mutable_code()->set_shared_object("the real cod3");
  std::string bytes;
  damaged.SerializeToString(&bytes);
  const std::string path = dir.File("store") + "/" + key.substr(0, 2) + "/" + key;
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());

  EXPECT_FALSE(store->Find(key).has_value());
  struct stat st{};
  EXPECT_NE(stat(path.c_str(), &st), 0) << "the damaged file is still there";
}

TEST(ArtifactStoreTest, AnArtifactWhoseCodeDoesNotMatchItsHashIsNotStored) {
  TempDir dir = *TempDir::Create();
  std::unique_ptr<ArtifactStore> store = OpenStore(dir);
  v1::BuildChildResult wrong = Built("code");
  wrong.mutable_code()->set_shared_object("other code");
  store->Insert(store->Key(Task("{}")), wrong);
  EXPECT_EQ(store->counts().inserted, 0u);
  EXPECT_FALSE(store->Find(store->Key(Task("{}"))).has_value());
}

TEST(ArtifactStoreTest, PastItsBoundTheLeastRecentlyUsedEntriesGoFirst) {
  TempDir dir = *TempDir::Create();
  const std::string code(1000, 'x');
  std::unique_ptr<ArtifactStore> store = OpenStore(dir, 3500);
  auto key = [&](int i) { return store->Key(Task("{\"mc\":" + std::to_string(i) + "}")); };
  auto make_used_at = [&](int i, int64_t secs) {
    // Last use by modification time, set explicitly: no test waits on the clock.
    const std::string k = key(i);
    const std::string path = dir.File("store") + "/" + k.substr(0, 2) + "/" + k;
    struct timespec times[2] = {{secs, 0}, {secs, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  };
  for (int i = 0; i < 3; ++i) {
    store->Insert(key(i), Built(code + std::to_string(i)));
    make_used_at(i, 1000 + i);
  }
  make_used_at(0, 5000);                     // 0 used most recently, 1 least
  store->Insert(key(3), Built(code + "3"));  // past the bound: 1 (then 2) must go

  EXPECT_GE(store->counts().evicted, 1u);
  EXPECT_LE(store->bytes(), 3500u / 10 * 9);
  EXPECT_FALSE(store->Find(key(1)).has_value());
  EXPECT_TRUE(store->Find(key(0)).has_value());
  EXPECT_TRUE(store->Find(key(3)).has_value());
}

TEST(ArtifactStoreTest, ADirectoryThatCannotBeCreatedIsRefusedNamingIt) {
  absl::StatusOr<std::unique_ptr<ArtifactStore>> store =
      ArtifactStore::Open("/dev/null/store", 1 << 20, "env");
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(store.status().message(), HasSubstr("/dev/null/store"));
}

std::string EntryPath(const std::string& store_dir, const std::string& key) {
  return store_dir + "/" + key.substr(0, 2) + "/" + key;
}

TEST(ArtifactStoreTest, AStoreEveryUserCanWriteIsRefusedNamingItsModeAndTheFix) {
  TempDir dir = *TempDir::Create();
  const std::string store_dir = dir.File("tuning.db.artifacts");
  ASSERT_EQ(mkdir(store_dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(store_dir.c_str(), 0777), 0);  // made by someone before the daemon started
  absl::StatusOr<std::unique_ptr<ArtifactStore>> store =
      ArtifactStore::Open(store_dir, 1 << 20, "env");
  ASSERT_TRUE(absl::IsFailedPrecondition(store.status())) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("artifact store " + store_dir));
  EXPECT_THAT(store.status().message(), HasSubstr("mode 0777"));
  EXPECT_THAT(store.status().message(), HasSubstr("chmod -R o-w " + store_dir));
  struct stat st{};
  ASSERT_EQ(stat(store_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u) << "a refused store is left as it was";
}

TEST(ArtifactStoreTest, AStoreOfAnotherUserIsRefused) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a directory to another user needs root";
  }
  TempDir dir = *TempDir::Create();
  const std::string store_dir = dir.File("tuning.db.artifacts");
  ASSERT_EQ(mkdir(store_dir.c_str(), 0700), 0);
  ASSERT_EQ(chown(store_dir.c_str(), kOtherUser, kOtherGroup), 0);
  absl::StatusOr<std::unique_ptr<ArtifactStore>> store =
      ArtifactStore::Open(store_dir, 1 << 20, "env");
  ASSERT_TRUE(absl::IsFailedPrecondition(store.status())) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("owned by uid 65534"));
  EXPECT_THAT(store.status().message(), HasSubstr("chown -R root " + store_dir));
}

TEST(ArtifactStoreTest, AStoreItsOwnGroupMayWriteIsUsedAsOnAnFsGroupVolume) {
  TempDir dir = *TempDir::Create();
  const std::string store_dir = dir.File("tuning.db.artifacts");
  ASSERT_EQ(mkdir(store_dir.c_str(), 0700), 0);
  ASSERT_EQ(chown(store_dir.c_str(), -1, getegid()), 0);
  ASSERT_EQ(chmod(store_dir.c_str(), 02770), 0);  // what kubelet makes of an fsGroup volume
  absl::StatusOr<std::unique_ptr<ArtifactStore>> store =
      ArtifactStore::Open(store_dir, 1 << 20, "env");
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string key = (*store)->Key(Task("{}"));
  (*store)->Insert(key, Built("code"));
  ASSERT_EQ(chmod(EntryPath(store_dir, key).c_str(), 0660), 0);
  EXPECT_TRUE((*store)->Find(key).has_value());
}

TEST(ArtifactStoreTest, TheStoreKeepsItsSecretPrivateAndKeysDifferFromAnotherStores) {
  TempDir dir = *TempDir::Create();
  std::unique_ptr<ArtifactStore> store = OpenStore(dir);
  struct stat st{};
  ASSERT_EQ(stat((dir.File("store") + "/secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(OpenStore(dir)->Key(Task("{}")), store->Key(Task("{}"))) << "stable across opens";
  TempDir other_dir = *TempDir::Create();
  EXPECT_NE(OpenStore(other_dir)->Key(Task("{}")), store->Key(Task("{}")));
}

TEST(ArtifactStoreTest, AnEntryPlantedUnderTheNameAnotherStoreGivesIsNotUsed) {
  // Someone builds the entry in a store of their own and copies it where a store keyed like
  // theirs would look for it: a valid artifact, a name that is right everywhere but here.
  TempDir theirs_dir = *TempDir::Create();
  std::unique_ptr<ArtifactStore> theirs = OpenStore(theirs_dir);
  const std::string planted_key = theirs->Key(Task("{}"));
  theirs->Insert(planted_key, Built("their constructor"));
  TempDir dir = *TempDir::Create();
  std::unique_ptr<ArtifactStore> store = OpenStore(dir);
  const std::string target = EntryPath(dir.File("store"), planted_key);
  std::filesystem::create_directories(std::filesystem::path(target).parent_path());
  std::filesystem::copy_file(EntryPath(theirs_dir.File("store"), planted_key), target);
  EXPECT_FALSE(store->Find(store->Key(Task("{}"))).has_value());
}

TEST(ArtifactStoreTest, AnEntryOfAnotherUserOrThatOthersCanWriteIsNotUsedAndIsRemoved) {
  TempDir dir = *TempDir::Create();
  std::unique_ptr<ArtifactStore> store = OpenStore(dir);
  const std::string key = store->Key(Task("{}"));
  const std::string path = EntryPath(dir.File("store"), key);
  store->Insert(key, Built("code"));
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  EXPECT_FALSE(store->Find(key).has_value());
  struct stat st{};
  EXPECT_NE(stat(path.c_str(), &st), 0) << "the entry others could write is still there";

  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a file to another user needs root";
  }
  store->Insert(key, Built("code"));
  ASSERT_EQ(chown(path.c_str(), kOtherUser, kOtherGroup), 0);
  EXPECT_FALSE(store->Find(key).has_value());
  EXPECT_NE(stat(path.c_str(), &st), 0) << "the entry of another user is still there";
  EXPECT_EQ(store->counts().hits, 0u);
}

TEST(ArtifactStoreTest, TheSecretIsNotEvictedWithTheEntries) {
  TempDir dir = *TempDir::Create();
  std::unique_ptr<ArtifactStore> store = OpenStore(dir, 2500);
  const std::string secret = dir.File("store") + "/secret";
  struct timespec oldest[2] = {{1, 0}, {1, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, secret.c_str(), oldest, 0), 0);
  for (int i = 0; i < 4; ++i) {
    store->Insert(store->Key(Task("{\"mc\":" + std::to_string(i) + "}")),
                  Built(std::string(1000, 'x') + std::to_string(i)));
  }
  ASSERT_GE(store->counts().evicted, 1u);
  struct stat st{};
  EXPECT_EQ(stat(secret.c_str(), &st), 0);
}

}  // namespace
}  // namespace tune::tuner
