#include "codegen/templates/conv2d_rocm_mfma.h"

#include <string_view>
#include <vector>

#include "codegen/templates/gemm_rocm_mfma.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "codegen/templates/wave_mma_kernel.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

template <const KernelTemplate& kTpl>
absl::Status CheckShape(const Workload& workload) {
  return RefuseShapeUnless(kTpl.name,
                           "convolutions whose input windows its global reads can zero-fill",
                           "layout=NHWC; C a multiple of 4 for the 8-bit floats", workload,
                           WaveMmaShapeFaults(ImplicitGemm(workload)));
}

template <const KernelTemplate& kTpl>
absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kTpl, workload, target, config));
  const bool wmma = &kTpl == &kConv2dRocmWmma;
  if (!(wmma ? WmmaApplies(target) : MfmaApplies(target)) ||
      WaveMmaKFor(target, workload.dtype(), KnobValue(config, "inst")) == 0) {
    return absl::InvalidArgumentError(StrCat(
        kTpl.name, " builds for ",
        wmma ? "rocm -mcpu=gfx1100 (RDNA3's WMMA)" : "rocm -mcpu=gfx90a|gfx942 (CDNA's MFMA)",
        " with an instruction of tile ", KnobValue(config, "inst"),
        " for dtype=", DtypeName(workload.dtype()), ", not for target '", target.ToString(), "'"));
  }
  RETURN_IF_ERROR(CheckShape<kTpl>(workload));
  return BuildWaveMmaKernel(ImplicitGemm(workload), target, config, func_name);
}

ConfigSpace Space(const Workload& w, const Target& t) { return WaveMmaSpace(ImplicitGemm(w), t); }

std::vector<Config> Seeds(const Workload& w, const Target& t) {
  return WaveMmaSeeds(ImplicitGemm(w), t);
}

}  // namespace

const KernelTemplate kConv2dRocmMfma = {
    .name = "conv2d.rocm.mfma",
    .version = 2,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kRocm,
    .space = &Space,
    .default_config =
        [](const Workload& w, const Target& t) {
          return WaveMmaDefault(ImplicitGemm(w), t, "conv2d.rocm.mfma");
        },
    .build = &Build<kConv2dRocmMfma>,
    .applies = [](const Workload&, const Target& t) { return MfmaApplies(t); },
    .conv_layouts = ConvLayouts::kNhwc,
    .dtypes =
        DtypeSet{Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kFp8E4m3Fnuz, Dtype::kFp8E5m2Fnuz},
    .seeds = &Seeds,
    .check_shape = &CheckShape<kConv2dRocmMfma>,
    .tolerance = &TensorCoreTolerance,
};

const KernelTemplate kConv2dRocmWmma = {
    .name = "conv2d.rocm.wmma",
    .version = 2,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kRocm,
    .space = &Space,
    .default_config =
        [](const Workload& w, const Target& t) {
          return WaveMmaDefault(ImplicitGemm(w), t, "conv2d.rocm.wmma");
        },
    .build = &Build<kConv2dRocmWmma>,
    .applies = [](const Workload&, const Target& t) { return WmmaApplies(t); },
    .conv_layouts = ConvLayouts::kNhwc,
    .dtypes = DtypeSet{Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kU8I8},
    .seeds = &Seeds,
    .check_shape = &CheckShape<kConv2dRocmWmma>,
    .tolerance = &TensorCoreTolerance,
};

}  // namespace tune
