#include "tests/rpc_server/test_support.h"

#include <filesystem>

#include "common/artifact_hash.h"
#include "common/files.h"
#include "common/strings.h"
#include "gtest/gtest.h"

namespace tune::rpc::testing {

std::string FixtureWorkload() {
  return StrCat("gemm:M=", TUNE_TEST_M, ",N=", TUNE_TEST_N, ",K=", TUNE_TEST_K);
}

std::string ReadFileBytes(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.value_or("");
}

v1::TimingOptions FastTiming() {
  v1::TimingOptions timing;
  timing.set_number(1);
  timing.set_repeat(3);
  timing.set_max_repeat(3);  // exactly 3 rounds, however noisy the machine
  timing.set_min_repeat_ms(5);
  timing.set_timeout_ms(30000);
  timing.set_seed(7);
  return timing;
}

v1::MeasureRequest FixtureRequest(uint64_t trial_id, const std::string& library,
                                  const std::string& symbol, const v1::TimingOptions& timing) {
  v1::MeasureRequest request;
  request.set_trial_id(trial_id);
  request.set_workload(FixtureWorkload());
  request.set_target("llvm -mcpu=native -threads=1");
  request.mutable_artifact()->set_hash(
      ArtifactHash(CodeFormat::kSharedObject, ReadFileBytes(library)));
  request.mutable_artifact()->set_format(v1::ARTIFACT_FORMAT_SHARED_OBJECT);
  request.mutable_artifact()->set_entry_symbol(symbol);
  request.mutable_artifact()->set_template_name("gemm.test.fixture");
  *request.mutable_timing() = timing;
  return request;
}

std::string BuiltOrBundled(const std::string& build_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  const fs::path name = fs::path(build_path).filename();
  for (const fs::path& candidate : {exe_dir / name, exe_dir / ".." / "lib" / name}) {
    if (!ec && fs::exists(candidate, ec) && !fs::exists(build_path, ec)) {
      return candidate.string();
    }
  }
  return build_path;
}

SupervisorOptions FixtureSupervisorOptions() {
  SupervisorOptions options;
  options.child_executable = BuiltOrBundled(TUNE_SERVER_PATH);
  options.device_fingerprint = "test-fingerprint";
  options.timeout_slack_ms = 200;
  options.start_timeout_ms = 10000;
  options.prepare_timeout_ms = 10000;
  return options;
}

}  // namespace tune::rpc::testing
