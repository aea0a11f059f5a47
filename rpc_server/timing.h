// TVM's timing protocol for one loaded CPU kernel: `repeat` rounds of `number` calls, `number`
// raised until a round lasts at least `min_repeat_ms`, then more rounds up to `max_repeat`
// while the median is not known to within `target_ci` (EnoughRounds); every round kept. Runs inside
// the measurement child; the warm-up call and its correctness check come before (measure_child.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/measurement.h"

namespace tune::rpc {

/// The most pointer arguments a kernel may take (C ABI `int32_t fn(T*, ...)`, each T an element
/// type of its argument): A, B, bias, C and two scales, with room for a quantised output's.
inline constexpr int kMaxKernelArgs = 8;
/// The fewest.
inline constexpr int kMinKernelArgs = 2;

/// Calls `fn` as int32_t fn(void*, ..., void*) with the pointers of `args`: every kernel argument
/// is a pointer, whatever its element type, so one signature per count fits them all. Counts
/// kMinKernelArgs to kMaxKernelArgs + 1 (a GPU kernel library's host entry takes its stream
/// after the buffers); -1 without calling for any other count.
int32_t CallWithPointers(void* fn, const std::vector<void*>& args);

/// A kernel entry point plus the buffers it is called with.
class KernelCall {
 public:
  /// `fn` is the entry symbol's address; `args` has kMinKernelArgs..kMaxKernelArgs pointers in
  /// Workload::Arguments() order (checked: a bug otherwise).
  KernelCall(void* fn, std::vector<void*> args);

  /// Calls the kernel once through the function type of its argument count; returns its
  /// result (0 means success).
  int32_t operator()() const;

 private:
  void* fn_;
  std::vector<void*> args_;
};

/// Evicts a kernel's buffers from every cache level (clflush of each cache line, as TVM's
/// cache_flush_cpu does), so that a round starts with cold data. Only the first call of a
/// round is cold: use number=1 to time cold calls only.
class CacheFlusher {
 public:
  struct Region {
    const void* data;
    size_t bytes;
  };
  explicit CacheFlusher(std::vector<Region> regions) : regions_(std::move(regions)) {}
  void Flush() const;

 private:
  std::vector<Region> regions_;
};

/// The clock TimeRounds reads: std::chrono::steady_clock::now, or one a test controls.
using NowFn = std::chrono::steady_clock::time_point (*)();

/// Times `call` with TVM's rule and returns a Measurement with every round (mean seconds per
/// call) and the final `number`. A non-zero return is RUNTIME_CRASH ("kernel returned N").
/// When the next round would end after `deadline`, it stops with TIMEOUT instead of running
/// it. `flusher` is used before every round when options.flush_cache is set (it may be null
/// otherwise). Durations and the deadline are read from `now`. device_fingerprint is left
/// empty.
Measurement TimeRounds(const KernelCall& call, const TimingOptions& options,
                       std::chrono::steady_clock::time_point deadline, const CacheFlusher* flusher,
                       NowFn now = &std::chrono::steady_clock::now);

}  // namespace tune::rpc
