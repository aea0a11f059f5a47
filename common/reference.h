// The trusted reference: simple implementations of every op in the canonical layouts, seeded
// random inputs, and the tolerance check that decides WRONG_ANSWER. Used by tests, by
// tune-server's measurement child and by tune-compile's self-check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/workload.h"

namespace tune {

/// Fills `data[0..n)` with uniform values in [-1, 1) from a deterministic generator.
void FillRandom(float* data, int64_t n, uint64_t seed);

/// Computes the workload's output into `output` from `inputs` (in the order of
/// Workload::Arguments(), without the output). Accumulates in double.
void RunReference(const Workload& workload, const std::vector<const float*>& inputs, float* output);

struct CompareResult {
  bool ok = true;
  int64_t mismatches = 0;
  int64_t first_bad_index = -1;
  double max_abs_error = 0;
  double max_error_ratio = 0;  // the largest |got - want| / bound (1 at the limit)
  std::string message;         // empty when ok; otherwise names the first bad element
};

/// Compares `got` with `want` element-wise. The standard bound, for kernels that sum the same
/// products as the reference in another order, grows with the reduction length L (K for GEMM,
/// C*R*S for conv2d):
///   |got - want| <= 1e-6 * (L + 1) + 1e-5 * |want|.
/// `tolerance_scale` (>= 1) multiplies it for kernels whose arithmetic rounds differently by
/// design (Winograd's transforms: KernelTemplate::tolerance); the message of a mismatch names
/// the bound and the scale. NaN or Inf in `got` is always a mismatch.
CompareResult CompareOutputs(const Workload& workload, const float* got, const float* want,
                             int64_t n, double tolerance_scale = 1.0);

/// The largest tolerance scale a kernel may claim (Artifact.tolerance_scale's upper bound): a
/// kernel that needs more is not computing the workload.
inline constexpr double kMaxToleranceScale = 64.0;

/// Length of the reduction behind each output element.
int64_t ReductionLength(const Workload& workload);

/// Owns one set of seeded random inputs plus an output buffer for a workload, in ABI order.
class TensorSet {
 public:
  TensorSet(const Workload& workload, uint64_t seed);
  /// Pointers in C ABI order (inputs, optional bias, output).
  std::vector<void*> AbiPointers();
  std::vector<const float*> InputPointers() const;
  float* output() { return buffers_.back().data(); }
  int64_t output_size() const { return static_cast<int64_t>(buffers_.back().size()); }

 private:
  std::vector<std::vector<float>> buffers_;
};

}  // namespace tune
