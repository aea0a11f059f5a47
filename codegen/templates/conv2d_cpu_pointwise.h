// conv2d.cpu.pointwise: 1x1 convolution (stride 1, no padding) in the plain layout as
// gemm.cpu.blocked's GEMM. For each image, output[K][P*Q] = weight[K][C] x input[C][H*W]: the
// weights are A (M = K output channels), the image is B (N = H*W positions, already
// contiguous: no im2col), the reduction runs over the C input channels, and the bias is one per
// row. The images are independent GEMMs against the same weights. Cache blocking, packing,
// register tiles, threads and the fused epilogue are the GEMM's, and so are the knobs: the
// space, default and seeds are gemm.cpu.blocked's for the GEMM of the layer
// (PointwiseGemmOf).
//
// Applies to R = S = 1, stride 1, pad 0 in layout=NCHW; other layers are refused naming the
// fields (KernelTemplate::check_shape).
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// The conv2d.cpu.pointwise template (an entry of the explicit table in template.cc).
extern const KernelTemplate kConv2dCpuPointwise;

/// The GEMM of one image of a pointwise conv2d: M = K, N = P*Q, K = C, with its epilogue.
Workload PointwiseGemmOf(const Workload& conv);

}  // namespace tune
