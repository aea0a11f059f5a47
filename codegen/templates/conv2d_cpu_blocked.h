// conv2d.cpu.blocked: direct convolution for x86-64 CPUs in the blocked layouts
// (layout=NCHW<b>c: input [N][C/b][H][W][b], weight [K/b][C/b][R][S][b][b], output
// [N][K/b][P][Q][b]; Conv2dShape documents them), any stride, padding and dilation.
//
// The layout is the schedule's: a block of b output channels is b / w vectors of the target's
// width w (b >= w) or one narrower vector, and the weights of one input channel for a block of
// output channels are contiguous, so nothing is packed or padded per call. The register tile is
// pt output rows x qt output positions along the width x kb blocks of output channels. The
// reduction runs over input-channel blocks, then the filter window (unroll_rs: none, both loops,
// s only), then the b channels of the block innermost (unroll_ci: not, fully, or by 2/4/8):
// each step loads the tile's weight vectors, broadcasts pt*qt input values and issues the FMAs.
// Padding needs no copy and no checks in the inner loops: rows outside the input skip their
// filter row (a tile of several rows reads zeros there instead, a clamped load and a select, so
// that its rows share the weight loads), and the tiles of each row whose window crosses the left
// or right border start at positions known when the kernel is generated, which leaves out the
// taps that fall outside. The epilogue is fused into the stores, which are whole vectors. The
// loop over (image, group of kt register tiles of output blocks, block of pt output rows) is
// parallel with -threads > 1 (loop_order: group or rows outer); inside an iteration the kt
// register tiles and the tiles along the width nest as tile_order says. The reduction may run in
// chunks of cbc input-channel blocks, inside each parallel iteration or around the parallel loop
// (chunk_outer), the sums of the earlier chunks waiting in the output. The default config (pt 1,
// kt 1, cbc = C / b) is the schedule of version 1 (in conv2d_cpu_blocked_nest.cc).
//
// Knobs: kb, qt, unroll_rs, unroll_ci, loop_order, pt, kt, tile_order, cbc, chunk_outer.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// The conv2d.cpu.blocked template (an entry of the explicit table in template.cc).
extern const KernelTemplate kConv2dCpuBlocked;

}  // namespace tune
