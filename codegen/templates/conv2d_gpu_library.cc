#include "codegen/templates/conv2d_gpu_library.h"

#include "codegen/templates/library_call.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"
#include "runtime/tune_gpu_runtime.h"

namespace tune {
namespace {

using ir::Buffer;

constexpr int64_t kImplicitPrecompGemm = 1;

// The cudnnConvolutionFwdAlgo_t values worth trying on a shape: every GEMM-like and direct
// algorithm; FFT and Winograd only where cuDNN can run them (it may still refuse one at run
// time: TUNE_GPU_ALGO_UNSUPPORTED, recorded as the candidate's error).
std::vector<int64_t> CudnnAlgorithms(const Conv2dShape& s) {
  std::vector<int64_t> algos = {TUNE_GPU_ALGO_SEARCH, 0, 1, 2, 3};
  const bool unit = s.stride == 1 && s.dilation == 1;
  if (unit) {
    algos.insert(algos.end(), {4, 5});
  }
  if (unit && s.r == 3 && s.s == 3) {
    algos.push_back(6);
  }
  if (unit && s.r == s.s && (s.r == 3 || s.r == 5)) {
    algos.push_back(7);
  }
  return algos;
}

ConfigSpace CudnnSpace(const Workload& workload, const Target&) {
  ConfigSpace space;
  space.AddKnob("algorithm", CudnnAlgorithms(workload.conv2d()),
                "-1: cuDNN's own search (cudnnFindConvolutionForwardAlgorithm); 0..7: a "
                "cudnnConvolutionFwdAlgo_t");
  AddEpilogueKnob(space, workload, "cudnnConvolutionBiasActivationForward");
  if (workload.epilogue() == Epilogue::kBias) {
    space.AddConstraint(
        "epilogue == 1 with a bias and no ReLU needs algorithm -1 or 1 (IMPLICIT_PRECOMP_GEMM)",
        [](const Config& c) {
          const int64_t algo = KnobValue(c, "algorithm");
          return EpilogueChoice(c) != kEpilogueLibrary || algo == TUNE_GPU_ALGO_SEARCH ||
                 algo == kImplicitPrecompGemm;
        });
  }
  return space;
}

ConfigSpace MiopenSpace(const Workload&, const Target&) {
  ConfigSpace space;
  space.AddKnob("algorithm", {TUNE_GPU_ALGO_SEARCH},
                "-1: the algorithm miopenFindConvolutionForwardAlgorithm chooses");
  return space;
}

// FFT (4, 5), Winograd (6, 7) and cuDNN's own search, which may pick them.
double CudnnTolerance(const Workload&, const Config& config) {
  const int64_t algo = KnobValue(config, "algorithm");
  return algo == TUNE_GPU_ALGO_SEARCH || algo >= 4 ? kTransformAlgorithmTolerance : 1.0;
}

Config CudnnDefault(const Workload& workload, const Target& target) {
  return LibraryDefaultConfig(CudnnSpace(workload, target));  // algorithm -1: cuDNN's search
}

Config MiopenDefault(const Workload& workload, const Target& target) {
  return LibraryDefaultConfig(MiopenSpace(workload, target));
}

bool MiopenApplies(const Workload& workload, const Target&) {
  return workload.epilogue() == Epilogue::kNone;
}

// `shim(x, w, bias or 0, y, N, C, H, W, K, R, S, stride, pad, dilation, epilogue, epilogue_mode,
// algo, stream)`.
absl::StatusOr<ir::LoweredFunc> BuildConv(const KernelTemplate& tpl, std::string_view shim,
                                          const Workload& workload, const Target& target,
                                          const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(tpl, workload, target, config));
  const Conv2dShape& s = workload.conv2d();
  std::vector<Buffer> params = KernelParams(workload);
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  ir::Var stream("stream");
  ir::Stmt call = CallShim(
      shim, {Ptr(params[0]), Ptr(params[1]), has_bias ? Ptr(params[2]) : I64(0), Ptr(params.back()),
             I64(s.n), I64(s.c), I64(s.h), I64(s.w), I64(s.k), I64(s.r), I64(s.s), I64(s.stride),
             I64(s.pad), I64(s.dilation), I32(GpuEpilogueCode(workload)),
             I32(GpuEpilogueMode(config)), I32(KnobValue(config, "algorithm")), stream});
  ir::LoweredFunc func =
      LibraryFunc(func_name, std::move(params), call, RuntimeLibraryNamed(tpl.library));
  func.stream_param = stream;
  return func;
}

absl::StatusOr<ir::LoweredFunc> BuildCudnn(const Workload& workload, const Target& target,
                                           const Config& config, std::string_view func_name) {
  return BuildConv(kConv2dCudaCudnn, "tune_cudnn_conv2d", workload, target, config, func_name);
}

absl::StatusOr<ir::LoweredFunc> BuildMiopen(const Workload& workload, const Target& target,
                                            const Config& config, std::string_view func_name) {
  if (!MiopenApplies(workload, target)) {
    return absl::InvalidArgumentError(
        StrCat("template conv2d.rocm.miopen builds workloads without an epilogue, not '",
               workload.ToString(), "'"));
  }
  return BuildConv(kConv2dRocmMiopen, "tune_miopen_conv2d", workload, target, config, func_name);
}

}  // namespace

const KernelTemplate kConv2dCudaCudnn = {
    .name = "conv2d.cuda.cudnn",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kCuda,
    .space = &CudnnSpace,
    .default_config = &CudnnDefault,
    .build = &BuildCudnn,
    .library = "cudnn",
    .tolerance = &CudnnTolerance,
};

const KernelTemplate kConv2dRocmMiopen = {
    .name = "conv2d.rocm.miopen",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kRocm,
    .space = &MiopenSpace,
    .default_config = &MiopenDefault,
    .build = &BuildMiopen,
    .library = "miopen",
    .applies = &MiopenApplies,
    .tolerance = [](const Workload&, const Config&) { return kTransformAlgorithmTolerance; },
};

}  // namespace tune
