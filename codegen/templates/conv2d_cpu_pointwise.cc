#include "codegen/templates/conv2d_cpu_pointwise.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/gemm_cpu_blocked.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

absl::Status CheckShape(const Workload& workload) {
  if (workload.op() != OpKind::kConv2d) {
    return absl::InvalidArgumentError(
        StrCat("conv2d.cpu.pointwise builds conv2d kernels, not '", workload.ToString(), "'"));
  }
  const Conv2dShape& s = workload.conv2d();
  std::vector<std::string> wrong;
  if (s.r != 1 || s.s != 1) {
    wrong.push_back(StrCat("R=", s.r, ",S=", s.s));
  }
  if (s.stride != 1) {
    wrong.push_back(StrCat("stride=", s.stride));
  }
  if (s.pad != 0) {
    wrong.push_back(StrCat("pad=", s.pad));
  }
  return RefuseShapeUnless("conv2d.cpu.pointwise", "1x1 filters with stride 1 and no padding",
                           "R=1,S=1,stride=1,pad=0", workload, wrong);
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  return kGemmCpuBlocked.space(PointwiseGemmOf(workload), target);
}

// The GEMM of a 1x1 layer has few columns (its pixels) and reads both operands where they lie
// already in a good order: the weights row by row, each input channel's pixels contiguous. On
// ResNet-50's 1x1 layers (Zen 5, 1 thread, tune-bench-model, bench/RESULTS.md) the fastest
// configs out of about 1,400 measured shared two shapes, where the GEMM default (both operands
// packed, 8 x 2-vector tiles) ran 4-11% slower:
//   - 196 pixels or more: nothing packed, 8 x 3-vector tiles, the reduction whole up to 512 and
//     column blocks of 192;
//   - 49 pixels (7x7): both packed, 4 x 4-vector tiles, all columns in one block.
// These need 32 vector registers (AVX-512); elsewhere the GEMM's own default stands. Returns
// the variants of the layer's class, the likeliest first (empty where none applies).
std::vector<Config> PixelClassConfigs(const Workload& workload, const Target& target) {
  const Workload gemm = PointwiseGemmOf(workload);
  const GemmShape& g = gemm.gemm();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  if (cpu.registers < 32) {
    return {};
  }
  const ConfigSpace space = kGemmCpuBlocked.space(gemm, target);
  const Config def = kGemmCpuBlocked.default_config(gemm, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  auto with_tile = [&](int64_t mr, int64_t vectors) {
    return BlockedGemmWithTile(g, target, space, def, mr, vectors);
  };
  std::vector<Config> configs;
  auto add = [&](const Config& c) {
    if (space.IsValid(c) && std::find(configs.begin(), configs.end(), c) == configs.end()) {
      configs.push_back(c);
    }
  };
  if (g.n >= 128) {
    for (int64_t order : {0, 3}) {
      Config c = with_tile(8, 3);
      c["pack_a"] = 0;
      c["pack_b"] = 0;
      c["kc"] = snap("kc", 512);
      c["nc"] = snap("nc", 192);
      c["order"] = order;
      add(c);
    }
  } else {
    for (int64_t kc : {512, 128}) {
      Config c = with_tile(4, 4);
      c["kc"] = snap("kc", kc);
      c["nc"] = snap("nc", g.n);
      // One column block: on several threads, the row blocks are what order 0 shares out (the
      // GEMM default's column split, order 3, would leave all but one thread idle).
      c["order"] = 0;
      add(c);
    }
  }
  return configs;
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  std::vector<Config> by_class = PixelClassConfigs(workload, target);
  return by_class.empty() ? kGemmCpuBlocked.default_config(PointwiseGemmOf(workload), target)
                          : by_class.front();
}

// The rest of the layer's class, the GEMM's default, then the GEMM's seeds.
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const Workload gemm = PointwiseGemmOf(workload);
  std::vector<Config> seeds = PixelClassConfigs(workload, target);
  if (seeds.empty()) {
    return kGemmCpuBlocked.seeds(gemm, target);
  }
  const Config def = seeds.front();
  seeds.erase(seeds.begin());
  seeds.push_back(kGemmCpuBlocked.default_config(gemm, target));
  for (Config& c : kGemmCpuBlocked.seeds(gemm, target)) {
    if (c != def && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(std::move(c));
    }
  }
  return seeds;
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuPointwise, workload, target, config));
  const Workload gemm = PointwiseGemmOf(workload);
  return BuildBlockedGemm(gemm.gemm(), workload.epilogue(),
                          {.batch = workload.conv2d().n, .bias_per_row = true, .b_first = true},
                          target, config, func_name);
}

}  // namespace

Workload PointwiseGemmOf(const Workload& conv) {
  const Conv2dShape& s = conv.conv2d();
  return Workload::Gemm({.m = s.k, .n = s.p() * s.q(), .k = s.c}, conv.epilogue());
}

const KernelTemplate kConv2dCpuPointwise = {
    .name = "conv2d.cpu.pointwise",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .seeds = &Seeds,
    .check_shape = &CheckShape,
};

}  // namespace tune
