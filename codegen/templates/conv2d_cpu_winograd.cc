#include "codegen/templates/conv2d_cpu_winograd.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "codegen/templates/conv2d_cpu_loops.h"
#include "codegen/templates/conv2d_cpu_winograd_nest.h"
#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/winograd_transform.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

absl::Status CheckShape(const Workload& workload) {
  if (workload.op() != OpKind::kConv2d) {
    return absl::InvalidArgumentError(
        StrCat("conv2d.cpu.winograd builds conv2d kernels, not '", workload.ToString(), "'"));
  }
  const Conv2dShape& s = workload.conv2d();
  std::vector<std::string> wrong;
  if (s.r != 3 || s.s != 3) {
    wrong.push_back(StrCat("R=", s.r, ",S=", s.s));
  }
  if (s.stride != 1) {
    wrong.push_back(StrCat("stride=", s.stride));
  }
  if (s.dilation != 1) {
    wrong.push_back(StrCat("dilation=", s.dilation));
  }
  RETURN_IF_ERROR(RefuseShapeUnless("conv2d.cpu.winograd",
                                    "3x3 filters with stride 1 and dilation 1",
                                    "R=3,S=3,stride=1,dilation=1", workload, wrong));
  // In NCHW the vectors hold channels of one pixel, loaded in groups of 4, 8 or 16.
  if (!s.blocked() && (s.c % 4 != 0 || s.k % 4 != 0)) {
    return RefuseShapeUnless("conv2d.cpu.winograd", "plain layouts with channels in groups of 4",
                             "layout=NCHW with C and K multiples of 4", workload,
                             {StrCat("C=", s.c, ",K=", s.k)});
  }
  return absl::OkStatus();
}

// Whether the default comes before the direct and blocked templates' defaults (KernelTemplate::
// leads): with 16 input channels or more. Measured on Zen 5 (bench/RESULTS.md, 2026-11-28), the
// defaults against each other, 1 and 2 threads, NCHW and NCHW16c, 7x7 to 56x56: Winograd's ran
// 1.06-2.65x faster in NCHW from C=16 up (1.45-2.99x in NCHW16c), 0.42-0.82x at C=4 and
// 0.82-1.24x at C=8, where the transforms cost as much as the products they save.
bool Leads(const Workload& workload, const Target&) {
  return CheckShape(workload).ok() && workload.conv2d().c >= 16;
}

// The channels one vector group spans: the layout's block, or in NCHW the largest of 16, 8 and
// 4 that divides both C and K (the kernel then gathers each vector of channels of a pixel).
int64_t ChannelBlock(const Conv2dShape& s) {
  if (s.blocked()) {
    return s.block;
  }
  for (int64_t b : {16, 8}) {
    if (s.c % b == 0 && s.k % b == 0) {
      return b;
    }
  }
  return 4;
}

