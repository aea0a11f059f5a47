#include "codegen/templates/gemm_cpu_blocked.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <string>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/gemm_cpu_blocked_nest.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"

namespace tune {
namespace {

ConfigSpace Space(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t lanes = cpu.lanes;
  const int64_t registers = cpu.registers;
  const int64_t m = g.m, n = g.n;
  ConfigSpace space;
  space.AddKnob("mr", AtMost({1, 2, 4, 6, 8, 12, 14}, g.m, 1),
                "rows of the register tile (one broadcast of A each)");
  space.AddKnob("nr",
                AtMost({lanes, 2 * lanes, 3 * lanes, 4 * lanes}, CeilDiv(n, lanes) * lanes, lanes),
                "columns of the register tile (a multiple of the vector width)");
  // With few rows B is read about once: blocks of 8 or 16 rows of B stream it with few rows in
  // flight at a time (bench/RESULTS.md, matrix-vector on Zen 5).
  std::vector<int64_t> kcs = {32, 64, 128, 256, 384, 512, 768};
  if (g.m <= 16) {
    kcs.insert(kcs.begin(), {8, 16});
  }
  space.AddKnob("kc", ClipToExtent(kcs, g.k), "reduction block (K) of the packed panels");
  space.AddKnob(
      "mc",
      ClipToExtent({16, 24, 32, 48, 56, 64, 96, 112, 128, 168, 192, 256, 288, 336, 384, 576}, g.m),
      "row block (M) of A kept in L2");
  const int64_t nc_unit = 12 * lanes;  // a multiple of every nr candidate
  space.AddKnob(
      "nc",
      ClipToExtent({nc_unit, 2 * nc_unit, 4 * nc_unit, 8 * nc_unit, 16 * nc_unit, 32 * nc_unit},
                   g.n),
      "column block (N) of B kept in L3");
  space.AddKnob("unroll_k", AtMost({1, 2, 4, 8}, g.k, 1), "unroll factor of the reduction loop");
  space.AddKnob("pack_a", {0, 1}, "copy A blocks into contiguous mr-row panels");
  space.AddKnob("pack_b", {0, 1}, "copy B blocks into contiguous nr-column panels");
  space.AddKnob("order", {0, 1, 2, 3, 4, 5},
                "order of the cache loops: 0 n,k,m 1 n,m,k 2 k,n,m 3 k,m,n 4 m,n,k 5 m,k,n");
  space.AddConstraint(
      fmt::format("mr*nr/{0} + nr/{0} + 1 <= {1} (accumulators fit the vector registers)", lanes,
                  registers),
      [lanes, registers](const Config& c) {
        int64_t vectors = KnobValue(c, "nr") / lanes;
        return KnobValue(c, "mr") * vectors + vectors + 1 <= registers;
      });
  space.AddConstraint(fmt::format("mc % mr == 0 || mc == {}", m), [m](const Config& c) {
    return KnobValue(c, "mc") % KnobValue(c, "mr") == 0 || KnobValue(c, "mc") == m;
  });
  space.AddConstraint(fmt::format("nc % nr == 0 || nc == {}", n), [n](const Config& c) {
    return KnobValue(c, "nc") % KnobValue(c, "nr") == 0 || KnobValue(c, "nc") == n;
  });
  return space;
}

// Sapphire and Emerald Rapids (one device key, `sapphirerapids`): the cores whose FP32 GEMMs
// run fastest in register tiles of 6 rows x 4 vectors over kc 256 (below).
bool WideTileCpu(const Target& target) {
  const std::string cpu = target.Resolved().cpu;
  return cpu == "sapphirerapids" || cpu == "emeraldrapids";
}

// Measured on AVX-512 at 512^3: an 8 x 2-vector register tile with kc 512 and mc 96 is at or
// near the best of the space on Zen 4 and Zen 5; on 16-register targets the classic 6 x 2-vector
// tile fits. On an Emerald Rapids core 6 x 4 vectors over kc 256 was the best of 16 configs on
// all four rows measured (1024^3, 128 x 768 x 768, 197 x 768 x 768, 128 x 3072 x 768: 1.02-1.14x
// the 8 x 2 tile over kc 512), and 6 x 4 or 8 x 3 the best of 80 random configs in an earlier
// run (bench/RESULTS.md, 2026-12-07). Order 0 packs B once per (nc, kc) block and, with several
// threads, splits the row blocks among them.
Config DefaultConfig(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t lanes = cpu.lanes;
  const ConfigSpace space = Space(workload, target);
  auto values = [&](std::string_view knob) { return space.FindKnob(knob)->values; };
  const bool wide = WideTileCpu(target);
  Config config;
  config["pack_a"] = 1;
  config["pack_b"] = 1;
  config["order"] = 0;
  config["kc"] = LargestAtMost(values("kc"), wide ? 256 : 512);
  config["nc"] = LargestAtMost(values("nc"), 4096);
  config["unroll_k"] = LargestAtMost(values("unroll_k"), 4);
  config["nr"] = LargestAtMost(values("nr"), (wide ? 4 : 2) * lanes);
  const int64_t vectors = config["nr"] / lanes;
  const int64_t mr_limit = std::min<int64_t>(wide ? 6 : 8, (cpu.registers - vectors - 1) / vectors);
  config["mr"] = LargestAtMost(values("mr"), mr_limit);
  // About 96 rows per block (a multiple of mr, or all of M). With several threads the row
  // blocks are what they share: take the candidate nearest 96 that keeps them at least 97%
  // busy, else the best balanced one.
  std::vector<int64_t> mcs;
  for (int64_t mc : values("mc")) {
    config["mc"] = mc;
    if (space.ConstraintsHold(config)) {
      mcs.push_back(mc);
    }
  }
  // Nearest 96 first; of two as near, the larger.
  std::stable_sort(mcs.begin(), mcs.end(), [](int64_t a, int64_t b) {
    return std::abs(a - 96) != std::abs(b - 96) ? std::abs(a - 96) < std::abs(b - 96) : a > b;
  });
  // The share of the threads' time spent working when the parallel loop hands each thread a
  // contiguous run of ceil(blocks / threads) row blocks (the last block may be short).
  auto busy = [&](int64_t mc) {
    const int64_t blocks = CeilDiv(g.m, mc);
    const int64_t per_thread = CeilDiv(blocks, target.threads);
    const int64_t most_rows = std::min(g.m, per_thread * mc);
    return static_cast<double>(g.m) / static_cast<double>(most_rows * target.threads);
  };
  config["mc"] = mcs.front();
  if (target.threads > 1) {
    auto balanced =
        std::find_if(mcs.begin(), mcs.end(), [&](int64_t mc) { return busy(mc) >= 0.97; });
    config["mc"] = balanced != mcs.end()
                       ? *balanced
                       : *std::max_element(mcs.begin(), mcs.end(),
                                           [&](int64_t a, int64_t b) { return busy(a) < busy(b); });
    if (balanced == mcs.end()) {
      // The rows do not split evenly (M = 197 on 2 threads: 88% at best): split the columns
      // instead, with order 3 (k, m, n), whose parallel loop is the column blocks, and the
      // largest nc that keeps the threads 97% busy.
      auto col_busy = [&](int64_t nc) {
        const int64_t per_thread = CeilDiv(CeilDiv(g.n, nc), target.threads);
        return static_cast<double>(g.n) /
               static_cast<double>(std::min(g.n, per_thread * nc) * target.threads);
      };
      // All of M in one row block (A packed once per k block) and kc 256: the best of a search
      // at M=197, N=3072, K=768 on 2 threads (Emerald Rapids, bench/RESULTS.md).
      Config by_cols = config;
      by_cols["order"] = 3;
      by_cols["mc"] = LargestAtMost(values("mc"), std::min<int64_t>(g.m, 384));
      by_cols["kc"] = LargestAtMost(values("kc"), 256);
      if (by_cols["mc"] != g.m && by_cols["mc"] % by_cols["mr"] != 0) {
        by_cols["mc"] = mcs.front();
      }
      std::vector<int64_t> ncs = values("nc");
      for (auto it = ncs.rbegin(); it != ncs.rend(); ++it) {
        by_cols["nc"] = *it;
        if (col_busy(*it) >= 0.97 && col_busy(*it) > busy(config["mc"]) &&
            space.ConstraintsHold(by_cols)) {
          config = by_cols;
          break;
        }
      }
    }
  }
  if (g.m <= 4) {
    // Matrix-vector (and a few rows): B is read once, so it is not packed; the widest tile of
    // all of M's rows, short k blocks and a long unroll stream it. Measured best of 64 random
    // configs at M=1, N=K=4096 on Emerald Rapids (4x the blocked default). Blocks of 8 rows of
    // B rather than 32 keep 8 rows in flight instead of 32: 47 GB/s of B instead of 30 on Zen
    // 5, where one core reads 50-52 GB/s sequentially.
    Config mv = config;
    mv["mr"] = LargestAtMost(values("mr"), g.m);
    mv["nr"] = LargestAtMost(values("nr"),
                             std::min<int64_t>(4, (cpu.registers - 1) / (mv["mr"] + 1)) * lanes);
    mv["mc"] = LargestAtMost(values("mc"), g.m);
    // Packed (prepared) B is one stream whatever kc is: longer blocks reload C less often.
    mv["kc"] = LargestAtMost(values("kc"), workload.prepared_weights() ? 256 : 8);
    mv["nc"] = LargestAtMost(values("nc"), g.n);
    mv["unroll_k"] = LargestAtMost(values("unroll_k"), 8);
    // Prepared weights come packed: reading the panels is one sequential stream.
    mv["pack_b"] = workload.prepared_weights() ? 1 : 0;
    mv["order"] = 4;
    if (space.IsValid(mv)) {
      config = mv;
    }
  }
  TUNE_CHECK(space.IsValid(config)) << ConfigToString(config);
  return config;
}

// Where a search starts after the default, by shape class: register tiles that fill the vector
// registers in different shapes (8 x 2, 6 x 4, 12 x 2, 4 x 3, 14 x 2 vectors on 32 registers,
// on Sapphire and Emerald Rapids 6 x 4 and 8 x 3 first; 6 x 2, 4 x 3, 3 x 4 on 16), each with
// the default's blocking, then over the other kc (256 or 512). A GEMM of few
// rows reads each element of B about once (rows / mr times): packing B costs as much as it
// saves, so those seeds also leave B in place, with each order of the cache loops and a short
// kc (matrix-vector: streams B at memory speed).
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const ConfigSpace space = Space(workload, target);
  const Config def = DefaultConfig(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  std::vector<Config> seeds;
  auto add = [&](const Config& c) {
    if (c != def && space.IsValid(c) && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(c);
    }
  };
  auto with_tile = [&](int64_t mr, int64_t vectors) {
    return BlockedGemmWithTile(g, target, space, def, mr, vectors);
  };
  using Tiles = std::vector<std::pair<int64_t, int64_t>>;
  const Tiles tiles = cpu.registers < 32 ? Tiles{{6, 2}, {4, 3}, {3, 4}}
                      : WideTileCpu(target)
                          ? Tiles{{6, 4}, {8, 3}, {8, 2}, {12, 2}, {4, 3}, {14, 2}}
                          : Tiles{{8, 2}, {6, 4}, {12, 2}, {4, 3}, {14, 2}};
  // Prepared weights are packed once, outside the call: B in place only costs.
  const int64_t few_rows_pack_b = workload.prepared_weights() ? 1 : 0;
  // Best first: a search with a small budget sees the likeliest seeds.
  if (g.m <= 4) {
    // Matrix-vector: the whole of M in one tile, the widest columns, longer unrolls; B packed
    // once (prepared weights) is one stream whatever kc is, so there kc varies too.
    const std::vector<int64_t> kcs =
        workload.prepared_weights() ? std::vector<int64_t>{256, 64, 8} : std::vector<int64_t>{8};
    for (int64_t kc : kcs) {
      for (int64_t vectors : {4, 3, 2}) {
        for (int64_t unroll : {8, 4}) {
          for (int64_t pack_a : {1, 0}) {
            Config v = with_tile(g.m, vectors);
            v["pack_b"] = few_rows_pack_b;
            v["pack_a"] = pack_a;
            v["order"] = 4;
            v["kc"] = snap("kc", kc);
            v["nc"] = snap("nc", g.n);
            v["unroll_k"] = snap("unroll_k", unroll);
            add(v);
          }
        }
      }
    }
  }
  for (auto [mr, vectors] : tiles) {
    add(with_tile(mr, vectors));
  }
  if (g.m <= 32) {
    for (size_t t = 0; t < 2; ++t) {
      for (int64_t order : {0, 2, 4}) {
        for (int64_t kc : {128, 32, 512}) {
          Config v = with_tile(tiles[t].first, tiles[t].second);
          v["pack_b"] = few_rows_pack_b;
          v["order"] = order;
          v["kc"] = snap("kc", kc);
          add(v);
        }
      }
    }
  }
  // The tiles again over the other reduction block: 256 where the default takes 512, else 512.
  const int64_t other_kc = snap("kc", def.at("kc") == snap("kc", 512) ? 256 : 512);
  for (auto [mr, vectors] : tiles) {
    Config c = with_tile(mr, vectors);
    c["kc"] = other_kc;
    add(c);
  }
  return seeds;
}

BlockedGemmPlan PlanOf(const Workload& workload, const Target& target, const Config& config) {
  BlockedGemmPlan p = BlockedGemmPlanFor(workload.gemm(), workload.epilogue(), {}, target, config);
  p.prepacked_b = workload.prepared_weights() && p.pack_b;
  return p;
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuBlocked, workload, target, config));
  return BuildBlockedGemmNest(PlanOf(workload, target, config), func_name);
}

