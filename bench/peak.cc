#include "bench/peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

#include "common/host_cpu.h"

namespace tune::bench {
namespace {

constexpr long kIterations = 20'000'000;

// Twelve independent accumulator chains hide the FMA latency (4 cycles x 2 ports + slack).
// Each chain is its own variable so that every accumulator stays in a register.
#define TUNE_FMA_CHAINS(FMADD, ADD, acc_t, set1)                                             \
  acc_t c0 = set1(0.0f), c1 = set1(0.1f), c2 = set1(0.2f), c3 = set1(0.3f), c4 = set1(0.4f), \
        c5 = set1(0.5f), c6 = set1(0.6f), c7 = set1(0.7f), c8 = set1(0.8f), c9 = set1(0.9f), \
        c10 = set1(1.0f), c11 = set1(1.1f);                                                  \
  const acc_t a = set1(0.999999f), b = set1(1e-7f);                                          \
  for (long it = 0; it < iterations; ++it) {                                                 \
    c0 = FMADD(c0, a, b);                                                                    \
    c1 = FMADD(c1, a, b);                                                                    \
    c2 = FMADD(c2, a, b);                                                                    \
    c3 = FMADD(c3, a, b);                                                                    \
    c4 = FMADD(c4, a, b);                                                                    \
    c5 = FMADD(c5, a, b);                                                                    \
    c6 = FMADD(c6, a, b);                                                                    \
    c7 = FMADD(c7, a, b);                                                                    \
    c8 = FMADD(c8, a, b);                                                                    \
    c9 = FMADD(c9, a, b);                                                                    \
    c10 = FMADD(c10, a, b);                                                                  \
    c11 = FMADD(c11, a, b);                                                                  \
  }                                                                                          \
  acc_t sum = ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7)));             \
  sum = ADD(sum, ADD(ADD(c8, c9), ADD(c10, c11)))

__attribute__((target("avx2,fma"))) float FmaChainsAvx2(long iterations) {
  TUNE_FMA_CHAINS(_mm256_fmadd_ps, _mm256_add_ps, __m256, _mm256_set1_ps);
  float out[8];
  _mm256_storeu_ps(out, sum);
  return out[0];
}

__attribute__((target("avx512f"))) float FmaChainsAvx512(long iterations) {
  TUNE_FMA_CHAINS(_mm512_fmadd_ps, _mm512_add_ps, __m512, _mm512_set1_ps);
  float out[16];
  _mm512_storeu_ps(out, sum);
  return out[0];
}

#undef TUNE_FMA_CHAINS

template <typename Fn>
double BestGflops(Fn fn, int lanes, int trials) {
  double best = 0;
  volatile float sink = 0;
  fn(kIterations / 20);  // warm-up: clocks up, pages in
  for (int t = 0; t < trials; ++t) {
    auto start = std::chrono::steady_clock::now();
    sink = sink + fn(kIterations);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double flops = 2.0 * lanes * 12.0 * static_cast<double>(kIterations);
    best = std::max(best, flops / secs / 1e9);
  }
  return best;
}

}  // namespace

std::optional<double> MeasureFmaPeakAvx2(int trials) {
  const HostCpu& cpu = GetHostCpu();
  if (!cpu.HasFeature("avx2") || !cpu.HasFeature("fma")) {
    return std::nullopt;
  }
  return BestGflops(FmaChainsAvx2, 8, trials);
}

std::optional<double> MeasureFmaPeakAvx512(int trials) {
  if (!GetHostCpu().HasFeature("avx512f")) {
    return std::nullopt;
  }
  return BestGflops(FmaChainsAvx512, 16, trials);
}

}  // namespace tune::bench
