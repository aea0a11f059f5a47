#include "bench/dnnl_baseline.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "bench/in_process_timing.h"
#include "bench/library_epilogue.h"
#include "common/stats.h"
#include "common/strings.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace tune::bench {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;

std::string_view DnnlLayoutName(DnnlLayout layout) {
  switch (layout) {
    case DnnlLayout::kPlain:
      return "plain";
    case DnnlLayout::kBlocked:
      return "blocked";
    case DnnlLayout::kPlainPackedWeights:
      return "plain, weights prepacked";
    case DnnlLayout::kReorderedInCall:
      return "reordered in the call";
  }
  return "?";
}

std::string_view DnnlAlgorithmName(DnnlAlgorithm algorithm) {
  switch (algorithm) {
    case DnnlAlgorithm::kMatmul:
      return "matmul";
    case DnnlAlgorithm::kSgemm:
      return "sgemm";
    case DnnlAlgorithm::kConvAuto:
      return "auto";
    case DnnlAlgorithm::kConvDirect:
      return "direct";
    case DnnlAlgorithm::kConvWinograd:
      return "winograd";
  }
  return "?";
}

struct DnnlKernel::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::primitive primitive;  // unset for dnnl_sgemm
  std::unordered_map<int, memory> args;
  memory::desc plain_dst;  // the output's canonical layout
  // kReorderedInCall: the reorders run before the primitive (into its layouts) and after it
  // (its output back), each with its source and destination.
  struct Reorder {
    dnnl::reorder primitive;
    memory from, to;
  };
  std::vector<Reorder> before, after;
  std::string impl;
  int threads = 1;
  // dnnl_sgemm's operands (row-major A, B, C), bias and epilogue.
  Workload workload;
  std::vector<float*> user_args;
};

namespace {

// Whether oneDNN's 8-bit kernels sum exactly here: with VNNI (AVX512-VNNI or AVX-VNNI). Without
// it they multiply u8 x s8 pairs with vpmaddubsw, whose 16-bit sums of two products saturate (on
// a Zen 3 core, 2026-12-07, most outputs of full-range u8i8 and i8 products were off). The dnnl
// shim refuses them alike (runtime/tune_runtime.h).
bool DnnlSumsInt8Exactly() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto has = [isa](dnnl::cpu_isa want) {
    const auto bits = static_cast<unsigned>(want);
    return (isa & bits) == bits;
  };
  return has(dnnl::cpu_isa::avx512_core_vnni) || has(dnnl::cpu_isa::avx2_vnni);
}

dnnl::algorithm ConvAlgorithm(DnnlAlgorithm algorithm) {
  switch (algorithm) {
    case DnnlAlgorithm::kConvAuto:
      return dnnl::algorithm::convolution_auto;
    case DnnlAlgorithm::kConvDirect:
      return dnnl::algorithm::convolution_direct;
    case DnnlAlgorithm::kConvWinograd:
      return dnnl::algorithm::convolution_winograd;
    case DnnlAlgorithm::kMatmul:
    case DnnlAlgorithm::kSgemm:
      break;
  }
  return dnnl::algorithm::undef;
}

bool Computes(DnnlAlgorithm algorithm, OpKind op) {
  switch (algorithm) {
    case DnnlAlgorithm::kMatmul:
    case DnnlAlgorithm::kSgemm:
      return op == OpKind::kGemm;
    case DnnlAlgorithm::kConvAuto:
    case DnnlAlgorithm::kConvDirect:
    case DnnlAlgorithm::kConvWinograd:
      return op == OpKind::kConv2d;
  }
  return false;
}

// oneDNN's data type of a tensor element; undef for the 8-bit floats, which oneDNN 2.6 lacks.
Dt DnnlType(ElementType type) {
  switch (type) {
    case ElementType::kF32:
      return Dt::f32;
    case ElementType::kF16:
      return Dt::f16;
    case ElementType::kBf16:
      return Dt::bf16;
    case ElementType::kI8:
      return Dt::s8;
    case ElementType::kU8:
      return Dt::u8;
    case ElementType::kI32:
      return Dt::s32;
    case ElementType::kFp8E4m3:
    case ElementType::kFp8E5m2:
    case ElementType::kFp8E4m3Fnuz:
    case ElementType::kFp8E5m2Fnuz:
      break;
  }
  return Dt::undef;
}

