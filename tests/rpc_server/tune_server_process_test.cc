// The real tune-server binary: start-up errors and their exit codes, and a clean exit on
// SIGTERM while it waits for a daemon.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/files.h"
#include "common/subprocess.h"
#include "common/target.h"
#include "rpc_server/gpu/gpu_device.h"
#include "tests/rpc_server/test_support.h"

namespace tune::rpc {
namespace {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string stderr_text;
};

// Generous bounds for a loaded machine: reaching them means the behaviour is broken, not slow.
constexpr auto kPatience = std::chrono::seconds(60);

// Runs tune-server with `args` until it exits. When `sigterm_once_logged` is set, sends SIGTERM
// as soon as its stderr contains that text (an event, not a delay). Kills it after kPatience.
ProcessResult RunTuneServer(const std::vector<std::string>& args,
                            std::optional<std::string> sigterm_once_logged = {},
                            std::vector<std::string> env = {}) {
  TempDir dir = TempDir::Create("tune-server-process-test-").value();
  const std::string err_path = dir.File("stderr.txt");
  SpawnOptions spawn;
  spawn.argv = {TUNE_SERVER_PATH};
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.argv.push_back("--cache-dir=" + dir.File("cache"));
  spawn.stderr_path = err_path;
  spawn.env = std::move(env);
  absl::StatusOr<pid_t> pid = Spawn(spawn);
  EXPECT_TRUE(pid.ok()) << pid.status();
  ProcessResult result;
  if (!pid.ok()) {
    return result;
  }
  auto stderr_text = [&] { return ReadFile(err_path).value_or(""); };
  std::optional<int> status;
  if (sigterm_once_logged) {
    const auto until = std::chrono::steady_clock::now() + kPatience;
    while (!(status = TryReap(*pid)) &&
           stderr_text().find(*sigterm_once_logged) == std::string::npos &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_FALSE(status.has_value()) << "exited before logging '" << *sigterm_once_logged << "'";
    kill(*pid, SIGTERM);
  }
  if (!status) {
    status = ReapWithin(*pid, kPatience);
  }
  if (!status) {
    ADD_FAILURE() << "tune-server did not exit";
    kill(*pid, SIGKILL);
    status = Reap(*pid);
  }
  if (WIFEXITED(*status)) {
    result.exit_code = WEXITSTATUS(*status);
  }
  result.stderr_text = stderr_text();
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

TEST(TuneServerProcessTest, AnUnknownLibraryIsAUsageErrorListingTheKnownOnes) {
  ProcessResult r = RunTuneServer({"--daemon", "127.0.0.1:1", "--libs", "openblas,mkl"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("--libs: unknown library 'mkl'"), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("known: openblas, dnnl"), std::string::npos) << r.stderr_text;
}

TEST(TuneServerProcessTest, ALibraryWhoseShimIsMissingStopsStartUpNamingThePackage) {
  TempDir empty = TempDir::Create("tune-no-runtime-").value();
  ProcessResult r = RunTuneServer({"--daemon", "127.0.0.1:1", "--libs", "dnnl"}, std::nullopt,
                                  {"TUNE_RUNTIME_DIR=" + empty.path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_text.find(empty.path() + "/libtune_dnnl.so does not exist"), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("install libdnnl-dev"), std::string::npos) << r.stderr_text;
}

TEST(TuneServerProcessTest, AMalformedDeviceIsRefusedWithCode2NamingTheAcceptedForms) {
  ProcessResult r = RunTuneServer({"--daemon", "127.0.0.1:1", "--device", "cuda0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("accepted: cpu, cuda:N or rocm:N"), std::string::npos)
      << r.stderr_text;
}

// Without a GPU here: either the driver library is missing, or it is present (e.g. a CUDA
// driver without a device) and initialising it or finding the device fails. Each stops
// start-up with code 1 and a message naming the problem.
TEST(TuneServerProcessTest, ACudaDeviceThatCannotBeOpenedStopsStartUpNamingWhy) {
  if (gpu::GpuDevice::Open(TargetKind::kCuda, 0).ok()) {
    GTEST_SKIP() << "this host has a CUDA device";
  }
  ProcessResult r = RunTuneServer({"--daemon", "127.0.0.1:1", "--device", "cuda:0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_text.find("--device cuda:0: "), std::string::npos) << r.stderr_text;
  const bool no_library =
      r.stderr_text.find("libcuda.so.1 could not be loaded") != std::string::npos &&
      r.stderr_text.find("is the NVIDIA driver installed?") != std::string::npos;
  const bool no_init = r.stderr_text.find("cuInit failed: CUDA_ERROR_") != std::string::npos;
  const bool no_device = r.stderr_text.find("cuda:0 does not exist") != std::string::npos;
  EXPECT_TRUE(no_library || no_init || no_device) << r.stderr_text;
}

TEST(TuneServerProcessTest, AnOrdinalBeyondTheDevicesOrAMissingRuntimeStopsStartUp) {
  ProcessResult r = RunTuneServer({"--daemon", "127.0.0.1:1", "--device", "cuda:999"});
  EXPECT_EQ(r.exit_code, 1);
  const bool no_library =
      r.stderr_text.find("libcuda.so.1 could not be loaded") != std::string::npos;
  const bool no_init = r.stderr_text.find("cuInit failed: CUDA_ERROR_") != std::string::npos;
  const bool no_device =
      r.stderr_text.find("cuda:999 does not exist: this host has ") != std::string::npos;
  EXPECT_TRUE(no_library || no_init || no_device) << r.stderr_text;
}

TEST(TuneServerProcessTest, ARocmDeviceThatCannotBeOpenedStopsStartUpNamingWhy) {
  if (gpu::GpuDevice::Open(TargetKind::kRocm, 0).ok()) {
    GTEST_SKIP() << "this host has a ROCm device";
  }
  ProcessResult r = RunTuneServer({"--daemon", "127.0.0.1:1", "--device", "rocm:0"});
  EXPECT_EQ(r.exit_code, 1);
  const bool no_library =
      r.stderr_text.find("libamdhip64.so could not be loaded") != std::string::npos &&
      r.stderr_text.find("is ROCm installed?") != std::string::npos;
  const bool no_init = r.stderr_text.find("hipInit failed: ") != std::string::npos;
  const bool no_device = r.stderr_text.find("rocm:0 does not exist") != std::string::npos;
  EXPECT_TRUE(no_library || no_init || no_device) << r.stderr_text;
}

TEST(TuneServerProcessTest, SigtermWhileWaitingForTheDaemonExitsCleanly) {
  // Nothing listens on port 1: the worker keeps retrying until the signal, which is sent once
  // it has said so.
  ProcessResult r = RunTuneServer(
      {"--daemon", "127.0.0.1:1", "--preload", TUNE_TEST_MICROKERNEL, "--log-level", "debug"},
      "not reachable yet");
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("not reachable yet"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("worker stopped"), std::string::npos) << r.stderr_text;
}

}  // namespace
}  // namespace tune::rpc