int64_t TilesFor(const Conv2dShape& s, int64_t m) {
  return s.n * CeilDiv(s.p(), m) * CeilDiv(s.q(), m);
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t kvecs = s.k / VectorsOfBlock(ChannelBlock(s), cpu.lanes).width;
  const int64_t registers = cpu.registers;
  ConfigSpace space;
  space.AddKnob("m", {2, 4}, "output tile m x m: Winograd F(m,3)");
  // Only register tiles that fit with one vector of filters (kv = 1): on 16 registers (AVX2) a
  // 16-tile register tile cannot, and a value no config can take only misleads the search.
  std::vector<int64_t> jts;
  for (int64_t jt : {2, 4, 6, 7, 8, 10, 12, 14, 16}) {
    if (jt + 1 + 1 <= registers) {
      jts.push_back(jt);
    }
  }
  space.AddKnob("jt", jts, "tiles in the register tile of the GEMMs");
  std::vector<int64_t> kvs;
  for (int64_t kv : {1, 2, 3, 4}) {
    if (kvecs % kv == 0) {
      kvs.push_back(kv);
    }
  }
  space.AddKnob("kv", kvs, "vectors of output channels in the register tile (dividing K / width)");
  space.AddKnob("tr", {1, 2, 3, 4, 6, 8},
                "order 0: register tiles per block of tiles (tb = jt * tr); order 1: 1");
  space.AddKnob("order", {0, 1, 2},
                "0: filters transformed once, blocks of tiles outer; 1: chunks of kv vectors of "
                "output channels outer, each transforming its filters, all tiles at once; 2: as "
                "1, the filters transformed per chunk of cc input channels just before use");
  space.AddConstraint(
      "order 1 and 2 need tr == 1 (they take all tiles at once)",
      [](const Config& c) { return KnobValue(c, "order") == 0 || KnobValue(c, "tr") == 1; });
  space.AddConstraint(
      fmt::format("jt*kv + kv + 1 <= {} (accumulators and filter vectors fit the registers)",
                  registers),
      [registers](const Config& c) {
        return KnobValue(c, "jt") * KnobValue(c, "kv") + KnobValue(c, "kv") + 1 <= registers;
      });
  space.AddConstraint("jt * (tr - 1) < tiles of the layer (no block of empty register tiles)",
                      [s](const Config& c) {
                        return KnobValue(c, "jt") * (KnobValue(c, "tr") - 1) <
                               TilesFor(s, KnobValue(c, "m"));
                      });
  // The GEMM stage and the transforms.
  space.AddKnob("cc", ClipToExtent({16, 32, 64, 128, 256}, s.c),
                "input channels per chunk of the GEMMs' reduction (partial sums kept in M; the "
                "chunk loop outermost)");
  space.AddKnob("gemm_order", {0, 1, 2, 3, 4, 5},
                "order of the GEMM loops over points xi, output-channel chunks kc and register "
                "tiles of tiles jr, outermost first: 0 xi,kc,jr 1 xi,jr,kc 2 kc,xi,jr 3 kc,jr,xi "
                "4 jr,xi,kc 5 jr,kc,xi");
  space.AddKnob("unroll_c", AtMost({1, 2, 4, 8}, s.c, 1),
                "unroll factor of the GEMMs' loop over input channels");
  space.AddKnob("it_order", {0, 1},
                "input transform: 0 tiles outer, channel vectors inner; 1 the reverse");
  space.AddKnob("ot_order", {0, 1},
                "output transform: 0 tiles outer, channel vectors inner; 1 the reverse");
  const int64_t block = ChannelBlock(s);
  space.AddConstraint(
      fmt::format("order 2 needs cc < C ({}; with one chunk it is order 1) and divisible by the "
                  "channel block ({})",
                  s.c, block),
      [block, s](const Config& c) {
        const int64_t cc = KnobValue(c, "cc");
        return KnobValue(c, "order") != 2 || (cc < s.c && cc % block == 0);
      });
  space.AddConstraint("unroll_c <= cc", [](const Config& c) {
    return KnobValue(c, "unroll_c") <= KnobValue(c, "cc");
  });
  space.AddConstraint(
      "gemm_order is the first order of its nesting of the loops of more than one iteration (xi: "
      "alpha^2; kc: order 0 K / (width * kv), orders 1 and 2 one; jr: order 0 tr, orders 1 and 2 "
      "the register tiles of all tiles)",
      [s, kvecs](const Config& c) {
        const bool blocks = KnobValue(c, "order") == 0;
        const int64_t m = KnobValue(c, "m"), jt = KnobValue(c, "jt");
        std::vector<int64_t> extents(3);
        extents[kGemmPoints] = (m + 2) * (m + 2);
        extents[kGemmChannelChunks] = blocks ? kvecs / KnobValue(c, "kv") : 1;
        extents[kGemmTileRows] = blocks ? KnobValue(c, "tr") : CeilDiv(TilesFor(s, m), jt);
        return IsFirstOrderOfItsNesting(WinogradGemmOrders(),
                                        static_cast<size_t>(KnobValue(c, "gemm_order")), extents);
      });
  const int64_t channel_vectors = s.c / VectorsOfBlock(block, cpu.lanes).width;
  space.AddConstraint(
      fmt::format("it_order == 0 when the input has one vector of channels ({})", channel_vectors),
      [channel_vectors](const Config& c) {
        return KnobValue(c, "it_order") == 0 || channel_vectors > 1;
      });
  space.AddConstraint(
      fmt::format("ot_order == 0 when the output has one vector of channels ({})", kvecs),
      [kvecs](const Config& c) { return KnobValue(c, "ot_order") == 0 || kvecs > 1; });
  return space;
}

