// conv2d.cpu.blocked: direct convolution for x86-64 CPUs in the blocked layouts
// (layout=NCHW<b>c: input [N][C/b][H][W][b], weight [K/b][C/b][R][S][b][b], output
// [N][K/b][P][Q][b]; Conv2dShape documents them), any stride, padding and dilation.
//
// The layout is the schedule's: a block of b output channels is b / w vectors of the target's
// width w (b >= w) or one narrower vector, and the weights of one input channel for a block of
// output channels are contiguous, so nothing is packed or padded per call. The register tile is
// qt output positions along the width x kb blocks of output channels. The reduction runs over
// input-channel blocks, then the filter window (unrolled with unroll_rs), then the b channels of
// the block (unrolled with unroll_ci) innermost: each step loads the tile's weight vectors,
// broadcasts qt input values and issues the FMAs. Padding needs no copy and no checks in the
// inner loops: rows outside the input skip their filter row, and the tiles of each row whose
// window crosses the left or right border start at positions known when the kernel is
// generated, which leaves out the taps that fall outside. The epilogue is fused into the
// stores, which are whole vectors. With -threads > 1 the loop over (image, channel-block group,
// output row) is parallel.
//
// Knobs: kb, qt, unroll_rs, unroll_ci, loop_order.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// The conv2d.cpu.blocked template (an entry of the explicit table in template.cc).
extern const KernelTemplate kConv2dCpuBlocked;

}  // namespace tune
