// conv2d.cpu.winograd: 3x3, stride-1 convolution by Winograd's F(m, 3) (m = 2 or 4; see
// winograd_transform.h) for x86-64 CPUs, in the blocked layouts (layout=NCHW<b>c) and in NCHW.
// Its vectors hold channels of one pixel (in NCHW, groups of 16, 8 or 4 channels that divide C
// and K): in the blocked layouts they are loaded and stored whole; in NCHW the transforms gather
// them from the input and the weights (H W and 9 C floats apart) and scatter the output's (P Q
// apart), so a plain layer pays no reorder of its tensors.
//
// Per call, in one of three loop orders (knob `order`):
//
// Order 0, for filters whose transform fits in a core's cache:
//   1. Filter transform: U[xi][c][k] = (G g G^T)[xi] for every filter, xi one of the alpha^2
//      points of the tile (alpha = m + 2), the output channels innermost. Parallel over
//      (output block, input block).
//   2. Over blocks of tb = jt * tr output tiles of m x m positions (parallel with -threads > 1):
//      a. input transform V[xi][tile][c] = (B^T d B)[xi] of each tile's alpha x alpha input
//         window, a vector of a channel block at a time; zeros where the window leaves the
//         input (loads at clamped positions, then a select: no checks in the arithmetic);
//      b. alpha^2 GEMMs M[xi] = V[xi] U[xi] ([tb x C] x [C x K]) with a register tile of jt
//         tiles x kv vectors of output channels, V broadcast, U loaded;
//      c. output transform Y = A^T M A of each tile, the epilogue, and the stores of the
//         positions inside the output.
//
// Order 1, for filters whose transform does not fit in cache (few tiles, many channels): every
// tile's input transform, then in parallel over chunks of kv vectors of output channels, the
// transform of the chunk's filters for all input channels and the GEMMs of all tiles against
// them, then every tile's output transform.
//
// Order 2, as order 1 with the reduction in chunks of cc input channels (cc < C) and the filter
// transform software-pipelined: while the GEMMs of one chunk run, each iteration of their
// outermost loop transforms its share of the next chunk's filters into a second small buffer
// that stays in L1. The weights, which at 7x7 with 512 channels are read once per call from
// beyond L2, then stream in while the FMA units work instead of in a phase of their own. Each
// thread allocates its buffers once per call.
//
// The GEMM stage nests its loops over the points xi, the chunks of kv vectors of output
// channels and the register tiles of tiles in the order gemm_order says (0: xi, chunks, tiles),
// unrolls its loop over input channels by unroll_c, and may split that reduction into chunks of
// cc input channels (the chunk loop outermost, the sums so far kept in M). The input and the
// output transforms run tiles outer, channel vectors inner, or the reverse (it_order,
// ot_order; with it the loop that is parallel in order 1). The defaults of these knobs are the
// schedule of version 1.
//
// It multiplies alpha^2 / m^2 times per output position instead of 9 (4 for F(2,3), 2.25 for
// F(4,3)), at the price of the transforms and of rounding: the transforms scale values by up to
// the matrices' entries (8 for F(4,3)), so the result is less exact than a direct sum. The
// template states how much (KernelTemplate::tolerance): the measurement's output check accepts
// that many times the standard error bound of common/reference.h, and no more.
//
// Applies to R = S = 3, stride 1, dilation 1, any padding and size; other layers are refused
// with the fields that do not fit (KernelTemplate::check_shape).
//
// Knobs: m, jt, kv, tr, order, cc, gemm_order, unroll_c, it_order, ot_order. Seeds: both tile
// sizes in every order (order 2 where C allows a chunk, order 0 where its transformed filters
// fit in L2), kv 2 and 1 (the other knobs at their defaults).
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// The conv2d.cpu.winograd template (an entry of the explicit table in template.cc).
extern const KernelTemplate kConv2dCpuWinograd;

}  // namespace tune