// Where the output lies among the kernel arguments: last, or before the two scales (or the
// requantisation's scale and zero point).
size_t OutputIndex(const Workload& workload, size_t args) {
  return workload.has_scales() || workload.requantizes() ? args - 3 : args - 1;
}

// The two scales' product as the output scale; a requantisation (s8 = saturate(nearest(scale *
// acc + zero_point))) as the output scale and the destination's zero point.
void SetOutputScaling(const Workload& workload, const std::vector<float*>& args, size_t out_index,
                      dnnl::primitive_attr* attr) {
  if (workload.has_scales()) {
    attr->set_output_scales(0, {*args[out_index + 1] * *args[out_index + 2]});
  }
  if (workload.requantizes()) {
    attr->set_output_scales(0, {*args[out_index + 1]});
    attr->set_zero_points(DNNL_ARG_DST, 0,
                          {*reinterpret_cast<const int32_t*>(args[out_index + 2])});
  }
}

}  // namespace

void DnnlKernel::BuildPrimitive(const Workload& workload, DnnlAlgorithm algorithm,
                                DnnlLayout layout, const std::vector<float*>& args, Impl* impl_) {
  dnnl::engine& eng = impl_->engine;
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  dnnl::primitive_attr attr;
  if (EpilogueHasRelu(workload.epilogue())) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  const bool in_call = layout == DnnlLayout::kReorderedInCall;
  const bool any_data = layout == DnnlLayout::kBlocked || in_call;
  const bool any_weights = layout != DnnlLayout::kPlain;
  // The primitive's memory for a canonical tensor: the caller's buffer, or a copy in the layout
  // it wants, reordered once now or (kReorderedInCall) on every call.
  auto bind = [&](const memory::desc& want, const memory::desc& plain, float* data) {
    memory user(plain, eng, data);
    if (want == plain) {
      return user;
    }
    memory inner(want, eng);
    if (in_call) {
      impl_->before.push_back({dnnl::reorder(user, inner), user, inner});
      return inner;
    }
    dnnl::reorder(user, inner).execute(impl_->stream, user, inner);
    impl_->stream.wait();
    return inner;
  };
  const Dtype dtype = workload.dtype();
  const size_t out_index = OutputIndex(workload, args.size());
  if (workload.op() == OpKind::kGemm) {
    const GemmShape& g = workload.gemm();
    // Typed GEMMs: A, B and C of the workload's types (B [N][K] with layout=NT), the bias of
    // C's.
    const Dt a_type = DnnlType(ActivationType(dtype)), b_type = DnnlType(WeightType(dtype)),
             c_type = DnnlType(workload.out_type());
    const Tag b_tag = g.layout == GemmLayout::kNT ? Tag::ba : Tag::ab;
    SetOutputScaling(workload, args, out_index, &attr);
    memory::desc a({g.m, g.k}, a_type, Tag::ab), b({g.k, g.n}, b_type, b_tag),
        c({g.m, g.n}, c_type, Tag::ab), bias({1, g.n}, c_type, Tag::ab);
    memory::desc b_any = any_weights ? memory::desc({g.k, g.n}, b_type, Tag::any) : b;
    auto pd = has_bias
                  ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b_any, bias, c), attr, eng)
                  : dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b_any, c), attr, eng);
    impl_->primitive = dnnl::matmul(pd);
    impl_->impl = pd.impl_info_str();
    impl_->plain_dst = c;
    impl_->args[DNNL_ARG_SRC] = memory(a, eng, args[0]);
    impl_->args[DNNL_ARG_WEIGHTS] = bind(pd.weights_desc(), b, args[1]);
    impl_->args[DNNL_ARG_DST] = memory(c, eng, args[out_index]);
    if (has_bias) {
      impl_->args[DNNL_ARG_BIAS] = memory(bias, eng, args[2]);
    }
    return;
  }
  // Convolutions: the workload's element types (the output scales and zero point as for GEMM),
  // plain tensors in its layout (NCHW/KCRS or NHWC/KRSC; a blocked workload arrives in NCHW).
  const Conv2dShape& s = workload.conv2d();
  const int64_t p = s.p(), q = s.q();
  const Dt src_type = DnnlType(ActivationType(dtype)), wei_type = DnnlType(WeightType(dtype)),
           dst_type = DnnlType(workload.out_type());
  SetOutputScaling(workload, args, out_index, &attr);
  const Tag data_tag = s.nhwc ? Tag::nhwc : Tag::nchw;
  memory::desc src({s.n, s.c, s.h, s.w}, src_type, data_tag);
  memory::desc wei({s.k, s.c, s.r, s.s}, wei_type, s.nhwc ? Tag::ohwi : Tag::oihw);
  memory::desc dst({s.n, s.k, p, q}, dst_type, data_tag);
  memory::desc bias({s.k}, dst_type, Tag::x);
  auto any = [](const memory::desc& d, bool wanted) {
    return wanted ? memory::desc(d.dims(), d.data_type(), Tag::any) : d;
  };
  const memory::dims strides = {s.stride, s.stride}, dil = {s.dilation - 1, s.dilation - 1},
                     pad_l = {s.pad, s.pad},
                     pad_r = {(p - 1) * s.stride + (s.r - 1) * s.dilation + 1 - s.h - s.pad,
                              (q - 1) * s.stride + (s.s - 1) * s.dilation + 1 - s.w - s.pad};
  const dnnl::algorithm alg = ConvAlgorithm(algorithm);
  const auto prop = dnnl::prop_kind::forward_inference;
  auto desc =
      has_bias
          ? dnnl::convolution_forward::desc(prop, alg, any(src, any_data), any(wei, any_weights),
                                            bias, any(dst, any_data), strides, dil, pad_l, pad_r)
          : dnnl::convolution_forward::desc(prop, alg, any(src, any_data), any(wei, any_weights),
                                            any(dst, any_data), strides, dil, pad_l, pad_r);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
  impl_->primitive = dnnl::convolution_forward(pd);
  impl_->impl = pd.impl_info_str();
  impl_->plain_dst = dst;
  impl_->args[DNNL_ARG_SRC] = bind(pd.src_desc(), src, args[0]);
  impl_->args[DNNL_ARG_WEIGHTS] = bind(pd.weights_desc(), wei, args[1]);
  impl_->args[DNNL_ARG_DST] =
      pd.dst_desc() == dst ? memory(dst, eng, args[out_index]) : memory(pd.dst_desc(), eng);
  if (in_call && pd.dst_desc() != dst) {
    memory user(dst, eng, args[out_index]);
    impl_->after.push_back(
        {dnnl::reorder(impl_->args[DNNL_ARG_DST], user), impl_->args[DNNL_ARG_DST], user});
  }
  if (has_bias) {
    impl_->args[DNNL_ARG_BIAS] = memory(bias, eng, args[2]);
  }
}

