// gemm.cuda.wgmma's seeds (wgmma_seeds.cc), internal to the templates: the plain config the
// presets and seeds start from, the deep-ring rule, and the grid splits of K
// (wgmma_split_seeds.cc) for products of too few tiles to fill the GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "search/config_space.h"

namespace tune::wgmma_seeds_detail {

/// A config of bm x bn tiles with every other knob at its plainest: one warpgroup, three
/// cp.async stages of the first copy width, raster groups of 8 block rows, no grid split, no
/// staged output, no TMA, no stream-K, no cluster. The presets and seeds set what they change.
Config PlainConfig(const ConfigSpace& space, int64_t bm, int64_t bn);

/// A block's reduction of kLongRingSteps steps of K or more, in one wave of blocks, runs on the
/// deepest ring of stages shared memory takes (LongRingDepths, deepest first), its output stored
/// from registers, for tiles of kLongRingTileElements outputs or fewer (wgmma_seeds.cc says what
/// the H100 measured).
inline constexpr int64_t kLongRingSteps = 32;
inline constexpr int64_t kLongRingTileElements = 128 * 64;
std::vector<int64_t> LongRingDepths();

/// Whether a block of tile `t` reducing `block_steps` steps of K takes the deepest ring.
bool TakesLongRing(const BlockTile& t, int64_t block_steps);

/// Sets `c`'s stages to the first of `depths` that makes it valid (false when none does).
bool FirstValidDepth(const ConfigSpace& space, Config& c, const std::vector<int64_t>& depths);

/// Splits of light tiles for shapes of fewer tiles than multiprocessors (wgmma_split_seeds.cc).
std::vector<Config> SplitSeeds(const ImplicitGemm& g, const ConfigSpace& space);

/// Tiles of two warpgroups (and 64 x 64 of one) split by the largest gridk whose blocks fit one
/// wave, in clusters sharing the sum first (wgmma_split_seeds.cc).
std::vector<Config> OneWaveSplitSeeds(const ImplicitGemm& g, const ConfigSpace& space);

}  // namespace tune::wgmma_seeds_detail
