#include "codegen/templates/gemm_cuda_wgmma.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/split_reduction.h"
#include "codegen/templates/stream_k.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "codegen/templates/wgmma_kernel.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

constexpr char kArch[] = "sm_90a";

// Whether C's rows are whole 16-byte chunks, as the staged output tile's copies write them.
bool SixteenByteRows(const ImplicitGemm& g) {
  return g.n * ElementBytes(g.workload.out_type()) % 16 == 0;
}

int64_t InputBytes(const Workload& w) { return ElementBytes(w.input_type()); }

// What stream-K's constraint needs of a product (the space outlives the ImplicitGemm).
struct StreamKShape {
  int64_t m, n, steps;
  explicit StreamKShape(const ImplicitGemm& g) : m(g.m), n(g.n), steps(WgmmaCostShape(g).k_steps) {}
  int64_t Tiles(int64_t bm, int64_t bn) const { return GpuCeilDiv(m, bm) * GpuCeilDiv(n, bn); }
};

// Knob streamk's values: 0, and 1 and 2 where the product has more steps of K (of its
// smallest tiles) than two per block of the grid.
std::vector<int64_t> StreamKValues(const StreamKShape& shape) {
  std::vector<int64_t> values = {0};
  for (int64_t s : {1, 2}) {
    if (StreamKPartition::Fits(shape.Tiles(64, 32), shape.steps, s * kGpuMultiprocessorsGuess, 2)) {
      values.push_back(s);
    }
  }
  return values;
}

bool StreamKFits(const StreamKShape& shape, const Config& c) {
  const int64_t streamk = KnobValue(c, "streamk");
  if (streamk == 0) {
    return true;
  }
  if (KnobValue(c, "gridk") != 1 || KnobValue(c, "wg_k") != 1 || KnobValue(c, "stage_c") != 0) {
    return false;
  }
  const int64_t bm = KnobValue(c, "bm"), bn = KnobValue(c, "bn");
  const int64_t tiles = shape.Tiles(bm, bn), steps = shape.steps;
  const int64_t blocks = streamk * kGpuMultiprocessorsGuess;
  if (!StreamKPartition::Fits(tiles, steps, blocks, 2)) {
    return false;
  }
  return SplitWorkspaceBytes(tiles, bm, bn, StreamKPartition(tiles, steps, blocks).MaxParts()) <=
         kSplitWorkspaceLimitBytes;
}

}  // namespace

bool WgmmaApplies(const Target& target) { return target.cpu == kArch; }

std::vector<std::string> WgmmaShapeFaults(const ImplicitGemm& g) {
  std::vector<std::string> wrong;
  const Workload& w = g.workload;
  if (InputBytes(w) == 1 && g.ContiguousK() % 4 != 0) {
    wrong.push_back(w.op() == OpKind::kGemm
                        ? StrCat("K=", g.k, " with 8-bit elements")
                        : StrCat("C=", g.ContiguousK(), " with 8-bit elements"));
  }
  if (!g.b_k_major && InputBytes(w) != 2) {
    wrong.push_back(StrCat("dtype=", DtypeName(w.dtype()), " with layout=NN"));
  }
  return wrong;
}

