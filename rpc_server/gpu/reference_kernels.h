// The CUDA measurement child's seeded inputs and trusted reference, on the device: the
// hand-written PTX kernels of reference_ptx.h loaded into one CUDA device and launched for a
// workload (the fills of its inputs, f32 or typed, and its reference output), and which
// workloads they check. ROCm workers use common/reference.h on the host instead.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/workload.h"
#include "rpc_server/gpu/gpu_device.h"

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

/// Whether the reference kernels check `workload`: f32 ones, and typed GEMMs and NHWC
/// convolutions of CudaReferenceDtypes() (reference_ptx.h).
bool CudaReferenceChecks(const Workload& workload);

/// The seed of the workload's `i`-th argument for a trial seed (as TensorSet uses).
uint64_t ArgumentSeed(uint64_t seed, size_t i);

}  // namespace tune::gpu
