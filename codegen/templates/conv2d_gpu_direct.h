// conv2d.gpu.direct: direct convolution for CUDA and ROCm GPUs, in the manner of TVM's
// conv2d_direct CUDA schedule.
//
// A block computes tile_f output channels x tile_y output rows x tile_x output columns of one
// image. Per reduction step of tile_rc input channels the threads copy the input patch those
// outputs read (zero where it falls on the padding) and the tile_f x tile_rc x R x S weights
// into shared memory; then each thread accumulates its register tile of vf channels x vx
// columns (one row) over the step's channels and filter taps, fully unrolled. The block has
// the product of the thread tiles' count rounded up to a whole warp; the extra threads help
// with the copies only. Stores are guarded at the edges and apply the epilogue (bias[K], relu,
// bias_relu).
//
// Knobs: tile_f, tile_y, tile_x, tile_rc, vf, vx. One entry for cuda and rocm targets
// (TemplateTargets::kGpu).
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kConv2dGpuDirect;

}  // namespace tune
