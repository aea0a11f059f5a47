// The measurement supervisor when kernels crash or hang and when the child itself cannot run:
// each failure becomes data, and the next request is served by a fresh child.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <future>
#include <thread>

#include "rpc_server/supervisor.h"
#include "tests/rpc_server/test_support.h"

namespace tune::rpc {
namespace {

using testing::FixtureRequest;
using testing::FixtureSupervisorOptions;

class SupervisorFaultTest : public ::testing::Test {
 protected:
  std::unique_ptr<MeasureSupervisor> Make(SupervisorOptions options) {
    absl::StatusOr<std::unique_ptr<MeasureSupervisor>> s = MeasureSupervisor::Create(options);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<MeasureSupervisor> Make() { return Make(FixtureSupervisorOptions()); }

  v1::Measurement Measure(MeasureSupervisor& s, const std::string& symbol, uint64_t trial) {
    absl::StatusOr<v1::Measurement> m =
        s.Measure(FixtureRequest(trial, TUNE_TEST_GEMM_KERNELS, symbol), TUNE_TEST_GEMM_KERNELS);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : v1::Measurement();
  }

  void ExpectNextRequestSucceeds(MeasureSupervisor& s, uint64_t trial) {
    v1::Measurement m = Measure(s, "tune_test_gemm_correct", trial);
    EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
    EXPECT_EQ(m.round_secs_size(), 3);
  }

  TempDir dir_ = TempDir::Create("tune-rpc-test-").value();
  std::string cache_dir_ = dir_.path();
};

TEST_F(SupervisorFaultTest, SegfaultIsRuntimeCrashNamingSigsegvAndTheNextRequestSucceeds) {
  auto supervisor = Make();
  v1::Measurement m = Measure(*supervisor, "tune_test_gemm_segv", 1);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_RUNTIME_CRASH);
  EXPECT_TRUE(m.message().starts_with("kernel crashed: SIGSEGV")) << m.message();
  EXPECT_EQ(m.device_fingerprint(), "test-fingerprint");
  ExpectNextRequestSucceeds(*supervisor, 2);
  EXPECT_EQ(supervisor->children_started(), 2);
}

TEST_F(SupervisorFaultTest, AbortIsRuntimeCrashNamingSigabrt) {
  auto supervisor = Make();
  v1::Measurement m = Measure(*supervisor, "tune_test_gemm_abort", 1);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_RUNTIME_CRASH);
  EXPECT_TRUE(m.message().starts_with("kernel crashed: SIGABRT")) << m.message();
  ExpectNextRequestSucceeds(*supervisor, 2);
}

TEST_F(SupervisorFaultTest, HangIsTimeoutAfterTheDeadlineAndTheNextRequestSucceeds) {
  auto supervisor = Make();
  v1::TimingOptions timing = testing::FastTiming();
  timing.set_timeout_ms(300);
  absl::StatusOr<v1::Measurement> m =
      supervisor->Measure(FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_hang", timing),
                          TUNE_TEST_GEMM_KERNELS);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->error_kind(), v1::ERROR_KIND_TIMEOUT);
  // The kernel's deadline (not the loading phase's) killed it: timeout_ms plus the slack.
  EXPECT_NE(m->message().find("kernel did not finish within timeout_ms=300 (+200 ms slack)"),
            std::string::npos)
      << m->message();
  ExpectNextRequestSucceeds(*supervisor, 2);
  EXPECT_EQ(supervisor->children_started(), 2);
}

