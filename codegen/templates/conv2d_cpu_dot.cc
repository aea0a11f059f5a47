// conv2d.cpu.dot's space, defaults and seeds; its loop nest is in conv2d_cpu_dot_nest.cc.
#include "codegen/templates/conv2d_cpu_dot.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "codegen/templates/conv2d_cpu_dot_nest.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"

namespace tune {
namespace {

constexpr int64_t kLanes = kConvDotLanes;

ConfigSpace Space(const Workload& workload, const Target&) {
  const Conv2dShape& s = workload.conv2d();
  const ConvDotExtents e = ConvDotExtentsOf(s);
  ConfigSpace space;
  space.AddKnob("mr", AtMost({1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14}, e.q, 1),
                "output pixels of one row in the register tile (one broadcast group each)");
  space.AddKnob("nv", AtMost({1, 2, 3, 4}, CeilDiv(s.k, kLanes), 1),
                "vectors of 16 output channels in the register tile");
  space.AddKnob("pr", ClipToExtent({1, 2, 4, 8, 16}, e.p), "output rows of a block");
  space.AddKnob("qc", ClipToExtent({16, 32, 64, 128, 256, 512}, e.q),
                "output pixels of a row in a block");
  space.AddKnob("order", {0, 1},
                "0: blocks of pixels outer, the panels of weights inner; 1: panels outer");
  space.AddConstraint(
      "mr*nv + nv + 1 <= 32 (accumulators fit the vector registers)", [](const Config& c) {
        return KnobValue(c, "mr") * KnobValue(c, "nv") + KnobValue(c, "nv") + 1 <= 32;
      });
  const int64_t q = e.q;
  space.AddConstraint(fmt::format("qc % mr == 0 || qc == {}", q), [q](const Config& c) {
    return KnobValue(c, "qc") % KnobValue(c, "mr") == 0 || KnobValue(c, "qc") == q;
  });
  return space;
}

// How well a register tile of mr pixels x nv vectors of channels uses the dot-product units on
// a row of q pixels and k output channels, in [0, 1]: per group of channels it issues mr * nv dot
// products (two a cycle) and mr + nv loads (two a cycle, one loop step's overhead beside them),
// and the pixels and channels past q and k that its last tiles compute are lost.
double TileScore(int64_t mr, int64_t nv, int64_t q, int64_t k) {
  const double dots = static_cast<double>(mr * nv);
  const double cycles = std::max(dots, static_cast<double>(mr + nv)) / 2 + 1;
  const double pixels = static_cast<double>(q) / static_cast<double>(CeilDiv(q, mr) * mr);
  const double channels =
      static_cast<double>(k) / static_cast<double>(CeilDiv(k, nv * kLanes) * nv * kLanes);
  return dots / (2 * cycles) * pixels * channels;
}

// The (mr, nv) tiles of the space that fit the registers, best TileScore first.
std::vector<std::pair<int64_t, int64_t>> RankedTiles(const ConfigSpace& space, int64_t q,
                                                     int64_t k) {
  std::vector<std::pair<int64_t, int64_t>> tiles;
  for (int64_t nv : space.FindKnob("nv")->values) {
    for (int64_t mr : space.FindKnob("mr")->values) {
      if (mr * nv + nv + 1 <= 32) {
        tiles.emplace_back(mr, nv);
      }
    }
  }
  std::stable_sort(tiles.begin(), tiles.end(), [&](const auto& a, const auto& b) {
    return TileScore(a.first, a.second, q, k) > TileScore(b.first, b.second, q, k);
  });
  return tiles;
}

int64_t BlockColumns(const ConfigSpace& space, int64_t mr, int64_t q, int64_t want) {
  int64_t qc = q;
  for (int64_t v : space.FindKnob("qc")->values) {
    if (v <= want && v % mr == 0) {
      qc = v;
    }
  }
  return qc;
}

// The tile (mr, nv) with pr output rows per block, in `order`: blocks of a long row (a pointwise
// layer) of about 256 pixels, whole rows otherwise.
Config ConfigOf(const ConfigSpace& space, const ConvDotExtents& e, std::pair<int64_t, int64_t> tile,
                int64_t pr, int64_t order) {
  Config c;
  c["mr"] = tile.first;
  c["nv"] = tile.second;
  c["pr"] = LargestAtMost(space.FindKnob("pr")->values, pr);
  c["qc"] = e.p == 1 ? BlockColumns(space, tile.first, e.q, 256) : e.q;
  c["order"] = order;
  return c;
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  const ConvDotExtents e = ConvDotExtentsOf(workload.conv2d());
  return ConfigOf(space, e, RankedTiles(space, e.q, workload.conv2d().k).front(), 4, 0);
}

// The best-ranked tiles, each in both orders and with blocks of 4, 16 and 1 output rows.
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  const Config base = DefaultConfig(workload, target);
  const ConvDotExtents e = ConvDotExtentsOf(workload.conv2d());
  const std::vector<std::pair<int64_t, int64_t>> tiles =
      RankedTiles(space, e.q, workload.conv2d().k);
  std::vector<Config> seeds;
  auto add = [&](const Config& c) {
    if (space.ConstraintsHold(c) && c != base &&
        std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(c);
    }
  };
  for (size_t i = 0; i < std::min<size_t>(tiles.size(), 4); ++i) {
    for (int64_t order : {0, 1}) {
      add(ConfigOf(space, e, tiles[i], 4, order));
    }
  }
  for (size_t i = 0; i < std::min<size_t>(tiles.size(), 2); ++i) {
    for (int64_t order : {0, 1}) {
      for (int64_t pr : {16, 1}) {
        add(ConfigOf(space, e, tiles[i], pr, order));
      }
    }
  }
  return seeds;
}

ConvDotPlan PlanOf(const Workload& workload, const Target& target, const Config& config) {
  return ConvDotPlanOf(workload, target, KnobValue(config, "mr"), KnobValue(config, "nv"),
                       KnobValue(config, "pr"), KnobValue(config, "qc"),
                       KnobValue(config, "order") == 1);
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuDot, workload, target, config));
  return BuildConvDotNest(workload, PlanOf(workload, target, config), func_name);
}

absl::StatusOr<PreparedWeights> Prepare(const Workload& workload, const Target& target,
                                        const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuDot, workload, target, config));
  return BuildConvDotPreparation(workload, PlanOf(workload, target, config), func_name);
}

}  // namespace

const KernelTemplate kConv2dCpuDot = {
    .name = "conv2d.cpu.dot",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .worker_features = &DotWorkerFeatures,
    .conv_layouts = ConvLayouts::kAll,
    .dtypes = kCpuDotDtypes,
    .requant = true,
    .seeds = &Seeds,
    .prepare = &Prepare,
};

}  // namespace tune
