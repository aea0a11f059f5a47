#include "bench/peak.h"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/cpu_amx.h"
#include "common/host_cpu.h"
#include "common/stats.h"
#include "common/strings.h"

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

// AVX512-FP16: 32 half-precision lanes per FMA. a * b is 2^-12, a normal half: a chain
// grows until that rounds away, and stays finite.
template <int kChains>
__attribute__((target("avx512fp16,avx512bw,avx512vl"))) float Avx512Fp16Chains(long iterations) {
  __m512h acc[kChains];
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i) {
    acc[i] = _mm512_set1_ph(static_cast<_Float16>(0.01f * static_cast<float>(i)));
  }
  __m512h a = _mm512_set1_ph(static_cast<_Float16>(0.015625f)), b = a;
  asm volatile("" : "+v"(a), "+v"(b));
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) {
      acc[i] = _mm512_fmadd_ph(a, b, acc[i]);
    }
  }
  __m512h sum = acc[0];
#pragma GCC unroll 32
  for (int i = 1; i < kChains; ++i) {
    sum = _mm512_add_ph(sum, acc[i]);
  }
  _Float16 out[32];
  _mm512_storeu_ph(out, sum);
  return static_cast<float>(out[0]);
}

// AVX512-BF16: vdpbf16ps adds the products of 16 pairs of bf16 into 16 float lanes (32
// multiply-adds per instruction).
template <int kChains>
__attribute__((target("avx512bf16,avx512bw,avx512vl"))) float Avx512Bf16Chains(long iterations) {
  __m512 acc[kChains];
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i) {
    acc[i] = _mm512_set1_ps(0.01f * static_cast<float>(i));
  }
  const __m512 tiny = _mm512_set1_ps(1e-7f);
  __m512bh a = _mm512_cvtne2ps_pbh(tiny, tiny), b = a;
  asm volatile("" : "+v"(a), "+v"(b));
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) {
      acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
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

// VNNI: vpdpbusd adds the products of 16 quads of u8 x s8 into 16 int32 lanes (64
// multiply-adds per instruction); the sums wrap, which is defined for the instruction.
template <int kChains>
__attribute__((target("avx512vnni,avx512bw"))) float Avx512VnniChains(long iterations) {
  __m512i acc[kChains];
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i) {
    acc[i] = _mm512_set1_epi32(i);
  }
  __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(1);
  asm volatile("" : "+v"(a), "+v"(b));
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) {
      acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
    }
  }
  __m512i sum = acc[0];
#pragma GCC unroll 32
  for (int i = 1; i < kChains; ++i) {
    sum = _mm512_add_epi32(sum, acc[i]);
  }
  int32_t out[16];
  _mm512_storeu_si512(out, sum);
  return static_cast<float>(out[0]);
}

// AMX: every tile 16 rows of 64 bytes; tiles 0 .. kChains - 1 accumulate (one chain each), 6
// and 7 are the sources. tdpbf16ps is 16 x 16 x 32 multiply-adds, tdpbusd 16 x 16 x 64. The
// configuration is per thread: each call loads it and releases the tiles at the end.
struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

