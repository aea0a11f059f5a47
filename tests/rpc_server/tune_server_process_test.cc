// The real tune-server binary: start-up errors and their exit codes, and a clean exit on
// SIGTERM while it waits for a daemon.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/rpc_server/test_support.h"

extern char** environ;

namespace tune::rpc {
namespace {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string stderr_text;
};

// Runs tune-server with `args`. When `sigterm_after` is set, sends SIGTERM after that long.
// Kills it after 10 s in any case.
ProcessResult RunTuneServer(const std::vector<std::string>& args,
                            std::optional<std::chrono::milliseconds> sigterm_after = {}) {
  std::string dir = testing::MakeTempDir();
  std::string err_path = dir + "/stderr.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<std::string> argv_storage = {TUNE_SERVER_PATH};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  argv_storage.push_back("--cache-dir=" + dir + "/cache");
  std::vector<char*> argv;
  for (std::string& a : argv_storage) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, TUNE_SERVER_PATH, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0);
  ProcessResult result;
  if (rc != 0) {
    return result;
  }
  auto start = std::chrono::steady_clock::now();
  bool termed = false;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (sigterm_after && !termed && elapsed >= *sigterm_after) {
      kill(pid, SIGTERM);
      termed = true;
    }
    if (elapsed > std::chrono::seconds(10)) {
      ADD_FAILURE() << "tune-server did not exit";
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  result.stderr_text = testing::ReadFileBytes(err_path);
  testing::RemoveTree(dir);
  return result;
}

TEST(TuneServerProcessTest, MissingPreloadExitsWithCode1NamingThePath) {
  ProcessResult r =
      RunTuneServer({"--daemon", "127.0.0.1:1", "--preload", "/nonexistent/libmissing.so"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_text.find("--preload /nonexistent/libmissing.so: cannot load"),
            std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("No such file"), std::string::npos) << r.stderr_text;
}

TEST(TuneServerProcessTest, PreloadWithAnUnresolvedSymbolExitsWithCode1NamingTheSymbol) {
  ProcessResult r =
      RunTuneServer({"--daemon", "127.0.0.1:1", "--preload", TUNE_TEST_EXTERN_KERNEL});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_text.find(TUNE_TEST_EXTERN_KERNEL), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("tune_test_microkernel"), std::string::npos) << r.stderr_text;
}

TEST(TuneServerProcessTest, CudaDeviceIsRefusedWithCode2) {
  ProcessResult r = RunTuneServer({"--daemon", "127.0.0.1:1", "--device", "cuda"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("not built into this worker yet"), std::string::npos)
      << r.stderr_text;
}

TEST(TuneServerProcessTest, SigtermWhileWaitingForTheDaemonExitsCleanly) {
  // Nothing listens on port 1: the worker keeps retrying until the signal.
  ProcessResult r = RunTuneServer(
      {"--daemon", "127.0.0.1:1", "--preload", TUNE_TEST_MICROKERNEL, "--log-level", "debug"},
      std::chrono::milliseconds(500));
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("not reachable yet"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("worker stopped"), std::string::npos) << r.stderr_text;
}

}  // namespace
}  // namespace tune::rpc
