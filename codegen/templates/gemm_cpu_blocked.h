// gemm.cpu.blocked: GotoBLAS/BLIS-style GEMM for x86-64 CPUs.
//
// Three cache loops (columns by nc, reduction by kc, rows by mc; their order is a knob) around
// a register-blocked micro-kernel of mr rows x nr columns: nr is a multiple of the vector width,
// the mr x nr accumulators live in vector registers, and each step of the reduction broadcasts
// one element of A per row and multiplies it by nr/lanes vector loads of B with FMAs. A and B
// are optionally packed into contiguous panels (pack_a, pack_b), the reduction loop is unrolled
// by unroll_k, and tiles that do not divide the problem get smaller micro-kernels of the exact
// remainder size (vectors plus scalar columns), so every M, N, K is computed exactly. The
// epilogue (bias, relu, bias_relu) is applied when the last reduction block is stored. With
// -threads > 1 the outermost non-reduction cache loop is parallel.
//
// Knobs: mr, nr, kc, mc, nc, unroll_k, pack_a, pack_b, order (see GemmCpuBlockedSpace's docs).
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// The gemm.cpu.blocked template (an entry of the explicit table in template.cc).
extern const KernelTemplate kGemmCpuBlocked;

/// How another template uses this GEMM for its own operator (conv2d.cpu.pointwise).
struct GemmKernelForm {
  /// Independent GEMMs one after the other, A shared: the i-th reads B at i*K*N and writes C
  /// at i*M*N (a batch of images against one weight matrix).
  int64_t batch = 1;
  /// The bias has M elements, one per row (a convolution's output channels), not N.
  bool bias_per_row = false;
  /// Parameters (B, A, [bias], C) instead of (A, B, [bias], C): a conv2d's (input, weight, ...).
  bool b_first = false;
};

/// `base` (a config of gemm.cpu.blocked's `space` for a GEMM of `shape`) with an mr x vectors
/// register tile, snapped to the space's candidates, and the row block nearest base's that mr
/// divides (or all of M): the seeds' tile shapes, shared with conv2d.cpu.pointwise.
Config BlockedGemmWithTile(const GemmShape& shape, const Target& target, const ConfigSpace& space,
                           const Config& base, int64_t mr, int64_t vectors);

/// gemm.cpu.blocked's kernel for `shape` in another form. `config` must be a point of the
/// template's space for a GEMM of `shape` (the caller checks).
ir::LoweredFunc BuildBlockedGemm(const GemmShape& shape, Epilogue epilogue,
                                 const GemmKernelForm& form, const Target& target,
                                 const Config& config, std::string_view func_name);

}  // namespace tune
