// Shared fixtures of the tuning log tests: a temporary directory and sample records.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/files.h"  // TempDir
#include "db/record.h"
#include "db/tuning_log.h"
#include "gtest/gtest.h"

namespace tune::testing {

inline constexpr char kGemm[] = "gemm:M=64,N=64,K=64";
inline constexpr char kTarget[] = "llvm -mcpu=znver4 -threads=1";
inline constexpr char kDevice[] = "cpu/x86_64/znver4";
inline constexpr char kGpuTarget[] = "cuda -arch=sm_90";
inline constexpr char kGpuDevice[] = "cuda/sm_90";

/// A successful record of kGemm on kTarget / kDevice with three rounds whose median is
/// `secs`.
Record SampleRecord(const std::string& config = R"({"mc":32,"nc":64})", double secs = 1e-3);
/// A successful record of kGemm on kGpuTarget / kGpuDevice timed with `clock` (median `secs`);
/// graph-timed ones carry a call-by-call reading 1.6 times slower, events-timed ones the same.
Record GpuRecord(const std::string& config, double secs, GpuClock clock);
/// The same record, failed with `kind`.
Record FailedRecord(ErrorKind kind, const std::string& config = R"({"mc":32,"nc":128})");

/// Opens a read-write log, failing the test on error.
std::unique_ptr<TuningLog> OpenLog(const std::string& path);

/// Every field of two records, compared one by one (clear failure messages).
void ExpectSameRecord(const Record& actual, const Record& expected);

}  // namespace tune::testing
