// The trusted reference: simple implementations of every op in every layout and element type,
// seeded random inputs, and the tolerance check that decides WRONG_ANSWER. Used by tests, by
// tune-server's measurement child and by tune-compile's self-check.
//
// Inputs (TensorSet) are seeded per argument: f32 uniform in [-1, 1); the 16- and 8-bit float
// types and tf32 the same uniform values rounded to nearest even into the type, so every input
// is exactly representable and the reference reads what the kernel reads; i8 uniform integers in
// [-128, 127], u8 in [0, 255]; a bias in the output type (i32: integers in [-2^15, 2^15]); scales
// uniform in [2, 4), so that a kernel dropping either one is off by 2x or more. A requantisation
// (epilogue=requant) gets a scale of about 32 over the accumulators' spread (sqrt(L) times the
// inputs' root mean squares; most outputs inside i8, the tails saturated) and a zero point in
// [-16, 16].
//
// The reference accumulates in double from the inputs' exact values, applies the scales, the
// bias and ReLU, and writes ReferenceType(workload): the exact sum wrapped to i32 (two's
// complement, as integer matrix units without saturation do) for an integer output, otherwise
// f32; a requantised output as saturate_i8(nearest_even(scale * sum + zero_point)), in i32.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/element_type.h"
#include "common/workload.h"

namespace tune {

/// Fills `data[0..n)` with uniform values in [-1, 1) from a deterministic generator.
void FillRandom(float* data, int64_t n, uint64_t seed);

/// What the reference writes: i32 for an integer output, f32 for every other.
ElementType ReferenceType(const Workload& workload);

/// Computes the workload's output, in ReferenceType(workload), into `want` from `inputs`: every
/// argument of Workload::Arguments() but the output, in order, each of its element type.
void RunReference(const Workload& workload, const std::vector<const void*>& inputs, void* want);
/// The same for f32 workloads (checked), whose inputs and output are floats.
void RunReference(const Workload& workload, const std::vector<const float*>& inputs, float* output);

struct CompareResult {
  bool ok = true;
  int64_t mismatches = 0;
  int64_t first_bad_index = -1;
  double max_abs_error = 0;
  double max_error_ratio = 0;  // the largest |got - want| / bound (1 at the limit)
  std::string message;         // empty when ok; otherwise names the first bad element
};

/// The bound |got - want| must keep, for a kernel that sums the same products as the reference
/// in another order with f32 (or exact integer) accumulation. With L the reduction length
/// (ReductionLength: K for GEMM, C*R*S for conv2d), S the product of the two scales (1 without
/// them), w the reference value and g the kernel's output:
///   integer output:  0: the result is exact.
///   requantised i8:  1: the kernel's f32 arithmetic may round a near-tie the other way.
///   f32 output:      1e-6 * (L + 1) * S + 1e-5 * |w|
///   other floats:    1e-6 * (L + 1) * S + max(1e-5 * |w|, 2 * ulp(max(|g|, |w|)))
/// where ulp is the output type's spacing there (bf16 2^-7, f16 2^-10 of the binade; the
/// subnormal spacing below): the output's own rounding plus one unit, so a correctly rounded
/// result one ulp off passes, even where rounding carried it into the next binade.
/// `tolerance_scale` (>= 1) multiplies the bound for kernels whose arithmetic rounds differently
/// by design (Winograd's transforms: KernelTemplate::tolerance). Inputs are exact in their type,
/// so the first term holds for every float dtype whose products the kernel sums in f32.
double OutputBound(const Workload& workload, double want, double got, double scale_product,
                   double tolerance_scale = 1.0);

/// Compares `got` (n elements of workload.out_type()) with `want` (n elements of
/// ReferenceType(workload)) element-wise with OutputBound. `scale_product` is S above (1 when the
/// workload has no scales). The message of a mismatch names the element, the bound, the output
/// type and the scale. NaN or Inf in `got` is always a mismatch.
CompareResult CompareOutputs(const Workload& workload, const void* got, const void* want, int64_t n,
                             double tolerance_scale = 1.0, double scale_product = 1.0);
/// The same for f32 outputs (checked).
CompareResult CompareOutputs(const Workload& workload, const float* got, const float* want,
                             int64_t n, double tolerance_scale = 1.0);

/// The largest tolerance scale a kernel may claim (Artifact.tolerance_scale's upper bound): a
/// kernel that needs more is not computing the workload.
inline constexpr double kMaxToleranceScale = 64.0;

/// Length of the reduction behind each output element.
int64_t ReductionLength(const Workload& workload);

/// An allocator of 64-byte (cache line) aligned arrays: the tensors kernels read, so that a row of
/// a tile (AMX loads 64 bytes a row) or a vector starts on a line, as callers' allocators give
/// them.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U>
  explicit CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlignment); }
  bool operator==(const CacheLineAllocator&) const = default;
};

/// A 64-byte aligned array of 4-byte words.
using AlignedWords = std::vector<uint32_t, CacheLineAllocator<uint32_t>>;

/// Owns one set of seeded random inputs plus an output buffer for a workload, one buffer per
/// argument of Workload::Arguments(), each of its element type. The output is filled with a
/// value no kernel computes by accident (NaN for floats).
class TensorSet {
 public:
  TensorSet(const Workload& workload, uint64_t seed);
  /// Pointers in C ABI order (every argument, the output and any scales included).
  std::vector<void*> AbiPointers();
  /// Every argument but the output, in order: what RunReference reads.
  std::vector<const void*> Inputs() const;
  /// The same for f32 workloads (checked).
  std::vector<const float*> InputPointers() const;
  void* output_data() { return buffers_[output_index_].data(); }
  /// The output of an f32 workload (checked).
  float* output();
  ElementType output_type() const { return types_[output_index_]; }
  int64_t output_size() const { return sizes_[output_index_]; }
  /// S of OutputBound: the product of the scales (a requantisation's scale), 1 without them.
  double scale_product() const { return scale_product_; }

 private:
  // 4-byte words on 64-byte boundaries, whatever the element type.
  std::vector<AlignedWords> buffers_;
  std::vector<ElementType> types_;
  std::vector<int64_t> sizes_;
  size_t output_index_ = 0;
  double scale_product_ = 1;
};

}  // namespace tune
