// conv2d.cpu.direct: direct convolution for x86-64 CPUs with the canonical interface (NCHW
// input, KCRS weight, NKPQ output), any stride, padding and dilation.
//
// Inside, the weights are packed into blocks of kv vectors of output channels
// ([K/kblk][C][R][S][kblk], zero-filled past K) and, when pad > 0, each image is copied into a
// zero-bordered buffer so that the inner loops need no bounds checks. The register tile is qt
// output positions along the width x kv vectors of output channels: each step of the reduction
// over (c, r, s) loads kv weight vectors, broadcasts qt input values and issues qt*kv FMAs. The
// filter loops are unrolled when unroll_rs is 1. Output widths that qt does not divide get a
// narrower tile; channel blocks past K store only the valid channels. The epilogue is fused into
// the final store. With -threads > 1 the loop over (channel block, output row) is parallel.
//
// Knobs: kv, qt, unroll_rs, loop_order.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// The conv2d.cpu.direct template (an entry of the explicit table in template.cc).
extern const KernelTemplate kConv2dCpuDirect;

}  // namespace tune