// Order 0's register tiles per block: at most 48 tiles a block, split so that the threads'
// contiguous shares of blocks (the parallel loop splits statically) hold equal numbers of tiles;
// the larger block on ties (fewer passes over the transformed filters). On one thread that is
// simply the largest block.
int64_t BalancedTilesPerBlock(int64_t tiles, int64_t jt, const Target& target,
                              const ConfigSpace& space) {
  const int64_t threads = std::max(1, target.threads);
  std::vector<std::pair<int64_t, double>> balance;  // (tr, tiles / (threads * busiest share))
  for (int64_t tr : space.FindKnob("tr")->values) {
    const int64_t tb = tr * jt;
    if (tb <= 48 && jt * (tr - 1) < tiles) {
      const int64_t busiest = std::min(tiles, CeilDiv(CeilDiv(tiles, tb), threads) * tb);
      balance.emplace_back(tr, static_cast<double>(tiles) / static_cast<double>(threads * busiest));
    }
  }
  double most = 0;
  for (const auto& [tr, b] : balance) {
    most = std::max(most, b);
  }
  int64_t best_tr = 1;
  for (const auto& [tr, b] : balance) {
    if (b >= most - 0.02) {
      best_tr = std::max(best_tr, tr);
    }
  }
  return best_tr;
}

// The config of one shape class: F(m,3), the loop order, and the register tile (jt tiles x kv
// vectors, kv <= kv_wanted) that does the most useful FMAs per cycle: the tiles' share of the
// rows computed (a partial register tile computes whole rows) times the FMAs per load (jt * kv
// FMAs take jt broadcasts and kv loads; two of each issue per cycle), the larger tile on ties.
// Order 0's blocks follow BalancedTilesPerBlock.
Config ClassConfig(const Workload& workload, const Target& target, int64_t m, int64_t order,
                   int64_t kv_wanted) {
  const Conv2dShape& s = workload.conv2d();
  const ConfigSpace space = Space(workload, target);
  const int64_t registers = CpuVectorInfoFor(target).registers;
  const int64_t tiles = TilesFor(s, m);
  Config config;
  config["m"] = m;
  config["order"] = order;
  config["cc"] = s.c;
  config["gemm_order"] = 0;
  config["unroll_c"] = 1;
  if (order == 2) {
    // Chunks of 32 input channels (or the largest fewer than C), the channel loop unrolled by 4.
    const std::vector<int64_t>& ccs = space.FindKnob("cc")->values;
    auto it =
        std::find_if(ccs.rbegin(), ccs.rend(), [&](int64_t cc) { return cc <= 32 && cc < s.c; });
    config["cc"] = it != ccs.rend() ? *it : ccs.front();
    config["unroll_c"] = std::min<int64_t>(4, config["cc"]);
  }
  config["it_order"] = 0;
  config["ot_order"] = 0;
  double best = -1;
  for (int64_t kv : space.FindKnob("kv")->values) {
    for (int64_t jt : space.FindKnob("jt")->values) {
      if (kv > std::max<int64_t>(kv_wanted, space.FindKnob("kv")->values.front()) ||
          jt * kv + kv + 1 > registers) {
        continue;
      }
      const double useful =
          static_cast<double>(tiles) / static_cast<double>(CeilDiv(tiles, jt) * jt);
      const double issue =
          std::min(1.0, static_cast<double>(jt * kv) / static_cast<double>(jt + kv));
      const double score = useful * issue + 1e-4 * static_cast<double>(jt * kv);
      if (score > best) {
        best = score;
        config["kv"] = kv;
        config["jt"] = jt;
      }
    }
  }
  config["tr"] = order == 0 ? BalancedTilesPerBlock(tiles, config["jt"], target, space) : 1;
  return config;
}

