// The measurement supervisor when kernels crash or hang and when the child itself cannot run:
// each failure becomes data, and the next request is served by a fresh child.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "rpc_server/supervisor.h"
#include "tests/rpc_server/test_support.h"

namespace tune::rpc {
namespace {

using Clock = std::chrono::steady_clock;
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

TEST_F(SupervisorFaultTest, HangIsTimeoutWithinTheDeadlineAndTheNextRequestSucceeds) {
  auto supervisor = Make();
  v1::TimingOptions timing = testing::FastTiming();
  timing.set_timeout_ms(300);
  Clock::time_point start = Clock::now();
  absl::StatusOr<v1::Measurement> m =
      supervisor->Measure(FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_hang", timing),
                          TUNE_TEST_GEMM_KERNELS);
  auto elapsed = Clock::now() - start;
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->error_kind(), v1::ERROR_KIND_TIMEOUT);
  EXPECT_NE(m->message().find("timeout_ms=300"), std::string::npos) << m->message();
  // 300 ms deadline + 200 ms slack, plus start-up; far below a hang.
  EXPECT_GE(elapsed, std::chrono::milliseconds(500));
  EXPECT_LT(elapsed, std::chrono::seconds(3));
  ExpectNextRequestSucceeds(*supervisor, 2);
  EXPECT_EQ(supervisor->children_started(), 2);
}

TEST_F(SupervisorFaultTest, CancelStopsARunningMeasurementPromptly) {
  auto supervisor = Make();
  v1::TimingOptions timing = testing::FastTiming();
  timing.set_timeout_ms(30000);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    supervisor->Cancel(1);
  });
  Clock::time_point start = Clock::now();
  absl::StatusOr<v1::Measurement> m =
      supervisor->Measure(FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_hang", timing),
                          TUNE_TEST_GEMM_KERNELS);
  canceller.join();
  EXPECT_TRUE(absl::IsCancelled(m.status())) << m.status();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  ExpectNextRequestSucceeds(*supervisor, 2);
}

TEST_F(SupervisorFaultTest, CancelBeforeTheMeasurementStartsSkipsIt) {
  auto supervisor = Make();
  supervisor->Cancel(5);
  absl::StatusOr<v1::Measurement> m = supervisor->Measure(
      FixtureRequest(5, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_hang"), TUNE_TEST_GEMM_KERNELS);
  EXPECT_TRUE(absl::IsCancelled(m.status())) << m.status();
  EXPECT_EQ(supervisor->children_started(), 0);
}

TEST_F(SupervisorFaultTest, ChildKilledWhileIdleIsReplacedForTheNextRequest) {
  auto supervisor = Make();
  ExpectNextRequestSucceeds(*supervisor, 1);
  pid_t pid = supervisor->child_pid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
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
