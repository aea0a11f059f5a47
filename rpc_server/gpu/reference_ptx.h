// Hand-written PTX that the measurement child loads on CUDA devices: a seeded generator of
// uniform inputs in [-1, 1) and the trusted naive reference kernels (one thread per output
// element, fp32 accumulation in the reduction order of common/reference.h). PTX ISA 7.0 for
// sm_70 and later, so that any driver of CUDA 11 or newer JIT-compiles it for its device.
#pragma once

#include <string_view>

namespace tune::gpu {

/// The module text. Kernels (every pointer a global float*, sizes u32):
///   tune_fill_uniform(float* out, u64 n, u64 seed)
///       out[i] = (splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15) >> 40) * 2^-23 - 1
///   tune_ref_gemm(A, B, bias, C, u32 M, u32 N, u32 K, u32 flags)
///   tune_ref_conv2d(input, weight, bias, output, u32 N, C, H, W, K, R, S, P, Q, stride, pad,
///                   dilation, flags)
/// flags: bit 0 adds bias (per column for gemm, per output channel for conv2d), bit 1 applies
/// relu. Launch one thread per element / output element, 1-D.
std::string_view ReferencePtx();

inline constexpr char kFillKernel[] = "tune_fill_uniform";
inline constexpr char kGemmKernel[] = "tune_ref_gemm";
inline constexpr char kConv2dKernel[] = "tune_ref_conv2d";
inline constexpr unsigned kRefFlagBias = 1;
inline constexpr unsigned kRefFlagRelu = 2;

}  // namespace tune::gpu
