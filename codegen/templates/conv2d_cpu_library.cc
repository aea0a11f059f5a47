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

bool WinogradApplies(const Conv2dShape& s) {
  return s.r == 3 && s.s == 3 && s.stride == 1 && s.dilation == 1;
}

// --- conv2d.cpu.im2col_openblas ----------------------------------------------------------------

ConfigSpace Im2colSpace(const Workload& workload, const Target&) {
  const Conv2dShape& s = workload.conv2d();
  const int64_t pq = s.p() * s.q();
  ConfigSpace space;
  space.AddKnob("im2col", s.pointwise() ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
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
  config["im2col"] = s.pointwise() ? 1 : 0;
  // A column block of at most ~1 MiB stays in the L2 cache between im2col and sgemm.
  const int64_t crs = s.c * s.r * s.s;
  config["pq_block"] = s.pointwise()
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

// f32 in NCHW goes through tune_dnnl_conv2d; typed dtypes and the other layouts through
// tune_dnnl_conv2d_typed, their epilogue fused as oneDNN's post-ops, but for outputs with scales
// (scale conv + bias, then ReLU), which get it from a generated pass after the scaled product.
bool TypedDnnl(const Workload& workload) {
  const Conv2dShape& s = workload.conv2d();
  return workload.dtype() != Dtype::kF32 || s.nhwc || s.blocked();
}

// Winograd (1), or oneDNN's choice (2), which may be Winograd.
double DnnlTolerance(const Workload&, const Config& config) {
  return KnobValue(config, "algorithm") == 0 ? 1.0 : kWinogradF43Tolerance;
}

ConfigSpace DnnlSpace(const Workload& workload, const Target&) {
  const bool winograd = WinogradApplies(workload.conv2d()) && workload.dtype() == Dtype::kF32;
  ConfigSpace space;
  space.AddKnob("algorithm", winograd ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{0, 2},
                "0: direct; 2: oneDNN's choice; 1: Winograd (f32, 3x3, stride 1, dilation 1)");
  space.AddKnob("layout", {0, 1},
                "0: the tensors given to oneDNN in the workload's layout; 1: oneDNN's preferred "
                "layouts, reorders timed");
  if (!TypedDnnl(workload)) {
    AddEpilogueKnob(space, workload, "oneDNN's bias and ReLU post-ops in the convolution");
  }
  return space;
}

Config DnnlDefault(const Workload& workload, const Target& target) {
  Config config = LibraryDefaultConfig(DnnlSpace(workload, target));
  config["algorithm"] = 2;  // what a oneDNN user writes
  config["layout"] = 1;
  return config;
}

// out (+ bias[channel]) (max 0) over an output of the workload's layout.
Stmt OutputEpiloguePass(const Workload& workload, const Buffer& out, const Buffer& bias) {
  const Conv2dShape& s = workload.conv2d();
  const int64_t pq = s.p() * s.q();
  if (s.nhwc) {
    return EpiloguePass(out, bias, workload.epilogue(), s.n * pq, s.k, 1);
  }
  if (!s.blocked()) {
    return EpiloguePass(out, bias, workload.epilogue(), s.n, s.k, pq);
  }
  // [N][K/b][P*Q][b]: channel kb * b + kc.
  const int64_t b = s.block;
  Var o("o"), i("i"), c("c");
  const Expr index = (o * pq + i) * b + c;
  const Expr channel = (o % (s.k / b)) * b + c;
  const Expr value = ApplyEpilogue(workload.epilogue(), ir::Load::Make(out, index),
                                   EpilogueHasBias(workload.epilogue())
                                       ? ir::Cast::Make(ir::Type::Float32(), bias(channel))
                                       : Expr(0.0f));
  return For::Make(
      o, 0, s.n * (s.k / b), LoopKind::kSerial,
      For::Make(i, 0, pq, LoopKind::kSerial,
                For::Make(c, 0, b, LoopKind::kSerial, ir::Store::Make(out, index, value))));
}

Stmt TypedDnnlCall(const Workload& workload, const Target& target, const Config& config,
                   const std::vector<Buffer>& params) {
  const Conv2dShape& s = workload.conv2d();
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  const bool scaled = workload.has_scales();
  const bool requant = workload.requantizes();
  const size_t out = static_cast<size_t>(workload.OutputIndex());
  const Buffer& dst = params[out];
  const int64_t post_ops = scaled || requant
                               ? 0
                               : (has_bias ? TUNE_POST_BIAS : 0) |
                                     (EpilogueHasRelu(workload.epilogue()) ? TUNE_POST_RELU : 0);
  const int64_t scale_mode = requant ? TUNE_DNNL_REQUANT : scaled ? 1 : 0;
  const int64_t data_layout = s.nhwc ? TUNE_DNNL_NHWC : s.blocked() ? s.block : TUNE_DNNL_NCHW;
  std::vector<Stmt> body;
  body.push_back(
      CallShim("tune_dnnl_conv2d_typed", {Ptr(params[0]),
                                          Ptr(params[1]),
                                          Ptr(has_bias ? params[2] : dst),
                                          Ptr(dst),
                                          Ptr(scaled || requant ? params[out + 1] : dst),
                                          Ptr(scaled ? params[out + 2] : dst),
                                          Ptr(requant ? params[out + 2] : dst),
                                          I64(s.n),
                                          I64(s.c),
                                          I64(s.h),
                                          I64(s.w),
                                          I64(s.k),
                                          I64(s.r),
                                          I64(s.s),
                                          I64(s.stride),
                                          I64(s.pad),
                                          I64(s.dilation),
                                          I32(DnnlTypeCode(ActivationType(workload.dtype()))),
                                          I32(DnnlTypeCode(WeightType(workload.dtype()))),
                                          I32(DnnlTypeCode(workload.out_type())),
                                          I32(data_layout),
                                          I32(scale_mode),
                                          I32(KnobValue(config, "algorithm")),
                                          I32(KnobValue(config, "layout")),
                                          I32(post_ops),
                                          I32(target.threads)}));
  if (scaled && workload.epilogue() != Epilogue::kNone) {  // after the scaled product
    body.push_back(OutputEpiloguePass(workload, dst, has_bias ? params[2] : dst));
  }
  return ir::Block::Make(std::move(body));
}

absl::StatusOr<ir::LoweredFunc> BuildDnnl(const Workload& workload, const Target& target,
                                          const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuDnnl, workload, target, config));
  std::vector<Buffer> params = KernelParams(workload);
  if (TypedDnnl(workload)) {
    Stmt body = TypedDnnlCall(workload, target, config, params);
    return LibraryFunc(func_name, std::move(params), body, RuntimeLibraryNamed("dnnl"));
  }
  const Conv2dShape& s = workload.conv2d();
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
    .conv_layouts = ConvLayouts::kAll,
    .dtypes = DtypeSet{Dtype::kF32, Dtype::kBf16, Dtype::kI8, Dtype::kU8I8},
    .requant = true,
    .tolerance = &DnnlTolerance,
};

}  // namespace tune
