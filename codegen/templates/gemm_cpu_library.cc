#include "codegen/templates/gemm_cpu_library.h"

#include "codegen/templates/library_call.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"
#include "runtime/tune_runtime.h"

namespace tune {
namespace {

using ir::Buffer;
using ir::Expr;
using ir::Stmt;

ConfigSpace OpenblasSpace(const Workload& workload, const Target&) {
  ConfigSpace space;
  AddEpilogueKnob(space, workload, "the bias broadcast into C and added by sgemm (beta = 1)");
  return space;
}

// Typed (or layout=NT) GEMMs go through tune_dnnl_matmul_typed, their epilogue fused as oneDNN's
// post-ops; outputs with scales (scale (A x B) + bias, then ReLU) get it from a generated pass
// after the scaled product instead.
bool TypedDnnl(const Workload& workload) {
  return workload.dtype() != Dtype::kF32 || workload.gemm().layout == GemmLayout::kNT;
}

ConfigSpace DnnlSpace(const Workload& workload, const Target&) {
  ConfigSpace space;
  space.AddKnob("layout", {0, 1},
                "0: B as given; 1: B reordered into oneDNN's preferred layout on every call");
  if (!TypedDnnl(workload)) {
    AddEpilogueKnob(space, workload, "oneDNN's bias and ReLU post-ops in the matmul");
  }
  return space;
}

Config OpenblasDefault(const Workload& workload, const Target& target) {
  return LibraryDefaultConfig(OpenblasSpace(workload, target));
}

Config DnnlDefault(const Workload& workload, const Target& target) {
  return LibraryDefaultConfig(DnnlSpace(workload, target));
}

absl::StatusOr<ir::LoweredFunc> BuildOpenblas(const Workload& workload, const Target& target,
                                              const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuOpenblas, workload, target, config));
  const GemmShape& g = workload.gemm();
  std::vector<Buffer> params = KernelParams(workload);
  const Buffer& a = params.front();
  const Buffer& b = params[1];
  const Buffer& c = params.back();
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  const bool beta_bias = BiasThroughBeta(workload, config);
  std::vector<Stmt> body;
  if (beta_bias) {
    body.push_back(BroadcastBias(c, params[2], g.m, g.n, 1));
  }
  body.push_back(CallShim("tune_openblas_sgemm",
                          {Ptr(a), Ptr(b), Ptr(c), I64(g.m), I64(g.n), I64(g.k), I64(g.k), I64(g.n),
                           I64(g.n), Expr(beta_bias ? 1.0f : 0.0f), I32(target.threads)}));
  body.push_back(
      EpiloguePass(c, has_bias ? params[2] : c, EpilogueAfterSgemm(workload, config), g.m, g.n, 1));
  return LibraryFunc(func_name, std::move(params), ir::Block::Make(std::move(body)),
                     RuntimeLibraryNamed("openblas"));
}

absl::StatusOr<ir::LoweredFunc> BuildDnnl(const Workload& workload, const Target& target,
                                          const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuDnnl, workload, target, config));
  const GemmShape& g = workload.gemm();
  std::vector<Buffer> params = KernelParams(workload);
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  if (TypedDnnl(workload)) {
    const bool scaled = workload.has_scales();
    const bool requant = workload.requantizes();
    const size_t out = static_cast<size_t>(workload.OutputIndex());
    const Buffer& c = params[out];
    const int64_t post_ops = scaled || requant
                                 ? 0
                                 : (has_bias ? TUNE_POST_BIAS : 0) |
                                       (EpilogueHasRelu(workload.epilogue()) ? TUNE_POST_RELU : 0);
    const int64_t scale_mode = requant ? TUNE_DNNL_REQUANT : scaled ? 1 : 0;
    std::vector<Stmt> body;
    body.push_back(CallShim(
        "tune_dnnl_matmul_typed",
        {Ptr(params[0]), Ptr(params[1]), Ptr(has_bias ? params[2] : c), Ptr(c),
         Ptr(scaled || requant ? params[out + 1] : c), Ptr(scaled ? params[out + 2] : c),
         Ptr(requant ? params[out + 2] : c), I64(g.m), I64(g.n), I64(g.k),
         I32(DnnlTypeCode(ActivationType(workload.dtype()))),
         I32(DnnlTypeCode(WeightType(workload.dtype()))), I32(DnnlTypeCode(workload.out_type())),
         I32(g.layout == GemmLayout::kNT ? 1 : 0), I32(scale_mode),
         I32(KnobValue(config, "layout")), I32(post_ops), I32(target.threads)}));
    if (scaled) {  // an f32 output: the bias and ReLU after the scaled product
      body.push_back(EpiloguePass(c, has_bias ? params[2] : c, workload.epilogue(), g.m, g.n, 1));
    }
    return LibraryFunc(func_name, std::move(params), ir::Block::Make(std::move(body)),
                       RuntimeLibraryNamed("dnnl"));
  }
  const Buffer& c = params.back();
  const int64_t post_ops = LibraryPostOps(workload, config);
  std::vector<Stmt> body;
  body.push_back(CallShim(
      "tune_dnnl_matmul",
      {Ptr(params[0]), Ptr(params[1]), Ptr(has_bias ? params[2] : c), Ptr(c), I64(g.m), I64(g.n),
       I64(g.k), I32(KnobValue(config, "layout")), I32(post_ops), I32(target.threads)}));
  if (post_ops == 0) {  // the whole epilogue (if any) as a generated pass
    body.push_back(EpiloguePass(c, has_bias ? params[2] : c, workload.epilogue(), g.m, g.n, 1));
  }
  return LibraryFunc(func_name, std::move(params), ir::Block::Make(std::move(body)),
                     RuntimeLibraryNamed("dnnl"));
}

}  // namespace

const KernelTemplate kGemmCpuOpenblas = {
    .name = "gemm.cpu.openblas",
    .version = 1,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kLlvm,
    .space = &OpenblasSpace,
    .default_config = &OpenblasDefault,
    .build = &BuildOpenblas,
    .library = "openblas",
};

const KernelTemplate kGemmCpuDnnl = {
    .name = "gemm.cpu.dnnl",
    .version = 1,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kLlvm,
    .space = &DnnlSpace,
    .default_config = &DnnlDefault,
    .build = &BuildDnnl,
    .library = "dnnl",
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = DtypeSet{Dtype::kF32, Dtype::kBf16, Dtype::kI8, Dtype::kU8I8},
    .requant = true,
};

}  // namespace tune