// True when the filters transformed for F(m,3) ((m + 2)^2 x C x K floats) fit in a core's L2
// cache (2 MiB), where order 0 keeps them between its GEMMs.
bool TransformedFiltersFitL2(const Conv2dShape& s, int64_t m) {
  return (m + 2) * (m + 2) * s.c * s.k * 4 <= (int64_t{2} << 20);
}

// Measured on AVX-512 (bench/RESULTS.md): F(4,3) from 14x14 outputs up, F(2,3) below (at 7x7
// F(4,3) leaves 4 tiles, too few rows for the GEMMs' register tiles); the filters transformed
// once (order 0) while they fit in a core's L2 cache (2 MiB), else per chunk of output and
// input channels, pipelined with the GEMMs (order 2).
Config DefaultConfig(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const int64_t m = std::min(s.p(), s.q()) >= 14 ? 4 : 2;
  // Transformed filters beyond L2: chunks of output channels, each transforming its filters while
  // the GEMMs run (order 2); with prepared weights there is no transform to hide, and order 1
  // with the whole reduction per chunk was the best of a 32-trial search at 7x7/512 (384 GFLOPS
  // against 324 for the order-2 default, bench/RESULTS.md, 2026-11-27).
  const int64_t big_u_order = workload.prepared_weights() ? 1 : 2;
  Config config =
      ClassConfig(workload, target, m, TransformedFiltersFitL2(s, m) ? 0 : big_u_order, 2);
  if (!Space(workload, target).IsValid(config)) {
    config = ClassConfig(workload, target, m, 1, 2);  // too few input channels to chunk
  }
  TUNE_CHECK(Space(workload, target).IsValid(config)) << ConfigToString(config);
  return config;
}

// Both tile sizes in every order (order 2 where the input channels make more than one chunk,
// order 0 where its transformed filters fit in L2), with register tiles of up to 2 and of 1
// vector, less the default's own class; the classes nearest the default first (fewest of
// register tile, tile size and order changed; of one change, the register tile first, then the
// tile size). The default was chosen by measurements on other machines, and where a machine
// differs its nearest neighbours are the likeliest winners: on Zen 4 (bench/RESULTS.md,
// 2026-11-29) the default's class with one vector of output channels came within 1.02-1.12x of
// the best on three of ResNet-50's four 3x3 stride-1 layers, where the classes first in the
// order of orders, tile sizes and tiles ran 1.44-2.98x. Order 0 beyond L2 is the default's own
// exclusion: there its best of 325-441 configs ran 1.21x (14x14/256) and 2.43x (7x7/512) the
// layer's best (bench/RESULTS.md, 2026-11-29, fifth session).
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const Config def = DefaultConfig(workload, target);
  const ConfigSpace space = Space(workload, target);
  // (what differs from the default: 1 the register tile, 2 the tile size, 4 the order; class)
  std::vector<std::pair<unsigned, Config>> ranked;
  for (int64_t order : {0, 1, 2}) {
    for (int64_t m : {2, 4}) {
      if (order == 0 && !TransformedFiltersFitL2(workload.conv2d(), m)) {
        continue;
      }
      for (int64_t kv : {2, 1}) {
        Config seed = ClassConfig(workload, target, m, order, kv);
        const bool seen = std::any_of(ranked.begin(), ranked.end(),
                                      [&seed](const auto& r) { return r.second == seed; });
        if ((order == 2 && !space.IsValid(seed)) || seed == def || seen) {
          continue;
        }
        const unsigned differs = (seed.at("kv") != def.at("kv") ? 1u : 0u) |
                                 (m != def.at("m") ? 2u : 0u) |
                                 (order != def.at("order") ? 4u : 0u);
        ranked.emplace_back(differs, std::move(seed));
      }
    }
  }
  // Fewest changes first; among as many, the register tile before the tile size before the order.
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return std::pair(std::popcount(a.first), a.first) < std::pair(std::popcount(b.first), b.first);
  });
  std::vector<Config> seeds;
  for (auto& [rank, seed] : ranked) {
    seeds.push_back(std::move(seed));
  }
  return seeds;
}