TEST_F(SupervisorFaultTest, CancelStopsARunningKernel) {
  // Cancel once the child reports that the (hanging) kernel runs: an event, not a delay.
  std::promise<uint64_t> started;
  SupervisorOptions options = FixtureSupervisorOptions();
  std::atomic<bool> told{false};
  options.on_kernel_started = [&](uint64_t trial) {
    if (!told.exchange(true)) {
      started.set_value(trial);
    }
  };
  auto supervisor = Make(options);
  std::thread canceller([&] {
    uint64_t trial = started.get_future().get();
    supervisor->Cancel(trial);
  });
  absl::StatusOr<v1::Measurement> m = supervisor->Measure(
      FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_hang"), TUNE_TEST_GEMM_KERNELS);
  if (!told.exchange(true)) {
    started.set_value(0);  // it ended without starting the kernel: release the canceller
  }
  canceller.join();
  EXPECT_TRUE(absl::IsCancelled(m.status())) << m.status();
  EXPECT_EQ(supervisor->child_pid(), -1) << "the cancelled kernel's child must be gone";
  ExpectNextRequestSucceeds(*supervisor, 2);
  EXPECT_EQ(supervisor->children_started(), 2);
}

TEST_F(SupervisorFaultTest, CancelBeforeTheMeasurementStartsSkipsIt) {
  auto supervisor = Make();
  supervisor->Cancel(5);
  absl::StatusOr<v1::Measurement> m = supervisor->Measure(
      FixtureRequest(5, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_hang"), TUNE_TEST_GEMM_KERNELS);
  EXPECT_TRUE(absl::IsCancelled(m.status())) << m.status();
  EXPECT_EQ(supervisor->children_started(), 0);
}

TEST_F(SupervisorFaultTest, CancelsOfSeveralTrialsBeforeTheyStartAreAllKept) {
  auto supervisor = Make();
  supervisor->Cancel(7);
  supervisor->Cancel(8);
  // The trials come in the other order; neither cancel may be lost to the other.
  for (uint64_t id : {8, 7}) {
    absl::StatusOr<v1::Measurement> m = supervisor->Measure(
        FixtureRequest(id, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_hang"), TUNE_TEST_GEMM_KERNELS);
    EXPECT_TRUE(absl::IsCancelled(m.status())) << "trial " << id << ": " << m.status();
  }
  EXPECT_EQ(supervisor->children_started(), 0);
  // A cancel is spent by its trial: measuring another trial works.
  ExpectNextRequestSucceeds(*supervisor, 9);
}

TEST_F(SupervisorFaultTest, ChildKilledWhileIdleIsReplacedForTheNextRequest) {
  auto supervisor = Make();
  ExpectNextRequestSucceeds(*supervisor, 1);
  pid_t pid = supervisor->child_pid();
  ASSERT_GT(pid, 0);
  // Wait for the death itself (the process's pidfd turns readable), so that the next request
  // finds a dead child rather than racing its exit.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  ASSERT_GE(pidfd, 0) << std::strerror(errno);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  pollfd exited = {pidfd, POLLIN, 0};
  ASSERT_EQ(poll(&exited, 1, /*timeout_ms=*/60000), 1) << "the killed child did not exit";
  close(pidfd);
  ExpectNextRequestSucceeds(*supervisor, 2);
  EXPECT_NE(supervisor->child_pid(), pid);
}

TEST_F(SupervisorFaultTest, ChildThatCannotStartIsTheWorkersFailureNotTheKernelsVerdict) {
  SupervisorOptions options = FixtureSupervisorOptions();
  options.child_executable = "/nonexistent/tune-server";
  auto supervisor = Make(options);
  EXPECT_FALSE(supervisor->StartChild().ok());
  for (uint64_t trial = 1; trial <= 2; ++trial) {
    absl::StatusOr<v1::Measurement> m =
        supervisor->Measure(FixtureRequest(trial, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct"),
                            TUNE_TEST_GEMM_KERNELS);
    EXPECT_TRUE(absl::IsUnavailable(m.status())) << m.status();
    EXPECT_NE(m.status().message().find("/nonexistent/tune-server"), std::string::npos)
        << m.status();
  }
}

TEST_F(SupervisorFaultTest, ChildWhosePreloadFailsIsTheWorkersFailureNamingTheLibrary) {
  SupervisorOptions options = FixtureSupervisorOptions();
  options.preload_paths = {"/nonexistent/libgone.so"};
  auto supervisor = Make(options);
  absl::StatusOr<v1::Measurement> m = supervisor->Measure(
      FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct"), TUNE_TEST_GEMM_KERNELS);
  EXPECT_TRUE(absl::IsUnavailable(m.status())) << m.status();
  EXPECT_NE(m.status().message().find("/nonexistent/libgone.so"), std::string::npos) << m.status();
}

}  // namespace
}  // namespace tune::rpc
