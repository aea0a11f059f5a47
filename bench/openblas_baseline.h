// OpenBLAS as the baseline a user would pick instead of tune: sgemm for GEMM, im2col + sgemm
// for conv2d (the usual way to run a convolution on a BLAS), both with the canonical layouts
// and the workload's epilogue applied after the library call.
#pragma once

#include <string>
#include <vector>

#include "common/workload.h"

namespace tune::bench {

/// Sets OpenBLAS's thread count (openblas_set_num_threads).
void SetOpenblasThreads(int threads);

/// The core type OpenBLAS runs its kernels for (openblas_get_corename), e.g. "SkylakeX".
std::string OpenblasCoreName();

/// Prepares buffers and returns a callable with the kernel ABI (`int32_t fn(float*...)`
/// bound to its arguments) that computes `workload` with OpenBLAS.
class OpenblasKernel {
 public:
  explicit OpenblasKernel(const Workload& workload);
  /// Runs once; returns 0.
  int Run(const std::vector<const float*>& inputs, float* output);

 private:
  Workload workload_;
  std::vector<float> columns_;  // im2col scratch for conv2d
};

}  // namespace tune::bench
