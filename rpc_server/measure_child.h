// The measurement child: a process re-executed from tune-server's own binary with
// `--measure-child`, which preloads the worker's libraries and then measures one artifact per
// request (dlopen, reference, checked warm-up, timed rounds). On a GPU worker (setup.device
// "cuda:N" / "rocm:N") it opens the device itself (gpu/gpu_device.h), reports it in its ready
// message and measures with gpu/gpu_measure.h; after a sticky GPU error it answers and exits.
// The worker supervises it (supervisor.h) and replaces it after a crash or a timeout.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/measurement.h"
#include "common/workload.h"
#include "rpc_server/timing.h"
#include "tune/v1/measure_child.pb.h"

namespace tune::rpc {

/// The flag that turns tune-server into a measurement child (first argument).
inline constexpr char kMeasureChildFlag[] = "--measure-child";
/// The child reads requests from this descriptor and writes replies to the next one.
inline constexpr int kChildRequestFd = 3;
inline constexpr int kChildReplyFd = 4;

/// Measures artifacts in the current process. Keeps reference outputs per (workload, seed)
/// between trials.
class ChildMeasurer {
 public:
  ChildMeasurer() = default;

  /// Loads trial.artifact_path (RTLD_NOW | RTLD_LOCAL), looks up the entry symbol, builds
  /// seeded inputs and the reference output, calls `on_started`, then runs one warm-up call
  /// whose output must match the reference, then the timed rounds. Every failure is data:
  /// LOAD_ERROR (with dlerror()), UNSUPPORTED (bad workload or argument count), RUNTIME_CRASH
  /// (non-zero return), WRONG_ANSWER (CompareOutputs' message) or TIMEOUT. A kernel that
  /// crashes takes the process with it.
  Measurement Measure(const v1::MeasureChildTrial& trial, const std::function<void()>& on_started);

 private:
  const std::vector<uint32_t>& Reference(const Workload& workload, uint64_t seed);

  std::map<std::string, std::vector<uint32_t>> references_;
  size_t reference_elements_ = 0;
};

/// The child's main loop on (in_fd, out_fd): answers the setup message, then measures each
/// trial until `in_fd` reaches end of file. Returns the process exit code: 0 after EOF, 1 when
/// a preload failed or the pipes broke.
int RunMeasureChild(int in_fd, int out_fd);

}  // namespace tune::rpc
