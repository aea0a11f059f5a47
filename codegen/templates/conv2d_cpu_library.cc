#include "codegen/templates/conv2d_cpu_library.h"

#include <algorithm>

#include "codegen/templates/library_call.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"
#include "runtime/tune_runtime.h"

namespace tune {
namespace {

using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::LoopKind;
using ir::Stmt;
using ir::Var;

bool IsPointwise(const Conv2dShape& s) {
  return s.r == 1 && s.s == 1 && s.stride == 1 && s.pad == 0 && s.dilation == 1;
}

bool WinogradApplies(const Conv2dShape& s) {
  return s.r == 3 && s.s == 3 && s.stride == 1 && s.dilation == 1;
}

// --- conv2d.cpu.im2col_openblas ----------------------------------------------------------------

ConfigSpace Im2colSpace(const Workload& workload, const Target&) {
  const Conv2dShape& s = workload.conv2d();
  const int64_t pq = s.p() * s.q();
  ConfigSpace space;
  space.AddKnob("im2col", IsPointwise(s) ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "0: explicit column buffer; 1: implicit, sgemm reads the input (1x1/s1/p0)");
  space.AddKnob("pq_block", ClipToExtent({64, 256, 1024, 4096}, pq),
                "output positions per column block (the column buffer is C*R*S x pq_block)");
  space.AddConstraint(StrCat("im2col == 1 needs pq_block == P*Q (", pq, "): nothing is blocked"),
                      [pq](const Config& c) {
                        return KnobValue(c, "im2col") == 0 || KnobValue(c, "pq_block") == pq;
                      });
  AddEpilogueKnob(space, workload, "the bias broadcast into the output and added by sgemm");
  return space;
}

Config Im2colDefault(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  ConfigSpace space = Im2colSpace(workload, target);
  Config config = LibraryDefaultConfig(space);
  config["im2col"] = IsPointwise(s) ? 1 : 0;
  // A column block of at most ~1 MiB stays in the L2 cache between im2col and sgemm.
  const int64_t crs = s.c * s.r * s.s;
  config["pq_block"] = IsPointwise(s)
                           ? space.FindKnob("pq_block")->values.back()
                           : LargestAtMost(space.FindKnob("pq_block")->values,
                                           std::max<int64_t>(64, (int64_t{1} << 18) / crs));
  TUNE_CHECK(space.IsValid(config)) << ConfigToString(config);
  return config;
}

absl::StatusOr<ir::LoweredFunc> BuildIm2col(const Workload& workload, const Target& target,
                                            const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuIm2colOpenblas, workload, target, config));
  const Conv2dShape& s = workload.conv2d();
  const int64_t p = s.p(), q = s.q(), pq = p * q, crs = s.c * s.r * s.s;
  std::vector<Buffer> params = KernelParams(workload);
  const Buffer& input = params[0];
  const Buffer& weight = params[1];
  const Buffer& out = params.back();
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  const bool beta_bias = BiasThroughBeta(workload, config);
  const Expr beta(beta_bias ? 1.0f : 0.0f);
  const Expr threads = I32(target.threads);

  std::vector<Stmt> body;
  if (beta_bias) {
    body.push_back(BroadcastBias(out, params[2], s.n, s.k, pq));
  }
  Var n("n");
  Stmt per_image;
  if (KnobValue(config, "im2col") == 1) {
    per_image = CallShim("tune_openblas_sgemm",
                         {Ptr(weight), Ptr(input, n * (s.c * s.h * s.w)), Ptr(out, n * (s.k * pq)),
                          I64(s.k), I64(pq), I64(s.c), I64(s.c), I64(pq), I64(pq), beta, threads});
  } else {
    const int64_t block = KnobValue(config, "pq_block");
    Buffer cols("columns", ir::MemoryScope::kStack);
    Var b("b"), row("row"), j("j");
    Expr pq0 = b * block;
    Var width("width");  // positions in this block: block, or fewer in the last one
    // columns[row][j]: the input under filter tap `row` = (c, r, s) at output position pq0 + j.
    Stmt gather = StoreIm2colElement(cols, row * block + j, input, s, n, row, pq0 + j);
    Stmt im2col =
        For::Make(row, 0, crs, target.threads > 1 ? LoopKind::kParallel : LoopKind::kSerial,
                  For::Make(j, 0, width, LoopKind::kSerial, gather));
    Stmt gemm = CallShim("tune_openblas_sgemm",
                         {Ptr(weight), Ptr(cols), Ptr(out, n * (s.k * pq) + pq0), I64(s.k), width,
                          I64(crs), I64(crs), I64(block), I64(pq), beta, threads});
    Stmt blocks = For::Make(b, 0, (pq + block - 1) / block, LoopKind::kSerial,
                            ir::LetStmt::Make(width, ir::Min::Make(Expr(block), pq - pq0),
                                              ir::Block::Make({im2col, gemm})));
    per_image = ir::Allocate::Make(cols, crs * block, blocks);
  }
  body.push_back(For::Make(n, 0, s.n, LoopKind::kSerial, per_image));
  body.push_back(EpiloguePass(out, has_bias ? params[2] : out, EpilogueAfterSgemm(workload, config),
                              s.n, s.k, pq));
  return LibraryFunc(func_name, std::move(params), ir::Block::Make(std::move(body)),
                     RuntimeLibraryNamed("openblas"));
}

