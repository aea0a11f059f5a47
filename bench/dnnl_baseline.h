// oneDNN as the baseline a user would pick instead of tune, called directly (not through tune's
// runtime shim): matmul for GEMM, the convolution primitive for conv2d, with the workload's
// epilogue as oneDNN's own bias and ReLU post-op, primitives created once before timing.
#pragma once

#include <memory>
#include <vector>

#include "common/workload.h"

namespace tune::bench {

enum class DnnlLayout {
  kPlain,    // canonical tensors handed to the primitive (NCHW / KCRS / NKPQ; row-major GEMM)
  kBlocked,  // the primitive's preferred layouts, the data already in them (reordered once,
             // before timing): what a framework that keeps the blocked layout sees
  kPlainPackedWeights,  // canonical activations, the weights (GEMM: B) in the primitive's
                        // preferred layout, reordered once before timing: the like-for-like
                        // baseline of a workload with weights=prepared
};

class DnnlKernel {
 public:
  /// Creates the primitive for `workload` with `threads` OpenMP threads over `inputs` (in
  /// Workload::Arguments() order, the output last).
  DnnlKernel(const Workload& workload, DnnlLayout layout, int threads,
             const std::vector<float*>& args);
  ~DnnlKernel();
  /// Runs once; the output is in `args`' output only for kPlain (kBlocked keeps it blocked).
  void Run();
  /// oneDNN's implementation, e.g. "brg:avx512_core".
  const char* impl() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tune::bench
