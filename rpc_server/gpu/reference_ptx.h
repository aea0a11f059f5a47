// Hand-written PTX that the measurement child loads on CUDA devices: a seeded generator of
// uniform inputs in [-1, 1) and the trusted naive reference kernels (one thread per output
// element, fp32 accumulation in the reduction order of common/reference.h). PTX ISA 7.0 for
// sm_70 and later, so that any driver of CUDA 11 or newer JIT-compiles it for its device.
#pragma once

#include <string_view>

#include "common/element_type.h"

namespace tune::gpu {

/// The module text. Kernels (every pointer a global float*, sizes u32):
///   tune_fill_uniform(float* out, u64 n, u64 seed)
///       out[i] = (splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15) >> 40) * 2^-23 - 1
///   tune_ref_gemm(A, B, bias, C, u32 M, u32 N, u32 K, u32 flags)
///   tune_ref_conv2d(input, weight, bias, output, u32 N, C, H, W, K, R, S, P, Q, stride, pad,
///                   dilation, flags)
/// flags: bit 0 adds bias (per column for gemm, per output channel for conv2d), bit 1 applies
/// relu. Launch one thread per element / output element, 1-D.
///
/// Typed workloads (dtype= other than f32; GEMMs, and conv2d in layout=NHWC through
/// tune_im2col_typed):
///   tune_fill_typed(out, u64 n, u64 seed, u32 kind): n elements of `kind` (TypedKind): the
///       uniform value above rounded to nearest even into the type (tf32, f16, bf16), a finite
///       code of magnitude below 1 drawn from the same hash (fp8), a scale in [2, 4), a byte of
///       the hash (s8, u8: every value) or an i32 bias in [-2^15, 2^15).
///   tune_ref_gemm_typed(A, B, bias, C, scale_a, scale_b, u32 M, N, K, u32 flags, u32 kinds):
///       C as f32 (ReferenceType), operands read as f32 exactly; kinds packs A's kind in bits
///       0-3, B's in 4-7 and the bias's in 8-11; flags adds bit 2 (B is [N][K], layout=NT) and
///       bit 3 (multiply each sum by *scale_a * *scale_b before the bias).
///   tune_ref_gemm_int(the same parameters): i8 and u8i8 GEMMs, summed in wrapping 32-bit
///       integers (exact); C as i32 (kinds bits 8-11: kI32) with an i32 bias, or as f32 (kF32)
///       scaled, with an f32 bias.
///   tune_im2col_typed(input, out, u32 N, C, H, W, R, S, P, Q, stride, pad, dilation, u32 bytes):
///       out [N*P*Q][R*S*C] = the NHWC input's window of each output pixel, taps in (r, s, c)
///       order, zeros in the padding, elements of `bytes` bytes copied exactly: a typed NHWC
///       conv2d is then tune_ref_gemm_typed / tune_ref_gemm_int of layout=NT with its KRSC
///       weights as B (one thread per element of out).
std::string_view ReferencePtx();

inline constexpr char kFillKernel[] = "tune_fill_uniform";
inline constexpr char kGemmKernel[] = "tune_ref_gemm";
inline constexpr char kConv2dKernel[] = "tune_ref_conv2d";
inline constexpr char kFillTypedKernel[] = "tune_fill_typed";
inline constexpr char kGemmTypedKernel[] = "tune_ref_gemm_typed";
inline constexpr char kGemmIntKernel[] = "tune_ref_gemm_int";
inline constexpr char kIm2colTypedKernel[] = "tune_im2col_typed";
inline constexpr unsigned kRefFlagBias = 1;
inline constexpr unsigned kRefFlagRelu = 2;
inline constexpr unsigned kRefFlagNt = 4;
inline constexpr unsigned kRefFlagScales = 8;

/// The dtypes whose inputs and references these kernels make: f32, tf32, f16, bf16, i8, u8i8 and
/// the OCP fp8 encodings (GEMMs of each; conv2d in f32 in NCHW, and of each in NHWC). A CUDA worker
/// offers them (Capabilities.dtypes), the fp8 ones from sm_89 on.
DtypeSet CudaReferenceDtypes();

/// The element kinds of tune_fill_typed, tune_ref_gemm_typed and tune_ref_gemm_int.
enum class TypedKind : unsigned {
  kF32 = 0,
  kTf32 = 1,
  kF16 = 2,
  kBf16 = 3,
  kFp8E4m3 = 4,
  kFp8E5m2 = 5,
  kScale = 6,
  kS8 = 7,
  kI32 = 8,
  kU8 = 9,
};

}  // namespace tune::gpu
