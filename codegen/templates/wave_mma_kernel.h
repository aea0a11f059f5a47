// The kernel of gemm.rocm.mfma, gemm.rocm.wmma and their convolutions (the templates' spaces,
// presets and seeds are gemm_rocm_mfma.h's): the matrix instructions a target has, the knobs as
// numbers, the global reads that their costs count, and the kernel they build for an
// ImplicitGemm. gemm_rocm_mfma.h describes the kernel's shape knob by knob.
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/config_space.h"

namespace tune {

/// Whether the target's GPU has MFMA (gfx90a, gfx942) / WMMA (gfx1100).
bool MfmaApplies(const Target& target);
bool WmmaApplies(const Target& target);

/// The reduction depth of the target's instruction of tile `inst` (32 or 16) for `dtype`, 0 where
/// it has none (the table of codegen/llvm/codegen_gpu_wave_mma.cc).
int WaveMmaKFor(const Target& target, Dtype dtype, int64_t inst);

/// A config of the kernel, knob by knob (gemm_rocm_mfma.cc's WaveMmaSpace names them).
struct WaveMmaKnobs {
  int64_t bm, bn, bk, waves_m, waves_n, inst, stages, copy, raster, gridk;

  int64_t WaveM() const { return bm / waves_m; }
  int64_t WaveN() const { return bn / waves_n; }
  int64_t MTiles() const { return WaveM() / inst; }
  int64_t NTiles() const { return WaveN() / inst; }
  bool Tiled() const { return bm % (inst * waves_m) == 0 && bn % (inst * waves_n) == 0; }
};

/// `c`'s knobs (a point of WaveMmaSpace).
WaveMmaKnobs WaveMmaKnobsOf(const Config& c);

/// Chunks of `lanes` elements each thread copies of a [rows][cols] tile.
int64_t WaveMmaChunksPerThread(int64_t rows, int64_t cols, int64_t lanes, int64_t threads);

/// The kernel of `k` for `g` on `target` (a rocm target with the instruction of tile k.inst for
/// g's dtype: WaveMmaKFor > 0).
ir::LoweredFunc BuildWaveMmaKernel(const ImplicitGemm& g, const Target& target,
                                   const WaveMmaKnobs& k, std::string_view func_name);

}  // namespace tune
