#include "codegen/templates/template_features.h"

#include <cmath>

#include "codegen/ir/loop_features.h"
#include "common/status.h"

namespace tune {
namespace {

constexpr size_t kWorkloadSizeCount = 12;  // then the dtype and the layout
constexpr size_t kFmaLanes = 14;           // LoopFeatureNames()[14], log2(1 + multiply-add lanes)

float Log(int64_t x) { return static_cast<float>(std::log2(1.0 + static_cast<double>(x))); }

}  // namespace

std::vector<float> WorkloadFeatures(const Workload& workload) {
  std::vector<float> row;
  if (workload.op() == OpKind::kGemm) {
    const GemmShape& g = workload.gemm();
    row = {Log(g.m), Log(g.n), Log(g.k)};
  } else {
    const Conv2dShape& s = workload.conv2d();
    row = {Log(s.n), Log(s.c),      Log(s.h),   Log(s.w),        Log(s.k),    Log(s.r),
           Log(s.s), Log(s.stride), Log(s.pad), Log(s.dilation), Log(s.block)};
  }
  row.resize(kWorkloadSizeCount, 0.0f);
  const bool other_layout = workload.op() == OpKind::kGemm
                                ? workload.gemm().layout == GemmLayout::kNT
                                : workload.conv2d().nhwc;
  row.push_back(static_cast<float>(static_cast<int>(workload.dtype())));
  row.push_back(other_layout ? 1.0f : 0.0f);
  TUNE_CHECK(row.size() == kWorkloadFeatureCount);
  return row;
}

namespace {

// The row of a config whose kernel's loop features are `loops` (zeros: unknown).
std::vector<float> Assemble(const Workload& workload, const std::vector<float>& loops,
                            const ConfigSpace& space, const Config& config) {
  std::vector<float> row = WorkloadFeatures(workload);
  row.insert(row.end(), loops.begin(), loops.end());
  // The share of the kernel's multiply-adds that the workload needs: below 1 where tiles pad
  // the tails, above 1 for a transform (Winograd) that needs fewer.
  const double fma = std::exp2(static_cast<double>(loops[kFmaLanes])) - 1.0;
  row.push_back(fma > 0 ? static_cast<float>(workload.Flops() / 2.0 / fma) : 0.0f);
  std::vector<float> knobs = KnobFeatures(space, config);
  row.insert(row.end(), knobs.begin(), knobs.end());
  return row;
}

}  // namespace

std::vector<float> TemplateFeatures(const KernelTemplate& tpl, const Workload& workload,
                                    const Target& target, const ConfigSpace& space,
                                    const Config& config) {
  std::vector<float> loops(ir::kLoopFeatureCount, 0.0f);
  if (tpl.build) {
    absl::StatusOr<ir::LoweredFunc> func = tpl.build(workload, target, config, "features");
    if (func.ok()) {
      loops = ir::LoopFeatures(*func);
    }
  }
  return Assemble(workload, loops, space, config);
}

std::vector<float> TemplateFeaturesOfIr(const ir::LoweredFunc& template_ir,
                                        const Workload& workload, const ConfigSpace& space,
                                        const Config& config) {
  return Assemble(workload, ir::LoopFeatures(template_ir), space, config);
}

std::vector<float> TemplateFeaturesWithoutIr(const Workload& workload, const ConfigSpace& space,
                                             const Config& config) {
  return Assemble(workload, std::vector<float>(ir::kLoopFeatureCount, 0.0f), space, config);
}

FeatureFn TemplateFeatureFn(const KernelTemplate& tpl, const Workload& workload,
                            const Target& target) {
  return [&tpl, workload, target,
          space = tpl.space(workload, target)](const std::vector<Config>& configs) {
    std::vector<std::vector<float>> rows;
    rows.reserve(configs.size());
    for (const Config& config : configs) {
      rows.push_back(TemplateFeatures(tpl, workload, target, space, config));
    }
    return rows;
  };
}

}  // namespace tune
