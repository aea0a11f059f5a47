// conv2d.gpu.implicit_gemm: conv2d as a GEMM on CUDA and ROCm GPUs, without an im2col buffer.
//
// The GEMM view: M = N*P*Q output pixels, N_gemm = K output channels, K_gemm = C*R*S filter
// taps. The A tile (pixels x taps) is gathered from the NCHW input with the im2col index math
// on the fly into shared memory (zero for padding; a pixel's image and input window are
// computed once per thread, outside the reduction loop; 1x1 stride-1 unpadded convolutions
// load vec consecutive pixels at once), the B tile from the KCRS weights (vec taps at once).
// The tiling is that of gemm.gpu.tiled (block tile, register tile, bk, 1 or 2 stages) without
// split-K; consecutive threads own consecutive pixels so that the NKPQ output is written
// contiguously, with the epilogue (bias[K], relu, bias_relu) applied at the store.
//
// Knobs: bm, bn, tm, tn, bk, stages, vec. One entry for cuda and rocm targets
// (TemplateTargets::kGpu).
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kConv2dGpuImplicitGemm;

}  // namespace tune
