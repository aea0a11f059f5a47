#include "codegen/templates/conv2d_cpu_direct.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/templates/conv2d_cpu_direct_nest.h"
#include "codegen/templates/conv2d_cpu_loops.h"
#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

// The default's unroll_rs: the filter loops unrolled up to 5x5.
int64_t DefaultUnrollRs(const Conv2dShape& s) { return s.r * s.s <= 25 ? 1 : 0; }

ConfigSpace Space(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t lanes = cpu.lanes;
  const int64_t registers = cpu.registers;
  const int64_t p = s.p(), q = s.q();
  ConfigSpace space;
  space.AddKnob("kv", AtMost({1, 2, 3, 4}, CeilDiv(s.k, lanes), 1),
                "output channels of the register tile, in vectors");
  space.AddKnob("qt", AtMost({1, 2, 3, 4, 6, 8, 10, 12, 14}, q, 1),
                "output positions along the width in the register tile");
  space.AddKnob("unroll_rs", {0, 1, 2}, "unroll the filter loops: 0 neither, 1 r and s, 2 s only");
  space.AddKnob("loop_order", {0, 1},
                "parallel loop order: 0 channel-block group outer, row block inner; 1 the reverse");
  space.AddKnob("pt", AtMost({1, 2, 3, 4, 6, 8}, p, 1),
                "output rows in the register tile (the tile is pt x qt positions)");
  space.AddKnob("kt", AtMost({1, 2, 3, 4, 6, 8}, CeilDiv(s.k, lanes), 1),
                "channel blocks of one parallel iteration (cache tile of output channels)");
  space.AddKnob("tile_order", {0, 1},
                "in a parallel iteration: 0 channel blocks outer, width tiles inner; 1 the "
                "reverse (the input tile reused from L1 by the kt blocks)");
  // Chunks of at least 16 multiply-adds per accumulator between the reloads of the sums.
  std::vector<int64_t> ccs;
  for (int64_t cc : ClipToExtent({1, 2, 4, 8, 16, 32, 64, 128, 256}, s.c)) {
    if (cc * s.r * s.s >= 16 || cc == s.c) {
      ccs.push_back(cc);
    }
  }
  space.AddKnob("cc", ccs,
                "input channels per chunk of the reduction (partial sums kept in the output; "
                "cc*R*S >= 16 or all)");
  space.AddKnob("chunk_outer", {0, 1},
                "the loop over reduction chunks: 0 inside each parallel iteration, 1 around the "
                "parallel loop");
  space.AddKnob("unroll_c", AtMost({1, 2, 4, 8}, s.c, 1),
                "unroll factor of the loop over input channels");
  const int64_t k = s.k, c_all = s.c, r = s.r, t = s.s;
  // Channel blocks of a config (K / (kv * lanes) rounded up) and its groups of kt of them.
  auto blocks = [k, lanes](const Config& c) { return CeilDiv(k, KnobValue(c, "kv") * lanes); };
  space.AddConstraint(
      fmt::format("pt*qt*kv + kv + 1 <= {} (accumulators fit the vector registers)", registers),
      [registers](const Config& c) {
        int64_t kv = KnobValue(c, "kv");
        return KnobValue(c, "pt") * KnobValue(c, "qt") * kv + kv + 1 <= registers;
      });
  space.AddConstraint(fmt::format("kt <= channel blocks (ceil({} / (kv*{})))", k, lanes),
                      [blocks](const Config& c) { return KnobValue(c, "kt") <= blocks(c); });
  space.AddConstraint(
      fmt::format("loop_order == 0 unless ceil(channel blocks / kt) > 1 and ceil({} / pt) > 1 "
                  "(else both orders are one loop)",
                  p),
      [blocks, p](const Config& c) {
        return KnobValue(c, "loop_order") == 0 ||
               (CeilDiv(blocks(c), KnobValue(c, "kt")) > 1 && CeilDiv(p, KnobValue(c, "pt")) > 1);
      });
  space.AddConstraint(
      fmt::format("tile_order == 0 unless kt > 1 and ceil({} / qt) > 1 (else both orders are one "
                  "loop)",
                  q),
      [q](const Config& c) {
        return KnobValue(c, "tile_order") == 0 ||
               (KnobValue(c, "kt") > 1 && CeilDiv(q, KnobValue(c, "qt")) > 1);
      });
  const int64_t preferred_rs = DefaultUnrollRs(s);
  space.AddConstraint(
      fmt::format("unroll_rs is {} or the smallest value among those that unroll the same loops "
                  "of more than one iteration (R={}, S={})",
                  preferred_rs, r, t),
      [r, t, preferred_rs](const Config& c) {
        return UnrollRsIsKept(KnobValue(c, "unroll_rs"), preferred_rs, r > 1, t > 1);
      });
  if (target.threads <= 1) {
    space.AddConstraint(
        "with one thread, kt > 1 and tile_order == 0 need loop_order == 0 and ceil(channel "
        "blocks / kt) > 1 (else the blocks run in the order of kt == 1, loop_order == 1)",
        [blocks](const Config& c) {
          const int64_t kt = KnobValue(c, "kt");
          return kt == 1 || KnobValue(c, "tile_order") == 1 ||
                 (KnobValue(c, "loop_order") == 0 && CeilDiv(blocks(c), kt) > 1);
        });
  }
  space.AddConstraint(
      fmt::format("chunk_outer == 0 when cc == {} (one chunk) or the parallel loop has one "
                  "iteration",
                  c_all),
      [c_all, blocks, p](const Config& c) {
        return KnobValue(c, "chunk_outer") == 0 ||
               (KnobValue(c, "cc") < c_all &&
                CeilDiv(blocks(c), KnobValue(c, "kt")) * CeilDiv(p, KnobValue(c, "pt")) > 1);
      });
  space.AddConstraint("unroll_c <= cc", [](const Config& c) {
    return KnobValue(c, "unroll_c") <= KnobValue(c, "cc");
  });
  space.AddConstraint(
      fmt::format("unroll_c * unrolled taps * pt*qt*kv <= {} (multiply-adds of the unrolled "
                  "reduction body)",
                  kMaxUnrolledFmas),
      [r, t](const Config& c) {
        return KnobValue(c, "unroll_c") * UnrolledTaps(KnobValue(c, "unroll_rs"), r, t) *
                   KnobValue(c, "pt") * KnobValue(c, "qt") * KnobValue(c, "kv") <=
               kMaxUnrolledFmas;
      });
  return space;
}

