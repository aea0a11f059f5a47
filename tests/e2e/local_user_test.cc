// Another local user against the daemon, as real processes under two users: the other user
// (uid 65534, nobody) prepares files in a directory both can write (sticky, as /tmp) before the
// daemon starts; the daemon, run by this test's user, refuses every one of them, naming the
// file, its owner and mode and the command that fixes it. Needs root, to be two users.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/files.h"
#include "tests/e2e/harness.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr uid_t kOtherUser = 65534;
constexpr gid_t kOtherGroup = 65534;

// `dir`/shared: a directory every user may create files in, as /tmp (mode 1777).
std::string SharedDir(const TempDir& dir) {
  const std::string shared = dir.File("shared");
  EXPECT_EQ(mkdir(shared.c_str(), 0700), 0);
  EXPECT_EQ(chmod(shared.c_str(), 01777), 0);
  EXPECT_EQ(chmod(dir.path().c_str(), 0711), 0);  // the other user may pass through
  return shared;
}

// Runs `plant` in a child process as the other user, with umask 0; true when it exited 0.
// `plant` runs after fork: it may only make system calls (no allocation).
template <typename Plant>
bool AsOtherUser(Plant plant) {
  pid_t pid = fork();
  if (pid == 0) {
    umask(0);
    if (setgroups(0, nullptr) != 0 || setgid(kOtherGroup) != 0 || setuid(kOtherUser) != 0) {
      _exit(3);
    }
    _exit(plant() ? 0 : 4);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

// Creates `path` with `text`, mode `mode`; async-signal-safe, for a forked child.
bool Plant(const std::string& path, const std::string& text, mode_t mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  return fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
         close(fd) == 0;
}

class LocalUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "two users need root: the test becomes uid 65534 to plant the files";
    }
    // Where no other user can reach the temporary directories (a parent not searchable by
    // others, as a root directory of mode 0700), no other user can plant files there either.
    TempDir probe;
    ASSERT_EQ(chmod(probe.path().c_str(), 0711), 0);
    const std::string path = probe.path();
    if (!AsOtherUser([&] { return access(path.c_str(), X_OK) == 0; })) {
      GTEST_SKIP() << "uid " << kOtherUser << " cannot reach " << path
                   << ": a parent directory is not searchable by other users";
    }
  }
};

TEST_F(LocalUserTest, TheDaemonRefusesALogAnotherUserCreatedAndStartsOnceItIsFixed) {
  TempDir dir;
  const std::string shared = SharedDir(dir);
  const std::string db = shared + "/tuning.db";
  ASSERT_TRUE(AsOtherUser([&] { return Plant(db, "", 0666); }));

  CommandResult refused = RunCommand({Binaries::Daemon(), "--db", db, "--listen", "127.0.0.1:0"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("tuning log " + db + ": owned by uid 65534"));
  EXPECT_THAT(refused.err, HasSubstr("mode 0666"));
  EXPECT_THAT(refused.err, HasSubstr("fix: `chown root " + db + " && chmod go-w " + db + "`"));

  // The fix it names, and the daemon writes the log.
  ASSERT_EQ(chown(db.c_str(), 0, 0), 0);
  ASSERT_EQ(chmod(db.c_str(), 0640), 0);
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
}

TEST_F(LocalUserTest, TheDaemonDoesNotUseAnArtifactStoreAnotherUserCreated) {
  TempDir dir;
  const std::string shared = SharedDir(dir);
  const std::string db = shared + "/tuning.db";
  const std::string store = db + ".artifacts";
  ASSERT_TRUE(AsOtherUser([&] { return mkdir(store.c_str(), 0777) == 0; }));

  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  EXPECT_TRUE(WaitFor(
      [&] {
        return (*daemon)->process().Log().find("every candidate will be built") !=
               std::string::npos;
      },
      seconds(60)));
  const std::string log = (*daemon)->process().Log();
  EXPECT_THAT(log, HasSubstr("artifact store " + store + ": owned by uid 65534"));
  EXPECT_THAT(log, HasSubstr("chown -R root " + store));
  struct stat st{};
  ASSERT_EQ(stat(store.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kOtherUser);
  EXPECT_EQ(st.st_mode & 07777, 0777u) << "the daemon changed a directory it refused";
}

TEST_F(LocalUserTest, TheDaemonRefusesAPluginOrAMicroKernelLibraryOfAnotherUser) {
  TempDir dir;
  const std::string shared = SharedDir(dir);
  const std::string plugin = shared + "/plugin";
  const std::string library = shared + "/libukernel.so";
  const std::string ran = dir.File("ran");
  const std::string script = "#!/bin/sh\ntouch " + ran + "\n";
  const std::string elf =
      "\x7f"
      "ELF";
  ASSERT_TRUE(
      AsOtherUser([&] { return Plant(plugin, script, 0755) && Plant(library, elf, 0755); }));
  const std::string manifest = dir.File("ukernel.json");
  ASSERT_TRUE(WriteFileAtomically(manifest, R"json({
    "name": "planted_ukernel", "library": ")json" +
                                                library + R"json(",
    "symbol": "example_sgemm_ukernel", "role": "gemm_block", "mr": 8, "nr": 32,
    "a_packing": "kc_by_mr", "b_packing": "kc_by_nr", "isa": "avx2",
    "signature": "void example_sgemm_ukernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int32_t accumulate)"
  })json")
                  .ok());

  CommandResult with_plugin =
      RunCommand({Binaries::Daemon(), "--db", dir.File("a.db"), "--codegen-plugin", plugin});
  EXPECT_NE(with_plugin.exit_code, 0);
  EXPECT_THAT(with_plugin.err, HasSubstr("codegen plugin " + plugin + ": owned by uid 65534"));
  EXPECT_THAT(with_plugin.err, HasSubstr("fix: `chown root " + plugin + "`"));
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the plugin ran";

  CommandResult with_kernel =
      RunCommand({Binaries::Daemon(), "--db", dir.File("b.db"), "--extern-kernels", manifest});
  EXPECT_NE(with_kernel.exit_code, 0);
  EXPECT_THAT(with_kernel.err,
              HasSubstr("extern kernel library " + library + ": owned by uid 65534"));
}

}  // namespace
}  // namespace tune::testing
