// gemm.cuda.wgmma: GEMMs of tf32, f16, bf16 and 8-bit float inputs on Hopper's warpgroup tensor
// cores (cuda -arch=sm_90a), through wgmma.mma_async (ir::WarpGroupMma) reading both operands
// from 128-byte-swizzled shared memory.
//
// Each block computes a bm x bn tile of C with wg_m x wg_n warpgroups of 128 threads; each
// warpgroup takes (bm / wg_m) rows in m64 steps and (bn / wg_n) columns as one m64n<bn / wg_n>
// instruction shape, with its accumulators in registers. The K loop stages 128 bytes of K per
// row (64 bf16, 32 tf32, 128 fp8) in `stages` shared buffers of A [bm] and B [bn] rows (layout
// NT: both K-major, as wgmma reads 8-bit and tf32 operands; layout=NN, 16-bit dtypes only: B
// as 64-column atoms of K rows, read N-major). cp.async copies of `copy` bytes
// (element copies through registers where rows are not a multiple of 4 bytes) write each row's
// 16-byte chunk c at position c ^ (row % 8), the swizzle the descriptors name; they are issued
// stages - 2 steps ahead, so that one step's instructions stay in flight while the block
// waits for the next (the buffer being refilled is the one two steps back, which every
// warpgroup has finished). Edges are zero-filled and stores guarded; blocks are rasterised in
// groups of `raster` block rows; `gridk` > 1 splits each tile's reduction over blocks that park
// their partial tiles for the tile's last block to add (split_reduction.h; any output type);
// `streamk` > 0 launches a persistent grid whose blocks share all tiles' steps of K evenly
// (stream_k.h); `persistent` 1 launches one block per multiprocessor (or `blocks`), each taking
// whole tiles in turn through one ring of TMA stages (its producer streams the next tile's
// first stages while the consumers store the last); and `wg_k` > 1 splits within a block: wg_k sets
// of wg_m x wg_n warpgroups reduce a K range each, with stages of their own, and add their sums
// through shared memory before the first set stores (for skinny shapes, whose chains of steps are
// long and outputs few). The epilogue is gemm.cuda.mma's (MmaEpilogue). 8-bit float sums are
// promoted to float32 every step (128 of K), or every two (`promote_steps` 2, TMA pipelines),
// as wgmma sums them with fewer bits. For convolutions of narrow channels or 1x1 layers of one
// or two steps, `resident` 1 launches persistent blocks that keep B's stages and take tiles in
// turn, the next tile's A copied while this one multiplies (wgmma_kernel.h).
//
// The kernel computes any ImplicitGemm (tensor_core_gemm.h): the functions below are shared with
// conv2d.cuda.wgmma (conv2d_cuda_tensor_core.h), whose A tiles are gathered from an NHWC input.
// The kernel itself, knob by knob, is wgmma_kernel.h's; this file declares the templates'
// space (gemm_cuda_wgmma.cc), default config and seeds (wgmma_seeds.cc, wgmma_split_seeds.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/templates/template.h"
#include "codegen/templates/tensor_core_gemm.h"

namespace tune {

/// gemm.cuda.wgmma, for cuda -arch=sm_90a targets.
extern const KernelTemplate kGemmCudaWgmma;

/// Whether the wgmma kernels build for `target` (cuda -arch=sm_90a).
bool WgmmaApplies(const Target& target);
/// What of `g` the kernel cannot take (empty: it takes it): 8-bit elements whose contiguous runs
/// of K are not a multiple of 4, an N-major B of other than 16-bit elements.
std::vector<std::string> WgmmaShapeFaults(const ImplicitGemm& g);
/// The kernel's knobs and constraints for `g` on `target`.
ConfigSpace WgmmaSpace(const ImplicitGemm& g, const Target& target);
/// The preset the shape class of `g` starts from (`template_name` names it in errors).
Config WgmmaDefault(const ImplicitGemm& g, const Target& target, std::string_view template_name);
/// The presets and their stage variants, for the search to start from.
std::vector<Config> WgmmaSeeds(const ImplicitGemm& g, const Target& target);
/// The kernel of `config` (a point of WgmmaSpace) for `g`.
ir::LoweredFunc BuildWgmmaKernel(const ImplicitGemm& g, const Config& config,
                                 std::string_view func_name);

}  // namespace tune