DnnlKernel::DnnlKernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<std::unique_ptr<DnnlKernel>> DnnlKernel::Create(const Workload& workload,
                                                               DnnlAlgorithm algorithm,
                                                               DnnlLayout layout, int threads,
                                                               const std::vector<float*>& args) {
  if (!Computes(algorithm, workload.op())) {
    return absl::InvalidArgumentError(StrCat("oneDNN algorithm '", DnnlAlgorithmName(algorithm),
                                             "' does not compute ", workload.ToString()));
  }
  if (layout == DnnlLayout::kReorderedInCall && workload.op() != OpKind::kConv2d) {
    return absl::InvalidArgumentError(
        StrCat("oneDNN's tensors are reordered in the call for conv2d only, not ",
               workload.ToString(), "; accepted: plain, blocked, plain with weights prepacked"));
  }
  if (algorithm == DnnlAlgorithm::kSgemm && layout != DnnlLayout::kPlain) {
    return absl::InvalidArgumentError(StrCat("oneDNN's dnnl_sgemm takes plain matrices only, not '",
                                             DnnlLayoutName(layout), "'; accepted: plain"));
  }
  if (algorithm == DnnlAlgorithm::kSgemm &&
      (workload.dtype() != Dtype::kF32 || workload.gemm().layout != GemmLayout::kNN)) {
    return absl::UnimplementedError(StrCat(
        "oneDNN's dnnl_sgemm multiplies f32 matrices of layout NN, not ", workload.ToString()));
  }
  for (ElementType type :
       {ActivationType(workload.dtype()), WeightType(workload.dtype()), workload.out_type()}) {
    if (DnnlType(type) == Dt::undef) {
      return absl::UnimplementedError(StrCat("oneDNN 2.6 has no ", ElementTypeName(type),
                                             " tensors (", workload.ToString(), ")"));
    }
  }
  if (ElementBytes(ActivationType(workload.dtype())) == 1 && !DnnlSumsInt8Exactly()) {
    return absl::UnimplementedError(
        StrCat("oneDNN's 8-bit kernels on a CPU without VNNI add u8 x s8 products in saturating "
               "16-bit pairs, not exact sums: no baseline for ",
               workload.ToString()));
  }
  auto impl = std::make_unique<Impl>();
  impl->threads = threads;
  impl->workload = workload;
  impl->user_args = args;
  omp_set_num_threads(threads);
  if (algorithm == DnnlAlgorithm::kSgemm) {
    const GemmShape& g = workload.gemm();
    impl->impl = "dnnl_sgemm";
    impl->plain_dst = memory::desc({g.m, g.n}, Dt::f32, Tag::ab);
    return std::unique_ptr<DnnlKernel>(new DnnlKernel(std::move(impl)));
  }
  try {
    BuildPrimitive(workload, algorithm, layout, args, impl.get());
  } catch (const dnnl::error& e) {
    std::string what = StrCat("oneDNN ", DnnlAlgorithmName(algorithm), " (", DnnlLayoutName(layout),
                              ") for ", workload.ToString(), ": ", e.what());
    if (e.status == dnnl_unimplemented) {
      return absl::UnimplementedError(what);
    }
    return absl::InternalError(what);
  }
  return std::unique_ptr<DnnlKernel>(new DnnlKernel(std::move(impl)));
}

