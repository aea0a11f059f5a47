#include "tests/rpc_server/test_support.h"

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

std::string HashHex(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

v1::TimingOptions FastTiming() {
  v1::TimingOptions timing;
  timing.set_number(1);
  timing.set_repeat(3);
  timing.set_min_repeat_ms(5);
  timing.set_timeout_ms(1000);
  timing.set_seed(7);
  return timing;
}

v1::MeasureRequest FixtureRequest(uint64_t trial_id, const std::string& library,
                                  const std::string& symbol, const v1::TimingOptions& timing) {
  v1::MeasureRequest request;
  request.set_trial_id(trial_id);
  request.set_workload(FixtureWorkload());
  request.set_target("llvm -mcpu=native -threads=1");
  std::string bytes = ReadFileBytes(library);
  request.mutable_artifact()->set_hash(HashHex(bytes));
  request.mutable_artifact()->set_shared_object(std::move(bytes));
  request.mutable_artifact()->set_entry_symbol(symbol);
  request.mutable_artifact()->set_template_name("gemm.test.fixture");
  *request.mutable_timing() = timing;
  return request;
}

SupervisorOptions FixtureSupervisorOptions(const std::string& cache_dir) {
  SupervisorOptions options;
  options.child_executable = TUNE_SERVER_PATH;
  options.cache_dir = cache_dir;
  options.device_fingerprint = "test-fingerprint";
  options.timeout_slack_ms = 200;
  options.start_timeout_ms = 10000;
  options.prepare_timeout_ms = 10000;
  return options;
}

}  // namespace tune::rpc::testing