ConfigSpace WgmmaSpace(const ImplicitGemm& g, const Target& target) {
  const Workload& workload = g.workload;
  const GpuArch arch = GpuArchOrDefault(target);
  const Dtype dtype = workload.dtype();
  ConfigSpace space;
  space.AddKnob("bm", AtMost({64, 128, 192, 256}, std::max<int64_t>(64, NextPow2(g.m)), 64),
                "rows of C per block (m64 steps of the warpgroups)");
  space.AddKnob("bn",
                AtMost({32, 48, 64, 96, 128, 192, 256}, std::max<int64_t>(32, NextPow2(g.n)), 32),
                "columns of C per block");
  space.AddKnob("wg_m", {1, 2}, "warpgroups along M (each takes bm / wg_m rows)");
  space.AddKnob("wg_n", {1, 2}, "warpgroups along N (each one m64n<bn / wg_n> instruction)");
  space.AddKnob("wg_k", {1, 2, 4},
                "warpgroups along K: the block's steps of K split into wg_k ranges, each reduced "
                "by wg_m x wg_n warpgroups of its own and their sums added through shared memory "
                "(shorter chains of steps for skinny shapes, whose outputs are few)");
  space.AddKnob("stages", {3, 4, 5, 6, 8, 12, 16},
                "shared-memory buffers of 128 bytes of K per row (cp.async copies issued "
                "stages - 2 steps ahead; a TMA producer keeps every buffer in flight); 8 to 16 "
                "for skinny products that stream B from memory");
  space.AddKnob("copy", g.CopyWidths(),
                "bytes per global-to-shared copy (cp.async of 16, 8 or 4 bytes; smaller: element "
                "by element through registers)");
  space.AddKnob("raster", {1, 4, 8, 16},
                "block rows per raster group (blocks of a group share B's tiles in L2)");
  space.AddKnob("gridk", GridSplits(WgmmaCostShape(g).k_steps),
                "blocks that share each tile's reduction (grid z; each parks its partial tile in "
                "a workspace, and the tile's last block adds them and runs the epilogue)");
  space.AddKnob("streamk", StreamKValues(StreamKShape(g)),
                "stream-K: 0 off; s: a persistent grid of s blocks per multiprocessor (of a "
                "132-multiprocessor GPU) shares the tiles' steps of K evenly, tile by tile, the "
                "blocks that share a tile parking their parts for the last to add");
  space.AddKnob("stage_c",
                SixteenByteRows(g) ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: the block's output tile is staged in shared memory and written in 16-byte "
                "rows (coalesced); 0: each thread stores its accumulator pairs");
  space.AddKnob("tma", g.TmaReadable() ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: a producer warpgroup's one thread streams the tiles with TMA copies through "
                "mbarriers while the other warpgroups multiply (warp specialisation); 0: every "
                "thread issues cp.async copies between block barriers");
  const bool clusters = g.TmaReadable() && g.b_k_major;
  space.AddKnob("cluster", clusters ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1},
                "blocks per thread-block cluster along M: 2 pairs the blocks of neighbouring tile "
                "rows, whose producers each copy half of their common tile of B into both "
                "(TMA multicast), so that L2 serves B's tiles once per pair (offered where TMA "
                "reads a K-major B)");
  const int64_t first_copy = g.CopyWidths().front();
  space.AddConstraint("tma needs wg_k == 1 (and takes the first copy width: TMA ignores it)",
                      [first_copy](const Config& c) {
                        return KnobValue(c, "tma") == 0 ||
                               (KnobValue(c, "wg_k") == 1 && KnobValue(c, "copy") == first_copy);
                      });
  AddSplitWorkspaceConstraint(space, g);
  space.AddConstraint(
      "streamk needs gridk == 1, wg_k == 1 and stage_c == 0, at least two steps of K per block "
      "and a workspace within 64 MiB",
      [shape = StreamKShape(g)](const Config& c) { return StreamKFits(shape, c); });
  space.AddConstraint("cluster 2 needs tma 1, gridk 1 and streamk 0, and bn a multiple of 16",
                      [](const Config& c) {
                        return KnobValue(c, "cluster") == 1 ||
                               (KnobValue(c, "tma") == 1 && KnobValue(c, "gridk") == 1 &&
                                KnobValue(c, "streamk") == 0 && KnobValue(c, "bn") % 16 == 0);
                      });
  space.AddConstraint("stage_c needs wg_k == 1 and gridk == 1", [](const Config& c) {
    return KnobValue(c, "stage_c") == 0 ||
           (KnobValue(c, "wg_k") == 1 && KnobValue(c, "gridk") == 1);
  });
  space.AddConstraint("bm % (64 * wg_m) == 0 (m64 steps per warpgroup)", [](const Config& c) {
    return KnobValue(c, "bm") % (64 * KnobValue(c, "wg_m")) == 0;
  });
  space.AddConstraint(
      "bn / wg_n is a wgmma n (a multiple of 8 up to 256; of 16 above 32 for "
      "integers)",
      [dtype](const Config& c) {
        const int64_t n = KnobValue(c, "bn") / KnobValue(c, "wg_n");
        return KnobValue(c, "bn") % KnobValue(c, "wg_n") == 0 &&
               ir::WarpGroupMmaTakesN(dtype, static_cast<int>(n));
      });
  if (!g.b_k_major) {
    space.AddConstraint(
        "bn / wg_n is a multiple of 64 (B read N-major in 64-column atoms)",
        [](const Config& c) { return KnobValue(c, "bn") % (64 * KnobValue(c, "wg_n")) == 0; });
  }
  space.AddConstraint(
      "(bm / wg_m / 64) * (bn / wg_n) / 2 <= 128 (accumulator registers per thread; twice as "
      "many for the 8-bit floats, which promote their sums)",
      [shape = WgmmaCostShape(g)](const Config& c) {
        const WgmmaKnobs k = WgmmaKnobsOf(c, shape);
        return k.bm % (64 * k.wg_m) != 0 || k.AccumulatorRegisters() <= 128;
      });
  const int64_t kdim = g.k;
  const int64_t bk = kWgmmaRowBytes / InputBytes(workload);
  space.AddConstraint(
      "every one of the gridk blocks gets at least one step of K",
      [kdim, bk](const Config& c) { return GridSplitFits(kdim, bk, KnobValue(c, "gridk")); });
  // Registers: the accumulators, and addresses, descriptors and the copy loop's state.
  auto cost = [shape = WgmmaCostShape(g)](const Config& c) {
    const WgmmaKnobs k = WgmmaKnobsOf(c, shape);
    GpuBlockCost cost;
    cost.threads = k.Threads();
    cost.shared_bytes = k.SharedBytes();
    if (k.bm % (64 * k.wg_m) == 0 && k.bn % k.wg_n == 0) {
      // Stream-K holds ~40 more: its segment's state (ptxas: 162 for 128 x 128 tiles).
      cost.registers = k.AccumulatorRegisters() + 56 + (k.streamk > 0 ? 40 : 0);
      if (k.tma == 1 && k.streamk == 0) {
        // The block's average: the producer gives registers to the consumers (not with
        // stream-K, whose producer warpgroup shares the segments' finishes).
        cost.registers = (128 * WgmmaKnobs::kProducerRegisters + k.SplitThreads() * cost.registers +
                          k.Threads() - 1) /
                         k.Threads();
      }
    }
    return cost;
  };
  // streamk 2 launches two blocks per multiprocessor, which must be resident together (else
  // the second half of the grid runs as a second wave).
  space.AddConstraint(
      "streamk 2 needs two blocks per multiprocessor: twice the shared memory within the "
      "multiprocessor's and twice (the registers' estimate + 40) x threads within 65536",
      [shape = WgmmaCostShape(g), arch](const Config& c) {
        const WgmmaKnobs k = WgmmaKnobsOf(c, shape);
        if (k.streamk != 2 || k.bm % (64 * k.wg_m) != 0) {
          return true;
        }
        return 2 * k.SharedBytes() <= arch.max_dynamic_shared_bytes_per_block &&
               2 * (k.AccumulatorRegisters() + 56 + 40) * k.Threads() <=
                   arch.registers_per_multiprocessor;
      });
  AddGpuLimitConstraints(space, arch, cost,
                         {.dynamic_shared = true, .one_block_per_multiprocessor = true});
  return space;
}

