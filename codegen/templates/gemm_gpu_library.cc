#include "codegen/templates/gemm_gpu_library.h"

#include "codegen/templates/library_call.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"
#include "runtime/tune_gpu_runtime.h"

namespace tune {
namespace {

using ir::Buffer;
using ir::Expr;

ConfigSpace CublasSpace(const Workload& workload, const Target&) {
  ConfigSpace space;
  AddEpilogueKnob(space, workload, "cublasLtMatmul with the epilogue fused");
  return space;
}

ConfigSpace RocblasSpace(const Workload&, const Target&) { return ConfigSpace(); }

Config CublasDefault(const Workload& workload, const Target& target) {
  return LibraryDefaultConfig(CublasSpace(workload, target));
}

Config RocblasDefault(const Workload&, const Target&) { return Config(); }

// cuBLASLt's heuristic ranks the algorithms for a problem; the knob measures its first eight.
ConfigSpace CublasLtSpace(const Workload&, const Target&) {
  ConfigSpace space;
  space.AddKnob("algo", {0, 1, 2, 3, 4, 5, 6, 7},
                "which of cuBLASLt's heuristic algorithms for the problem (0: its first choice)");
  return space;
}

Config CublasLtDefault(const Workload& workload, const Target& target) { return {{"algo", 0}}; }

// cuBLASLt's fp8 kernels take the TN operand order (our layout=NT) and 16-byte aligned leading
// dimensions (K and N multiples of 16); its integer (IMMA) kernels the TN order, an i32 output
// without an epilogue (the raw sums) and K and N multiples of 4.
absl::Status CublasLtShape(const Workload& workload) {
  const GemmShape& g = workload.gemm();
  if (workload.dtype() == Dtype::kI8) {
    if (g.layout != GemmLayout::kNT || workload.out_type() != ElementType::kI32 ||
        workload.epilogue() != Epilogue::kNone || g.k % 4 != 0 || g.n % 4 != 0) {
      return absl::InvalidArgumentError(
          StrCat("template gemm.cuda.cublaslt builds i8 GEMMs in layout=NT with out=i32, no "
                 "epilogue, and K and N multiples of 4 (cuBLASLt's IMMA kernels), not '",
                 workload.ToString(), "'"));
    }
    return absl::OkStatus();
  }
  if (!IsFp8Dtype(workload.dtype())) {
    return absl::OkStatus();
  }
  if (g.layout != GemmLayout::kNT || g.k % 16 != 0 || g.n % 16 != 0) {
    return absl::InvalidArgumentError(
        StrCat("template gemm.cuda.cublaslt builds fp8 GEMMs in layout=NT with K and N multiples "
               "of 16 (cuBLASLt's fp8 kernels), not '",
               workload.ToString(), "'"));
  }
  return absl::OkStatus();
}

// Hopper's fp8 tensor cores add products in an accumulator narrower than f32 between cuBLASLt's
// promotions to f32 (its default without CUBLASLT_MATMUL_DESC_FAST_ACCUM): on an H200, 4096^3
// e4m3 left 152 of 16.8M outputs beyond the f32-accumulation bound, the first at 1.08 times it.
// Held to 4 times the bound; every other dtype to the bound itself.
double CublasLtTolerance(const Workload& workload, const Config&) {
  return IsFp8Dtype(workload.dtype()) ? 4.0 : 1.0;
}

// `shim(A, B, bias or 0, C, scale_a or 0, scale_b or 0, M, N, K, in_type, out_type, nt,
// epilogue, algo, stream)`: the typed GEMM entries of cuBLASLt's and hipBLASLt's shims.
absl::StatusOr<ir::LoweredFunc> BuildTypedGemm(const KernelTemplate& tpl, std::string_view shim,
                                               const Workload& workload, const Config& config,
                                               std::string_view func_name) {
  const GemmShape& g = workload.gemm();
  std::vector<Buffer> params = KernelParams(workload);
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  const size_t out = static_cast<size_t>(workload.OutputIndex());
  const bool scales = workload.has_scales();
  ir::Var stream("stream");
  ir::Stmt call = CallShim(
      shim,
      {Ptr(params[0]), Ptr(params[1]), has_bias ? Ptr(params[2]) : I64(0), Ptr(params[out]),
       scales ? Ptr(params[out + 1]) : I64(0), scales ? Ptr(params[out + 2]) : I64(0), I64(g.m),
       I64(g.n), I64(g.k), I32(GpuShimType(workload.input_type(), workload.dtype())),
       I32(GpuShimType(workload.out_type(), Dtype::kF32)), I32(g.layout == GemmLayout::kNT ? 1 : 0),
       I32(GpuEpilogueCode(workload)), I32(KnobValue(config, "algo")), stream});
  ir::LoweredFunc func =
      LibraryFunc(func_name, std::move(params), call, RuntimeLibraryNamed(tpl.library));
  func.stream_param = stream;
  return func;
}

absl::StatusOr<ir::LoweredFunc> BuildCublasLt(const Workload& workload, const Target& target,
                                              const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCudaCublasLt, workload, target, config));
  RETURN_IF_ERROR(CublasLtShape(workload));
  return BuildTypedGemm(kGemmCudaCublasLt, "tune_cublaslt_gemm", workload, config, func_name);
}

// hipBLASLt's heuristic ranks the algorithms for a problem, as cuBLASLt's does.
ConfigSpace HipblasLtSpace(const Workload&, const Target&) {
  ConfigSpace space;
  space.AddKnob("algo", {0, 1, 2, 3, 4, 5, 6, 7},
                "which of hipBLASLt's heuristic algorithms for the problem (0: its first choice)");
  return space;
}

