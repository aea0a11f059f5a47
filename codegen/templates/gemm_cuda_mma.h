// gemm.cuda.mma: GEMMs of tf32, f16, bf16 and 8-bit float inputs on the tensor cores of NVIDIA
// GPUs from sm_80 (sm_89 for the 8-bit floats), through warp-level mma.sync (ir::WarpMma).
//
// Each block computes a bm x bn tile of C with warps_m x warps_n warps, each warp a
// (bm / warps_m) x (bn / warps_n) tile of m16n8 accumulator fragments in registers. The K loop is
// a multistage pipeline: `stages` shared-memory buffers of A [bm][bk] and B ([bn][bk] for NT,
// [bk][bn] for NN), filled by cp.async copies of `copy` bytes issued stages - 1 steps ahead (one
// commit, wait and barrier per step); rows are padded by 16 bytes so that ldmatrix reads them
// without bank conflicts. Shapes that are not multiples of the tile are zero-filled at the edges
// (copies whose source size is 0) and the stores guarded; rows whose length in bytes is not a
// multiple of 4 are copied element by element through registers. Blocks are rasterised in
// groups of `raster` block rows, so that neighbouring blocks share A and B in L2; with
// `gridk` > 1 (float32 outputs without a ReLU), that many blocks share each tile's reduction and
// add their sums atomically. The epilogue (scales, bias, ReLU, rounding to the output type) is
// applied to the fragments as they are stored.
//
// B stored [k][n] (layout=NN) is read with ldmatrix.trans, which moves 16-bit elements only:
// tf32 and fp8 GEMMs take layout=NT (the operand order cuBLASLt needs for them too).
//
// The kernel computes any ImplicitGemm (tensor_core_gemm.h): the functions below are shared with
// conv2d.cuda.mma (conv2d_cuda_tensor_core.h), whose A tiles are gathered from an NHWC input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/templates/template.h"
#include "codegen/templates/tensor_core_gemm.h"

namespace tune {

/// gemm.cuda.mma, for cuda targets.
extern const KernelTemplate kGemmCudaMma;

/// What of `g` the kernel cannot take (empty: it takes it): an N-major B of other than 16-bit
/// elements, 8-bit elements whose contiguous runs of K are not a multiple of 4.
std::vector<std::string> MmaShapeFaults(const ImplicitGemm& g);
/// The kernel's knobs and constraints for `g` on `target`.
ConfigSpace MmaSpace(const ImplicitGemm& g, const Target& target);
/// The preset the shape class of `g` starts from (`template_name` names it in errors).
Config MmaDefault(const ImplicitGemm& g, const Target& target, std::string_view template_name);
/// The presets and their unrasterised variants, for the search to start from.
std::vector<Config> MmaSeeds(const ImplicitGemm& g, const Target& target);
/// The kernel of `config` (a point of MmaSpace) for `g`.
ir::LoweredFunc BuildMmaKernel(const ImplicitGemm& g, const Config& config,
                               std::string_view func_name);

}  // namespace tune
