#include "codegen/templates/library_call.h"

#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"
#include "runtime/tune_gpu_runtime.h"
#include "runtime/tune_runtime.h"

namespace tune {

using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::Load;
using ir::LoopKind;
using ir::Stmt;
using ir::Store;
using ir::Var;

void AddEpilogueKnob(ConfigSpace& space, const Workload& workload, std::string_view library_ops) {
  if (workload.epilogue() == Epilogue::kNone) {
    return;
  }
  space.AddKnob("epilogue", {kEpilogueSeparate, kEpilogueLibrary},
                StrCat("0: the library call, then a generated ", EpilogueName(workload.epilogue()),
                       " pass; 1: ", library_ops));
}

int64_t EpilogueChoice(const Config& config) {
  auto it = config.find("epilogue");
  return it == config.end() ? kEpilogueSeparate : it->second;
}

Config LibraryDefaultConfig(const ConfigSpace& space) {
  Config config;
  for (const Knob& knob : space.knobs()) {
    config[knob.name] = knob.name == "epilogue" ? kEpilogueLibrary : knob.values.front();
  }
  return config;
}

int64_t LibraryPostOps(const Workload& workload, const Config& config) {
  if (EpilogueChoice(config) != kEpilogueLibrary) {
    return 0;
  }
  return (EpilogueHasBias(workload.epilogue()) ? TUNE_POST_BIAS : 0) |
         (EpilogueHasRelu(workload.epilogue()) ? TUNE_POST_RELU : 0);
}

bool BiasThroughBeta(const Workload& workload, const Config& config) {
  return EpilogueHasBias(workload.epilogue()) && EpilogueChoice(config) == kEpilogueLibrary;
}

Epilogue EpilogueAfterSgemm(const Workload& workload, const Config& config) {
  if (!BiasThroughBeta(workload, config)) {
    return workload.epilogue();
  }
  return EpilogueHasRelu(workload.epilogue()) ? Epilogue::kRelu : Epilogue::kNone;
}

int64_t GpuShimType(ElementType type, Dtype dtype) {
  switch (type) {
    case ElementType::kF16:
      return TUNE_GPU_TYPE_F16;
    case ElementType::kBf16:
      return TUNE_GPU_TYPE_BF16;
    case ElementType::kFp8E4m3:
      return TUNE_GPU_TYPE_FP8E4M3;
    case ElementType::kFp8E5m2:
      return TUNE_GPU_TYPE_FP8E5M2;
    case ElementType::kFp8E4m3Fnuz:
      return TUNE_GPU_TYPE_FP8E4M3FNUZ;
    case ElementType::kFp8E5m2Fnuz:
      return TUNE_GPU_TYPE_FP8E5M2FNUZ;
    case ElementType::kI8:
      return TUNE_GPU_TYPE_I8;
    case ElementType::kI32:
      return TUNE_GPU_TYPE_I32;
    default:
      return dtype == Dtype::kTf32 ? TUNE_GPU_TYPE_TF32 : TUNE_GPU_TYPE_F32;
  }
}

int64_t GpuEpilogueCode(const Workload& workload) {
  return (EpilogueHasBias(workload.epilogue()) ? TUNE_GPU_EPILOGUE_BIAS : 0) |
         (EpilogueHasRelu(workload.epilogue()) ? TUNE_GPU_EPILOGUE_RELU : 0);
}

int64_t GpuEpilogueMode(const Config& config) {
  return EpilogueChoice(config) == kEpilogueLibrary ? TUNE_GPU_EPILOGUE_LIBRARY
                                                    : TUNE_GPU_EPILOGUE_SEPARATE;
}

const RuntimeLibrary& RuntimeLibraryNamed(std::string_view name) {
  const RuntimeLibrary* lib = FindRuntimeLibrary(name);
  TUNE_CHECK(lib != nullptr) << "no runtime library " << name;
  return *lib;
}

std::vector<Buffer> KernelParams(const Workload& workload) {
  std::vector<Buffer> params;
  for (const TensorArg& arg : workload.Arguments()) {
    params.emplace_back(arg.name, ir::MemoryScope::kGlobal, ir::Type::Of(arg.type));
  }
  return params;
}

Expr I64(int64_t v) { return Expr(v); }

int64_t DnnlTypeCode(ElementType type) {
  switch (type) {
    case ElementType::kBf16:
      return TUNE_DNNL_BF16;
    case ElementType::kI8:
      return TUNE_DNNL_S8;
    case ElementType::kU8:
      return TUNE_DNNL_U8;
    case ElementType::kI32:
      return TUNE_DNNL_S32;
    default:
      return TUNE_DNNL_F32;
  }
}
Expr I32(int64_t v) { return ir::Cast::Make(ir::Type::Int32(), Expr(v)); }
Expr Ptr(const Buffer& buffer, Expr offset) { return ir::AddressOf::Make(buffer, offset); }

Stmt CallShim(std::string_view symbol, std::vector<Expr> args) {
  return ir::Evaluate::Make(
      ir::CallExtern::Make(ir::Type::Int32(), std::string(symbol), std::move(args)),
      /*return_on_error=*/true);
}

Stmt EpiloguePass(const Buffer& out, const Buffer& bias, Epilogue epilogue, int64_t outer,
                  int64_t channels, int64_t inner) {
  if (epilogue == Epilogue::kNone) {
    return Stmt();
  }
  Var o("o"), c("c"), i("i");
  Expr index = (o * channels + c) * inner + i;
  Expr value = ApplyEpilogue(epilogue, Load::Make(out, index),
                             EpilogueHasBias(epilogue) ? Load::Make(bias, c) : Expr(0.0f));
  return For::Make(
      o, 0, outer, LoopKind::kSerial,
      For::Make(c, 0, channels, LoopKind::kSerial,
                For::Make(i, 0, inner, LoopKind::kSerial, Store::Make(out, index, value))));
}

Stmt BroadcastBias(const Buffer& out, const Buffer& bias, int64_t outer, int64_t channels,
                   int64_t inner) {
  Var o("o"), c("c"), i("i");
  return For::Make(
      o, 0, outer, LoopKind::kSerial,
      For::Make(c, 0, channels, LoopKind::kSerial,
                For::Make(i, 0, inner, LoopKind::kSerial,
                          Store::Make(out, (o * channels + c) * inner + i, Load::Make(bias, c)))));
}

ir::LoweredFunc LibraryFunc(std::string_view name, std::vector<Buffer> params, Stmt body,
                            const RuntimeLibrary& library) {
  ir::LoweredFunc func;
  func.name = std::string(name);
  func.params = std::move(params);
  func.body = std::move(body);
  func.external_libs = {std::string(library.shim_file)};
  return func;
}

}  // namespace tune