// Measured on AVX-512 (Emerald Rapids, 64->64 channels 3x3 at 56x56): 2 vectors of output
// channels x 8..10 output positions run at the FMA peak; wider tiles spill registers. One row,
// one channel block per parallel iteration, the reduction whole and not unrolled.
Config DefaultConfig(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  ConfigSpace space = Space(workload, target);
  Config config;
  config["kv"] = LargestAtMost(space.FindKnob("kv")->values, 2);
  config["unroll_rs"] = DefaultUnrollRs(s);
  config["loop_order"] = 0;
  config["pt"] = 1;
  config["kt"] = 1;
  config["tile_order"] = 0;
  config["cc"] = s.c;
  config["chunk_outer"] = 0;
  config["unroll_c"] = 1;
  // The widest tile up to 10 positions whose accumulators fit beside the weight vectors. On
  // short output rows the tile is shaped to the row instead (Zen 5, the defaults against each
  // other, bench/RESULTS.md, 2026-11-28): rows of 4 to 7 positions in tiles of 2 rows x 4, 1.01-
  // 1.29x faster than one row of 7 on five layers; a 1x1 filter's row of 14 whole, 1.16-1.19x
  // faster than 10 plus 4 (ResNet-50's stride-2 projection into 14x14). 3x3 filters on rows of 14
  // lost 14-24% with a whole row and keep the usual tile.
  const int64_t kv = config["kv"];
  const int64_t qt_limit = (cpu.registers - kv - 1) / kv;
  const int64_t q = s.q();
  if (q == 14 && s.r == 1 && s.s == 1 && qt_limit >= 14) {
    config["qt"] = 14;
  } else if (q >= 4 && q <= 7 && s.p() >= 2 && qt_limit >= 8) {
    config["pt"] = 2;
    config["qt"] = 4;
  } else {
    config["qt"] = LargestAtMost(space.FindKnob("qt")->values, std::min<int64_t>(qt_limit, 10));
  }
  TUNE_CHECK(space.IsValid(config)) << ConfigToString(config);
  return config;
}

