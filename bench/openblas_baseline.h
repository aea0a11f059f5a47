// OpenBLAS as the baseline a user would pick instead of tune: sgemm for GEMM, im2col (im2col.h)
// + sgemm for conv2d (the usual way to run a convolution on a BLAS; a 1x1 layer at stride 1
// multiplies the image itself), both with the canonical layouts and the workload's epilogue
// applied after the library call.
#pragma once

#include <string>
#include <vector>

#include "common/workload.h"

namespace tune::bench {

/// Sets OpenBLAS's thread count (openblas_set_num_threads).
void SetOpenblasThreads(int threads);

/// The core type OpenBLAS runs its kernels for (openblas_get_corename), e.g. "SkylakeX".
std::string OpenblasCoreName();

/// Makes OpenBLAS run at its best in this program (`program` names it in messages). OpenBLAS
/// reads OPENBLAS_CORETYPE when it loads, before main, so the core type is chosen by restarting
/// the program (execv of /proc/self/exe with `argv`): once without a type set from outside (some
/// machines set Haswell, AVX2 kernels only), and once more with a better type when OpenBLAS's own
/// detection falls short of this CPU's widest vectors (BetterOpenblasCoretype: Debian's 0.3.21
/// takes Sapphire Rapids for an SSE3 "Prescott", and AVX-512 Zen 4 for an AVX2 Zen). The
/// measurement children it starts inherit the type. Call first in main; returns only when no
/// restart is needed, or when the restart failed (said on stderr; OpenBLAS keeps its core).
void RestartForBestOpenblasCoretype(const char* program, char** argv);

/// Prepares buffers and returns a callable with the kernel ABI (`int32_t fn(float*...)`
/// bound to its arguments) that computes `workload` with OpenBLAS.
class OpenblasKernel {
 public:
  explicit OpenblasKernel(const Workload& workload);
  /// Runs once; returns 0.
  int Run(const std::vector<const float*>& inputs, float* output);

 private:
  Workload workload_;
  std::vector<float> columns_;  // im2col scratch for conv2d (empty when the image is the matrix)
};

}  // namespace tune::bench
