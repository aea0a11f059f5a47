#include "codegen/templates/conv2d_cpu_blocked.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/templates/conv2d_cpu_blocked_nest.h"
#include "codegen/templates/conv2d_cpu_loops.h"
#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

// The default's unroll_rs: the filter loops unrolled up to 3x3.
int64_t DefaultUnrollRs(const Conv2dShape& s) { return s.r * s.s <= 9 ? 1 : 0; }

ConfigSpace Space(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t block = std::max<int64_t>(s.block, 1);
  const int64_t blocks = s.k / block;
  const int64_t in_blocks = std::max<int64_t>(s.c / block, 1);
  const int64_t per_block = VectorsOfBlock(block, cpu.lanes).per_block;
  const int64_t registers = cpu.registers;
  const int64_t p = s.p(), q = s.q();
  ConfigSpace space;
  // Each register-tile knob lists only the values that fit the vector registers with the other
  // two at 1 (the constraint below): on 16 registers (AVX2) wide tiles cannot, and a value no
  // config can take only misleads the search.
  auto fits = [per_block, registers](int64_t pt, int64_t qt, int64_t kb) {
    return pt * qt * kb * per_block + kb * per_block + 1 <= registers;
  };
  std::vector<int64_t> kbs;
  for (int64_t kb : {1, 2, 3, 4}) {
    if (blocks % kb == 0 && fits(1, 1, kb)) {
      kbs.push_back(kb);
    }
  }
  std::vector<int64_t> qts;
  for (int64_t qt : AtMost({1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 28}, q, 1)) {
    if (fits(1, qt, 1)) {
      qts.push_back(qt);
    }
  }
  std::vector<int64_t> pts;
  for (int64_t pt : AtMost({1, 2, 3, 4, 6, 8}, p, 1)) {
    if (fits(pt, 1, 1)) {
      pts.push_back(pt);
    }
  }
  space.AddKnob("kb", kbs, "blocks of output channels in the register tile (dividing K / block)");
  space.AddKnob("qt", qts, "output positions along the width in the register tile");
  space.AddKnob("unroll_rs", {0, 1, 2}, "unroll the filter loops: 0 neither, 1 r and s, 2 s only");
  std::vector<int64_t> unroll_ci = {0, 1};
  for (int64_t f : {2, 4, 8}) {
    if (f < block) {
      unroll_ci.push_back(f);
    }
  }
  space.AddKnob("unroll_ci", unroll_ci,
                "the loop over the channels of an input block: 0 not unrolled, 1 unrolled, f > 1 "
                "unrolled by f");
  space.AddKnob("loop_order", {0, 1},
                "parallel loop order: 0 channel-block group outer, output row block inner; 1 the "
                "reverse");
  space.AddKnob("pt", pts, "output rows in the register tile (the tile is pt x qt positions)");
  space.AddKnob("kt", AtMost({1, 2, 3, 4, 6, 8}, blocks, 1),
                "register tiles of output blocks (groups of kb) per parallel iteration (cache "
                "tile of output channels)");
  space.AddKnob("tile_order", {0, 1},
                "in a parallel iteration: 0 groups outer, tiles along the width inner; 1 the "
                "reverse (the input tile reused from L1 by the kt groups)");
  space.AddKnob("cbc", ClipToExtent({1, 2, 4, 8, 16, 32}, in_blocks),
                "input-channel blocks per chunk of the reduction (partial sums kept in the "
                "output)");
  space.AddKnob("chunk_outer", {0, 1},
                "the loop over reduction chunks: 0 inside each parallel iteration, 1 around the "
                "parallel loop");
  const int64_t r = s.r, t = s.s;
  auto groups = [blocks](const Config& c) { return blocks / KnobValue(c, "kb"); };
  space.AddConstraint(
      fmt::format("pt*qt*kb*{0} + kb*{0} + 1 <= {1} (accumulators and weight vectors fit the "
                  "vector registers)",
                  per_block, registers),
      [per_block, registers](const Config& c) {
        const int64_t vectors = KnobValue(c, "kb") * per_block;
        return KnobValue(c, "pt") * KnobValue(c, "qt") * vectors + vectors + 1 <= registers;
      });
  space.AddConstraint(fmt::format("kt <= {} / kb (groups of output blocks)", blocks),
                      [groups](const Config& c) { return KnobValue(c, "kt") <= groups(c); });
  space.AddConstraint(
      fmt::format("loop_order == 0 unless ceil(groups / kt) > 1 and ceil({} / pt) > 1 (else both "
                  "orders are one loop)",
                  p),
      [groups, p](const Config& c) {
        return KnobValue(c, "loop_order") == 0 ||
               (CeilDiv(groups(c), KnobValue(c, "kt")) > 1 && CeilDiv(p, KnobValue(c, "pt")) > 1);
      });
  space.AddConstraint(
      fmt::format("tile_order == 0 unless kt > 1 and ceil({} / qt) > 1 (else both orders are one "
                  "loop)",
                  q),
      [q](const Config& c) {
        return KnobValue(c, "tile_order") == 0 ||
               (KnobValue(c, "kt") > 1 && CeilDiv(q, KnobValue(c, "qt")) > 1);
      });
  if (target.threads <= 1) {
    space.AddConstraint(
        "with one thread, kt > 1 and tile_order == 0 need loop_order == 0 and ceil(groups / kt) "
        "> 1 (else the groups run in the order of kt == 1, loop_order == 1)",
        [groups](const Config& c) {
          const int64_t kt = KnobValue(c, "kt");
          return kt == 1 || KnobValue(c, "tile_order") == 1 ||
                 (KnobValue(c, "loop_order") == 0 && CeilDiv(groups(c), kt) > 1);
        });
  }
  const int64_t preferred_rs = DefaultUnrollRs(s);
  space.AddConstraint(
      fmt::format("unroll_rs is {} or the smallest value among those that unroll the same loops "
                  "of more than one iteration (R={}, S={}; tiles at the borders unroll s anyway)",
                  preferred_rs, r, t),
      [r, t, s, preferred_rs](const Config& c) {
        const InteriorTiles span = InteriorTilesOf(s, KnobValue(c, "qt"));
        return UnrollRsIsKept(KnobValue(c, "unroll_rs"), preferred_rs, r > 1,
                              t > 1 && span.right > span.left);
      });
  space.AddConstraint(
      fmt::format("chunk_outer == 0 when cbc == {} (one chunk) or the parallel loop has one "
                  "iteration",
                  in_blocks),
      [in_blocks, groups, p, n = s.n](const Config& c) {
        return KnobValue(c, "chunk_outer") == 0 ||
               (KnobValue(c, "cbc") < in_blocks &&
                n * CeilDiv(groups(c), KnobValue(c, "kt")) * CeilDiv(p, KnobValue(c, "pt")) > 1);
      });
  // The tiles at the left and right borders (with padding) unroll the s taps whatever unroll_rs.
  const bool borders = s.pad > 0;
  space.AddConstraint(
      fmt::format("unrolled channels * unrolled taps * pt*qt*kb*{} <= {} (multiply-adds of the "
                  "unrolled reduction body; the border tiles unroll s)",
                  per_block, kMaxUnrolledFmas),
      [r, t, block, per_block, borders](const Config& c) {
        const int64_t ci = KnobValue(c, "unroll_ci");
        const int64_t channels = ci == 1 ? block : std::max<int64_t>(ci, 1);
        int64_t taps = UnrolledTaps(KnobValue(c, "unroll_rs"), r, t);
        if (borders) {
          taps = std::max(taps, t);
        }
        return channels * taps * KnobValue(c, "pt") * KnobValue(c, "qt") * KnobValue(c, "kb") *
                   per_block <=
               kMaxUnrolledFmas;
      });
  return space;
}