DnnlKernel::~DnnlKernel() = default;

void DnnlKernel::Run() {
  omp_set_num_threads(impl_->threads);
  if (!impl_->primitive) {
    const GemmShape& g = impl_->workload.gemm();
    const std::vector<float*>& a = impl_->user_args;
    dnnl_sgemm('N', 'N', g.m, g.n, g.k, 1.0f, a[0], g.k, a[1], g.n, 0.0f, a.back(), g.n);
    const Epilogue e = impl_->workload.epilogue();
    ApplyEpilogue(e, EpilogueHasBias(e) ? a[2] : nullptr, a.back(), g.m, g.n,
                  /*bias_per_row=*/false);
    return;
  }
  for (Impl::Reorder& r : impl_->before) {
    r.primitive.execute(impl_->stream, r.from, r.to);
  }
  impl_->primitive.execute(impl_->stream, impl_->args);
  for (Impl::Reorder& r : impl_->after) {
    r.primitive.execute(impl_->stream, r.from, r.to);
  }
  impl_->stream.wait();
}

void DnnlKernel::ReadOutput(float* out) {
  if (!impl_->primitive) {
    std::memcpy(out, impl_->user_args.back(), impl_->plain_dst.get_size());
    return;
  }
  memory user(impl_->plain_dst, impl_->engine, out);
  memory& dst = impl_->args[DNNL_ARG_DST];
  dnnl::reorder(dst, user).execute(impl_->stream, dst, user);
  impl_->stream.wait();
}

const char* DnnlKernel::impl() const { return impl_->impl.c_str(); }

std::string DnnlSweep::Variant::Name() const {
  std::string name = StrCat(DnnlAlgorithmName(algorithm), ", ", DnnlLayoutName(layout));
  if (kernel != nullptr) {
    StrAppend(&name, " (", kernel->impl(), ")");
  }
  return name;
}

