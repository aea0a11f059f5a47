// The measurement supervisor on kernels that behave: timing, correctness, loading, and the
// requests a worker refuses before running anything.
#include "rpc_server/supervisor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "common/cpu_amx.h"
#include "common/cpu_set.h"
#include "fmt/format.h"
#include "tests/rpc_server/test_support.h"

namespace tune::rpc {
namespace {

using testing::FixtureRequest;
using testing::FixtureSupervisorOptions;

class SupervisorTest : public ::testing::Test {
 protected:
  std::unique_ptr<MeasureSupervisor> Make(SupervisorOptions options) {
    absl::StatusOr<std::unique_ptr<MeasureSupervisor>> s = MeasureSupervisor::Create(options);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<MeasureSupervisor> Make() { return Make(FixtureSupervisorOptions()); }

  // Measures `request` with the code of `library` (the fixture kernels' file by default).
  v1::Measurement MeasureOk(MeasureSupervisor& s, const v1::MeasureRequest& request,
                            const std::string& library = TUNE_TEST_GEMM_KERNELS) {
    absl::StatusOr<v1::Measurement> m = s.Measure(request, library);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : v1::Measurement();
  }

  TempDir dir_ = TempDir::Create("tune-rpc-test-").value();
  std::string cache_dir_ = dir_.path();
};

TEST_F(SupervisorTest, CorrectKernelIsTimedInRepeatRoundsOfAtLeastMinRepeatMs) {
  auto supervisor = Make();
  v1::Measurement m =
      MeasureOk(*supervisor, FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct"));
  ASSERT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  EXPECT_EQ(m.message(), "");
  ASSERT_EQ(m.round_secs_size(), 3);
  EXPECT_GT(m.number(), 1) << "a 16x24x32 gemm needs many calls to fill 5 ms";
  for (double secs : m.round_secs()) {
    EXPECT_GT(secs, 0);
    EXPECT_GE(secs * m.number(), 0.005) << "each round lasts at least min_repeat_ms";
  }
  EXPECT_EQ(m.device_fingerprint(), "test-fingerprint");
}

TEST_F(SupervisorTest, AChildReportsTheVersionsOfTheLibrariesItIsAskedFor) {
  SupervisorOptions options = FixtureSupervisorOptions();
  // oneDNN and OpenBLAS are installed wherever tune builds; rocBLAS's shim loads but not its
  // library (no ROCm here), which is reported, not fatal.
  options.library_versions_of = {"dnnl", "openblas", "rocblas"};
  auto supervisor = Make(options);
  ASSERT_TRUE(supervisor->StartChild().ok());
  const std::map<std::string, std::string>& versions = supervisor->library_versions();
  ASSERT_EQ(versions.size(), 3u);
  EXPECT_THAT(versions.at("dnnl"), ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  EXPECT_THAT(versions.at("openblas"), ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  if (versions.at("rocblas") != "unavailable") {
    EXPECT_THAT(versions.at("rocblas"), ::testing::MatchesRegex("[0-9].*")) << "ROCm is here";
  }
  // A child not asked reports none.
  auto plain = Make();
  ASSERT_TRUE(plain->StartChild().ok());
  EXPECT_TRUE(plain->library_versions().empty());
}

TEST_F(SupervisorTest, TheMeasurementProcessRunsOnlyOnTheCpusItIsPinnedTo) {
  SupervisorOptions options = FixtureSupervisorOptions();
  const int cpu = AllowedCpus().back();
  options.cpus = {cpu};
  auto supervisor = Make(options);
  v1::Measurement m =
      MeasureOk(*supervisor, FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct"));
  ASSERT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  const pid_t child = supervisor->child_pid();
  ASSERT_GT(child, 0);
  std::string status = testing::ReadFileBytes("/proc/" + std::to_string(child) + "/status");
  EXPECT_NE(status.find("Cpus_allowed_list:\t" + std::to_string(cpu) + "\n"), std::string::npos)
      << status;
  EXPECT_EQ(AllowedCpus().back(), cpu) << "the worker itself stays unpinned";
}

TEST_F(SupervisorTest, OneChildServesConsecutiveSuccessfulTrials) {
  auto supervisor = Make();
  for (uint64_t trial = 1; trial <= 3; ++trial) {
    v1::Measurement m = MeasureOk(
        *supervisor, FixtureRequest(trial, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct"));
    EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  }
  EXPECT_EQ(supervisor->children_started(), 1);
}

TEST_F(SupervisorTest, FlushCacheBetweenRoundsStillMeasures) {
  auto supervisor = Make();
  v1::TimingOptions timing = testing::FastTiming();
  timing.set_flush_cache(true);
  timing.set_repeat(2);
  timing.set_max_repeat(2);
  v1::Measurement m = MeasureOk(
      *supervisor, FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct", timing));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  EXPECT_EQ(m.round_secs_size(), 2);
}

TEST_F(SupervisorTest, WrongOutputIsWrongAnswerWithTheFirstBadElement) {
  auto supervisor = Make();
  v1::Measurement m =
      MeasureOk(*supervisor, FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_wrong"));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_WRONG_ANSWER);
  const int bad_index = (TUNE_TEST_M / 2) * TUNE_TEST_N + TUNE_TEST_N / 2;
  EXPECT_NE(m.message().find(fmt::format("output[{}]", bad_index)), std::string::npos)
      << m.message();
  EXPECT_EQ(m.round_secs_size(), 0) << "no time counts for a wrong answer";
}

TEST_F(SupervisorTest, TheArtifactsToleranceScaleDecidesAnOutputOffByThreeStandardBounds) {
  auto supervisor = Make();
  auto measure = [&](uint64_t trial, double scale) {
    v1::MeasureRequest request =
        FixtureRequest(trial, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_three_bounds_off");
    request.mutable_artifact()->set_tolerance_scale(scale);
    return MeasureOk(*supervisor, request);
  };
  v1::Measurement standard = measure(1, 0);
  EXPECT_EQ(standard.error_kind(), v1::ERROR_KIND_WRONG_ANSWER) << standard.message();
  v1::Measurement twice = measure(2, 2);
  EXPECT_EQ(twice.error_kind(), v1::ERROR_KIND_WRONG_ANSWER);
  EXPECT_NE(twice.message().find("2 times the standard bound"), std::string::npos)
      << twice.message();
  v1::Measurement winograd = measure(3, 4);
  EXPECT_EQ(winograd.error_kind(), v1::ERROR_KIND_NONE) << winograd.message();
}

TEST_F(SupervisorTest, AToleranceScaleOutsideOneToSixtyFourIsRefusedNamingTheField) {
  auto supervisor = Make();
  for (double scale : {0.5, 65.0, -1.0, std::nan("")}) {
    v1::MeasureRequest request =
        FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
    request.mutable_artifact()->set_tolerance_scale(scale);
    v1::Measurement m = MeasureOk(*supervisor, request);
    EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_UNSUPPORTED) << scale;
    EXPECT_NE(m.message().find("artifact.tolerance_scale"), std::string::npos) << m.message();
    EXPECT_NE(m.message().find("1 to 64"), std::string::npos) << m.message();
  }
  EXPECT_EQ(supervisor->children_started(), 0) << "refused before any kernel ran";
}

TEST_F(SupervisorTest, ATrialWhoseTargetBindsThreadsLeavesNoProcessForTheNextTrial) {
  auto supervisor = Make();
  v1::MeasureRequest bound = FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
  bound.set_target("llvm -mcpu=native -threads=1 -bind=close");
  EXPECT_EQ(MeasureOk(*supervisor, bound).error_kind(), v1::ERROR_KIND_NONE);
  EXPECT_EQ(supervisor->children_started(), 1);
  v1::Measurement next =
      MeasureOk(*supervisor, FixtureRequest(2, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct"));
  EXPECT_EQ(next.error_kind(), v1::ERROR_KIND_NONE) << next.message();
  EXPECT_EQ(supervisor->children_started(), 2) << "the bound trial's process was not reused";
  MeasureOk(*supervisor, FixtureRequest(3, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct"));
  EXPECT_EQ(supervisor->children_started(), 2) << "unbound trials share a process";
}

TEST_F(SupervisorTest, NonZeroReturnIsRuntimeCrashWithTheCode) {
  auto supervisor = Make();
  v1::Measurement m =
      MeasureOk(*supervisor, FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_returns3"));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_RUNTIME_CRASH);
  EXPECT_EQ(m.message(), "kernel returned 3");
  EXPECT_EQ(supervisor->children_started(), 1) << "a returned error does not cost the child";
}

TEST_F(SupervisorTest, AKernelRefusedAmxByLinuxIsUnsupportedNotACrash) {
  static_assert(kAmxDeniedStatus == -20, "tune_test_gemm_amx_denied returns -20");
  auto supervisor = Make();
  v1::Measurement m = MeasureOk(
      *supervisor, FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_amx_denied"));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_UNSUPPORTED);
  EXPECT_THAT(m.message(), ::testing::HasSubstr("kernel returned -20 (TUNE_CPU_ERROR_AMX_DENIED"));
  EXPECT_EQ(supervisor->children_started(), 1) << "a refused kernel does not cost the child";
}

// weights=prepared: the child runs the artifact's preparation on the canonical weights before
// the first call, and the kernel gets what it wrote (the fixture reads B transposed, so the
// canonical workload is a wrong answer for it).
TEST_F(SupervisorTest, AKernelOnPreparedWeightsGetsWhatItsPreparationWrote) {
  auto supervisor = Make();
  v1::MeasureRequest prepared =
      FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_transposed");
  prepared.set_workload(testing::FixtureWorkload() + ",weights=prepared");
  v1::Measurement m = MeasureOk(*supervisor, prepared);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  EXPECT_EQ(m.round_secs_size(), 3);
  v1::Measurement canonical = MeasureOk(
      *supervisor, FixtureRequest(2, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_transposed"));
  EXPECT_EQ(canonical.error_kind(), v1::ERROR_KIND_WRONG_ANSWER) << canonical.message();
}

TEST_F(SupervisorTest, APreparationMissingOrFailingIsALoadErrorOrACrashNamingIt) {
  auto supervisor = Make();
  v1::MeasureRequest missing = FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
  missing.set_workload(testing::FixtureWorkload() + ",weights=prepared");
  v1::Measurement m = MeasureOk(*supervisor, missing);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR);
  EXPECT_NE(m.message().find("tune_test_gemm_correct_prepared_floats"), std::string::npos)
      << m.message();
  v1::MeasureRequest failing =
      FixtureRequest(2, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_prepare_fails");
  failing.set_workload(testing::FixtureWorkload() + ",weights=prepared");
  v1::Measurement f = MeasureOk(*supervisor, failing);
  EXPECT_EQ(f.error_kind(), v1::ERROR_KIND_RUNTIME_CRASH);
  EXPECT_EQ(f.message(), "tune_test_gemm_prepare_fails_prepare returned 5");
  EXPECT_EQ(f.round_secs_size(), 0);
}

TEST_F(SupervisorTest, AnArtifactFileMissingOnTheWorkerIsAWorkerErrorNotAVerdict) {
  auto supervisor = Make();
  v1::MeasureRequest request = FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
  v1::Measurement m = MeasureOk(*supervisor, request, cache_dir_ + "/gone.so");
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_WORKER_ERROR) << m.message();
  EXPECT_NE(m.message().find("cannot open shared object file"), std::string::npos) << m.message();
}

TEST_F(SupervisorTest, MissingEntrySymbolIsLoadErrorNamingIt) {
  auto supervisor = Make();
  v1::Measurement m =
      MeasureOk(*supervisor, FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "no_such_kernel"));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR);
  EXPECT_NE(m.message().find("no_such_kernel"), std::string::npos) << m.message();
}

TEST_F(SupervisorTest, BytesThatAreNotASharedObjectAreLoadError) {
  auto supervisor = Make();
  v1::MeasureRequest request = FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
  const std::string not_elf = cache_dir_ + "/not-elf.so";
  std::ofstream(not_elf) << "not an ELF file";
  v1::Measurement m = MeasureOk(*supervisor, request, not_elf);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR);
  EXPECT_NE(m.message().find("cannot load artifact"), std::string::npos) << m.message();
}

// The artifact did not say it needs the library (Artifact.needed_libs): its own fault.
TEST_F(SupervisorTest, ExternCallFailsToLoadWithoutItsLibraryPreloaded) {
  auto supervisor = Make();
  v1::Measurement m =
      MeasureOk(*supervisor, FixtureRequest(1, TUNE_TEST_EXTERN_KERNEL, "tune_test_gemm_extern"),
                TUNE_TEST_EXTERN_KERNEL);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR);
  EXPECT_NE(m.message().find("tune_test_microkernel"), std::string::npos) << m.message();
}

TEST_F(SupervisorTest, ExternCallResolvesAgainstAPreloadedLibrary) {
  SupervisorOptions options = FixtureSupervisorOptions();
  options.preload_paths = {TUNE_TEST_MICROKERNEL};
  auto supervisor = Make(options);
  v1::Measurement m =
      MeasureOk(*supervisor, FixtureRequest(1, TUNE_TEST_EXTERN_KERNEL, "tune_test_gemm_extern"),
                TUNE_TEST_EXTERN_KERNEL);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  EXPECT_EQ(m.round_secs_size(), 3);
}

TEST_F(SupervisorTest, NeededLibraryThatIsNotPreloadedIsAWorkerErrorNotAVerdict) {
  SupervisorOptions options = FixtureSupervisorOptions();
  options.preload_paths = {TUNE_TEST_MICROKERNEL};
  auto supervisor = Make(options);
  v1::MeasureRequest request = FixtureRequest(1, TUNE_TEST_EXTERN_KERNEL, "tune_test_gemm_extern");
  request.mutable_artifact()->add_needed_libs("tune_test_microkernel");
  EXPECT_EQ(MeasureOk(*supervisor, request, TUNE_TEST_EXTERN_KERNEL).error_kind(),
            v1::ERROR_KIND_NONE);
  request.mutable_artifact()->add_needed_libs("openblas");
  v1::Measurement m = MeasureOk(*supervisor, request, TUNE_TEST_EXTERN_KERNEL);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_WORKER_ERROR);
  EXPECT_NE(m.message().find("'openblas'"), std::string::npos) << m.message();
}

TEST_F(SupervisorTest, GpuTargetOnACpuWorkerIsAWorkerErrorNotAVerdict) {
  auto supervisor = Make();
  v1::MeasureRequest request = FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
  request.set_target("cuda -arch=sm_90");
  v1::Measurement m = MeasureOk(*supervisor, request);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_WORKER_ERROR);
  EXPECT_NE(m.message().find("llvm"), std::string::npos) << m.message();
  EXPECT_EQ(supervisor->children_started(), 0) << "refused before any process starts";
}

TEST_F(SupervisorTest, AWorkloadTheWorkerCannotReadIsAWorkerErrorNamingTheField) {
  auto supervisor = Make();
  v1::MeasureRequest request = FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
  request.set_workload("gemm:M=16");
  v1::Measurement m = MeasureOk(*supervisor, request);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_WORKER_ERROR);
  EXPECT_TRUE(m.message().starts_with("workload: ")) << m.message();
}

TEST_F(SupervisorTest, AHashThatIsNotASha256IsLoadError) {
  auto supervisor = Make();
  v1::MeasureRequest request = FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
  request.mutable_artifact()->set_hash("../../etc/passwd");
  v1::Measurement m = MeasureOk(*supervisor, request);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR);
  EXPECT_NE(m.message().find("artifact.hash"), std::string::npos) << m.message();
}

TEST_F(SupervisorTest, ATimingTheWorkerCannotReadIsAWorkerErrorNamingTheField) {
  auto supervisor = Make();
  v1::MeasureRequest request = FixtureRequest(1, TUNE_TEST_GEMM_KERNELS, "tune_test_gemm_correct");
  request.mutable_timing()->set_repeat(-1);
  v1::Measurement m = MeasureOk(*supervisor, request);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_WORKER_ERROR);
  EXPECT_NE(m.message().find("timing.repeat"), std::string::npos) << m.message();
}

}  // namespace
}  // namespace tune::rpc
