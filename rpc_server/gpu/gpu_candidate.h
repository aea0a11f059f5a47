// The candidate of a GPU trial, loaded and bound to the trial's argument buffers, as one call
// that the checked warm-up and the timing (gpu_timing.h) repeat on the device's stream:
//   - a PTX (CUDA) or HSACO (ROCm) kernel with the GPU kernel ABI: its module loaded, its launch
//     (the artifact's LaunchDims) checked against the device's limits, its TMA tensor maps
//     encoded once over the buffers (tensor_map.h) and passed after them, the arguments it
//     accumulates into zeroed before every launch;
//   - or SHARED_OBJECT host code with the GPU host ABI `int32_t entry(float* dev..., void*
//     stream)`, opened with dlopen and called with the device's stream.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/measurement.h"
#include "common/workload.h"
#include "rpc_server/gpu/gpu_device.h"
#include "tune/v1/measure_child.pb.h"

namespace tune::gpu {

class GpuCandidate {
 public:
  /// Opens the SHARED_OBJECT artifact of `trial` (artifact_path) with dlopen and finds its
  /// entry_symbol, to be called with `buffers` (device pointers, Workload::Arguments() order) and
  /// the device's stream. Returns null when it cannot, with `*failure` the trial's measurement:
  /// a dlopen error (LOAD_ERROR, or WORKER_ERROR for a file this host lacks: DlopenFailureKind)
  /// or a missing entry symbol (LOAD_ERROR).
  static std::unique_ptr<GpuCandidate> LoadHostEntry(GpuDevice& dev,
                                                     const v1::MeasureChildTrial& trial,
                                                     const std::vector<DevicePtr>& buffers,
                                                     Measurement* failure);
  /// Loads the PTX / HSACO artifact of `trial` (artifact_path, entry_symbol, launch) as a module
  /// on `dev`, a kernel of `workload` whose arguments `args` lie at `buffers` (they must stay
  /// there while the candidate lives: its tensor maps hold their addresses). Returns null when it
  /// cannot, with `*failure` the trial's measurement: WORKER_ERROR (the cached artifact cannot
  /// be read; a JIT that names its own lack, ModuleLoadFailureKind), LOAD_ERROR (an empty image,
  /// a module the JIT refuses, with its log; a missing kernel; zeroed_args or tensor maps that
  /// name no argument, a map the encoding rules refuse), UNSUPPORTED (a launch beyond the
  /// device's limits, naming the limit; a cluster the grid does not take; a cluster or tensor
  /// maps on a device without them, tensor maps on a driver without them) or RUNTIME_CRASH (the
  /// device broke). Once the kernel is found, library_info is what library_info() would be.
  static std::unique_ptr<GpuCandidate> LoadKernel(GpuDevice& dev,
                                                  const v1::MeasureChildTrial& trial,
                                                  const Workload& workload,
                                                  const std::vector<TensorArg>& args,
                                                  const std::vector<DevicePtr>& buffers,
                                                  Measurement* failure);

  virtual ~GpuCandidate() = default;

  /// Queues one call of the candidate on the device's stream. A host entry's non-zero return is
  /// Unimplemented (-2, -6: the candidate does not apply), FailedPrecondition (-1, -5: a vendor
  /// library could not be loaded) or Aborted ("entry returned N"); device errors are the
  /// device's.
  virtual absl::Status Call() = 0;

  /// "kernel: regs=R local=L shared=S grid=(..) block=(..) shared=D" for a PTX / HSACO kernel
  /// (its attributes and launch); empty for a host entry.
  const std::string& library_info() const { return library_info_; }

 protected:
  GpuCandidate() = default;
  GpuCandidate(const GpuCandidate&) = delete;
  GpuCandidate& operator=(const GpuCandidate&) = delete;

  std::string library_info_;
};

}  // namespace tune::gpu
