// TVM's timing rule on a GPU, after the checked warm-up (gpu_measure.h), read twice:
//
//   events: `number` calls queued one by one on the device's stream between two events. Device
//           time only while the host queues calls faster than the device runs them: a library
//           call that costs the host more than its kernels take reads as the host's call rate.
//   graph:  the calls captured once into a CUDA / HIP graph and the graph replayed between two
//           events: device time, whatever a call costs the host.
//
// The graph reading is the trial's time (round_secs); the events reading is kept beside it
// (host_round_secs). Capture starts after the warm-up, so a library's algorithm search and lazy
// workspace allocation fall outside it. Where capture is refused (the runtime has no graph API,
// a library call synchronises or allocates, instantiation fails), the events reading is the
// trial's time and the refusal is reported.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/measurement.h"
#include "rpc_server/gpu/gpu_device.h"

namespace tune::gpu {

/// The most calls captured into one graph: a round of more calls replays the graph several
/// times (whole replays, so a round's calls are a multiple of it).
inline constexpr int64_t kMaxCallsPerGraph = 64;

/// A buffer written before every timed call when TimingOptions::flush_cache is set (twice the
/// device's L2 cache), so that each call starts with a cold L2.
struct GpuFlush {
  DevicePtr data = 0;
  int64_t bytes = 0;
};

struct GpuTimes {
  /// round_secs (graph or, after a refusal, events), host_round_secs (events), number (the
  /// calls of the last graph round, or of the last events round after a refusal) and
  /// gpu_clock; or TIMEOUT with a message when the next round would pass the deadline.
  Measurement measurement;
  /// Why graph timing was refused; empty when it ran.
  std::string graph_refused;
};

/// Times `call` (one call of the candidate, queued on dev.stream(); it must be capturable
/// work only: launches and fills) by graph replay, then by events from the graph's final
/// number, each with TVM's rule (from options.number). A TIMEOUT of the graph rounds (or of the
/// events rounds after a refusal) is the trial's; when only the events rounds after graph
/// rounds would pass the deadline, host_round_secs stay empty. `flush` is used when
/// options.flush_cache is set: then every call is timed alone, after the flush, and the graph holds
/// one call. An error from `call` or from the device outside a capture (a crash, a sticky error) is
/// returned as is; one during a capture is a refusal (graph_refused), after which the device's
/// stream is usable again.
absl::StatusOr<GpuTimes> TimeOnGpu(GpuDevice& dev, const std::function<absl::Status()>& call,
                                   const TimingOptions& options,
                                   std::chrono::steady_clock::time_point deadline,
                                   const GpuFlush& flush);

}  // namespace tune::gpu
