#include "common/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "common/files.h"

namespace tune {
namespace {

using std::chrono::seconds;

// Runs `script` with /bin/sh, its stdout and stderr appended to `out`; the exit code.
int RunShell(const std::string& script, const std::string& out, SpawnOptions spawn = {}) {
  spawn.argv = {"/bin/sh", "-c", script};
  spawn.stdout_path = out;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  EXPECT_TRUE(pid.ok()) << pid.status();
  return pid.ok() ? ExitCodeOf(Reap(*pid)) : -1;
}

class SubprocessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<TempDir> dir = TempDir::Create("tune-subprocess-test-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_.emplace(std::move(*dir));
  }
  std::string Out() const { return ReadFile(dir_->File("out")).value_or("<unreadable>"); }
  std::string OutPath() const { return dir_->File("out"); }
  std::optional<TempDir> dir_;
};

TEST_F(SubprocessTest, RunsArgvWithEnvironmentOverridesAndReportsTheExitCode) {
  SpawnOptions spawn;
  spawn.env = {"TUNE_SUBPROCESS_A=replaced", "TUNE_SUBPROCESS_B=added"};
  setenv("TUNE_SUBPROCESS_A", "original", 1);
  EXPECT_EQ(RunShell("echo $TUNE_SUBPROCESS_A $TUNE_SUBPROCESS_B; exit 3", OutPath(), spawn), 3);
  unsetenv("TUNE_SUBPROCESS_A");
  EXPECT_EQ(Out(), "replaced added\n");
}

TEST_F(SubprocessTest, MapsDescriptorsAndClosesTheOthers) {
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  int leaked = open("/dev/null", O_RDONLY);  // not close-on-exec: only close_other_fds hides it
  ASSERT_GE(leaked, 0);
  SpawnOptions spawn;
  spawn.fds = {{pipe_fds[1], 4}};
  spawn.close_other_fds = true;
  std::string script = "echo through-4 >&4; ls /proc/self/fd | sort -n | tr '\\n' ' '";
  EXPECT_EQ(RunShell(script, OutPath(), spawn), 0);
  close(pipe_fds[1]);
  close(leaked);
  char buffer[64] = {};
  ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer) - 1);
  close(pipe_fds[0]);
  EXPECT_EQ(std::string(buffer, n > 0 ? n : 0), "through-4\n");
  // 0, 1, 2 and 4, plus 3: the descriptor `ls` itself opens to read /proc/self/fd.
  ASSERT_GT(leaked, 4);
  EXPECT_EQ(Out(), "0 1 2 3 4 ");
}

TEST_F(SubprocessTest, APipedChildReadsOurRequestsAndItsExitIsEndOfFile) {
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", "tr a-z A-Z <&5 >&6"};
  spawn.close_other_fds = true;
  absl::StatusOr<PipedChild> child = SpawnPiped(spawn, 5, 6);
  ASSERT_TRUE(child.ok()) << child.status();
  ASSERT_EQ(write(child->to_child, "hello", 5), 5);
  close(child->to_child);
  std::string got;
  char buf[64];
  ssize_t n;
  while ((n = read(child->from_child, buf, sizeof(buf))) > 0) {
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(n, 0) << "end of file once the child exits: no copy of its end stays open here";
  EXPECT_EQ(got, "HELLO");
  close(child->from_child);
  EXPECT_EQ(ExitCodeOf(Reap(child->pid)), 0);
}

TEST_F(SubprocessTest, APipedChildThatCannotStartLeavesNoDescriptorOpen) {
  const int before = open("/dev/null", O_RDONLY);
  close(before);
  SpawnOptions spawn;
  spawn.argv = {"/nonexistent/program"};
  absl::StatusOr<PipedChild> child = SpawnPiped(spawn, 5, 6);
  EXPECT_FALSE(child.ok());
  const int after = open("/dev/null", O_RDONLY);
  close(after);
  EXPECT_EQ(after, before) << "the lowest free descriptor is the same: no pipe end leaked";
}

TEST_F(SubprocessTest, StdoutToStderrAndTheNewProcessGroup) {
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c", "echo out; echo pgid $(ps -o pgid= -p $$ | tr -d ' ') pid $$"};
  spawn.stderr_path = OutPath();
  spawn.stdout_to_stderr = true;
  spawn.new_process_group = true;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(ExitCodeOf(Reap(*pid)), 0);
  EXPECT_EQ(Out(), "out\npgid " + std::to_string(*pid) + " pid " + std::to_string(*pid) + "\n");
}

TEST_F(SubprocessTest, DefaultSignalsAndAnEmptyMaskReachTheChild) {
  signal(SIGPIPE, SIG_IGN);
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  SpawnOptions spawn;
  spawn.default_signals = {SIGPIPE};
  // SigIgn and SigBlk are hex masks; SIGPIPE is bit 13 and SIGTERM bit 15.
  EXPECT_EQ(RunShell("grep -E '^Sig(Ign|Blk)' /proc/self/status", OutPath(), spawn), 0);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  signal(SIGPIPE, SIG_DFL);
  std::string status = Out();
  EXPECT_NE(status.find("SigBlk:\t0000000000000000"), std::string::npos) << status;
  EXPECT_EQ(status.find("SigIgn:\t0000000000001000"), std::string::npos) << status;
}

TEST_F(SubprocessTest, AProgramThatCannotRunIsAnErrorNamingIt) {
  SpawnOptions spawn;
  spawn.argv = {dir_->File("no-such-program")};
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(pid.status().message().find("no-such-program: No such file"), std::string::npos)
      << pid.status();
  EXPECT_EQ(Spawn(SpawnOptions{}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SubprocessTest, KillsTheGroupAndDescribesHowAProcessEnded) {
  SpawnOptions spawn;
  spawn.argv = {"/bin/sleep", "600"};
  spawn.new_process_group = true;
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_FALSE(TryReap(*pid).has_value());
  KillProcessGroup(*pid, SIGKILL);
  std::optional<int> status = ReapWithin(*pid, seconds(60));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(DescribeWaitStatus(*status), "SIGKILL (Killed)");
  EXPECT_EQ(ExitCodeOf(*status), 128 + SIGKILL);
  EXPECT_EQ(DescribeWaitStatus(3 << 8), "exited with status 3");
  EXPECT_EQ(ExitCodeOf(3 << 8), 3);
}

}  // namespace
}  // namespace tune
