#include "bench/peak.h"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <span>
#include <thread>

#include "common/host_cpu.h"
#include "common/stats.h"

namespace tune::bench {
namespace {

using Clock = std::chrono::steady_clock;

// `kChains` independent accumulators, each `acc = a * b + acc`: the addend carries the chain,
// as in a GEMM micro-kernel (some cores forward the addend late, so a chain through the
// multiplicand would measure a longer latency than a kernel sees). a * b is 1e-14: the sums
// stay normal and finite for any run length. The loops are unrolled so that every accumulator
// lives in a register.
template <int kChains>
__attribute__((target("avx2,fma"))) float Avx2Chains(long iterations) {
  __m256 acc[kChains];
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i) {
    acc[i] = _mm256_set1_ps(0.01f * static_cast<float>(i));
  }
  __m256 a = _mm256_set1_ps(1e-7f), b = _mm256_set1_ps(1e-7f);
  asm volatile("" : "+x"(a), "+x"(b));  // opaque: nothing is folded
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) {
      acc[i] = _mm256_fmadd_ps(a, b, acc[i]);
    }
  }
  __m256 sum = acc[0];
#pragma GCC unroll 32
  for (int i = 1; i < kChains; ++i) {
    sum = _mm256_add_ps(sum, acc[i]);
  }
  float out[8];
  _mm256_storeu_ps(out, sum);
  return out[0];
}

template <int kChains>
__attribute__((target("avx512f"))) float Avx512Chains(long iterations) {
  __m512 acc[kChains];
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i) {
    acc[i] = _mm512_set1_ps(0.01f * static_cast<float>(i));
  }
  __m512 a = _mm512_set1_ps(1e-7f), b = _mm512_set1_ps(1e-7f);
  asm volatile("" : "+v"(a), "+v"(b));
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) {
      acc[i] = _mm512_fmadd_ps(a, b, acc[i]);
    }
  }
  __m512 sum = acc[0];
#pragma GCC unroll 32
  for (int i = 1; i < kChains; ++i) {
    sum = _mm512_add_ps(sum, acc[i]);
  }
  float out[16];
  _mm512_storeu_ps(out, sum);
  return out[0];
}

struct ChainKernel {
  int chains;
  float (*run)(long iterations);
};

// 16 ymm registers hold at most 14 chains beside a and b; 32 zmm registers hold 24 easily.
constexpr ChainKernel kAvx2Kernels[] = {
    {8, &Avx2Chains<8>}, {10, &Avx2Chains<10>}, {12, &Avx2Chains<12>}, {14, &Avx2Chains<14>}};
constexpr ChainKernel kAvx512Kernels[] = {{8, &Avx512Chains<8>},
                                          {12, &Avx512Chains<12>},
                                          {16, &Avx512Chains<16>},
                                          {24, &Avx512Chains<24>}};

volatile float sink = 0;

double Seconds(const ChainKernel& kernel, long iterations) {
  const Clock::time_point start = Clock::now();
  sink = sink + kernel.run(iterations);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `kernel` for about `seconds` (clocks settle under a steady load).
void Warm(const ChainKernel& kernel, double seconds) {
  const Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    sink = sink + kernel.run(1 << 16);
  }
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) {
        cpus.push_back(cpu);
      }
    }
  }
  if (cpus.empty()) {
    cpus.push_back(0);
  }
  return cpus;
}

void PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// GFLOPS of each of `runs` runs of `threads` pinned threads, each doing `iterations`, started
// together after a shared warm-up; a run's time is its slowest thread's.
std::vector<double> AllCoreRuns(const ChainKernel& kernel, int lanes, long iterations,
                                const PeakOptions& options, const std::vector<int>& cpus) {
  const int threads = static_cast<int>(cpus.size());
  std::barrier sync(threads + 1);
  std::vector<std::jthread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, cpu = cpus[t]] {
      PinTo(cpu);
      sync.arrive_and_wait();
      Warm(kernel, options.warmup_s);
      for (int r = 0; r < options.runs; ++r) {
        sync.arrive_and_wait();  // start
        sink = sink + kernel.run(iterations);
        sync.arrive_and_wait();  // done
      }
    });
  }
  sync.arrive_and_wait();  // all pinned: warm-up starts
  std::vector<double> gflops;
  const double flops = 2.0 * lanes * kernel.chains * static_cast<double>(iterations) * threads;
  for (int r = 0; r < options.runs; ++r) {
    sync.arrive_and_wait();
    const Clock::time_point start = Clock::now();
    sync.arrive_and_wait();
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    gflops.push_back(flops / secs / 1e9);
  }
  return gflops;
}

}  // namespace

const char* FmaIsaName(FmaIsa isa) { return isa == FmaIsa::kAvx512 ? "avx512" : "avx2"; }

std::optional<FmaPeak> MeasureFmaPeak(FmaIsa isa, const PeakOptions& options) {
  const HostCpu& cpu = GetHostCpu();
  std::span<const ChainKernel> kernels;
  int lanes = 0;
  if (isa == FmaIsa::kAvx512) {
    if (!cpu.HasFeature("avx512f")) {
      return std::nullopt;
    }
    kernels = kAvx512Kernels;
    lanes = 16;
  } else {
    if (!cpu.HasFeature("avx2") || !cpu.HasFeature("fma")) {
      return std::nullopt;
    }
    kernels = kAvx2Kernels;
    lanes = 8;
  }
  const std::vector<int> cpus = [&] {
    std::vector<int> all = AllowedCpus();
    if (options.threads > 0 && options.threads < static_cast<int>(all.size())) {
      all.resize(options.threads);
    }
    return all;
  }();

  // One thread: warm up, then pick the fastest chain count on short runs.
  Warm(kernels.front(), options.warmup_s);
  const long probe = 1 << 18;
  const ChainKernel* best = nullptr;
  double best_rate = 0;  // iterations x chains per second
  for (const ChainKernel& kernel : kernels) {
    double secs = Seconds(kernel, probe);
    secs = std::min(secs, Seconds(kernel, probe));
    const double rate = static_cast<double>(probe) * kernel.chains / secs;
    if (rate > best_rate) {
      best_rate = rate;
      best = &kernel;
    }
  }
  const long iterations =
      std::max<long>(probe, static_cast<long>(options.run_s * best_rate / best->chains));

  FmaPeak peak;
  peak.isa = isa;
  peak.chains = best->chains;
  const double flops = 2.0 * lanes * best->chains * static_cast<double>(iterations);
  for (int r = 0; r < options.runs; ++r) {
    peak.one_core_runs.push_back(flops / Seconds(*best, iterations) / 1e9);
  }
  peak.one_core_gflops = Median(peak.one_core_runs);
  peak.threads = static_cast<int>(cpus.size());
  peak.all_core_runs = AllCoreRuns(*best, lanes, iterations, options, cpus);
  peak.all_core_gflops = Median(peak.all_core_runs);
  return peak;
}

}  // namespace tune::bench
