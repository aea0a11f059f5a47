#include "bench/dnnl_baseline.h"

#include <omp.h>

#include <string>
#include <unordered_map>

#include "oneapi/dnnl/dnnl.hpp"

namespace tune::bench {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;

struct DnnlKernel::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  std::string impl;
  int threads = 1;
};

DnnlKernel::DnnlKernel(const Workload& workload, DnnlLayout layout, int threads,
                       const std::vector<float*>& args)
    : impl_(std::make_unique<Impl>()) {
  impl_->threads = threads;
  omp_set_num_threads(threads);
  dnnl::engine& eng = impl_->engine;
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  dnnl::primitive_attr attr;
  if (EpilogueHasRelu(workload.epilogue())) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  const bool any_data = layout == DnnlLayout::kBlocked;
  const bool any_weights = layout != DnnlLayout::kPlain;
  // The primitive's memory for a canonical tensor: the caller's buffer, or a blocked copy.
  auto bind = [&](const memory::desc& want, const memory::desc& plain, float* data) {
    memory user(plain, eng, data);
    if (want == plain) {
      return user;
    }
    memory inner(want, eng);
    dnnl::reorder(user, inner).execute(impl_->stream, user, inner);
    impl_->stream.wait();
    return inner;
  };
  if (workload.op() == OpKind::kGemm) {
    const GemmShape& g = workload.gemm();
    memory::desc a({g.m, g.k}, Dt::f32, Tag::ab), b({g.k, g.n}, Dt::f32, Tag::ab),
        c({g.m, g.n}, Dt::f32, Tag::ab), bias({1, g.n}, Dt::f32, Tag::ab);
    memory::desc b_any = any_weights ? memory::desc({g.k, g.n}, Dt::f32, Tag::any) : b;
    auto pd = has_bias
                  ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b_any, bias, c), attr, eng)
                  : dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b_any, c), attr, eng);
    impl_->primitive = dnnl::matmul(pd);
    impl_->impl = pd.impl_info_str();
    impl_->args[DNNL_ARG_SRC] = memory(a, eng, args[0]);
    impl_->args[DNNL_ARG_WEIGHTS] = bind(pd.weights_desc(), b, args[1]);
    impl_->args[DNNL_ARG_DST] = memory(c, eng, args.back());
    if (has_bias) {
      impl_->args[DNNL_ARG_BIAS] = memory(bias, eng, args[2]);
    }
    return;
  }
  const Conv2dShape& s = workload.conv2d();
  const int64_t p = s.p(), q = s.q();
  memory::desc src({s.n, s.c, s.h, s.w}, Dt::f32, Tag::nchw);
  memory::desc wei({s.k, s.c, s.r, s.s}, Dt::f32, Tag::oihw);
  memory::desc dst({s.n, s.k, p, q}, Dt::f32, Tag::nchw);
  memory::desc bias({s.k}, Dt::f32, Tag::x);
  auto any = [](const memory::desc& d, bool wanted) {
    return wanted ? memory::desc(d.dims(), Dt::f32, Tag::any) : d;
  };
  const memory::dims strides = {s.stride, s.stride}, dil = {s.dilation - 1, s.dilation - 1},
                     pad_l = {s.pad, s.pad},
                     pad_r = {(p - 1) * s.stride + (s.r - 1) * s.dilation + 1 - s.h - s.pad,
                              (q - 1) * s.stride + (s.s - 1) * s.dilation + 1 - s.w - s.pad};
  auto desc = has_bias
                  ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                    dnnl::algorithm::convolution_auto,
                                                    any(src, any_data), any(wei, any_weights), bias,
                                                    any(dst, any_data), strides, dil, pad_l, pad_r)
                  : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                    dnnl::algorithm::convolution_auto,
                                                    any(src, any_data), any(wei, any_weights),
                                                    any(dst, any_data), strides, dil, pad_l, pad_r);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
  impl_->primitive = dnnl::convolution_forward(pd);
  impl_->impl = pd.impl_info_str();
  impl_->args[DNNL_ARG_SRC] = bind(pd.src_desc(), src, args[0]);
  impl_->args[DNNL_ARG_WEIGHTS] = bind(pd.weights_desc(), wei, args[1]);
  impl_->args[DNNL_ARG_DST] =
      pd.dst_desc() == dst ? memory(dst, eng, args.back()) : memory(pd.dst_desc(), eng);
  if (has_bias) {
    impl_->args[DNNL_ARG_BIAS] = memory(bias, eng, args[2]);
  }
}

DnnlKernel::~DnnlKernel() = default;

void DnnlKernel::Run() {
  omp_set_num_threads(impl_->threads);
  impl_->primitive.execute(impl_->stream, impl_->args);
  impl_->stream.wait();
}

const char* DnnlKernel::impl() const { return impl_->impl.c_str(); }

}  // namespace tune::bench
