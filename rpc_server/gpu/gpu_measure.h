// Measurement of one trial on a GPU, inside the measurement child: device buffers for the
// workload, seeded inputs (generated on the device for CUDA, on the host for ROCm), the trusted
// reference (hand-written PTX kernels on CUDA, reference_kernels.h; common/reference.h on the
// host for ROCm), the candidate loaded (gpu_candidate.h), one checked warm-up run with a
// NaN-poisoned output, then TVM's timing rule on the device (gpu_timing.h: replaying a graph of
// the calls, and call by call between events).
//
// Artifacts: PTX (CUDA) and HSACO (ROCm) kernels with the GPU kernel ABI (one global float*
// per workload argument, launched with the artifact's LaunchDims), or SHARED_OBJECT host code
// with the GPU host ABI `int32_t entry(float* dev..., void* stream)`.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/measurement.h"
#include "common/workload.h"
#include "rpc_server/gpu/gpu_device.h"
#include "rpc_server/gpu/reference_kernels.h"
#include "tune/v1/measure_child.pb.h"

namespace tune::gpu {

class GpuMeasurer {
 public:
  /// `device` must outlive the measurer.
  explicit GpuMeasurer(GpuDevice* device) : device_(device) {}

  /// Measures one trial. Every failure is data: UNSUPPORTED (workload, format, launch beyond
  /// the device's limits, memory), LOAD_ERROR (module load with the JIT log, missing kernel,
  /// dlopen), RUNTIME_CRASH (a driver error name, or a host entry's non-zero return),
  /// WRONG_ANSWER. library_info gets "kernel: regs=R local=L shared=S" for PTX / HSACO kernels,
  /// and "timing: events, graph capture refused: <why>" when the calls could not be captured.
  /// After a RUNTIME_CRASH check device()->broken(): the context is then unusable.
  Measurement Measure(const v1::MeasureChildTrial& trial, const std::function<void()>& on_started);

  GpuDevice* device() const { return device_; }

 private:
  GpuDevice* device_;
  std::unique_ptr<ReferenceKernels> references_;  // CUDA only, loaded on first use
  // The reference output of the last (workload, seed): trials of one tuning job share it.
  std::string reference_key_;
  std::vector<float> reference_;
};

}  // namespace tune::gpu
