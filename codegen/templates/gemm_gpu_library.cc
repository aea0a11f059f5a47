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

}  // namespace tune