template <int kChains, bool kInt8>
__attribute__((target("amx-tile,amx-bf16,amx-int8"))) float AmxChains(long iterations) {
  static_assert(kChains >= 1 && kChains <= 6);
  AmxTileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  _tile_loadconfig(&config);
  // bf16 2^-10 in every element (as int8, bytes 0x80 and 0x3A: the int32 sums wrap, as the
  // instruction defines).
  alignas(64) uint16_t source[16 * 32];
  std::fill(std::begin(source), std::end(source), uint16_t{0x3A80});
  _tile_loadd(6, source, 64);
  _tile_loadd(7, source, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  for (long it = 0; it < iterations; ++it) {
    if constexpr (kInt8) {
      _tile_dpbusd(0, 6, 7);
      if constexpr (kChains > 1) {
        _tile_dpbusd(1, 6, 7);
      }
      if constexpr (kChains > 2) {
        _tile_dpbusd(2, 6, 7);
      }
      if constexpr (kChains > 3) {
        _tile_dpbusd(3, 6, 7);
      }
      if constexpr (kChains > 4) {
        _tile_dpbusd(4, 6, 7);
      }
      if constexpr (kChains > 5) {
        _tile_dpbusd(5, 6, 7);
      }
    } else {
      _tile_dpbf16ps(0, 6, 7);
      if constexpr (kChains > 1) {
        _tile_dpbf16ps(1, 6, 7);
      }
      if constexpr (kChains > 2) {
        _tile_dpbf16ps(2, 6, 7);
      }
      if constexpr (kChains > 3) {
        _tile_dpbf16ps(3, 6, 7);
      }
      if constexpr (kChains > 4) {
        _tile_dpbf16ps(4, 6, 7);
      }
      if constexpr (kChains > 5) {
        _tile_dpbf16ps(5, 6, 7);
      }
    }
  }
  alignas(64) float out[16 * 16];
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

// Asks the kernel for AMX's tile data in this process; false with the reason where it refuses.
bool RequestAmxTileData(std::string* why_not) {
  if (absl::Status granted = RequestAmx(); !granted.ok()) {
    *why_not = std::string(granted.message());
    return false;
  }
  return true;
}

struct ChainKernel {
  int chains;
  float (*run)(long iterations);
};

// 16 ymm registers hold at most 14 chains beside a and b; 32 zmm registers hold 24 easily;
// AMX's 8 tiles hold 6 accumulators beside the two sources.
constexpr ChainKernel kAvx2Kernels[] = {
    {8, &Avx2Chains<8>}, {10, &Avx2Chains<10>}, {12, &Avx2Chains<12>}, {14, &Avx2Chains<14>}};
constexpr ChainKernel kAvx512Kernels[] = {{8, &Avx512Chains<8>},
                                          {12, &Avx512Chains<12>},
                                          {16, &Avx512Chains<16>},
                                          {24, &Avx512Chains<24>}};
constexpr ChainKernel kAvx512Fp16Kernels[] = {{8, &Avx512Fp16Chains<8>},
                                              {12, &Avx512Fp16Chains<12>},
                                              {16, &Avx512Fp16Chains<16>},
                                              {24, &Avx512Fp16Chains<24>}};
constexpr ChainKernel kAvx512Bf16Kernels[] = {{8, &Avx512Bf16Chains<8>},
                                              {12, &Avx512Bf16Chains<12>},
                                              {16, &Avx512Bf16Chains<16>},
                                              {24, &Avx512Bf16Chains<24>}};
constexpr ChainKernel kAvx512VnniKernels[] = {{8, &Avx512VnniChains<8>},
                                              {12, &Avx512VnniChains<12>},
                                              {16, &Avx512VnniChains<16>},
                                              {24, &Avx512VnniChains<24>}};
constexpr ChainKernel kAmxBf16Kernels[] = {
    {2, &AmxChains<2, false>}, {4, &AmxChains<4, false>}, {6, &AmxChains<6, false>}};
constexpr ChainKernel kAmxInt8Kernels[] = {
    {2, &AmxChains<2, true>}, {4, &AmxChains<4, true>}, {6, &AmxChains<6, true>}};

// What each ISA needs and measures.
struct IsaInfo {
  PeakIsa isa;
  const char* name;
  const char* dtype;
  bool integer;
  std::vector<const char*> features;  // HostCpu's names
  int macs;                           // multiply-adds per instruction
  std::span<const ChainKernel> kernels;
};

const std::vector<IsaInfo>& Isas() {
  static const std::vector<IsaInfo> isas = {
      {PeakIsa::kAvx2, "avx2", "f32", false, {"avx2", "fma"}, 8, kAvx2Kernels},
      {PeakIsa::kAvx512, "avx512", "f32", false, {"avx512f"}, 16, kAvx512Kernels},
      {PeakIsa::kAvx512Fp16,
       "avx512fp16",
       "f16",
       false,
       {"avx512fp16", "avx512bw", "avx512vl"},
       32,
       kAvx512Fp16Kernels},
      {PeakIsa::kAvx512Bf16,
       "avx512bf16",
       "bf16",
       false,
       {"avx512bf16", "avx512bw", "avx512vl"},
       32,
       kAvx512Bf16Kernels},
      {PeakIsa::kAvx512Vnni,
       "avx512vnni",
       "i8",
       true,
       {"avx512vnni", "avx512bw"},
       64,
       kAvx512VnniKernels},
      {PeakIsa::kAmxBf16,
       "amx-bf16",
       "bf16",
       false,
       {"amx-tile", "amx-bf16"},
       16 * 16 * 32,
       kAmxBf16Kernels},
      {PeakIsa::kAmxInt8,
       "amx-int8",
       "i8",
       true,
       {"amx-tile", "amx-int8"},
       16 * 16 * 64,
       kAmxInt8Kernels},
  };
  return isas;
}

const IsaInfo& InfoOf(PeakIsa isa) {
  for (const IsaInfo& info : Isas()) {
    if (info.isa == isa) {
      return info;
    }
  }
  return Isas().front();
}

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

std::vector<PeakIsa> AllPeakIsas() {
  std::vector<PeakIsa> all;
  for (const IsaInfo& info : Isas()) {
    all.push_back(info.isa);
  }
  return all;
}

const char* PeakIsaName(PeakIsa isa) { return InfoOf(isa).name; }
const char* PeakDtype(PeakIsa isa) { return InfoOf(isa).dtype; }
bool PeakIsInteger(PeakIsa isa) { return InfoOf(isa).integer; }

std::optional<Peak> MeasurePeak(PeakIsa isa, const PeakOptions& options, std::string* why_not) {
  std::string ignored;
  std::string& reason = why_not != nullptr ? *why_not : ignored;
  const IsaInfo& info = InfoOf(isa);
  const HostCpu& cpu = GetHostCpu();
  std::vector<std::string> lacking;
  for (const char* feature : info.features) {
    if (!cpu.HasFeature(feature)) {
      lacking.emplace_back(feature);
    }
  }
  if (!lacking.empty()) {
    reason = "this CPU (" + cpu.name + ") lacks " + Join(lacking, ", ");
    return std::nullopt;
  }
  if ((isa == PeakIsa::kAmxBf16 || isa == PeakIsa::kAmxInt8) && !RequestAmxTileData(&reason)) {
    return std::nullopt;
  }
  const std::span<const ChainKernel> kernels = info.kernels;
  const int lanes = info.macs;
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

  Peak peak;
  peak.isa = isa;
  peak.chains = best->chains;
  const double ops = 2.0 * lanes * best->chains * static_cast<double>(iterations);
  for (int r = 0; r < options.runs; ++r) {
    peak.one_core_runs.push_back(ops / Seconds(*best, iterations) / 1e9);
  }
  peak.one_core_gops = Median(peak.one_core_runs);
  peak.threads = static_cast<int>(cpus.size());
  peak.all_core_runs = AllCoreRuns(*best, lanes, iterations, options, cpus);
  peak.all_core_gops = Median(peak.all_core_runs);
  return peak;
}

}  // namespace tune::bench
