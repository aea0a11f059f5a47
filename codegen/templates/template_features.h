// What a cost model learns about a config of a template: the features of the loop nest the
// template builds for it (codegen/ir/loop_features.h), its knob values, and the workload's
// sizes, so that one model can rank configs of several shapes of one operator (transfer).
#pragma once

#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/templates/template.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/features.h"

namespace tune {

/// Workload sizes as log2(1 + x): GEMM M, N, K; conv2d N, C, H, W, K, R, S, stride, pad,
/// dilation, block; padded with zeros to 12; then the form, so that one cost model learns across
/// dtypes and layouts: the dtype's position in common/element_type.h (f32: 0) and 1 for B as
/// [N][K] (layout=NT) or NHWC (else 0). An f32 workload's row is its sizes and two zeros.
std::vector<float> WorkloadFeatures(const Workload& workload);
/// The width of WorkloadFeatures' rows.
inline constexpr size_t kWorkloadFeatureCount = 14;

/// Features of `config`: WorkloadFeatures, then the loop features of the kernel
/// `tpl` builds for it (zeros when the template builds no IR or the build fails), the share of
/// the kernel's multiply-adds the workload needs (padding below 1, Winograd above), then
/// KnobFeatures. The same width for every config of `tpl`'s space for this workload and target.
std::vector<float> TemplateFeatures(const KernelTemplate& tpl, const Workload& workload,
                                    const Target& target, const ConfigSpace& space,
                                    const Config& config);

/// TemplateFeatures of `config` read off `template_ir`, the kernel `tpl` built for it (before
/// lowering; its function name does not matter): what a builder that built the kernel anyway
/// reports with the artifact, equal to TemplateFeatures for the same config.
std::vector<float> TemplateFeaturesOfIr(const ir::LoweredFunc& template_ir,
                                        const Workload& workload, const ConfigSpace& space,
                                        const Config& config);

/// The row TemplateFeatures gives a config whose template builds no IR: its loop features are
/// zeros. Needs no template code to run.
std::vector<float> TemplateFeaturesWithoutIr(const Workload& workload, const ConfigSpace& space,
                                             const Config& config);

/// TemplateFeatures as a FeatureFn over `tpl`'s space for `workload` and `target` (the
/// template, workload and target are copied or, for the template, referenced: templates live
/// for the program).
FeatureFn TemplateFeatureFn(const KernelTemplate& tpl, const Workload& workload,
                            const Target& target);

}  // namespace tune