// Prepared weights: B packed into the panels of every block, once, when the config packs B
// (the kernel then packs none); a copy of B when it reads B as it is.
absl::StatusOr<PreparedWeights> Prepare(const Workload& workload, const Target& target,
                                        const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuBlocked, workload, target, config));
  const BlockedGemmPlan plan = PlanOf(workload, target, config);
  if (plan.prepacked_b) {
    return BuildBlockedGemmPreparation(plan, func_name);
  }
  return CopyOfWeights(workload, func_name);
}

}  // namespace

const KernelTemplate kGemmCpuBlocked = {
    .name = "gemm.cpu.blocked",
    .version = 1,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .seeds = &Seeds,
    .prepare = &Prepare,
};

Config BlockedGemmWithTile(const GemmShape& shape, const Target& target, const ConfigSpace& space,
                           const Config& base, int64_t mr, int64_t vectors) {
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  Config c = base;
  c["mr"] = snap("mr", std::min(mr, shape.m));
  c["nr"] = snap("nr", vectors * CpuVectorInfoFor(target).lanes);
  std::optional<int64_t> nearest;
  for (int64_t mc : space.FindKnob("mc")->values) {
    if ((mc % c["mr"] == 0 || mc == shape.m) &&
        (!nearest || std::abs(mc - base.at("mc")) < std::abs(*nearest - base.at("mc")))) {
      nearest = mc;
    }
  }
  c["mc"] = nearest.value_or(base.at("mc"));
  return c;
}

ir::LoweredFunc BuildBlockedGemm(const GemmShape& shape, Epilogue epilogue,
                                 const GemmKernelForm& form, const Target& target,
                                 const Config& config, std::string_view func_name) {
  return BuildBlockedGemmNest(BlockedGemmPlanFor(shape, epilogue, form, target, config), func_name);
}

}  // namespace tune
