#include "tests/db/test_util.h"

#include <cstdlib>

namespace tune::testing {

Record SampleRecord(const std::string& config, double secs) {
  Record r;
  r.workload = kGemm;
  r.target = kTarget;
  r.device_key = kDevice;
  r.template_name = "gemm.cpu.blocked";
  r.template_version = 1;
  r.config = config;
  r.measurement.error = ErrorKind::kNone;
  r.measurement.round_secs = {secs * 1.01, secs, secs * 0.99};  // median: secs
  r.measurement.number = 25;
  r.measurement.device_fingerprint = "AMD EPYC 9654 96-Core; 1 thread";
  r.tune_version = "0.1.0";
  r.llvm_version = "19.1.7";
  r.worker = "worker-a";
  return r;
}

Record GpuRecord(const std::string& config, double secs, GpuClock clock) {
  Record r = SampleRecord(config, secs);
  r.target = kGpuTarget;
  r.device_key = kGpuDevice;
  r.template_name = "gemm.gpu.tiled";
  r.measurement.device_fingerprint = "NVIDIA H200";
  r.measurement.gpu_clock = clock;
  if (clock == GpuClock::kGraph) {
    r.measurement.host_round_secs = {secs * 1.6, secs * 1.62, secs * 1.58};
  } else {
    r.measurement.host_round_secs = r.measurement.round_secs;
  }
  return r;
}

Record FailedRecord(ErrorKind kind, const std::string& config) {
  Record r = SampleRecord(config);
  r.measurement.error = kind;
  r.measurement.message = "kernel exceeded the 10000 ms deadline";
  r.measurement.round_secs.clear();
  r.measurement.number = 0;
  return r;
}

std::unique_ptr<TuningLog> OpenLog(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path);
  EXPECT_TRUE(log.ok()) << log.status();
  if (!log.ok()) {
    std::abort();
  }
  return std::move(*log);
}

void ExpectSameRecord(const Record& actual, const Record& expected) {
  EXPECT_EQ(actual.id, expected.id);
  EXPECT_EQ(actual.uid, expected.uid);
  EXPECT_EQ(actual.workload, expected.workload);
  EXPECT_EQ(actual.target, expected.target);
  EXPECT_EQ(actual.device_key, expected.device_key);
  EXPECT_EQ(actual.template_name, expected.template_name);
  EXPECT_EQ(actual.template_version, expected.template_version);
  EXPECT_EQ(actual.config, expected.config);
  EXPECT_EQ(actual.measurement.error, expected.measurement.error);
  EXPECT_EQ(actual.measurement.message, expected.measurement.message);
  EXPECT_EQ(actual.measurement.round_secs, expected.measurement.round_secs);
  EXPECT_EQ(actual.measurement.number, expected.measurement.number);
  EXPECT_EQ(actual.measurement.device_fingerprint, expected.measurement.device_fingerprint);
  EXPECT_EQ(actual.measurement.library_info, expected.measurement.library_info);
  EXPECT_EQ(actual.measurement.gpu_clock, expected.measurement.gpu_clock);
  EXPECT_EQ(actual.measurement.host_round_secs, expected.measurement.host_round_secs);
  EXPECT_EQ(actual.tune_version, expected.tune_version);
  EXPECT_EQ(actual.llvm_version, expected.llvm_version);
  EXPECT_EQ(actual.job_id, expected.job_id);
  EXPECT_EQ(actual.worker, expected.worker);
  EXPECT_EQ(actual.created_at_ms, expected.created_at_ms);
  EXPECT_EQ(actual.artifact_hash, expected.artifact_hash);
}

}  // namespace tune::testing
