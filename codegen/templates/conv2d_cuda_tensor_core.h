// conv2d.cuda.wgmma and conv2d.cuda.mma: convolutions in layout=NHWC (KRSC weights, NPQK output)
// of tf32, f16, bf16, 8-bit integer and 8-bit float inputs on NVIDIA's tensor cores, as implicit
// GEMMs (tensor_core_gemm.h's ImplicitGemm) on the kernels of gemm.cuda.wgmma (Hopper's
// warpgroup instructions, cuda -arch=sm_90a) and gemm.cuda.mma (warp-level mma.sync, sm_80 and
// later).
//
// The GEMM view: m = the N*P*Q output pixels, n = the K output channels, k = the R*S*C filter taps
// in (r, s, c) order. B is the weights as they lie ([K][R*S*C], k-major like a GEMM of
// layout=NT) and C the output ([N*P*Q][K]); A is never formed: each copy of a stage gathers a
// pixel's `copy` bytes of one tap's channels from the input, clamped into the image and
// zero-filled where the window reaches into the padding, into the same swizzled shared tiles the
// GEMMs use. A copy stays within one tap's channels, so its width divides C's bytes (element
// copies through registers where C's bytes are not a multiple of 4: the 3-channel stem layer,
// for which conv2d.cuda.wgmma also offers its resident pipeline: input rows staged whole, A's
// stages built from them in shared memory, conv_window.h; as it does for 1x1 layers of one or
// two steps of K, their A copied direct).
// Knobs, seeds and the epilogue (bias[K], ReLU, fp8 and integer scales, rounding to the output
// type) are the GEMM templates'.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// conv2d.cuda.wgmma, for cuda -arch=sm_90a targets.
extern const KernelTemplate kConv2dCudaWgmma;
/// conv2d.cuda.mma, for cuda targets.
extern const KernelTemplate kConv2dCudaMma;

}  // namespace tune