std::vector<DnnlAlgorithm> DnnlSweep::AlgorithmsFor(OpKind op) {
  switch (op) {
    case OpKind::kGemm:
      return {DnnlAlgorithm::kMatmul, DnnlAlgorithm::kSgemm};
    case OpKind::kConv2d:
      return {DnnlAlgorithm::kConvAuto, DnnlAlgorithm::kConvDirect, DnnlAlgorithm::kConvWinograd};
  }
  return {};
}

absl::StatusOr<DnnlSweep> DnnlSweep::Create(const Workload& workload,
                                            const std::vector<DnnlLayout>& layouts, int threads,
                                            const std::vector<float*>& args) {
  DnnlSweep sweep;
  bool any_accepted = false;
  for (DnnlLayout layout : layouts) {
    for (DnnlAlgorithm algorithm : AlgorithmsFor(workload.op())) {
      if (layout == DnnlLayout::kReorderedInCall && workload.op() != OpKind::kConv2d) {
        return absl::InvalidArgumentError(StrCat(
            "oneDNN's tensors are reordered in the call for conv2d only, not ", workload.ToString(),
            "; accepted: plain, blocked, plain with weights prepacked"));
      }
      if (algorithm == DnnlAlgorithm::kSgemm && layout != DnnlLayout::kPlain) {
        continue;
      }
      Variant v{.algorithm = algorithm,
                .layout = layout,
                .kernel = nullptr,
                .refused = {},
                .reference_only = false,
                .secs = {}};
      absl::StatusOr<std::unique_ptr<DnnlKernel>> kernel =
          DnnlKernel::Create(workload, algorithm, layout, threads, args);
      if (kernel.ok() && std::string_view((*kernel)->impl()).starts_with("ref")) {
        // oneDNN's reference loops, three orders of magnitude from its best (bf16 convolutions
        // on plain NHWC weights): what oneDNN falls back to, not what a user would pick.
        v.refused =
            StrCat("oneDNN has only its reference implementation (", (*kernel)->impl(), ") here");
        v.reference_only = true;
      } else if (kernel.ok()) {
        v.kernel = *std::move(kernel);
        any_accepted = true;
      } else if (absl::IsUnimplemented(kernel.status())) {
        v.refused = std::string(kernel.status().message());
      } else {
        return kernel.status();
      }
      sweep.variants_.push_back(std::move(v));
    }
  }
  if (!any_accepted) {
    return absl::FailedPreconditionError(
        StrCat("oneDNN refused every algorithm for ", workload.ToString()));
  }
  return sweep;
}

void DnnlSweep::MeasureRun(const TimingOptions& timing) {
  for (Variant& v : variants_) {
    if (v.kernel != nullptr) {
      v.secs.push_back(TimeInProcess([&] { v.kernel->Run(); }, timing));
    }
  }
}

const DnnlSweep::Variant* DnnlSweep::Fastest(std::optional<DnnlLayout> layout) const {
  return FastestWhere([&](DnnlLayout l) { return !layout || l == *layout; });
}

const DnnlSweep::Variant* DnnlSweep::FastestOf(const std::vector<DnnlLayout>& layouts) const {
  return FastestWhere(
      [&](DnnlLayout l) { return std::find(layouts.begin(), layouts.end(), l) != layouts.end(); });
}

const DnnlSweep::Variant* DnnlSweep::FastestWhere(
    const std::function<bool(DnnlLayout)>& wanted) const {
  const Variant* best = nullptr;
  for (const Variant& v : variants_) {
    if (v.secs.empty() || !wanted(v.layout)) {
      continue;
    }
    if (best == nullptr || Median(v.secs) < Median(best->secs)) {
      best = &v;
    }
  }
  return best;
}

std::string DnnlSweep::Summary(double gflop) const {
  std::vector<std::string> parts;
  for (const Variant& v : variants_) {
    parts.push_back(v.secs.empty() ? StrCat(v.Name(), v.reference_only ? ": ref only" : ": refused")
                                   : fmt::format("{}: {:.1f}", v.Name(), gflop / Median(v.secs)));
  }
  return Join(parts, "; ");
}

}  // namespace tune::bench