// --- conv2d.cpu.dnnl ---------------------------------------------------------------------------

// Winograd (1), or oneDNN's choice (2), which may be Winograd.
double DnnlTolerance(const Workload&, const Config& config) {
  return KnobValue(config, "algorithm") == 0 ? 1.0 : kWinogradF43Tolerance;
}

ConfigSpace DnnlSpace(const Workload& workload, const Target&) {
  ConfigSpace space;
  space.AddKnob("algorithm",
                WinogradApplies(workload.conv2d()) ? std::vector<int64_t>{0, 2, 1}
                                                   : std::vector<int64_t>{0, 2},
                "0: direct; 2: oneDNN's choice; 1: Winograd (3x3, stride 1, dilation 1)");
  space.AddKnob("layout", {0, 1},
                "0: plain NCHW/KCRS/NKPQ; 1: oneDNN's blocked layouts, reorders timed");
  AddEpilogueKnob(space, workload, "oneDNN's bias and ReLU post-ops in the convolution");
  return space;
}

Config DnnlDefault(const Workload& workload, const Target& target) {
  Config config = LibraryDefaultConfig(DnnlSpace(workload, target));
  config["algorithm"] = 2;  // what a oneDNN user writes
  config["layout"] = 1;
  return config;
}

absl::StatusOr<ir::LoweredFunc> BuildDnnl(const Workload& workload, const Target& target,
                                          const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuDnnl, workload, target, config));
  const Conv2dShape& s = workload.conv2d();
  std::vector<Buffer> params = KernelParams(workload);
  const Buffer& out = params.back();
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  const int64_t post_ops = LibraryPostOps(workload, config);
  std::vector<Stmt> body;
  body.push_back(
      CallShim("tune_dnnl_conv2d",
               {Ptr(params[0]), Ptr(params[1]), Ptr(has_bias ? params[2] : out), Ptr(out), I64(s.n),
                I64(s.c), I64(s.h), I64(s.w), I64(s.k), I64(s.r), I64(s.s), I64(s.stride),
                I64(s.pad), I64(s.dilation), I32(KnobValue(config, "algorithm")),
                I32(KnobValue(config, "layout")), I32(post_ops), I32(target.threads)}));
  if (post_ops == 0) {  // the whole epilogue (if any) as a generated pass
    body.push_back(EpiloguePass(out, has_bias ? params[2] : out, workload.epilogue(), s.n, s.k,
                                s.p() * s.q()));
  }
  return LibraryFunc(func_name, std::move(params), ir::Block::Make(std::move(body)),
                     RuntimeLibraryNamed("dnnl"));
}

}  // namespace

const KernelTemplate kConv2dCpuIm2colOpenblas = {
    .name = "conv2d.cpu.im2col_openblas",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kLlvm,
    .space = &Im2colSpace,
    .default_config = &Im2colDefault,
    .build = &BuildIm2col,
    .library = "openblas",
};

const KernelTemplate kConv2dCpuDnnl = {
    .name = "conv2d.cpu.dnnl",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kLlvm,
    .space = &DnnlSpace,
    .default_config = &DnnlDefault,
    .build = &BuildDnnl,
    .library = "dnnl",
    .tolerance = &DnnlTolerance,
};

}  // namespace tune