Config HipblasLtDefault(const Workload&, const Target&) { return {{"algo", 0}}; }

// hipBLASLt's integer GEMMs sum s8 x s8 into i32 (HIPBLAS_COMPUTE_32I) and stop there: the raw
// sums, without scales or an epilogue. Its float types take both layouts (its fp8 table holds for
// NN, NT, TN and TT alike) and leave alignment to the heuristic, which finds no algorithm where
// it has none (the shim's TUNE_GPU_UNSUPPORTED).
absl::Status HipblasLtShape(const Workload& workload) {
  if (workload.dtype() == Dtype::kI8 &&
      (workload.out_type() != ElementType::kI32 || workload.epilogue() != Epilogue::kNone)) {
    return absl::InvalidArgumentError(
        StrCat("template gemm.rocm.hipblaslt builds i8 GEMMs with out=i32 and no epilogue "
               "(hipBLASLt's HIPBLAS_COMPUTE_32I sums), not '",
               workload.ToString(), "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ir::LoweredFunc> BuildHipblasLt(const Workload& workload, const Target& target,
                                               const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmRocmHipblasLt, workload, target, config));
  RETURN_IF_ERROR(HipblasLtShape(workload));
  return BuildTypedGemm(kGemmRocmHipblasLt, "tune_hipblaslt_gemm", workload, config, func_name);
}

bool RocblasApplies(const Workload& workload, const Target&) {
  return workload.epilogue() == Epilogue::kNone;
}

// `shim(A, B, bias or 0, C, M, N, K, epilogue, epilogue_mode, stream)`.
absl::StatusOr<ir::LoweredFunc> BuildGemm(const KernelTemplate& tpl, std::string_view shim,
                                          const Workload& workload, const Target& target,
                                          const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(tpl, workload, target, config));
  const GemmShape& g = workload.gemm();
  std::vector<Buffer> params = KernelParams(workload);
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  ir::Var stream("stream");
  ir::Stmt call =
      CallShim(shim, {Ptr(params[0]), Ptr(params[1]), has_bias ? Ptr(params[2]) : I64(0),
                      Ptr(params.back()), I64(g.m), I64(g.n), I64(g.k),
                      I32(GpuEpilogueCode(workload)), I32(GpuEpilogueMode(config)), stream});
  ir::LoweredFunc func =
      LibraryFunc(func_name, std::move(params), call, RuntimeLibraryNamed(tpl.library));
  func.stream_param = stream;
  return func;
}

absl::StatusOr<ir::LoweredFunc> BuildCublas(const Workload& workload, const Target& target,
                                            const Config& config, std::string_view func_name) {
  return BuildGemm(kGemmCudaCublas, "tune_cublas_sgemm", workload, target, config, func_name);
}

absl::StatusOr<ir::LoweredFunc> BuildRocblas(const Workload& workload, const Target& target,
                                             const Config& config, std::string_view func_name) {
  if (!RocblasApplies(workload, target)) {
    return absl::InvalidArgumentError(
        StrCat("template gemm.rocm.rocblas builds workloads without an epilogue, not '",
               workload.ToString(), "'"));
  }
  return BuildGemm(kGemmRocmRocblas, "tune_rocblas_sgemm", workload, target, config, func_name);
}

}  // namespace

const KernelTemplate kGemmCudaCublas = {
    .name = "gemm.cuda.cublas",
    .version = 1,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kCuda,
    .space = &CublasSpace,
    .default_config = &CublasDefault,
    .build = &BuildCublas,
    .library = "cublas",
};

const KernelTemplate kGemmCudaCublasLt = {
    .name = "gemm.cuda.cublaslt",
    .version = 1,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kCuda,
    .space = &CublasLtSpace,
    .default_config = &CublasLtDefault,
    .build = &BuildCublasLt,
    .library = "cublas",
    .gemm_layouts = GemmLayouts::kBoth,
    // f32 is gemm.cuda.cublas's (cuBLAS's sgemm, cuBLASLt for a fused epilogue).
    .dtypes = DtypeSet{Dtype::kTf32, Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kFp8E4m3,
                       Dtype::kFp8E5m2},
    .check_shape = &CublasLtShape,
    .tolerance = &CublasLtTolerance,
};

const KernelTemplate kGemmRocmRocblas = {
    .name = "gemm.rocm.rocblas",
    .version = 1,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kRocm,
    .space = &RocblasSpace,
    .default_config = &RocblasDefault,
    .build = &BuildRocblas,
    .library = "rocblas",
    .applies = &RocblasApplies,
};

const KernelTemplate kGemmRocmHipblasLt = {
    .name = "gemm.rocm.hipblaslt",
    .version = 1,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kRocm,
    .space = &HipblasLtSpace,
    .default_config = &HipblasLtDefault,
    .build = &BuildHipblasLt,
    .library = "hipblaslt",
    .gemm_layouts = GemmLayouts::kBoth,
    // f32 is gemm.rocm.rocblas's. Which fp8 encodings a target runs is dtype_support.h's to say
    // (gfx942 the FNUZ ones); the shim passes both kinds to hipBLASLt by their own names.
    .dtypes = DtypeSet{Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kFp8E4m3, Dtype::kFp8E5m2,
                       Dtype::kFp8E4m3Fnuz, Dtype::kFp8E5m2Fnuz},
    .check_shape = &HipblasLtShape,
    // No tolerance beyond the standard bound: nothing measured on an AMD GPU says otherwise yet
    // (gemm.cuda.cublaslt's fp8 allowance came from an H200 run).
};

}  // namespace tune
