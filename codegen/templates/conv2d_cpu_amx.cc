// conv2d.cpu.amx's space, defaults and seeds; its loop nest is in conv2d_cpu_amx_nest.cc.
#include "codegen/templates/conv2d_cpu_amx.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "codegen/templates/conv2d_cpu_amx_nest.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"

namespace tune {
namespace {

constexpr int64_t kRows = kAmxTileRows;

ConfigSpace Space(const Workload& workload, const Target&) {
  const Conv2dShape& s = workload.conv2d();
  const int64_t rows = ConvAmxRows(workload);
  ConfigSpace space;
  space.AddKnob("tm", AtMost({1, 2, 3}, CeilDiv(rows, kRows), 1),
                "16-pixel accumulator tiles of a register block");
  space.AddKnob("tn", AtMost({1, 2, 3}, CeilDiv(s.k, kRows), 1),
                "16-channel accumulator tiles of a register block");
  // Multiples of 48 and 96 (the rows rounded up to 96 the largest): every tm has a row block.
  space.AddKnob("mc", ClipToExtent({48, 96, 192, 384, 768}, CeilDiv(rows, 96) * 96),
                "pixels (rows of the implicit GEMM) of a row block");
  space.AddKnob("order", {0, 1},
                "0: row blocks outer, the groups of weight panels inner; 1: panels outer");
  space.AddKnob("fold",
                ConvAmxFolds(workload) ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0},
                "1: the filter's columns folded into the channels (where S x C channels fill "
                "fewer tile steps than S taps of C)");
  space.AddConstraint(
      "tm*tn + tm + tn <= 8 (the accumulators and one step's operands fit the eight tiles)",
      [](const Config& c) {
        const int64_t tm = KnobValue(c, "tm"), tn = KnobValue(c, "tn");
        return tm * tn + tm + tn <= 8;
      });
  space.AddConstraint(
      "mc % (16*tm) == 0 (whole register blocks in a row block)",
      [](const Config& c) { return KnobValue(c, "mc") % (kRows * KnobValue(c, "tm")) == 0; });
  return space;
}

// Register blocks best first: 2 x 2 tiles (four products per four loads), then the 3-wide
// ones, down to one tile; each snapped to the space (a narrow layer has fewer panels).
const std::vector<std::pair<int64_t, int64_t>>& TileOrder() {
  static const std::vector<std::pair<int64_t, int64_t>> order = {{2, 2}, {1, 3}, {3, 1},
                                                                 {1, 2}, {2, 1}, {1, 1}};
  return order;
}

Config ConfigOf(const ConfigSpace& space, std::pair<int64_t, int64_t> tile, int64_t mc,
                int64_t order) {
  Config c;
  c["tm"] = LargestAtMost(space.FindKnob("tm")->values, tile.first);
  c["tn"] = LargestAtMost(space.FindKnob("tn")->values, tile.second);
  const int64_t block = kRows * c["tm"];
  int64_t chosen = space.FindKnob("mc")->values.front();
  for (int64_t v : space.FindKnob("mc")->values) {
    if (v <= std::max(mc, block) && v % block == 0) {
      chosen = v;
    }
  }
  c["mc"] = chosen;
  c["order"] = order;
  c["fold"] = space.FindKnob("fold")->values.front();  // folded where it applies
  return c;
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  return ConfigOf(Space(workload, target), TileOrder().front(), 192, 0);
}

// The default unfolded (where it folds), every register block in both orders with row blocks of
// 192 pixels, then the best two with row blocks of 96 and 768.
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  const Config base = DefaultConfig(workload, target);
  std::vector<Config> seeds;
  auto add = [&](const Config& c) {
    if (space.ConstraintsHold(c) && c != base &&
        std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(c);
    }
  };
  Config unfolded = base;
  unfolded["fold"] = 0;
  add(unfolded);
  for (const auto& tile : TileOrder()) {
    for (int64_t order : {0, 1}) {
      add(ConfigOf(space, tile, 192, order));
    }
  }
  for (size_t i = 0; i < 2; ++i) {
    for (int64_t mc : {96, 768}) {
      for (int64_t order : {0, 1}) {
        add(ConfigOf(space, TileOrder()[i], mc, order));
      }
    }
  }
  return seeds;
}

ConvAmxPlan PlanOf(const Workload& workload, const Target& target, const Config& config) {
  return ConvAmxPlanOf(workload, target, KnobValue(config, "tm"), KnobValue(config, "tn"),
                       KnobValue(config, "mc"), KnobValue(config, "order") == 1,
                       KnobValue(config, "fold") == 1);
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuAmx, workload, target, config));
  RETURN_IF_ERROR(CheckAmx("conv2d.cpu.amx", workload, target));
  return BuildConvAmxNest(workload, PlanOf(workload, target, config), func_name);
}

absl::StatusOr<PreparedWeights> Prepare(const Workload& workload, const Target& target,
                                        const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuAmx, workload, target, config));
  return BuildConvAmxPreparation(workload, PlanOf(workload, target, config), func_name);
}

}  // namespace

const KernelTemplate kConv2dCpuAmx = {
    .name = "conv2d.cpu.amx",
    .version = 2,  // 2: the knob fold
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .worker_features = &AmxWorkerFeatures,
    .applies = &HasAmxFor,
    .conv_layouts = ConvLayouts::kAll,
    .dtypes = kCpuMatrixDtypes,
    .requant = true,
    .seeds = &Seeds,
    .prepare = &Prepare,
};

}  // namespace tune