absl::StatusOr<WinogradPlan> PlanOf(const Workload& workload, const Target& target,
                                    const Config& config) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuWinograd, workload, target, config));
  WinogradPlan p;
  p.s = workload.conv2d();
  p.p = p.s.p();
  p.q = p.s.q();
  p.b = ChannelBlock(p.s);
  p.plain = !p.s.blocked();
  p.cb = p.s.c / p.b;
  p.kbs = p.s.k / p.b;
  const BlockVectors v = VectorsOfBlock(p.b, CpuVectorInfoFor(target).lanes);
  p.vw = v.width;
  p.vpb = v.per_block;
  p.m = KnobValue(config, "m");
  p.alpha = p.m + 2;
  p.th = CeilDiv(p.p, p.m);
  p.tw = CeilDiv(p.q, p.m);
  p.tiles = p.s.n * p.th * p.tw;
  p.jt = KnobValue(config, "jt");
  p.kv = KnobValue(config, "kv");
  p.tr = KnobValue(config, "tr");
  p.kvecs = p.s.k / p.vw;
  p.order = static_cast<int>(KnobValue(config, "order"));
  p.tb = p.order == 0 ? p.jt * p.tr : CeilDiv(p.tiles, p.jt) * p.jt;
  p.cc = KnobValue(config, "cc");
  p.gemm_order = static_cast<int>(KnobValue(config, "gemm_order"));
  p.unroll_c = KnobValue(config, "unroll_c");
  p.it_order = static_cast<int>(KnobValue(config, "it_order"));
  p.ot_order = static_cast<int>(KnobValue(config, "ot_order"));
  p.parallel = target.threads > 1;
  p.threads = std::max(1, target.threads);
  p.epilogue = workload.epilogue();
  p.prepared = workload.prepared_weights();
  return p;
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  ASSIGN_OR_RETURN(WinogradPlan plan, PlanOf(workload, target, config));
  return BuildWinogradNest(plan, func_name);
}

// Prepared weights are the transformed filters, in the order the GEMMs read them.
absl::StatusOr<PreparedWeights> Prepare(const Workload& workload, const Target& target,
                                        const Config& config, std::string_view func_name) {
  ASSIGN_OR_RETURN(WinogradPlan plan, PlanOf(workload, target, config));
  return BuildWinogradPreparation(plan, func_name);
}

// F(2,3)'s error is within a few percent of the standard bound; F(4,3)'s is not
// (kWinogradF43Tolerance says why).
double Tolerance(const Workload&, const Config& config) {
  return KnobValue(config, "m") == 4 ? kWinogradF43Tolerance : 1.0;
}

}  // namespace

const KernelTemplate kConv2dCpuWinograd = {
    .name = "conv2d.cpu.winograd",
    .version = 4,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .leads = &Leads,
    .conv_layouts = ConvLayouts::kBoth,
    .seeds = &Seeds,
    .check_shape = &CheckShape,
    .tolerance = &Tolerance,
    .prepare = &Prepare,
};

}  // namespace tune