namespace {

// A config of bm x bn tiles with every other knob at its plainest: one warpgroup, three cp.async
// stages of the first copy width, raster groups of 8 block rows, no grid split, no staged
// output, no TMA, no stream-K, no cluster. The presets and seeds set what they change.
Config PlainConfig(const ConfigSpace& space, int64_t bm, int64_t bn) {
  return {{"bm", bm},
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
          {"cluster", 1}};
}

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
  presets.push_back(make(128, 128, 2, 1, 5));
  presets.push_back(make(256, 128, 2, 1, 4));
  presets.push_back(make(128, 256, 1, 2, 4));
  presets.push_back(make(128, 64, 2, 1, 6));
  presets.push_back(make(64, 256, 1, 1, 5));
  presets.push_back(make(64, 128, 1, 1, 6));
  return presets;
}

// For shapes of fewer tiles than multiprocessors, splits of light tiles: each tile shape below
// with three stages (room for two or more blocks per multiprocessor, as blocks with a share of K
// need no deep pipeline), split by the smallest gridk that makes two blocks per multiprocessor,
// else the largest offered. On the H200 the first splits tried, of the presets (four to six
// stages, one block per multiprocessor), ran in two waves and lost to no split.
std::vector<Config> SplitSeeds(const ImplicitGemm& g, const ConfigSpace& space) {
  std::vector<Config> seeds;
  const std::vector<int64_t>& gridks = space.FindKnob("gridk")->values;
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
    if (chosen && std::find(seeds.begin(), seeds.end(), *chosen) == seeds.end()) {
      seeds.push_back(*std::move(chosen));
    }
  }
  return seeds;
}

