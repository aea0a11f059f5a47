#include "codegen/templates/conv2d_cpu_pointwise.h"

#include <string>
#include <vector>

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

Config DefaultConfig(const Workload& workload, const Target& target) {
  return kGemmCpuBlocked.default_config(PointwiseGemmOf(workload), target);
}

std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  return kGemmCpuBlocked.seeds(PointwiseGemmOf(workload), target);
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
    .target_kind = TargetKind::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .seeds = &Seeds,
    .check_shape = &CheckShape,
};

}  // namespace tune
