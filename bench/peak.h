// The measured peaks of this CPU per instruction set: the yardsticks that "% of peak" divides
// by. FP32 FMA in AVX2 and AVX-512 vectors, and the matrix instructions of the ML element types:
// AVX512-FP16's FMA, AVX512-BF16's pair dot products (vdpbf16ps), VNNI's u8 x s8 quad dot
// products (vpdpbusd), and AMX's tile products in bf16 (tdpbf16ps) and int8 (tdpbusd).
//
// Method (bench/RESULTS.md quotes it): a loop of independent accumulator chains that accumulate
// into the addend (acc = a * b + acc, as GEMM micro-kernels do; an AMX chain is one accumulator
// tile), with enough chain counts that one covers the instruction's latency times its ports on
// any current core; the fastest count is kept. Each measurement first runs the kernel for
// `warmup_s` so the clocks settle, then times `runs` runs of about `run_s` each and reports
// their median. The all-core peak runs one pinned thread per CPU at once, started together;
// its time is the slowest thread's. Operations count a multiply-add as two.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tune::bench {

enum class PeakIsa { kAvx2, kAvx512, kAvx512Fp16, kAvx512Bf16, kAvx512Vnni, kAmxBf16, kAmxInt8 };

/// Every ISA above, FP32 first.
std::vector<PeakIsa> AllPeakIsas();

/// "avx2", "avx512", "avx512fp16", "avx512bf16", "avx512vnni", "amx-bf16", "amx-int8".
const char* PeakIsaName(PeakIsa isa);
/// The element type its inputs are: "f32", "f16", "bf16" or "i8" (u8 x s8 for VNNI).
const char* PeakDtype(PeakIsa isa);
/// Whether its operations are integer ones (GOPS rather than GFLOPS).
bool PeakIsInteger(PeakIsa isa);

struct PeakOptions {
  int runs = 5;
  double run_s = 0.2;
  double warmup_s = 0.5;
  /// Threads of the all-core measurement; 0: every CPU this process may run on.
  int threads = 0;
};

struct Peak {
  PeakIsa isa = PeakIsa::kAvx2;
  /// Independent accumulator chains of the fastest kernel.
  int chains = 0;
  /// Median G(FL)OPS of one thread, and of `threads` threads together.
  double one_core_gops = 0;
  int threads = 0;
  double all_core_gops = 0;
  /// Every run's G(FL)OPS (one core, then all cores), for the spread.
  std::vector<double> one_core_runs, all_core_runs;
};

/// Measures the peak of `isa`; nullopt with `why_not` set when this CPU lacks the ISA (naming
/// the CPU features it lacks) or the kernel refuses AMX's tile state to this process.
std::optional<Peak> MeasurePeak(PeakIsa isa, const PeakOptions& options = {},
                                std::string* why_not = nullptr);

}  // namespace tune::bench