// Two blocks of output channels where K allows, and the widest tile of positions (up to 14) that
// fits beside their weight vectors: the shape of the NCHW template's fastest tiles. One row, one
// group per parallel iteration, the reduction whole.
Config DefaultConfig(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t per_block = VectorsOfBlock(workload.conv2d().block, cpu.lanes).per_block;
  Config config;
  config["unroll_rs"] = DefaultUnrollRs(workload.conv2d());
  config["unroll_ci"] = 0;
  config["loop_order"] = 0;
  config["pt"] = 1;
  config["kt"] = 1;
  config["tile_order"] = 0;
  config["cbc"] = space.FindKnob("cbc")->values.back();
  config["chunk_outer"] = 0;
  for (int64_t kb : {2, 1}) {
    config["kb"] = LargestAtMost(space.FindKnob("kb")->values, kb);
    const int64_t vectors = config["kb"] * per_block;
    const int64_t qt_limit = (cpu.registers - vectors - 1) / vectors;
    config["qt"] = LargestAtMost(space.FindKnob("qt")->values, std::min<int64_t>(qt_limit, 14));
    if (space.IsValid(config)) {
      break;
    }
  }
  TUNE_CHECK(space.IsValid(config)) << ConfigToString(config);
  return config;
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuBlocked, workload, target, config));
  BlockedConvPlan p;
  p.s = workload.conv2d();
  p.p = p.s.p();
  p.q = p.s.q();
  p.b = p.s.block;
  p.cb = p.s.c / p.b;
  p.kbs = p.s.k / p.b;
  const BlockVectors v = VectorsOfBlock(p.b, CpuVectorInfoFor(target).lanes);
  p.vw = v.width;
  p.vpb = v.per_block;
  p.kb = KnobValue(config, "kb");
  p.qt = KnobValue(config, "qt");
  p.pt = KnobValue(config, "pt");
  p.kt = KnobValue(config, "kt");
  p.tile_order = static_cast<int>(KnobValue(config, "tile_order"));
  p.cbc = KnobValue(config, "cbc");
  p.chunk_outer = KnobValue(config, "chunk_outer") != 0;
  p.unroll_rs = static_cast<int>(KnobValue(config, "unroll_rs"));
  p.unroll_ci = KnobValue(config, "unroll_ci");
  p.loop_order = static_cast<int>(KnobValue(config, "loop_order"));
  p.parallel = target.threads > 1;
  p.epilogue = workload.epilogue();
  return BuildBlockedConvNest(p, func_name);
}

}  // namespace

const KernelTemplate kConv2dCpuBlocked = {
    .name = "conv2d.cpu.blocked",
    .version = 2,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .conv_layouts = ConvLayouts::kBlocked,
};

}  // namespace tune
