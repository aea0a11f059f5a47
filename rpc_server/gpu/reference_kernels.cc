#include "rpc_server/gpu/reference_kernels.h"

#include <optional>

#include "common/status.h"
#include "common/strings.h"
#include "rpc_server/gpu/reference_ptx.h"

namespace tune::gpu {
namespace {

constexpr unsigned kRefBlock = 256;

GpuLaunch OneDimensional(int64_t elements) {
  GpuLaunch l;
  l.block[0] = kRefBlock;
  l.grid[0] = static_cast<uint32_t>((elements + kRefBlock - 1) / kRefBlock);
  return l;
}

// The device kernels' kind of an element type (reference_ptx.h); nullopt for one they lack.
std::optional<TypedKind> KindOf(ElementType type) {
  switch (type) {
    case ElementType::kF32:
      return TypedKind::kF32;
    case ElementType::kF16:
      return TypedKind::kF16;
    case ElementType::kBf16:
      return TypedKind::kBf16;
    case ElementType::kFp8E4m3:
      return TypedKind::kFp8E4m3;
    case ElementType::kFp8E5m2:
      return TypedKind::kFp8E5m2;
    case ElementType::kI8:
      return TypedKind::kS8;
    case ElementType::kU8:
      return TypedKind::kU8;
    case ElementType::kI32:
      return TypedKind::kI32;
    default:
      return std::nullopt;
  }
}

// Whether a conv2d is checked through tune_im2col_typed and the typed GEMM kernels.
bool NhwcConv(const Workload& workload) {
  return workload.op() == OpKind::kConv2d && workload.conv2d().nhwc;
}

}  // namespace

bool CudaReferenceChecks(const Workload& workload) {
  if (workload.dtype() == Dtype::kF32 && workload.out_type() == ElementType::kF32) {
    return true;
  }
  return (workload.op() == OpKind::kGemm || NhwcConv(workload)) &&
         CudaReferenceDtypes().Has(workload.dtype()) && KindOf(workload.out_type()).has_value();
}

uint64_t ArgumentSeed(uint64_t seed, size_t i) { return seed * 1000003u + i; }

absl::StatusOr<std::unique_ptr<ReferenceKernels>> ReferenceKernels::Load(GpuDevice* device) {
  auto refs = std::unique_ptr<ReferenceKernels>(new ReferenceKernels(device));
  ASSIGN_OR_RETURN(refs->module_, device->LoadModule(ReferencePtx()));
  ASSIGN_OR_RETURN(refs->fill_, device->GetFunction(refs->module_, kFillKernel));
  ASSIGN_OR_RETURN(refs->gemm_, device->GetFunction(refs->module_, kGemmKernel));
  ASSIGN_OR_RETURN(refs->conv2d_, device->GetFunction(refs->module_, kConv2dKernel));
  ASSIGN_OR_RETURN(refs->fill_typed_, device->GetFunction(refs->module_, kFillTypedKernel));
  ASSIGN_OR_RETURN(refs->gemm_typed_, device->GetFunction(refs->module_, kGemmTypedKernel));
  ASSIGN_OR_RETURN(refs->gemm_int_, device->GetFunction(refs->module_, kGemmIntKernel));
  ASSIGN_OR_RETURN(refs->im2col_, device->GetFunction(refs->module_, kIm2colTypedKernel));
  return refs;
}

ReferenceKernels::~ReferenceKernels() { device_->UnloadModule(module_); }

absl::Status ReferenceKernels::Fill(DevicePtr data, int64_t n, uint64_t seed) {
  uint64_t count = static_cast<uint64_t>(n);
  void* params[] = {&data, &count, &seed};
  return device_->Launch(fill_, OneDimensional(n), params);
}

absl::Status ReferenceKernels::FillTyped(const Workload& workload, const TensorArg& arg,
                                         DevicePtr data, uint64_t seed) {
  std::optional<TypedKind> kind = KindOf(arg.type);
  if (arg.role == ArgRole::kScale) {
    kind = TypedKind::kScale;
  } else if (kind == TypedKind::kF32 && workload.dtype() == Dtype::kTf32 &&
             arg.role != ArgRole::kBias) {
    kind = TypedKind::kTf32;
  }
  if (!kind) {
    return absl::InvalidArgumentError(StrCat("no device inputs of ", ElementTypeName(arg.type)));
  }
  uint64_t count = static_cast<uint64_t>(arg.NumElements());
  uint32_t code = static_cast<uint32_t>(*kind);
  void* params[] = {&data, &count, &seed, &code};
  return device_->Launch(fill_typed_, OneDimensional(arg.NumElements()), params);
}

int64_t ReferenceKernels::ScratchBytes(const Workload& workload) {
  if (!NhwcConv(workload)) {
    return 0;
  }
  const Conv2dShape& s = workload.conv2d();
  return s.n * s.p() * s.q() * s.r * s.s * s.c * ElementBytes(workload.input_type());
}

absl::Status ReferenceKernels::Run(const Workload& workload, const std::vector<DevicePtr>& inputs,
                                   DevicePtr output, DevicePtr scratch) {
  auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  if (workload.dtype() != Dtype::kF32 || workload.out_type() != ElementType::kF32 ||
      NhwcConv(workload)) {
    if (workload.op() != OpKind::kGemm && !NhwcConv(workload)) {
      return absl::InvalidArgumentError(
          StrCat("no device reference of typed conv2d outside layout=NHWC: ", workload.ToString()));
    }
    const std::vector<TensorArg> args = workload.Arguments();
    const bool has_bias = EpilogueHasBias(workload.epilogue());
    // Inputs: A, B, [bias], [scale_A, scale_B] (the output is not among them).
    DevicePtr a = inputs.at(0), b = inputs.at(1);
    DevicePtr bias = has_bias ? inputs.at(2) : 0;
    DevicePtr scale_a = 0, scale_b = 0;
    if (workload.has_scales()) {
      scale_a = inputs.at(has_bias ? 3 : 2);
      scale_b = inputs.at(has_bias ? 4 : 3);
    }
    std::optional<TypedKind> ka = KindOf(args[0].type), kb = KindOf(args[1].type),
                             kbias = KindOf(workload.out_type());
    if (!ka || !kb || !kbias) {
      return absl::InvalidArgumentError(StrCat("no device reference of ", workload.ToString()));
    }
    // A convolution is the GEMM of its input's im2col and its KRSC weights ([K][R*S*C]: NT).
    GemmShape g;
    if (NhwcConv(workload)) {
      const Conv2dShape& s = workload.conv2d();
      uint32_t v[] = {u32(s.n),   u32(s.c),        u32(s.h),
                      u32(s.w),   u32(s.r),        u32(s.s),
                      u32(s.p()), u32(s.q()),      u32(s.stride),
                      u32(s.pad), u32(s.dilation), u32(ElementBytes(workload.input_type()))};
      void* params[] = {&a,    &scratch, &v[0], &v[1], &v[2], &v[3],  &v[4],
                        &v[5], &v[6],    &v[7], &v[8], &v[9], &v[10], &v[11]};
      RETURN_IF_ERROR(
          device_->Launch(im2col_, OneDimensional(s.n * s.p() * s.q() * s.r * s.s * s.c), params));
      a = scratch;
      g = {.m = s.n * s.p() * s.q(), .n = s.k, .k = s.r * s.s * s.c, .layout = GemmLayout::kNT};
    } else {
      g = workload.gemm();
    }
    uint32_t flags = (has_bias ? kRefFlagBias : 0) |
                     (EpilogueHasRelu(workload.epilogue()) ? kRefFlagRelu : 0) |
                     (g.layout == GemmLayout::kNT ? kRefFlagNt : 0) |
                     (workload.has_scales() ? kRefFlagScales : 0);
    uint32_t kinds = static_cast<uint32_t>(*ka) | (static_cast<uint32_t>(*kb) << 4) |
                     (static_cast<uint32_t>(*kbias) << 8);
    uint32_t m = u32(g.m), n = u32(g.n), k = u32(g.k);
    void* params[] = {&a, &b, &bias, &output, &scale_a, &scale_b, &m, &n, &k, &flags, &kinds};
    return device_->Launch(IsIntegerDtype(workload.dtype()) ? gemm_int_ : gemm_typed_,
                           OneDimensional(g.m * g.n), params);
  }
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  uint32_t flags =
      (has_bias ? kRefFlagBias : 0) | (EpilogueHasRelu(workload.epilogue()) ? kRefFlagRelu : 0);
  DevicePtr a = inputs.at(0);
  DevicePtr b = inputs.at(1);
  DevicePtr bias = has_bias ? inputs.at(2) : 0;
  if (workload.op() == OpKind::kGemm) {
    const GemmShape& g = workload.gemm();
    uint32_t m = u32(g.m), n = u32(g.n), k = u32(g.k);
    void* params[] = {&a, &b, &bias, &output, &m, &n, &k, &flags};
    return device_->Launch(gemm_, OneDimensional(g.m * g.n), params);
  }
  const Conv2dShape& s = workload.conv2d();
  uint32_t v[] = {u32(s.n), u32(s.c),   u32(s.h),   u32(s.w),      u32(s.k),   u32(s.r),
                  u32(s.s), u32(s.p()), u32(s.q()), u32(s.stride), u32(s.pad), u32(s.dilation)};
  void* params[] = {&a,    &b,    &bias, &output, &v[0], &v[1],  &v[2],  &v[3], &v[4],
                    &v[5], &v[6], &v[7], &v[8],   &v[9], &v[10], &v[11], &flags};
  return device_->Launch(conv2d_, OneDimensional(s.n * s.k * s.p() * s.q()), params);
}

}  // namespace tune::gpu
