#include "bench/peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

#include "common/host_cpu.h"

namespace tune::bench {
namespace {

constexpr long kIterations = 20'000'000;

// Twelve independent accumulator chains hide the FMA latency (4 cycles x 2 ports + slack).
__attribute__((target("avx2,fma"))) float FmaChainsAvx2(long iterations) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]), "+x"(acc[3]));
  }
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, sum);
  return out[0];
}

__attribute__((target("avx512f"))) float FmaChainsAvx512(long iterations) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
  }
  __m512 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm512_add_ps(sum, acc[i]);
  return _mm512_reduce_add_ps(sum);
}

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
  if (!cpu.HasFeature("avx2") || !cpu.HasFeature("fma")) return std::nullopt;
  return BestGflops(FmaChainsAvx2, 8, trials);
}

std::optional<double> MeasureFmaPeakAvx512(int trials) {
  if (!GetHostCpu().HasFeature("avx512f")) return std::nullopt;
  return BestGflops(FmaChainsAvx512, 16, trials);
}

}  // namespace tune::bench