// The two tiles whose waves of blocks best fit the product (WaveFitTiles), each as a TMA
// pipeline where the operands allow one and the first as cp.async stages too (and its TMA
// pipeline in clusters of two sharing B's tile), with the first warpgroup arrangement, depth
// (five stages down to three) and output staging the space takes.
// On the H200 (2026-12-04) a clustered pipeline ran at 0.94x its unclustered twin (geomean over
// 20 pairs of ten bf16 rows; 1.09x once): one twin keeps it measured without spending a second
// trial on it.
// On the H200 (2026-12-03) the presets' 128 x 128 and 128 x 256 tiles ran 4096 x 768 x 768
// and 1024 x 3072 x 768 in a wave and a half or less than one, at 0.61-0.63x cuBLASLt.
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
  // The first valid config of the tile with `tma`, trying arrangements, depths and staging.
  auto make = [&](const BlockTile& t, int64_t with_tma) -> std::optional<Config> {
    Config c = PlainConfig(space, t.bm, t.bn);
    c["tma"] = with_tma;
    for (const auto& [wm, wn] : std::vector<std::pair<int64_t, int64_t>>{{2, 1}, {1, 1}, {1, 2}}) {
      for (int64_t stages : {5, 4, 3}) {
        for (int64_t stage_c : {1, 0}) {
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
        // And the pair of blocks sharing B's tile through a cluster (TMA multicast).
        (*c)["cluster"] = 2;
        if (with_tma == 1 && fitted == 0 && space.IsValid(*c)) {
          seeds.push_back(*std::move(c));
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
  return g.m <= 64 && g.n * g.k * InputBytes(g.workload) >= kStreamedBBytes;
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
  auto deepest = [&](Config& c) {
    for (int64_t s : stages) {
      c["stages"] = s;
      if (space.IsValid(c)) {
        return true;
      }
    }
    return false;
  };
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

}  // namespace

Config WgmmaDefault(const ImplicitGemm& g, const Target& target, std::string_view template_name) {
  const ConfigSpace space = WgmmaSpace(g, target);
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
  // Stream-K configs are left to the search, unseeded: on the H200 (2026-12-03) every one of
  // them ran 1.5 to 2.5 times slower than the best data-parallel tile of the same shape.
  // The tiles that fill whole waves lead where they fill half the GPU or more; else the splits
  // of light tiles do (16 x 768 x 3072 on the H200: 7.6 us at best unsplit, 4.7 split 12 ways).
  // For 64 rows or fewer they come last: there the presets lead, whose splits of K among
  // warpgroups were the best of six of the ten such rows on the H200 that no grid split won,
  // but for the products that stream B from memory, whose deep rings lead (StreamingSeeds).
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
  append(StreamingSeeds(g, space));
  if (fits_lead) {
    append(MatmulSeeds(space, fits, size, kGpuMultiprocessorsGuess / 2));
  }
  append(SplitSeeds(g, space));
  if (!fits_lead && g.m > 64) {
    append(MatmulSeeds(space, fits, size, kGpuMultiprocessorsGuess));
  }
  append(MatmulSeeds(space, variants, size, kGpuMultiprocessorsGuess));
  if (g.m <= 64) {
    append(MatmulSeeds(space, fits, size, kGpuMultiprocessorsGuess));
  }
  return seeds;
}

ir::LoweredFunc BuildWgmmaKernel(const ImplicitGemm& g, const Config& config,
                                 std::string_view func_name) {
  return BuildWgmmaKernel(g, WgmmaKnobsOf(config, WgmmaCostShape(g)), func_name);
}

namespace {

bool Applies(const Workload&, const Target& target) { return WgmmaApplies(target); }

absl::Status CheckShape(const Workload& workload) {
  return RefuseShapeUnless(kGemmCudaWgmma.name,
                           "GEMMs whose operands cp.async stages and wgmma reads",
                           "layout=NN for f16 and bf16 (B read N-major), layout=NT for every "
                           "dtype; K a multiple of 4 for 8-bit dtypes",
                           workload, WgmmaShapeFaults(ImplicitGemm(workload)));
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  return WgmmaSpace(ImplicitGemm(workload), target);
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  return WgmmaDefault(ImplicitGemm(workload), target, kGemmCudaWgmma.name);
}

std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  return WgmmaSeeds(ImplicitGemm(workload), target);
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCudaWgmma, workload, target, config));
  if (!Applies(workload, target)) {
    return absl::InvalidArgumentError(
        StrCat("gemm.cuda.wgmma builds for cuda -arch=sm_90a (wgmma is an arch-specific "
               "instruction of Hopper), not for '",
               target.ToString(), "'"));
  }
  RETURN_IF_ERROR(CheckShape(workload));
  return BuildWgmmaKernel(ImplicitGemm(workload), config, func_name);
}

}  // namespace
const KernelTemplate kGemmCudaWgmma = {
    .name = "gemm.cuda.wgmma",
    .version = 10,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kCuda,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .applies = &Applies,
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = DtypeSet{Dtype::kTf32, Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kU8I8,
                       Dtype::kFp8E4m3, Dtype::kFp8E5m2},
    .seeds = &Seeds,
    .check_shape = &CheckShape,
    .tolerance = &TensorCoreTolerance,
};

}  // namespace tune
