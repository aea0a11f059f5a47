// gemm.cpu.dot's space, default and seeds, and its entry in the template table. Its kernels:
// gemm_cpu_dot_nest.h (B packed into VNNI panels) and gemm_cpu_dot_rows.h (layout NT, B read in
// place).
#include "codegen/templates/gemm_cpu_dot.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/gemm_cpu_dot_nest.h"
#include "codegen/templates/gemm_cpu_dot_rows.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"

namespace tune {
namespace {

// The bytes of all of B packed, and the most the default packs before the loops: larger ones
// are packed a column block at a time (pack_b).
int64_t PackedBBytes(const Workload& workload) {
  return workload.gemm().n * GemmDotPaddedK(workload) * ElementBytes(workload.weight_type());
}
constexpr int64_t kPackedBInCache = int64_t{4} << 20;

ConfigSpace Space(const Workload& workload, const Target&) {
  const GemmShape& s = workload.gemm();
  const int64_t g = GemmDotGroupOf(workload);
  const int64_t kp = GemmDotPaddedK(workload);
  ConfigSpace space;
  space.AddKnob("mr", AtMost({1, 2, 3, 4, 6, 8, 10, 12, 14}, s.m, 1),
                "rows of the register tile (one broadcast group of A each)");
  space.AddKnob("nv", AtMost({1, 2, 3, 4}, CeilDiv(s.n, kGemmDotLanes), 1),
                "vectors of 16 columns in the register tile");
  std::vector<int64_t> kcs;
  for (int64_t kc : ClipToExtent({64, 128, 256, 512, 768, 1024, 2048}, kp)) {
    kcs.push_back(CeilDiv(kc, g) * g);
  }
  space.AddKnob("kc", kcs, "reduction block (K, a multiple of the group)");
  space.AddKnob("mc", ClipToExtent({16, 24, 32, 48, 64, 96, 128, 192, 256, 384}, s.m),
                "row block (M) of A kept in L2");
  space.AddKnob("nc", ClipToExtent({192, 384, 768, 1536, 3072}, s.n),
                "column block (N) of the packed B (a multiple of every panel width)");
  space.AddKnob("pack_a", {0, 1}, "copy A's blocks into mr-row panels of groups");
  // Layout NT keeps B's rows K-contiguous: its in-place form (gemm_cpu_dot_rows.h) packs
  // nothing, its register tile is mr rows of A x `cols` rows of B, and kc blocks its K (mc, nc,
  // nv and pack_a do not apply to it).
  const bool nt = s.layout == GemmLayout::kNT;
  space.AddKnob("b_in_place", nt ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: B read in place (layout NT): dot products along K, nothing packed");
  space.AddKnob("cols", AtMost({1, 2, 4, 8}, s.n, 1), "rows of B in the in-place form's tile");
  space.AddKnob("pack_b",
                workload.prepared_weights() ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1},
                "0: all of B packed before the loops; 1: each column block packed where it is "
                "used, the column blocks outermost (canonical weights)");
  const int64_t n = s.n;
  space.AddConstraint(
      fmt::format("pack_b == 0 || (b_in_place == 0 && nc < {}) (a packed B, in more than one "
                  "column block)",
                  n),
      [n](const Config& c) {
        return KnobValue(c, "pack_b") == 0 ||
               (KnobValue(c, "b_in_place") == 0 && KnobValue(c, "nc") < n);
      });
  space.AddConstraint(
      "b_in_place == 0 || mr*cols + mr + cols <= 32 (the in-place tile's "
      "accumulators and operands fit the vector registers)",
      [](const Config& c) {
        const int64_t mr = KnobValue(c, "mr"), cols = KnobValue(c, "cols");
        return KnobValue(c, "b_in_place") == 0 || mr * cols + mr + cols <= 32;
      });
  space.AddConstraint(
      fmt::format("b_in_place == 0 || kc >= {} || {} * cols <= 512 (an in-place column tile's "
                  "accumulators parked between blocks of K: M x cols vectors on the stack)",
                  kp, s.m),
      [kp, m = s.m](const Config& c) {
        return KnobValue(c, "b_in_place") == 0 || KnobValue(c, "kc") >= kp ||
               m * KnobValue(c, "cols") <= 512;
      });
  space.AddConstraint(
      "mr*nv + nv + 1 <= 32 (accumulators fit the vector registers)", [](const Config& c) {
        return KnobValue(c, "mr") * KnobValue(c, "nv") + KnobValue(c, "nv") + 1 <= 32;
      });
  const int64_t m = s.m;
  space.AddConstraint(fmt::format("mc % mr == 0 || mc == {}", m), [m](const Config& c) {
    return KnobValue(c, "mc") % KnobValue(c, "mr") == 0 || KnobValue(c, "mc") == m;
  });
  if (s.k % g != 0) {
    space.AddConstraint(fmt::format("pack_a == 1 (K = {} is not a multiple of {})", s.k, g),
                        [](const Config& c) { return KnobValue(c, "pack_a") == 1; });
  }
  return space;
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  Config c;
  c["nv"] = snap("nv", 3);
  c["mr"] = snap("mr", c["nv"] >= 3 ? 8 : 14);
  c["kc"] = snap("kc", 512);
  c["nc"] = snap("nc", 768);
  c["pack_a"] = 1;
  c["mc"] = workload.gemm().m;
  for (int64_t mc : space.FindKnob("mc")->values) {
    if (mc <= 96 && mc % c["mr"] == 0) {
      c["mc"] = mc;
    }
  }
  c["cols"] = snap("cols", 4);
  c["b_in_place"] = 0;
  c["pack_b"] = 0;
  // A packed B larger than the caches keep close is packed a column block of 384 at a time:
  // on a Zen 5 core 2048 x 4096 x 4096 (NT, bf16) ran 1.2x faster so (bench/RESULTS.md,
  // 2026-12-06), and B's of 2 MB and less ran the same either way.
  Config blocks = c;
  blocks["pack_b"] = 1;
  blocks["nc"] = snap("nc", 384);
  // On a Zen 4 core (AVX-512 in two halves: half of Zen 5's dot products per cycle), narrower
  // blocks over longer reductions: 64 x 4096 x 4096 (NT, bf16) ran 1.09x faster with blocks of
  // 192 columns in pieces of 2048 of K, 64 x 11008 x 4096 1.11x, 256 x 4096 x 4096 1.04x,
  // 1024 x 4096 x 4096 the same (bench/RESULTS.md, 2026-12-07).
  if (target.Resolved().cpu == "znver4") {
    blocks["nc"] = snap("nc", 192);
    blocks["kc"] = snap("kc", 2048);
  }
  if (PackedBBytes(workload) > kPackedBInCache && space.IsValid(blocks)) {
    c = blocks;
  }
  // Few rows against canonical NT weights: packing B would cost more than the product. Not
  // s8 x s8 of more than 8 rows over K <= 2048: in place it adds a row sum of A to every step
  // and shifts every vector of B, which the rows no longer pay for. On a Zen 5 core
  // (2026-12-06, N = K = 768) in place ran 1.6x faster for 4 rows, the same for 8, and 0.69x
  // for 16, where B packed in 4 x 4 vector tiles over all of K ran at 0.95x oneDNN's plain
  // matmul (8 x 3 tiles in blocks of 512: 0.90).
  const bool nt_few_rows = workload.gemm().layout == GemmLayout::kNT && workload.gemm().m <= 16 &&
                           !workload.prepared_weights();
  const bool short_i8 =
      workload.dtype() == Dtype::kI8 && workload.gemm().k <= 2048 && workload.gemm().m > 8;
  if (nt_few_rows && short_i8) {  // B packed, as above, in 4 x 4 vector tiles over all of K
    Config tiles = c;
    tiles["mr"] = snap("mr", 4);
    tiles["nv"] = snap("nv", 4);
    tiles["kc"] = space.FindKnob("kc")->values.back();  // all of K at once
    if (space.IsValid(tiles)) {
      c = tiles;
    }
  } else if (nt_few_rows) {
    c["b_in_place"] = 1;
    c["pack_b"] = 0;
    c["mr"] = snap("mr", 4);
    c["cols"] = snap("cols", 4);
    c["kc"] = space.FindKnob("kc")->values.back();  // all of K at once
    // Long rows: 8 rows of B a tile, in blocks of 2048 of K that L1 keeps while every row tile
    // reads them. On a Zen 5 core (2026-12-06, bench/RESULTS.md) M = 16 ran 1.2-1.4x faster so
    // at K = 3072 to 11008 than 4 x 4 tiles over all of K; at K = 768, 4 x 4 was 1.15x faster.
    Config blocked = c;
    blocked["mr"] = snap("mr", 2);
    blocked["cols"] = snap("cols", 8);
    blocked["kc"] = snap("kc", 2048);
    if (workload.gemm().k > 2048 && space.IsValid(blocked)) {
      c = blocked;
    }
  }
  // A read in place where it may be: on a Zen 5 core every row measured so far ran 1.1-1.3x
  // faster so than with A packed (bench/RESULTS.md, 2026-12-05).
  Config in_place = c;
  in_place["pack_a"] = 0;
  return space.IsValid(in_place) ? in_place : c;
}

std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  const Config base = DefaultConfig(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  std::vector<Config> seeds;
  auto add = [&](const Config& c) {
    if (space.IsValid(c) && c != base && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(c);
    }
  };
  // The other way of packing B, where the space has it.
  Config other_packing = base;
  other_packing["b_in_place"] = 0;
  other_packing["pack_b"] = 1 - base.at("pack_b");
  add(other_packing);
  // The in-place form's tiles, over all of K (kc 0) or in blocks: first where it is the
  // default, after the packed form's variants elsewhere.
  auto in_place_tiles = [&] {
    if (space.FindKnob("b_in_place")->values.size() < 2) {
      return;
    }
    const int64_t all_k = space.FindKnob("kc")->values.back();
    for (auto [mr, cols, kc] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{2, 8, 2048},
                                                                                  {4, 4, 0},
                                                                                  {2, 8, 1024},
                                                                                  {4, 4, 1024},
                                                                                  {2, 8, 0},
                                                                                  {1, 8, 0},
                                                                                  {4, 2, 0},
                                                                                  {2, 4, 0},
                                                                                  {1, 4, 0},
                                                                                  {3, 4, 0}}) {
      Config c = base;
      c["b_in_place"] = 1;
      c["mr"] = snap("mr", mr);
      c["cols"] = snap("cols", cols);
      c["kc"] = kc == 0 ? all_k : snap("kc", kc);
      add(c);
    }
  };
  if (base.at("b_in_place") != 0) {
    in_place_tiles();
  }
  // B packed a column block at a time: narrower blocks over longer reductions (a block of 192
  // columns in pieces of 2048 of K), and the other width.
  if (base.at("pack_b") == 1) {
    for (auto [nc, kc] : std::vector<std::pair<int64_t, int64_t>>{
             {192, 2048}, {192, 1024}, {384, 2048}, {768, 512}}) {
      Config c = base;
      c["nc"] = snap("nc", nc);
      c["kc"] = snap("kc", kc);
      add(c);
    }
  }
  for (auto [mr, nv] : std::vector<std::pair<int64_t, int64_t>>{
           {8, 3}, {6, 4}, {14, 2}, {12, 2}, {4, 4}, {10, 2}, {4, 2}, {2, 4}, {1, 4}}) {
    for (int64_t kc : {512, 256, 1024}) {
      for (int64_t pack_a : {1, 0}) {
        Config c = base;
        c["mr"] = snap("mr", mr);
        c["nv"] = snap("nv", nv);
        c["kc"] = snap("kc", kc);
        c["pack_a"] = pack_a;
        c["b_in_place"] = 0;
        c["mc"] = workload.gemm().m;
        for (int64_t mc : space.FindKnob("mc")->values) {
          if (mc <= 96 && mc % c["mr"] == 0) {
            c["mc"] = mc;
          }
        }
        add(c);
      }
    }
  }
  if (base.at("b_in_place") == 0) {
    in_place_tiles();
  }
  return seeds;
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuDot, workload, target, config));
  if (KnobValue(config, "b_in_place") != 0) {
    return BuildDotRowsGemm(workload, KnobValue(config, "mr"), KnobValue(config, "cols"),
                            KnobValue(config, "kc"), target.threads > 1, func_name);
  }
  return BuildGemmDotNest(workload, GemmDotPlanOf(workload, target, config), func_name);
}

absl::StatusOr<PreparedWeights> Prepare(const Workload& workload, const Target& target,
                                        const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuDot, workload, target, config));
  if (KnobValue(config, "b_in_place") != 0) {
    return CopyOfWeights(workload, func_name);  // read as it is
  }
  return BuildGemmDotPreparation(workload, GemmDotPlanOf(workload, target, config), func_name);
}

}  // namespace

const KernelTemplate kGemmCpuDot = {
    .name = "gemm.cpu.dot",
    .version = 4,  // 2: the knob pack_b; NT panels packed by transposes. 3: i8 compensated by B.
                   // 4: the in-place form blocks K by kc
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .worker_features = &DotWorkerFeatures,
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = kCpuDotDtypes,
    .requant = true,
    .seeds = &Seeds,
    .prepare = &Prepare,
};

}  // namespace tune
