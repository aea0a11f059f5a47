// gemm.cuda.wgmma's seeds that split the reduction over the grid (wgmma_seeds_detail.h): for
// products of too few tiles to fill the GPU, light tiles split for two blocks per multiprocessor
// and tiles of two warpgroups split to fill one wave.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/templates/gemm_cuda_wgmma.h"
#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/wgmma_kernel.h"
#include "codegen/templates/wgmma_seeds_detail.h"

namespace tune::wgmma_seeds_detail {

// For shapes of fewer tiles than multiprocessors, splits of light tiles: each tile shape below
// with three stages (room for two or more blocks per multiprocessor, as blocks with a share of K
// need no deep pipeline), split by the smallest gridk that makes two blocks per multiprocessor,
// else the largest offered; where TMA reads the operands, its pipeline of the same split first,
// compiled for two blocks per multiprocessor where they fit (`blocks`: a TMA pipeline's register
// split otherwise takes the whole multiprocessor's registers).
// On the H200 the first splits tried, of the presets (four to six stages, one block per
// multiprocessor), ran in two waves and lost to no split. On the H100 (2026-12-06) the best
// wgmma configs of the 3x3 convolutions of 7 x 7 pixels at batch 8 were cp.async splits before
// these twins (15.7 us); the 64 x 64 TMA twin for two blocks per multiprocessor ran 12.9.
std::vector<Config> SplitSeeds(const ImplicitGemm& g, const ConfigSpace& space) {
  std::vector<Config> seeds;
  const std::vector<int64_t>& gridks = space.FindKnob("gridk")->values;
  const std::vector<int64_t>& tma = space.FindKnob("tma")->values;
  auto add = [&](const Config& c) {
    if (std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(c);
    }
  };
  for (const auto& [bm, bn] : std::vector<std::pair<int64_t, int64_t>>{
           {64, 64}, {128, 128}, {64, 128}, {128, 64}, {64, 32}}) {
    Config c = PlainConfig(space, LargestAtMost(space.FindKnob("bm")->values, bm),
                           LargestAtMost(space.FindKnob("bn")->values, bn));
    c["wg_m"] = c["bm"] / 64 >= 2 ? 2 : 1;
    const int64_t tiles = GpuCeilDiv(g.m, c["bm"]) * GpuCeilDiv(g.n, c["bn"]);
    if (tiles >= kGpuMultiprocessorsGuess) {
      continue;
    }
    std::optional<Config> chosen;
    for (int64_t gridk : gridks) {
      c["gridk"] = gridk;
      if (gridk > 1 && space.IsValid(c)) {
        chosen = c;
        if (tiles * gridk >= 2 * kGpuMultiprocessorsGuess) {
          break;
        }
      }
    }
    if (!chosen) {
      continue;
    }
    Config pipeline = *chosen;
    pipeline["tma"] = tma.back();
    pipeline["copy"] = space.FindKnob("copy")->values.front();
    pipeline["blocks"] = 2;  // the light tiles' point: more than one block per multiprocessor
    if (!space.IsValid(pipeline)) {
      pipeline["blocks"] = 1;
    }
    if (tma.back() == 1 && space.IsValid(pipeline)) {
      add(pipeline);
    }
    add(*chosen);
  }
  return seeds;
}

// For products of more than 64 rows whose tiles of 128 rows are fewer than half the
// multiprocessors, 128 x 192 and 128 x 128 tiles of two consumer warpgroups, each split by the
// largest gridk whose blocks still fit one wave (a TMA pipeline where the operands allow one,
// four stages, one block per multiprocessor): the fewest blocks that keep every multiprocessor
// busy, each with two warpgroups on the tensor cores (SplitSeeds' light tiles aim for two
// blocks per multiprocessor instead). On the H100 (2026-12-06, bench/RESULTS.md) they were the
// best wgmma configs of the 3x3 layer of 512 channels over 7 x 7 pixels at batch 32 (128 x 128
// split two ways: 19.7-20.0 us against 23.8 for the best unsplit tile) and of 256 x 4096 x
// 11008 (52.0-53.0 against 57.3), and lost on 256 x 4096 x 4096, 256 x 768 x 3072 and 1024 x
// 768 x 3072 (1.3x the best unsplit tile's time), where the last block's sum of all the partial
// tiles is a larger share: each is seeded first with its tile's blocks in one cluster sharing the
// sum (split_cluster; gridk up to 8), then as the last block's. On the H100 (2026-12-07) the
// clusters took 128 x 128 split 8 ways over 256 x 768 x 3072 from 13.3 to 9.6 us, and 128 x 192
// split 8 ways ran it in 8.7 (the best tile before: 9.9). Then a light tile, 64 x 64 of one
// warpgroup, split likewise: on the H100 (2026-12-07, bench/gpu_probe) 64 x 64 split two ways in
// clusters with eight stages ran 256 x 768 x 3072 in 8.4 us against 10.1 for 128 x 192 split 8.
// A split of a tile of kLongRingTileElements or fewer whose blocks each reduce kLongRingSteps / 2
// steps or more takes the deepest ring (ClusterWaveBlocks: the blocks a wave of clusters holds).
std::vector<Config> OneWaveSplitSeeds(const ImplicitGemm& g, const ConfigSpace& space) {
  if (g.m <= 64) {
    return {};
  }
  const std::vector<int64_t>& bns = space.FindKnob("bn")->values;
  std::vector<int64_t> gridks = space.FindKnob("gridk")->values;
  std::sort(gridks.rbegin(), gridks.rend());
  const int64_t k_steps = WgmmaCostShape(g).k_steps;
  std::vector<Config> seeds;
  for (const BlockTile& t : std::vector<BlockTile>{{128, 192}, {128, 128}, {64, 64}}) {
    if (std::find(bns.begin(), bns.end(), t.bn) == bns.end()) {
      continue;
    }
    const int64_t tiles = GpuCeilDiv(g.m, t.bm) * GpuCeilDiv(g.n, t.bn);
    for (int64_t split_cluster : {1, 0}) {
      Config c = PlainConfig(space, t.bm, t.bn);
      c["wg_m"] = t.bm / 64;
      c["tma"] = space.FindKnob("tma")->values.back();
      c["split_cluster"] = split_cluster;
      for (int64_t gridk : gridks) {
        c["gridk"] = gridk;
        const int64_t wave =
            split_cluster == 1 ? ClusterWaveBlocks(gridk) : kGpuMultiprocessorsGuess;
        // A split's blocks take the deepest ring from kLongRingSteps / 2 steps a block.
        const bool long_ring = TakesLongRing(t, 2 * k_steps / gridk);
        if (gridk > 1 && tiles * gridk <= wave &&
            FirstValidDepth(space, c,
                            long_ring ? LongRingDepths() : std::vector<int64_t>{4, 5, 3})) {
          seeds.push_back(c);
          break;
        }
      }
    }
  }
  return seeds;
}

}  // namespace tune::wgmma_seeds_detail
