// gemm.rocm.mfma and gemm.rocm.wmma: GEMMs of f16, bf16, i8 and (gfx942) the FNUZ 8-bit floats on
// the matrix engines of AMD GPUs, through wavefront-level matrix instructions (ir::WaveMma): CDNA's
// MFMA on gfx90a and gfx942 (64-lane wavefronts, 32x32 or 16x16 instruction tiles) and RDNA3's
// WMMA on gfx1100 (32-lane wavefronts, 16x16 tiles; i8 and u8i8 too).
//
// Each block computes a bm x bn tile of C with waves_m x waves_n wavefronts, each a
// (bm / waves_m) x (bn / waves_n) tile of inst x inst instruction tiles whose accumulators stay
// in registers (AGPRs or VGPRs, as the backend allocates them). Per reduction step of bk, the
// threads read the A tile [bm][bk] and the B tile ([bn][bk] for layout=NT, [bk][bn] for NN) from
// global memory into registers, `copy` bytes at a time, and store them into LDS tiles whose rows
// are padded by 16 bytes; AMD has no asynchronous global-to-LDS copy that tune generates, so
// with stages = 2 the next step's tiles are read into registers before the current step's
// matrix instructions and stored into the other LDS buffer after them (one barrier per step);
// stages = 1 reads, stores and multiplies one buffer in turn (two barriers per step). Edges are
// zero-filled (clamped reads, zeros stored where a chunk lies outside) and stores guarded.
// Blocks are rasterised in groups of `raster` block rows; `gridk` > 1 (float32 outputs without a
// ReLU) splits K over blocks that add their sums atomically. The epilogue (tensor_core_gemm.h's
// MmaEpilogue: scales, bias, ReLU, rounding to the output type) is applied to each accumulator as
// it is stored, at the row and column the instruction's layout gives it.
//
// These kernels have never run on an AMD GPU: they are checked on tune's GPU simulator (which
// executes the instructions with the ISA's lane layout) and by inspecting their code objects
// (tests/codegen/templates/gemm_rocm_mfma_test.cc).
//
// The kernel computes any ImplicitGemm: the functions below are shared with conv2d.rocm.mfma
// (conv2d_rocm_mfma.h), whose A tiles are gathered from an NHWC input. The kernel itself, knob
// by knob, and the targets' matrix instructions are wave_mma_kernel.h's; this file is the
// templates' space, presets, seeds and entries.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/templates/template.h"
#include "codegen/templates/tensor_core_gemm.h"

namespace tune {

/// gemm.rocm.mfma, for rocm -mcpu=gfx90a and gfx942.
extern const KernelTemplate kGemmRocmMfma;
/// gemm.rocm.wmma, for rocm -mcpu=gfx1100.
extern const KernelTemplate kGemmRocmWmma;

/// What of `g` the kernel cannot take (empty: it takes it): rows of 8-bit floats (A's contiguous
/// runs of K, B's rows) whose bytes 4 does not divide, which it cannot zero-fill.
std::vector<std::string> WaveMmaShapeFaults(const ImplicitGemm& g);
/// The kernel's knobs and constraints for `g` on `target` (a rocm target).
ConfigSpace WaveMmaSpace(const ImplicitGemm& g, const Target& target);
/// The preset the shape class of `g` starts from (`template_name` names it in errors).
Config WaveMmaDefault(const ImplicitGemm& g, const Target& target, std::string_view template_name);
/// The presets and their variants (the other instruction tile, unrasterised), for the search to
/// start from.
std::vector<Config> WaveMmaSeeds(const ImplicitGemm& g, const Target& target);
/// The kernel of `config` (a point of WaveMmaSpace) for `g` on `target`.
ir::LoweredFunc BuildWaveMmaKernel(const ImplicitGemm& g, const Target& target,
                                   const Config& config, std::string_view func_name);

}  // namespace tune
