#include "codegen/templates/conv2d_cuda_tensor_core.h"

#include <string>
#include <vector>

#include "codegen/templates/gemm_cuda_mma.h"
#include "codegen/templates/gemm_cuda_wgmma.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

constexpr char kAccepted[] =
    "layout=NHWC; C a multiple of 4 for 8-bit dtypes (a copy of 4 bytes or more stays within "
    "one filter tap's channels)";

absl::Status WgmmaShape(const Workload& workload) {
  return RefuseShapeUnless(kConv2dCudaWgmma.name,
                           "convolutions whose input windows cp.async gathers for wgmma", kAccepted,
                           workload, WgmmaShapeFaults(ImplicitGemm(workload)));
}

absl::Status MmaShape(const Workload& workload) {
  return RefuseShapeUnless(kConv2dCudaMma.name,
                           "convolutions whose input windows cp.async gathers for mma.sync",
                           kAccepted, workload, MmaShapeFaults(ImplicitGemm(workload)));
}

bool WgmmaConvApplies(const Workload&, const Target& target) { return WgmmaApplies(target); }

absl::StatusOr<ir::LoweredFunc> BuildWgmma(const Workload& workload, const Target& target,
                                           const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCudaWgmma, workload, target, config));
  if (!WgmmaApplies(target)) {
    return absl::InvalidArgumentError(
        StrCat("conv2d.cuda.wgmma builds for cuda -arch=sm_90a (wgmma is an arch-specific "
               "instruction of Hopper), not for '",
               target.ToString(), "'"));
  }
  RETURN_IF_ERROR(WgmmaShape(workload));
  return BuildWgmmaKernel(ImplicitGemm(workload), config, func_name);
}

absl::StatusOr<ir::LoweredFunc> BuildMma(const Workload& workload, const Target& target,
                                         const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCudaMma, workload, target, config));
  RETURN_IF_ERROR(MmaShape(workload));
  return BuildMmaKernel(ImplicitGemm(workload), config, func_name);
}

// The dtypes of the GEMM kernels: their storage types, scales and accumulators are the same.
constexpr DtypeSet kTensorCoreDtypes{Dtype::kTf32, Dtype::kF16,     Dtype::kBf16,   Dtype::kI8,
                                     Dtype::kU8I8, Dtype::kFp8E4m3, Dtype::kFp8E5m2};

}  // namespace

const KernelTemplate kConv2dCudaWgmma = {
    .name = "conv2d.cuda.wgmma",
    .version = 15,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kCuda,
    .space = [](const Workload& w, const Target& t) { return WgmmaSpace(ImplicitGemm(w), t); },
    .default_config =
        [](const Workload& w, const Target& t) {
          return WgmmaDefault(ImplicitGemm(w), t, "conv2d.cuda.wgmma");
        },
    .build = &BuildWgmma,
    .applies = &WgmmaConvApplies,
    .conv_layouts = ConvLayouts::kNhwc,
    .dtypes = kTensorCoreDtypes,
    .seeds = [](const Workload& w, const Target& t) { return WgmmaSeeds(ImplicitGemm(w), t); },
    .check_shape = &WgmmaShape,
    .tolerance = &TensorCoreTolerance,
};

const KernelTemplate kConv2dCudaMma = {
    .name = "conv2d.cuda.mma",
    .version = 2,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kCuda,
    .space = [](const Workload& w, const Target& t) { return MmaSpace(ImplicitGemm(w), t); },
    .default_config =
        [](const Workload& w, const Target& t) {
          return MmaDefault(ImplicitGemm(w), t, "conv2d.cuda.mma");
        },
    .build = &BuildMma,
    .conv_layouts = ConvLayouts::kNhwc,
    .dtypes = kTensorCoreDtypes,
    .seeds = [](const Workload& w, const Target& t) { return MmaSeeds(ImplicitGemm(w), t); },
    .check_shape = &MmaShape,
    .tolerance = &TensorCoreTolerance,
};

}  // namespace tune
