// conv2d.cpu.direct: direct convolution for x86-64 CPUs with the canonical interface (NCHW
// input, KCRS weight, NKPQ output), any stride, padding and dilation.
//
// Inside, the weights are packed into blocks of kv vectors of output channels
// ([K/kblk][C][R][S][kblk], zero-filled past K) and, when pad > 0, each image is copied into a
// zero-bordered buffer so that the inner loops need no bounds checks. The register tile is pt
// output rows x qt output positions along the width x kv vectors of output channels: each step
// of the reduction over (c, r, s) loads kv weight vectors, broadcasts pt*qt input values and
// issues pt*qt*kv FMAs. The filter loops are unrolled as unroll_rs says (none, both, s only) and
// the loop over input channels by unroll_c. Output widths that qt does not divide get a narrower
// tile, output heights that pt does not divide a shorter one; channel blocks past K store only
// the valid channels. The epilogue is fused into the final store. The loop over (group of kt
// channel blocks, block of pt rows) is parallel with -threads > 1 (loop_order: which one is
// outer); inside an iteration the kt channel blocks and the tiles along the width nest as
// tile_order says. The reduction may run in chunks of cc input channels (cache tiling), the
// chunk loop inside each parallel iteration or around the parallel loop (chunk_outer); the sums
// of the earlier chunks wait in the output and the epilogue follows the last chunk. The default
// config (pt 1, kt 1, cc = C, unroll_c 1) is the schedule of version 1.
//
// Knobs: kv, qt, unroll_rs, loop_order, pt, kt, tile_order, cc, chunk_outer, unroll_c.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// The conv2d.cpu.direct template (an entry of the explicit table in template.cc).
extern const KernelTemplate kConv2dCpuDirect;

}  // namespace tune
