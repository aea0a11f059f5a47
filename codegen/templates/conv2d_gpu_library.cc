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

// cuDNN's heuristic ranks the engine configurations for the operation graph; the knob measures
// the first eight that finalize (FFT, Winograd and reduced-precision engines passed over).
ConfigSpace CudnnGraphSpace(const Workload&, const Target&) {
  ConfigSpace space;
  space.AddKnob("algo", {0, 1, 2, 3, 4, 5, 6, 7},
                "which of cuDNN's heuristic engine configurations for the graph (0: its first "
                "choice)");
  return space;
}

Config CudnnGraphDefault(const Workload&, const Target&) { return {{"algo", 0}}; }

// cuDNN 9 (measured on an H200 with 9.14) has no engine for an i32 output with a ReLU and no
// bias; every other form of the template's dtypes runs, whatever the channel counts.
absl::Status CudnnGraphShape(const Workload& workload) {
  if (workload.dtype() == Dtype::kI8 && workload.out_type() == ElementType::kI32 &&
      workload.epilogue() == Epilogue::kRelu) {
    return absl::InvalidArgumentError(
        StrCat("template conv2d.cuda.cudnn_graph builds i8 convolutions with out=f32, or with "
               "out=i32 and no epilogue or epilogue=bias|bias_relu (cuDNN has no engine for an "
               "i32 ReLU without a bias), not '",
               workload.ToString(), "'"));
  }
  return absl::OkStatus();
}

// fp8 runs on the same tensor cores as gemm.cuda.cublaslt's fp8 kernels, whose accumulation
// between promotions to f32 is narrower than f32: held to the same 4 times the bound. Every other
// dtype to the bound itself (engines computing through transforms are passed over by the shim).
double CudnnGraphTolerance(const Workload& workload, const Config&) {
  return IsFp8Dtype(workload.dtype()) ? 4.0 : 1.0;
}

// `tune_cudnn_conv2d_typed(x, w, bias or 0, y, scale_x or 0, scale_w or 0, N, C, H, W, K, R, S,
// stride, pad, dilation, in_type, out_type, epilogue, algo, stream)`.
absl::StatusOr<ir::LoweredFunc> BuildCudnnGraph(const Workload& workload, const Target& target,
                                                const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCudaCudnnGraph, workload, target, config));
  const Conv2dShape& s = workload.conv2d();
  std::vector<Buffer> params = KernelParams(workload);
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  const size_t out = static_cast<size_t>(workload.OutputIndex());
  const bool scales = workload.has_scales();
  ir::Var stream("stream");
  std::vector<ir::Expr> args = {Ptr(params[0]),
                                Ptr(params[1]),
                                has_bias ? Ptr(params[2]) : I64(0),
                                Ptr(params[out]),
                                scales ? Ptr(params[out + 1]) : I64(0),
                                scales ? Ptr(params[out + 2]) : I64(0)};
  for (int64_t v : {s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.dilation}) {
    args.push_back(I64(v));
  }
  args.insert(args.end(), {I32(GpuShimType(workload.input_type(), workload.dtype())),
                           I32(GpuShimType(workload.out_type(), Dtype::kF32)),
                           I32(GpuEpilogueCode(workload)), I32(KnobValue(config, "algo")), stream});
  ir::Stmt call = CallShim("tune_cudnn_conv2d_typed", std::move(args));
  ir::LoweredFunc func = LibraryFunc(func_name, std::move(params), call,
                                     RuntimeLibraryNamed(kConv2dCudaCudnnGraph.library));
  func.stream_param = stream;
  return func;
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

// MIOpen's convolution writes the type it reads, except int8's raw i32 sums; a float output of
// i8 would need the scales, which are device pointers, in MIOpen's alpha, a host scalar.
absl::Status MiopenNhwcShape(const Workload& workload) {
  const bool own_type = workload.out_type() == workload.input_type();
  const bool raw_sums = workload.dtype() == Dtype::kI8 && workload.out_type() == ElementType::kI32;
  if (!own_type && !raw_sums) {
    return absl::InvalidArgumentError(
        StrCat("template conv2d.rocm.miopen_nhwc builds f32, f16 and bf16 convolutions into "
               "their own type and i8 ones with out=i32 (MIOpen writes the type it reads; its "
               "alpha, a host scalar, cannot carry the scales), not '",
               workload.ToString(), "'"));
  }
  return absl::OkStatus();
}

// `tune_miopen_conv2d_typed(x, w, 0, y, 0, 0, N, C, H, W, K, R, S, stride, pad, dilation,
// in_type, out_type, 0, -1, stream)`: no bias, no scales, no epilogue, MIOpen's find.
absl::StatusOr<ir::LoweredFunc> BuildMiopenNhwc(const Workload& workload, const Target& target,
                                                const Config& config, std::string_view func_name) {
  if (!MiopenApplies(workload, target)) {
    return absl::InvalidArgumentError(
        StrCat("template conv2d.rocm.miopen_nhwc builds workloads without an epilogue, not '",
               workload.ToString(), "'"));
  }
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dRocmMiopenNhwc, workload, target, config));
  RETURN_IF_ERROR(MiopenNhwcShape(workload));
  const Conv2dShape& s = workload.conv2d();
  std::vector<Buffer> params = KernelParams(workload);
  ir::Var stream("stream");
  std::vector<ir::Expr> args = {Ptr(params[0]),     Ptr(params[1]), I64(0),
                                Ptr(params.back()), I64(0),         I64(0)};
  for (int64_t v : {s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.dilation}) {
    args.push_back(I64(v));
  }
  args.insert(args.end(),
              {I32(GpuShimType(workload.input_type(), workload.dtype())),
               I32(GpuShimType(workload.out_type(), Dtype::kF32)), I32(TUNE_GPU_EPILOGUE_NONE),
               I32(KnobValue(config, "algorithm")), stream});
  ir::Stmt call = CallShim("tune_miopen_conv2d_typed", std::move(args));
  ir::LoweredFunc func = LibraryFunc(func_name, std::move(params), call,
                                     RuntimeLibraryNamed(kConv2dRocmMiopenNhwc.library));
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

const KernelTemplate kConv2dCudaCudnnGraph = {
    .name = "conv2d.cuda.cudnn_graph",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kCuda,
    .space = &CudnnGraphSpace,
    .default_config = &CudnnGraphDefault,
    .build = &BuildCudnnGraph,
    .library = "cudnn",
    .conv_layouts = ConvLayouts::kNhwc,
    .dtypes = DtypeSet{Dtype::kF32, Dtype::kTf32, Dtype::kF16, Dtype::kBf16, Dtype::kI8,
                       Dtype::kFp8E4m3, Dtype::kFp8E5m2},
    .check_shape = &CudnnGraphShape,
    .tolerance = &CudnnGraphTolerance,
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

const KernelTemplate kConv2dRocmMiopenNhwc = {
    .name = "conv2d.rocm.miopen_nhwc",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kRocm,
    .space = &MiopenSpace,
    .default_config = &MiopenDefault,
    .build = &BuildMiopenNhwc,
    .library = "miopen",
    .applies = &MiopenApplies,
    .conv_layouts = ConvLayouts::kNhwc,
    .dtypes = DtypeSet{Dtype::kF32, Dtype::kF16, Dtype::kBf16, Dtype::kI8},
    .check_shape = &MiopenNhwcShape,
    // MIOpen's find may choose Winograd or FFT solvers, as for conv2d.rocm.miopen.
    .tolerance = [](const Workload&, const Config&) { return kTransformAlgorithmTolerance; },
};

}  // namespace tune
