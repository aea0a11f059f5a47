#include "codegen/templates/template.h"

#include <algorithm>

#include "common/status.h"
#include "common/strings.h"

namespace tune {

namespace {

bool TemplateBuildsWeightForm(const KernelTemplate& tpl, const Workload& workload) {
  return !workload.prepared_weights() ||
         (tpl.targets == TemplateTargets::kLlvm && tpl.build && !tpl.build_object);
}

}  // namespace

bool TemplateBuildsFor(const KernelTemplate& tpl, TargetKind kind) {
  switch (tpl.targets) {
    case TemplateTargets::kLlvm:
      return kind == TargetKind::kLlvm;
    case TemplateTargets::kCuda:
      return kind == TargetKind::kCuda;
    case TemplateTargets::kRocm:
      return kind == TargetKind::kRocm;
    case TemplateTargets::kGpu:
      return kind == TargetKind::kCuda || kind == TargetKind::kRocm;
  }
  return false;
}

std::string_view TemplateTargetsName(const KernelTemplate& tpl) {
  switch (tpl.targets) {
    case TemplateTargets::kLlvm:
      return TargetKindName(TargetKind::kLlvm);
    case TemplateTargets::kCuda:
      return TargetKindName(TargetKind::kCuda);
    case TemplateTargets::kRocm:
      return TargetKindName(TargetKind::kRocm);
    case TemplateTargets::kGpu:
      return "cuda and rocm";
  }
  return "";
}

namespace {

bool TemplateBuildsLayoutOf(const KernelTemplate& tpl, const Workload& workload) {
  switch (workload.op()) {
    case OpKind::kGemm: {
      const bool nt = workload.gemm().layout == GemmLayout::kNT;
      return tpl.gemm_layouts == GemmLayouts::kBoth || (tpl.gemm_layouts == GemmLayouts::kNT) == nt;
    }
    case OpKind::kConv2d: {
      const Conv2dShape& c = workload.conv2d();
      switch (tpl.conv_layouts) {
        case ConvLayouts::kPlain:
          return !c.blocked() && !c.nhwc;
        case ConvLayouts::kBlocked:
          return c.blocked();
        case ConvLayouts::kBoth:
          return !c.nhwc;
        case ConvLayouts::kNhwc:
          return c.nhwc;
        case ConvLayouts::kAll:
          return true;
      }
      return false;
    }
  }
  return false;
}

}  // namespace

std::string TemplateLayoutsText(const KernelTemplate& tpl) {
  if (tpl.op == OpKind::kGemm) {
    switch (tpl.gemm_layouts) {
      case GemmLayouts::kNN:
        return "layout=NN";
      case GemmLayouts::kNT:
        return "layout=NT";
      case GemmLayouts::kBoth:
        return "layout=NN|NT";
    }
  }
  switch (tpl.conv_layouts) {
    case ConvLayouts::kPlain:
      return "layout=NCHW";
    case ConvLayouts::kBlocked:
      return "layout=NCHW4c|NCHW8c|NCHW16c";
    case ConvLayouts::kBoth:
      return "layout=NCHW|NCHW4c|NCHW8c|NCHW16c";
    case ConvLayouts::kNhwc:
      return "layout=NHWC";
    case ConvLayouts::kAll:
      return "layout=NCHW|NCHW4c|NCHW8c|NCHW16c|NHWC";
  }
  return "";
}

bool TemplateBuildsForm(const KernelTemplate& tpl, const Workload& workload) {
  return TemplateBuildsWeightForm(tpl, workload) && tpl.dtypes.Has(workload.dtype()) &&
         TemplateBuildsLayoutOf(tpl, workload) && (tpl.requant || !workload.requantizes());
}

absl::Status CheckTemplateForm(const KernelTemplate& tpl, const Workload& workload) {
  if (TemplateBuildsForm(tpl, workload)) {
    return absl::OkStatus();
  }
  if (!TemplateBuildsWeightForm(tpl, workload)) {
    return absl::InvalidArgumentError(
        StrCat("template ", tpl.name,
               " takes canonical weights only: weights=prepared is built by the CPU templates "
               "whose code tune generates (llvm targets), not '",
               workload.ToString(), "'"));
  }
  if (!tpl.dtypes.Has(workload.dtype())) {
    return absl::InvalidArgumentError(StrCat("template ", tpl.name,
                                             " builds dtype=", tpl.dtypes.Names(), ", not '",
                                             workload.ToString(), "'"));
  }
  if (workload.requantizes() && !tpl.requant) {
    return absl::InvalidArgumentError(StrCat("template ", tpl.name,
                                             " does not build epilogue=requant (gemm.cpu.dot, "
                                             "gemm.cpu.amx and gemm.cpu.dnnl do), not '",
                                             workload.ToString(), "'"));
  }
  return absl::InvalidArgumentError(StrCat("template ", tpl.name, " builds ", OpKindName(tpl.op),
                                           " kernels in ", TemplateLayoutsText(tpl), ", not '",
                                           workload.ToString(), "'"));
}

absl::Status CheckTemplateShape(const KernelTemplate& tpl, const Workload& workload) {
  return tpl.check_shape ? tpl.check_shape(workload) : absl::OkStatus();
}

double TemplateTolerance(const KernelTemplate& tpl, const Workload& workload,
                         const Config& config) {
  return tpl.tolerance ? std::max(1.0, tpl.tolerance(workload, config)) : 1.0;
}

absl::StatusOr<PreparedWeights> PrepareWeights(const KernelTemplate& tpl, const Workload& workload,
                                               const Target& target, const Config& config,
                                               std::string_view kernel_name) {
  RETURN_IF_ERROR(CheckTemplateForm(tpl, workload));
  if (!workload.prepared_weights()) {
    return absl::InvalidArgumentError(
        StrCat("'", workload.ToString(), "' takes canonical weights: nothing to prepare"));
  }
  const std::string name = PrepareFunctionName(kernel_name);
  if (tpl.prepare) {
    return tpl.prepare(workload, target, config, name);
  }
  return CopyOfWeights(workload, name);
}

PreparedWeights CopyOfWeights(const Workload& workload, std::string_view func_name) {
  // prepared[i] = weight[i], in the weights' element type (the size counted in 4-byte units).
  const TensorArg arg = workload.Arguments()[1];
  const ir::Type type = ir::Type::Of(arg.type);
  ir::Buffer weight("weight", ir::MemoryScope::kGlobal, type);
  ir::Buffer prepared("prepared", ir::MemoryScope::kGlobal, type);
  ir::Var i("i");
  PreparedWeights out;
  out.floats = (arg.NumBytes() + 3) / 4;
  out.func.name = std::string(func_name);
  out.func.params = {weight, prepared};
  out.func.body = ir::For::Make(i, 0, arg.NumElements(), ir::LoopKind::kSerial,
                                ir::Store::Make(prepared, i, ir::Load::Make(weight, i)));
  return out;
}

std::string DefaultFunctionName(const Workload& workload) {
  std::string name;
  switch (workload.op()) {
    case OpKind::kGemm: {
      const GemmShape& g = workload.gemm();
      name = StrCat("tune_gemm_M", g.m, "_N", g.n, "_K", g.k);
      if (g.layout == GemmLayout::kNT) {
        name += "_nt";
      }
      break;
    }
    case OpKind::kConv2d: {
      const Conv2dShape& s = workload.conv2d();
      name = StrCat("tune_conv2d_N", s.n, "_C", s.c, "_H", s.h, "_W", s.w, "_K", s.k, "_R", s.r,
                    "_S", s.s, "_s", s.stride, "_p", s.pad);
      if (s.dilation != 1) {
        StrAppend(&name, "_d", s.dilation);
      }
      if (s.blocked()) {
        StrAppend(&name, "_nchw", s.block, "c");  // a layout is another function
      } else if (s.nhwc) {
        name += "_nhwc";
      }
      break;
    }
  }
  // Other element types are other functions: "_bf16", "_fp8e4m3_outf32".
  if (workload.dtype() != Dtype::kF32) {
    StrAppend(&name, "_", DtypeName(workload.dtype()));
  }
  if (workload.out_type() != DefaultOutputType(workload.dtype())) {
    StrAppend(&name, "_out", ElementTypeName(workload.out_type()));
  }
  if (workload.epilogue() != Epilogue::kNone) {
    StrAppend(&name, "_", EpilogueName(workload.epilogue()));
  }
  if (workload.prepared_weights()) {
    StrAppend(&name, "_prepared");  // another argument: another function
  }
  return name;
}

}  // namespace tune
