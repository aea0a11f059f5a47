// Measurement of one trial on a GPU, inside the measurement child: device buffers for the
// workload, seeded inputs (generated on the device for CUDA, on the host for ROCm), the trusted
// reference (hand-written PTX kernels on CUDA, common/reference.h on the host for ROCm), one
// checked warm-up run with a NaN-poisoned output, then TVM's timing rule on the device
// (gpu_timing.h: replaying a graph of the calls, and call by call between events).
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
#include "tune/v1/measure_child.pb.h"

namespace tune::gpu {

/// The hand-written PTX kernels of reference_ptx.h, loaded into one CUDA device.
class ReferenceKernels {
 public:
  static absl::StatusOr<std::unique_ptr<ReferenceKernels>> Load(GpuDevice* device);
  ~ReferenceKernels();

  /// Fills `n` floats at `data` with uniform values in [-1, 1) from `seed` (asynchronous).
  absl::Status Fill(DevicePtr data, int64_t n, uint64_t seed);
  /// Fills argument `arg` of `workload` (typed: its element type, a scale for a scale) from
  /// `seed` (asynchronous). InvalidArgument for an element type the device kernels lack.
  absl::Status FillTyped(const Workload& workload, const TensorArg& arg, DevicePtr data,
                         uint64_t seed);
  /// Computes the workload's output from `inputs` (Workload::Arguments() order, without the
  /// output) into `output` (asynchronous), with `scratch` of ScratchBytes(workload) bytes.
  absl::Status Run(const Workload& workload, const std::vector<DevicePtr>& inputs, DevicePtr output,
                   DevicePtr scratch);
  /// The device memory Run needs besides the arguments: the im2col of an NHWC convolution's
  /// input (tune_im2col_typed), none otherwise.
  static int64_t ScratchBytes(const Workload& workload);

 private:
  explicit ReferenceKernels(GpuDevice* device) : device_(device) {}
  GpuDevice* device_;
  void* module_ = nullptr;
  void* fill_ = nullptr;
  void* gemm_ = nullptr;
  void* conv2d_ = nullptr;
  void* fill_typed_ = nullptr;
  void* gemm_typed_ = nullptr;
  void* gemm_int_ = nullptr;
  void* im2col_ = nullptr;
};

/// The seed of the workload's `i`-th argument for a trial seed (as TensorSet uses).
uint64_t ArgumentSeed(uint64_t seed, size_t i);

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