// Variants of the default, for the layers where it falls far behind. On Zen 4 (bench/RESULTS.md,
// 2026-11-29), as the layer's second trial:
//   - one vector of output channels in a tile of two rows (two rows of up to 8 positions; on
//     rows of 4 to 7 positions the default's 2 x 4, in groups of two channel blocks that reuse
//     the input tile, rows outer): 1.07-1.11x the best found on the stem and the 3x3 stride-2
//     layers into 28x28 and 7x7, whose defaults ran 1.19-1.57x;
//   - the reduction in chunks of 128 input channels around the parallel loop, groups of four
//     channel blocks, rows outer: 1.08x on the 1x1 stride-2 projection into 7x7 (default 1.62x);
//   - the default with rows outer (loop_order 1), and with one vector of output channels.
// Each is kept only where valid (the register file, the constraints of the space).
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const ConfigSpace space = Space(workload, target);
  const Config def = DefaultConfig(workload, target);
  const int64_t registers = CpuVectorInfoFor(target).registers;
  std::vector<Config> seeds;
  auto add = [&](Config config) {
    if (space.IsValid(config) && config != def &&
        std::find(seeds.begin(), seeds.end(), config) == seeds.end()) {
      seeds.push_back(std::move(config));
    }
  };
  Config narrow = def;
  narrow["kv"] = 1;
  if (s.q() >= 8 && s.p() >= 2) {
    narrow["pt"] = 2;
    // Two rows of the widest tile up to 8 whose accumulators fit beside the weight vector.
    narrow["qt"] =
        LargestAtMost(space.FindKnob("qt")->values, std::min<int64_t>(8, (registers - 2) / 2));
  } else {
    narrow["kt"] = 2;
    narrow["tile_order"] = 1;
    narrow["loop_order"] = 1;
  }
  add(narrow);
  if (s.c > 128) {
    Config chunked = def;
    chunked["cc"] = 128;
    chunked["chunk_outer"] = 1;
    chunked["kt"] = 4;
    chunked["tile_order"] = 1;
    chunked["loop_order"] = 1;
    chunked["unroll_c"] = 2;
    add(chunked);
  }
  Config rows_outer = def;
  rows_outer["loop_order"] = 1;
  add(rows_outer);
  Config one_vector = def;
  one_vector["kv"] = 1;
  add(one_vector);
  return seeds;
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuDirect, workload, target, config));
  DirectConvPlan p;
  p.s = workload.conv2d();
  p.p = p.s.p();
  p.q = p.s.q();
  if (p.p < 1 || p.q < 1) {
    return absl::InvalidArgumentError(
        StrCat("workload '", workload.ToString(), "' has an empty output"));
  }
  p.lanes = CpuVectorInfoFor(target).lanes;
  p.kv = KnobValue(config, "kv");
  p.kblk = p.kv * p.lanes;
  p.kb = CeilDiv(p.s.k, p.kblk);
  p.qt = KnobValue(config, "qt");
  p.pt = KnobValue(config, "pt");
  p.kt = KnobValue(config, "kt");
  p.tile_order = static_cast<int>(KnobValue(config, "tile_order"));
  p.cc = KnobValue(config, "cc");
  p.chunk_outer = KnobValue(config, "chunk_outer") != 0;
  p.unroll_c = KnobValue(config, "unroll_c");
  p.unroll_rs = static_cast<int>(KnobValue(config, "unroll_rs"));
  p.loop_order = static_cast<int>(KnobValue(config, "loop_order"));
  p.parallel = target.threads > 1;
  p.epilogue = workload.epilogue();
  p.hp = p.s.h + 2 * p.s.pad;
  p.wp = p.s.w + 2 * p.s.pad;
  return BuildDirectConvNest(p, func_name);
}

}  // namespace

const KernelTemplate kConv2dCpuDirect = {
    .name = "conv2d.cpu.direct",
    .version = 2,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .seeds = &Seeds,
};

}  // namespace tune
