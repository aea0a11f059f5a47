// The measured FP32 peak of this CPU: the yardstick that "% of peak" divides by.
//
// Method (bench/RESULTS.md quotes it): a loop of independent FMA chains that accumulate into
// the addend (acc = a * b + acc, as GEMM micro-kernels do), with 8 to 24 chains so that some
// count covers the FMA latency times the FMA ports of any current core; the fastest count is
// kept. Each measurement first runs the kernel for `warmup_s` so the clocks settle, then times
// `runs` runs of about `run_s` each and reports their median. The all-core peak runs one pinned
// thread per CPU at once, started together; its time is the slowest thread's.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tune::bench {

enum class FmaIsa { kAvx2, kAvx512 };

struct PeakOptions {
  int runs = 5;
  double run_s = 0.2;
  double warmup_s = 0.5;
  /// Threads of the all-core measurement; 0: every CPU this process may run on.
  int threads = 0;
};

struct FmaPeak {
  FmaIsa isa = FmaIsa::kAvx2;
  /// Independent accumulator chains of the fastest kernel.
  int chains = 0;
  /// Median GFLOPS of one thread, and of `threads` threads together.
  double one_core_gflops = 0;
  int threads = 0;
  double all_core_gflops = 0;
  /// Every run's GFLOPS (one core, then all cores), for the spread.
  std::vector<double> one_core_runs, all_core_runs;
};

/// "avx2" or "avx512".
const char* FmaIsaName(FmaIsa isa);

/// Measures the peak with `isa`'s vectors; nullopt when this CPU lacks the ISA.
std::optional<FmaPeak> MeasureFmaPeak(FmaIsa isa, const PeakOptions& options = {});

}  // namespace tune::bench
