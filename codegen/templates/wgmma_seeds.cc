// gemm.cuda.wgmma's (and conv2d.cuda.wgmma's) default config and seeds: presets per shape class,
// the tiles that fill whole waves, the deep rings of skinny products that stream B, and (from
// wgmma_split_seeds.cc) the grid splits of K, each explained where it is built with what the
// GPUs measured.
#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/templates/gemm_cuda_wgmma.h"
#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/wgmma_kernel.h"
#include "codegen/templates/wgmma_seeds_detail.h"
#include "common/element_type.h"
#include "common/strings.h"

namespace tune {

namespace wgmma_seeds_detail {

Config PlainConfig(const ConfigSpace& space, int64_t bm, int64_t bn) {
  Config c = {{"bm", bm},
              {"bn", bn},
              {"wg_m", 1},
              {"wg_n", 1},
              {"wg_k", 1},
              {"stages", 3},
              {"copy", space.FindKnob("copy")->values.front()},
              {"raster", 8},
              {"gridk", 1},
              {"stage_c", 0},
              {"tma", 0},
              {"streamk", 0},
              {"cluster", 1},
              {"blocks", 1},
              {"persistent", 0},
              {"promote_steps", 1},
              {"split_cluster", 0},
              {"cluster_n", 1}};
  if (space.FindKnob("resident") != nullptr) {
    c["resident"] = 0;
  }
  return c;
}

// A block's reduction of this many steps of K or more, in one wave of blocks, runs on the deepest
// ring of stages shared memory takes, its output stored from registers: on the H100 (2026-12-07,
// bench/gpu_probe) 256 x 4096 x 4096 (64 steps) in 128 x 64 tiles ran in 17.9 us with eight
// stages against 25.3 with six and the output staged; 64 x 128 tiles with five and the output
// staged took 21.1. (Reductions of 12 steps, 4096 x 768 x 768, prefer the output staged.)
// Only tiles of 128 x 64 outputs or fewer, the sizes measured: a step of a smaller tile is
// shorter, so it takes more stages in flight to cover the same latency of L2. 1024 x 4096 x 4096
// in 128 x 256 tiles (one wave) ran at 0.87x cuBLASLt with four stages storing from registers and
// at 0.91x with three and the output staged, in two sessions of one day: within their spread, so
// the staged output stays first there.
std::vector<int64_t> LongRingDepths() { return {8, 6, 5, 4, 3}; }

bool TakesLongRing(const BlockTile& t, int64_t block_steps) {
  return t.bm * t.bn <= kLongRingTileElements && block_steps >= kLongRingSteps;
}

bool FirstValidDepth(const ConfigSpace& space, Config& c, const std::vector<int64_t>& depths) {
  for (int64_t stages : depths) {
    c["stages"] = stages;
    if (space.IsValid(c)) {
      return true;
    }
  }
  return false;
}

}  // namespace wgmma_seeds_detail

namespace {

using wgmma_seeds_detail::FirstValidDepth;
using wgmma_seeds_detail::LongRingDepths;
using wgmma_seeds_detail::OneWaveSplitSeeds;
using wgmma_seeds_detail::PlainConfig;
using wgmma_seeds_detail::SplitSeeds;
using wgmma_seeds_detail::TakesLongRing;

// Large tiles of two warpgroups for large problems (CUTLASS's Hopper defaults are 128 x 128
// and 128 x 256); one warpgroup of m64 and narrower n for skinny ones.
std::vector<Config> Presets(const ImplicitGemm& g, const ConfigSpace& space) {
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  auto make = [&](int64_t bm, int64_t bn, int64_t wm, int64_t wn, int64_t stages, int64_t wk = 1) {
    Config c = PlainConfig(space, snap("bm", bm), snap("bn", bn));
    c["wg_m"] = std::min(wm, c["bm"] / 64);
    c["wg_n"] = wn;
    c["wg_k"] = wk;
    c["stages"] = stages;
    // The output tile staged in shared memory where it fits beside the stages.
    c["stage_c"] = 1;
    if (!space.Validate(c).ok()) {
      c["stage_c"] = 0;
    }
    return c;
  };
  std::vector<Config> presets;
  if (g.m <= 64) {
    // Skinny: few output tiles, so blocks split their K among warpgroups.
    presets.push_back(make(64, 32, 1, 1, 4, 4));
    presets.push_back(make(64, 64, 1, 1, 5, 2));
    presets.push_back(make(64, 32, 1, 1, 5, 2));
    presets.push_back(make(64, 128, 1, 1, 4, 2));
    for (int64_t bn : {64, 128, 32, 256}) {
      presets.push_back(make(64, bn, 1, 1, 5));
    }
    presets.push_back(make(64, 128, 1, 2, 5));
  }
  presets.push_back(make(128, 256, 2, 1, 4));
  if (IsFp8Dtype(g.workload.dtype())) {
    // fp8's promoted sums hold two sets of accumulators, so 128 x 256 tiles do not fit. On the
    // H100 (2026-12-06, 4096^3, bench/RESULTS.md) 128 x 128 tiles ran in 132.9-134.0 us with four
    // stages against 139.7-140.7 with five, and 64 x 256 in two warpgroups side by side in 133.3.
    presets.push_back(make(128, 128, 2, 1, 4));
    presets.push_back(make(64, 256, 1, 2, 4));
  }
  presets.push_back(make(128, 128, 2, 1, 5));
  presets.push_back(make(256, 128, 2, 1, 4));
  presets.push_back(make(128, 256, 1, 2, 4));
  presets.push_back(make(128, 64, 2, 1, 6));
  presets.push_back(make(64, 256, 1, 1, 5));
  presets.push_back(make(64, 128, 1, 1, 6));
  return presets;
}

// `c`'s twin in clusters of two blocks along M sharing B's tile through TMA multicast, where
// the space offers it: one trial that keeps clusters measured. On the H100 (2026-12-07,
// bench/gpu_probe/clusters.txt) clustered configs of the transformer rows ran slower than their
// unclustered twins: clusters of 2 x 1 at 1.03-1.27x their time, of 1 x 2 (sharing A along N,
// what cuBLAS runs on these rows) at 1.09-1.38x, of 2 x 2 at 2.1-2.2x; only at 4096^3 did 256 x
// 128 tiles in clusters of 1 x 2 run faster (0.97x, persistent 0.93x), and slower than the best
// unclustered tile there. So the twin is the 2 x 1.
std::optional<Config> ClusteredTwin(const Config& c, const ConfigSpace& space) {
  Config twin = c;
  twin["cluster"] = 2;
  if (!space.IsValid(twin)) {
    return std::nullopt;
  }
  return twin;
}

// The two tiles whose waves of blocks best fit the product (WaveFitTiles), each as a TMA
// pipeline where the operands allow one and the first as cp.async stages too (and its TMA
// pipeline in clusters of two along M, ClusteredTwin), with the first warpgroup arrangement,
// output staging and depth (five stages down to three; for fp8 four, five, three) the space takes:
// the output tile staged in shared memory before a deeper ring. On the H200 (2026-12-04,
// bench/gpu_probe/short_k.txt) 4096 x 768 x 768 in 128 x 192 tiles ran in 10.7 us with four stages
// and the output staged, and in 14-15 us with four or five stages and each thread storing its
// accumulators; three stages against five of 128 x 128 cost 1%. On the H200 (2026-12-04) a
// clustered pipeline ran at 0.94x its unclustered twin (geomean over 20 pairs of ten bf16
// rows; 1.09x once): one twin keeps it measured without spending a second trial on it. On the
// H100 (2026-12-06) the first tile of one m64 warpgroup, as two warpgroups side by side in N,
// ran 1.07-1.20x slower than as one on five bf16 rows: not seeded. On the H200
// (2026-12-03) the presets' 128 x 128 and 128 x 256 tiles ran 4096 x 768 x 768 and 1024 x 3072 x
// 768 in a wave and a half or less than one, at 0.61-0.63x cuBLASLt.
std::vector<Config> WaveFitSeeds(const ImplicitGemm& g, const ConfigSpace& space) {
  const std::vector<int64_t>& bms = space.FindKnob("bm")->values;
  const std::vector<int64_t>& bns = space.FindKnob("bn")->values;
  std::vector<BlockTile> tiles;
  for (const BlockTile& t : std::vector<BlockTile>{{128, 256},
                                                   {256, 128},
                                                   {128, 192},
                                                   {192, 128},
                                                   {128, 128},
                                                   {128, 96},
                                                   {128, 64},
                                                   {64, 256},
                                                   {64, 192},
                                                   {64, 128},
                                                   {64, 96},
                                                   {64, 64},
                                                   {64, 48},
                                                   {64, 32}}) {
    if (std::find(bms.begin(), bms.end(), t.bm) != bms.end() &&
        std::find(bns.begin(), bns.end(), t.bn) != bns.end()) {
      tiles.push_back(t);
    }
  }
  const bool tma = space.FindKnob("tma")->values.size() > 1;
  // fp8 tries four stages first (Presets: 5% faster than five for 128 x 128 tiles on the H100).
  const std::vector<int64_t> depths = IsFp8Dtype(g.workload.dtype())
                                          ? std::vector<int64_t>{4, 5, 3}
                                          : std::vector<int64_t>{5, 4, 3};
  // The first valid config of the tile with `tma`, trying arrangements, depths and staging: a
  // tile of kLongRingTileElements or fewer whose blocks fit one wave and reduce kLongRingSteps
  // or more takes the deepest ring before staging its output.
  const int64_t k_steps = WgmmaCostShape(g).k_steps;
  auto make = [&](const BlockTile& t, int64_t with_tma) -> std::optional<Config> {
    Config c = PlainConfig(space, t.bm, t.bn);
    c["tma"] = with_tma;
    const bool long_ring =
        TakesLongRing(t, k_steps) &&
        GpuCeilDiv(g.m, t.bm) * GpuCeilDiv(g.n, t.bn) <= kGpuMultiprocessorsGuess;
    const std::vector<int64_t> stagings =
        long_ring ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{1, 0};
    for (const auto& [wm, wn] : std::vector<std::pair<int64_t, int64_t>>{{2, 1}, {1, 1}, {1, 2}}) {
      for (int64_t stage_c : stagings) {
        for (int64_t stages : long_ring ? LongRingDepths() : depths) {
          c["wg_m"] = wm;
          c["wg_n"] = wn;
          c["stages"] = stages;
          c["stage_c"] = stage_c;
          if (space.IsValid(c)) {
            return c;
          }
        }
      }
    }
    return std::nullopt;
  };
  std::vector<Config> seeds;
  int fitted = 0;
  for (const BlockTile& t : WaveFitTiles({g.m, g.n, g.k}, tiles)) {
    if (fitted == 2) {
      break;
    }
    std::vector<int64_t> pipelines;
    if (tma) {
      pipelines.push_back(1);
    }
    if (!tma || fitted == 0) {
      pipelines.push_back(0);
    }
    bool any = false;
    for (int64_t with_tma : pipelines) {
      if (std::optional<Config> c = make(t, with_tma)) {
        seeds.push_back(*c);
        any = true;
        if (with_tma == 1 && fitted == 0) {
          if (std::optional<Config> twin = ClusteredTwin(*c, space)) {
            seeds.push_back(std::move(*twin));
          }
        }
      }
    }
    fitted += any;
  }
  return seeds;
}

// B's bytes from which a product of 64 rows or fewer streams B from memory: its time is B's
// bytes over the memory's bandwidth, not its multiply-adds.
constexpr int64_t kStreamedBBytes = int64_t{8} << 20;

bool StreamsB(const ImplicitGemm& g) {
  return g.m <= 64 && g.n * g.k * ElementBytes(g.workload.input_type()) >= kStreamedBBytes;
}

// The share of a wave's multiprocessors that `blocks` keep busy, over all their waves.
double WaveFill(int64_t blocks) {
  return static_cast<double>(blocks) /
         static_cast<double>(GpuCeilDiv(blocks, kGpuMultiprocessorsGuess) *
                             kGpuMultiprocessorsGuess);
}

// For products that stream B (StreamsB), configs that keep many bytes of B in flight, as a
// multiprocessor needs to draw its share of the memory's bandwidth: one m64 warpgroup per block
// and the deepest ring of stages the shared memory takes (up to 16), a TMA pipeline where the
// operands allow one (its producer keeps every stage in flight; cp.async stages keep all but
// two), at tile widths of 32 to 128 columns. Where a width's tiles fill their waves to less than
// 95%, the smallest grid split of K that fills them to 95% follows it.
// On the H200 (2026-12-03) the rows of 16 and 64 rows with a B of 32 to 90 MB ran at 0.80-0.94x
// cuBLASLt with rings of at most 6 stages, the best splitting K among four warpgroups, each
// keeping two stages in flight.
std::vector<Config> StreamingSeeds(const ImplicitGemm& g, const ConfigSpace& space) {
  if (!StreamsB(g)) {
    return {};
  }
  const std::vector<int64_t>& bns = space.FindKnob("bn")->values;
  std::vector<int64_t> stages = space.FindKnob("stages")->values;
  std::sort(stages.rbegin(), stages.rend());
  // The deepest valid ring of `c` (false when none is valid).
  auto deepest = [&](Config& c) { return FirstValidDepth(space, c, stages); };
  std::vector<Config> seeds;
  for (int64_t bn : {32, 64, 96, 128}) {
    if (std::find(bns.begin(), bns.end(), bn) == bns.end()) {
      continue;
    }
    Config c = PlainConfig(space, 64, bn);
    c["tma"] = space.FindKnob("tma")->values.back();
    if (deepest(c)) {
      seeds.push_back(c);
    }
    const int64_t tiles = GpuCeilDiv(g.m, 64) * GpuCeilDiv(g.n, bn);
    if (WaveFill(tiles) >= 0.95) {
      continue;
    }
    for (int64_t gridk : space.FindKnob("gridk")->values) {
      c["gridk"] = gridk;
      if (gridk > 1 && WaveFill(tiles * gridk) >= 0.95 && deepest(c)) {
        seeds.push_back(c);
        break;
      }
    }
  }
  return seeds;
}

// For reductions of one or two steps of K over many output tiles (1x1 convolutions of 64
// channels), where a block's time is its copy in and its stores out: small tiles of cp.async
// stages with the output staged in shared memory, several blocks per multiprocessor, whose
// copies and stores overlap one another's. On the H200 (2026-12-04) 64 x 64 and 128 x 64 tiles
// of this form were the best of the ResNet-50 1x1 layers of 64 input channels at batch 8 and
// 32 whenever the search drew them (3.0-26.1 us), and TMA pipelines of the same tiles took 1.6
// to 2.3 times as long; the tiles that fill whole waves, with one block per multiprocessor,
// took 1.3 to 1.5 times as long.
std::vector<Config> ShortReductionSeeds(const ImplicitGemm& g, const ConfigSpace& space) {
  constexpr int64_t kShortSteps = 2;
  if (WgmmaCostShape(g).k_steps > kShortSteps ||
      GpuCeilDiv(g.m, 64) * GpuCeilDiv(g.n, 64) < 2 * kGpuMultiprocessorsGuess) {
    return {};
  }
  std::vector<Config> seeds;
  for (const auto& [bm, wg_m] : std::vector<std::pair<int64_t, int64_t>>{{64, 1}, {128, 2}}) {
    Config c = PlainConfig(space, bm, 64);
    c["wg_m"] = wg_m;
    c["stage_c"] = 1;
    if (space.IsValid(c)) {
      seeds.push_back(std::move(c));
    }
  }
  return seeds;
}

// The resident pipeline (wgmma_kernel.h): tiles of 128 and 64 rows and of 256 with every output
// channel (the smallest bn that holds them), two blocks per multiprocessor where they fit, the
// output stored from registers and staged. For narrow channels (the 3-channel stem) they lead
// and the first is the default: the element copies from global memory they replace took the
// stem 1.5-1.6x cuDNN's time on the H200 (2026-12-06, 26.0-357.8 us: bench/RESULTS.md).
std::vector<Config> ResidentSeeds(const ImplicitGemm& g, const ConfigSpace& space) {
  if (space.FindKnob("resident") == nullptr) {
    return {};
  }
  const std::vector<int64_t>& bns = space.FindKnob("bn")->values;
  auto bn = std::find_if(bns.begin(), bns.end(), [&](int64_t v) { return v >= g.n; });
  if (bn == bns.end()) {
    return {};
  }
  std::vector<Config> seeds;
  for (const auto& [bm, stage_c] :
       std::vector<std::pair<int64_t, int64_t>>{{128, 0}, {128, 1}, {64, 0}, {64, 1}, {256, 0}}) {
    for (int64_t blocks : {2, 1}) {
      Config c = PlainConfig(space, bm, *bn);
      c["resident"] = 1;
      c["raster"] = 1;
      c["stage_c"] = stage_c;
      c["blocks"] = blocks;
      if (space.IsValid(c)) {
        seeds.push_back(std::move(c));
        break;
      }
    }
  }
  return seeds;
}

// For the 8-bit floats, each TMA seed preceded by its twin that promotes every two steps
// (promote_steps 2), within kMaxGpuSeeds. On the H200 (2026-12-06) the twins of the first two
// seeds of 4096^3 e4m3 ran 1.04-1.05x faster (123.1 and 123.5 us against 128.4 and 129.3), and
// within the bound; measured at K = 4096 only, so both stay.
std::vector<Config> WithPromotionTwins(const std::vector<Config>& seeds, const ConfigSpace& space) {
  std::vector<Config> out;
  for (const Config& c : seeds) {  // none promotes every two steps: no twin repeats a seed
    Config twin = c;
    twin["promote_steps"] = 2;
    if (space.IsValid(twin)) {
      out.push_back(std::move(twin));
    }
    out.push_back(c);
  }
  if (out.size() > kMaxGpuSeeds) {
    out.resize(kMaxGpuSeeds);
    if (out.back().at("promote_steps") == 2) {  // not without its twin
      out.pop_back();
    }
  }
  return out;
}

}  // namespace

Config WgmmaDefault(const ImplicitGemm& g, const Target& target, std::string_view template_name) {
  const ConfigSpace space = WgmmaSpace(g, target);
  if (!ResidentDenseA(g)) {
    if (std::vector<Config> resident = ResidentSeeds(g, space); !resident.empty()) {
      return resident.front();
    }
  }
  return MatmulDefault(space, Presets(g, space), {g.m, g.n, g.k}, 132,
                       StrCat(template_name, " for ", g.workload.ToString()));
}

std::vector<Config> WgmmaSeeds(const ImplicitGemm& g, const Target& target) {
  const ConfigSpace space = WgmmaSpace(g, target);
  // The variants: each preset, one stage deeper, and with three stages: shared memory for two
  // blocks per multiprocessor, which short reductions need (on the H200 every config of 4096 x 768
  // x 768 and 1024 x 3072 x 768 with one block per multiprocessor took ~16 us: two waves of blocks,
  // each filling and draining its pipeline, against cuBLASLt's 8).
  // Last, each preset with its output stored the other way (staged in shared memory or not).
  std::vector<Config> variants;
  // Each preset first as a warp-specialised TMA pipeline, where the operands allow one (the
  // shape CUTLASS's fastest Hopper kernels take); with four stages after the others.
  const bool tma = space.FindKnob("tma")->values.size() > 1;
  auto as_tma = [&](const Config& preset, int64_t stages) {
    Config c = preset;
    c["tma"] = 1;
    c["wg_k"] = 1;
    c["stages"] = stages;
    if (!space.Validate(c).ok()) {
      c["stage_c"] = 1 - c["stage_c"];
    }
    return c;
  };
  for (const Config& preset : Presets(g, space)) {
    if (tma) {
      variants.push_back(as_tma(preset, preset.at("stages")));
    }
    variants.push_back(preset);
    Config deeper = preset;
    deeper["stages"] = std::min<int64_t>(6, preset.at("stages") + 1);
    if (!space.Validate(deeper).ok()) {
      deeper["stage_c"] = 0;  // the staged output tile leaves no room for another stage
    }
    variants.push_back(std::move(deeper));
  }
  for (const Config& preset : Presets(g, space)) {
    Config shallow = preset;
    shallow["stages"] = 3;
    variants.push_back(std::move(shallow));
  }
  for (const Config& preset : Presets(g, space)) {
    Config other = preset;
    other["stage_c"] = 1 - preset.at("stage_c");
    variants.push_back(std::move(other));
    if (tma) {
      variants.push_back(as_tma(preset, 4));
    }
  }
  // Splits of the reduction for tiles too few to fill the GPU once: first the split seeds of
  // light tiles, then each variant and its split.
  // Stream-K and persistent grids are left to the search, unseeded. On the H200 (2026-12-03)
  // every stream-K config of cp.async stages ran 1.5 to 2.5 times slower than the best
  // data-parallel tile of the same shape; on the H100 (2026-12-06) its TMA pipelines of 128 x 128
  // and 64 x 128 tiles ran 256 x 4096 x 4096 and the 3x3 layer of 512 channels over 7 x 7 pixels
  // at batch 32 1.4 to 2.0 times slower than their best data-parallel tiles, and the persistent
  // twins of the TMA seeds of five bf16 and fp8 products ran at 0.79-1.01x (geomean 0.89 over
  // ten pairs) the speed of their one-block-per-tile twins (bench/RESULTS.md).
  // The tiles that fill whole waves lead where they fill half the GPU or more; else the splits
  // do: first the one-wave splits of tiles of two warpgroups (OneWaveSplitSeeds), then those of
  // light tiles (16 x 768 x 3072 on the H200: 7.6 us at best unsplit, 4.7 split 12 ways).
  // For 64 rows or fewer they come last: there the presets lead, whose splits of K among
  // warpgroups were the best of six of the ten such rows on the H200 that no grid split won,
  // but for the products that stream B from memory, whose deep rings lead (StreamingSeeds).
  // Reductions of one or two steps over many tiles lead with small tiles of several blocks per
  // multiprocessor (ShortReductionSeeds), then, for a 1x1 convolution, the resident pipeline's
  // seeds; narrow channels lead with them.
  const MatmulSize size = {g.m, g.n, g.k};
  const std::vector<Config> fits = WaveFitSeeds(g, space);
  const bool fits_lead =
      g.m > 64 && !fits.empty() && size.Blocks(fits.front()) >= kGpuMultiprocessorsGuess / 2;
  std::vector<Config> seeds;
  auto append = [&](std::vector<Config> more) {
    for (Config& c : more) {
      if (seeds.size() < kMaxGpuSeeds && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
        seeds.push_back(std::move(c));
      }
    }
  };
  const std::vector<Config> resident = ResidentSeeds(g, space);
  if (!ResidentDenseA(g)) {  // narrow channels: their element copies are slow
    append(resident);
  }
  append(StreamingSeeds(g, space));
  append(ShortReductionSeeds(g, space));
  append(resident);
  if (fits_lead) {
    append(MatmulSeeds(space, fits, size, kGpuMultiprocessorsGuess / 2));
  }
  append(OneWaveSplitSeeds(g, space));
  append(SplitSeeds(g, space));
  if (!fits_lead && g.m > 64) {
    append(MatmulSeeds(space, fits, size, kGpuMultiprocessorsGuess));
  }
  append(MatmulSeeds(space, variants, size, kGpuMultiprocessorsGuess));
  if (g.m <= 64) {
    append(MatmulSeeds(space, fits, size, kGpuMultiprocessorsGuess));
  }
  if (WgmmaPromotes(g.workload.dtype())) {
    return WithPromotionTwins(seeds, space);
  }
  return seeds;
}

}  // namespace tune
