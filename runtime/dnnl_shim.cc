// libtune_dnnl.so: tune's shim over oneDNN (runtime/tune_runtime.h).
//
// Primitives, their descriptors, the reorders of the blocked layout and its intermediate
// buffers are created on the first call of a (shape, knobs, threads) key and kept for the life
// of the process, so that after the warm-up a call times only execution (and the reorders that
// the canonical interface makes part of the operator). Calls of one key are serialised (they
// share the intermediate buffers); calls of different keys run in parallel.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/tune_runtime.h"

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;

std::mutex g_mu;
std::string g_last_impl;   // guarded by g_mu
std::string g_last_error;  // guarded by g_mu

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void NoteImpl(const char* impl) {
  std::lock_guard lock(g_mu);
  g_last_impl = impl;
}

int32_t Fail(const dnnl::error& e, const std::string& what) {
  std::lock_guard lock(g_mu);
  g_last_error = what + ": " + e.what();
  return e.status == dnnl_unimplemented ? TUNE_RUNTIME_UNSUPPORTED : TUNE_RUNTIME_LIBRARY_ERROR;
}

int32_t BadArgument(const std::string& what) {
  std::lock_guard lock(g_mu);
  g_last_error = what;
  return TUNE_RUNTIME_BAD_ARGUMENT;
}

dnnl::primitive_attr PostOps(int32_t post_ops) {
  dnnl::primitive_attr attr;
  if ((post_ops & TUNE_POST_RELU) != 0) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  return attr;
}

// A tensor the caller passes in the canonical layout, and where the primitive wants it: the same
// memory (plain) or a buffer of the primitive's layout filled or drained by a reorder.
struct Operand {
  memory user;
  memory inner;  // == user when no reorder is needed
  std::unique_ptr<dnnl::reorder> reorder;

  Operand(const memory::desc& user_md, const memory::desc& inner_md, bool is_output) {
    user = memory(user_md, Engine(), DNNL_MEMORY_NONE);
    if (inner_md == user_md) {
      inner = user;
      return;
    }
    inner = memory(inner_md, Engine());
    reorder = is_output ? std::make_unique<dnnl::reorder>(inner, user)
                        : std::make_unique<dnnl::reorder>(user, inner);
  }
  void Bind(const void* data) { user.set_data_handle(const_cast<void*>(data)); }
};

// One cached primitive and what its calls need.
struct Entry {
  std::mutex mu;
  dnnl::primitive primitive;
  std::string impl;
  std::unique_ptr<Operand> src, weights, dst;
  memory bias;    // user memory, rebound each call; empty without a bias
  memory scales;  // the output scale, one f32 set each call; empty without scales
  float scale = 1;
  memory zero_points;  // the destination's zero point, one i32 set each call; empty without
  int32_t zero_point = 0;
};

// One call of a cached primitive on the caller's tensors: binds them, runs the reorders into
// the primitive's layouts, the primitive and the reorder back. Calls of one entry are
// serialised (they share its intermediate buffers).
void Execute(Entry& e, const void* src, const void* weights, const void* bias, void* dst,
             float scale = 1, int32_t zero_point = 0) {
  std::lock_guard lock(e.mu);
  e.scale = scale;
  e.zero_point = zero_point;
  e.src->Bind(src);
  e.weights->Bind(weights);
  e.dst->Bind(dst);
  if (e.bias) {
    e.bias.set_data_handle(const_cast<void*>(bias));
  }
  dnnl::stream s(Engine());
  for (Operand* in : {e.src.get(), e.weights.get()}) {
    if (in->reorder) {
      in->reorder->execute(s, in->user, in->inner);
    }
  }
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, e.src->inner},
                                          {DNNL_ARG_WEIGHTS, e.weights->inner},
                                          {DNNL_ARG_DST, e.dst->inner}};
  if (e.bias) {
    args[DNNL_ARG_BIAS] = e.bias;
  }
  if (e.scales) {
    args[DNNL_ARG_ATTR_OUTPUT_SCALES] = e.scales;
  }
  if (e.zero_points) {
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = e.zero_points;
  }
  e.primitive.execute(s, args);
  if (e.dst->reorder) {
    e.dst->reorder->execute(s, e.dst->inner, e.dst->user);
  }
  s.wait();
  NoteImpl(e.impl.c_str());
}

using Key = std::vector<int64_t>;
std::map<Key, std::unique_ptr<Entry>>& Cache() {
  static auto* cache = new std::map<Key, std::unique_ptr<Entry>>();  // lives until exit
  return *cache;
}

// The entry of `key`, made by `make` on first use (under the global lock; creation is rare).
template <typename Make>
Entry* Lookup(const Key& key, Make make) {
  std::lock_guard lock(g_mu);
  auto it = Cache().find(key);
  if (it == Cache().end()) {
    it = Cache().emplace(key, make()).first;
  }
  return it->second.get();
}

const char* IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::all:
      return "all";
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
  }
  return "unknown";
}

// Whether oneDNN's kernels for 8-bit inputs of type `dt` may saturate: without VNNI (AVX512-VNNI
// or AVX-VNNI) they multiply u8 x s8 pairs with vpmaddubsw, whose 16-bit sums of two products
// saturate, so full-range inputs lose their exact i32 sums (on a Zen 3 core, 2026-12-07, most
// outputs of u8i8 and i8 products were off, some by a third).
bool SaturatesInt8(Dt dt) {
  if (dt != Dt::s8 && dt != Dt::u8) {
    return false;
  }
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto has = [isa](dnnl::cpu_isa want) {
    const auto bits = static_cast<unsigned>(want);
    return (isa & bits) == bits;
  };
  return !has(dnnl::cpu_isa::avx512_core_vnni) && !has(dnnl::cpu_isa::avx2_vnni);
}

int32_t Unsupported(const std::string& what) {
  std::lock_guard lock(g_mu);
  g_last_error = what;
  return TUNE_RUNTIME_UNSUPPORTED;
}

int32_t SaturatingInt8(const char* op) {
  return Unsupported(std::string(op) + ": oneDNN's 8-bit kernels on a CPU without VNNI (isa=" +
                     IsaName(dnnl::get_effective_cpu_isa()) +
                     ") add u8 x s8 products in saturating 16-bit pairs, not exact sums");
}

}  // namespace

// oneDNN's data type of a TUNE_DNNL_* code; undef for an unknown one.
Dt TypeOf(int32_t code) {
  switch (code) {
    case TUNE_DNNL_F32:
      return Dt::f32;
    case TUNE_DNNL_BF16:
      return Dt::bf16;
    case TUNE_DNNL_S8:
      return Dt::s8;
    case TUNE_DNNL_U8:
      return Dt::u8;
    case TUNE_DNNL_S32:
      return Dt::s32;
    default:
      return Dt::undef;
  }
}

extern "C" int32_t tune_dnnl_matmul_typed(const void* A, const void* B, const void* bias, void* C,
                                          const float* scale_a, const float* scale_b,
                                          const int32_t* zero_point, int64_t M, int64_t N,
                                          int64_t K, int32_t a_type, int32_t b_type, int32_t c_type,
                                          int32_t b_transposed, int32_t scaled, int32_t layout,
                                          int32_t post_ops, int32_t threads) {
  const Dt a_dt = TypeOf(a_type), b_dt = TypeOf(b_type), c_dt = TypeOf(c_type);
  const bool requant = scaled == TUNE_DNNL_REQUANT;
  if (M < 1 || N < 1 || K < 1 || threads < 1 || (layout != 0 && layout != 1) ||
      (post_ops & ~(TUNE_POST_BIAS | TUNE_POST_RELU)) != 0 || a_dt == Dt::undef ||
      b_dt == Dt::undef || c_dt == Dt::undef || (b_transposed != 0 && b_transposed != 1) ||
      scaled < 0 || scaled > TUNE_DNNL_REQUANT ||
      (scaled == 1 && (scale_a == nullptr || scale_b == nullptr)) ||
      (requant &&
       (scale_a == nullptr || zero_point == nullptr || c_dt != Dt::s8 || post_ops != 0))) {
    return BadArgument(
        "tune_dnnl_matmul_typed: bad shape, element type, layout, post_ops, scales, zero point "
        "or threads");
  }
  if (SaturatesInt8(a_dt)) {
    return SaturatingInt8("tune_dnnl_matmul_typed");
  }
  const bool has_bias = (post_ops & TUNE_POST_BIAS) != 0;
  try {
    omp_set_num_threads(threads);
    Entry* e = Lookup(
        {2, M, N, K, a_type, b_type, c_type, b_transposed, scaled, layout, post_ops, threads}, [&] {
          auto entry = std::make_unique<Entry>();
          memory::desc a_md({M, K}, a_dt, Tag::ab);
          memory::desc b_md({K, N}, b_dt, b_transposed ? Tag::ba : Tag::ab);
          memory::desc c_md({M, N}, c_dt, Tag::ab);
          memory::desc bias_md({1, N}, c_dt, Tag::ab);
          memory::desc b_inner_md = layout == 0 ? b_md : memory::desc({K, N}, b_dt, Tag::any);
          dnnl::primitive_attr attr = PostOps(post_ops);
          if (scaled) {
            attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
          }
          if (requant) {
            attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
          }
          dnnl::matmul::primitive_desc pd =
              has_bias ? dnnl::matmul::primitive_desc(
                             dnnl::matmul::desc(a_md, b_inner_md, bias_md, c_md), attr, Engine())
                       : dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_inner_md, c_md),
                                                      attr, Engine());
          entry->primitive = dnnl::matmul(pd);
          entry->impl = pd.impl_info_str();
          entry->src = std::make_unique<Operand>(a_md, a_md, false);
          entry->weights = std::make_unique<Operand>(b_md, pd.weights_desc(), false);
          entry->dst = std::make_unique<Operand>(c_md, c_md, true);
          if (has_bias) {
            entry->bias = memory(bias_md, Engine(), DNNL_MEMORY_NONE);
          }
          if (scaled) {
            entry->scales = memory(memory::desc({1}, Dt::f32, Tag::x), Engine(), &entry->scale);
          }
          if (requant) {
            entry->zero_points =
                memory(memory::desc({1}, Dt::s32, Tag::x), Engine(), &entry->zero_point);
          }
          return entry;
        });
    const float scale = requant ? *scale_a : scaled ? *scale_a * *scale_b : 1.0f;
    Execute(*e, A, B, bias, C, scale, requant ? *zero_point : 0);
    return 0;
  } catch (const dnnl::error& err) {
    return Fail(err, "matmul");
  }
}

// The f32 matmul is the typed one's f32 case (the same primitive, the same cache).
extern "C" int32_t tune_dnnl_matmul(const float* A, const float* B, const float* bias, float* C,
                                    int64_t M, int64_t N, int64_t K, int32_t layout,
                                    int32_t post_ops, int32_t threads) {
  return tune_dnnl_matmul_typed(A, B, bias, C, nullptr, nullptr, nullptr, M, N, K, TUNE_DNNL_F32,
                                TUNE_DNNL_F32, TUNE_DNNL_F32, /*b_transposed=*/0, /*scaled=*/0,
                                layout, post_ops, threads);
}

// The format tags of a TUNE_DNNL_NCHW / TUNE_DNNL_NHWC / blocked data layout: {data, weights};
// undef for an unknown layout.
std::pair<Tag, Tag> ConvTags(int32_t data_layout) {
  switch (data_layout) {
    case TUNE_DNNL_NCHW:
      return {Tag::nchw, Tag::oihw};
    case TUNE_DNNL_NHWC:
      return {Tag::nhwc, Tag::ohwi};
    case 4:
      return {Tag::nChw4c, Tag::OIhw4i4o};
    case 8:
      return {Tag::nChw8c, Tag::OIhw8i8o};
    case 16:
      return {Tag::nChw16c, Tag::OIhw16i16o};
    default:
      return {Tag::undef, Tag::undef};
  }
}

extern "C" int32_t tune_dnnl_conv2d_typed(const void* src, const void* weights, const void* bias,
                                          void* dst, const float* scale_a, const float* scale_b,
                                          const int32_t* zero_point, int64_t N, int64_t C,
                                          int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                                          int64_t stride, int64_t pad, int64_t dilation,
                                          int32_t src_type, int32_t wei_type, int32_t dst_type,
                                          int32_t data_layout, int32_t scaled, int32_t algorithm,
                                          int32_t layout, int32_t post_ops, int32_t threads) {
  const Dt src_dt = TypeOf(src_type), wei_dt = TypeOf(wei_type), dst_dt = TypeOf(dst_type);
  const auto [data_tag, wei_tag] = ConvTags(data_layout);
  const bool requant = scaled == TUNE_DNNL_REQUANT;
  if (N < 1 || C < 1 || H < 1 || W < 1 || K < 1 || R < 1 || S < 1 || stride < 1 || pad < 0 ||
      dilation < 1 || threads < 1 || algorithm < 0 || algorithm > 2 || layout < 0 || layout > 1 ||
      (post_ops & ~(TUNE_POST_BIAS | TUNE_POST_RELU)) != 0 || src_dt == Dt::undef ||
      wei_dt == Dt::undef || dst_dt == Dt::undef || data_tag == Tag::undef ||
      (data_layout > 1 && (C % data_layout != 0 || K % data_layout != 0)) || scaled < 0 ||
      scaled > TUNE_DNNL_REQUANT || (scaled == 1 && (scale_a == nullptr || scale_b == nullptr)) ||
      (requant &&
       (scale_a == nullptr || zero_point == nullptr || dst_dt != Dt::s8 || post_ops != 0))) {
    return BadArgument(
        "tune_dnnl_conv2d: bad shape, element type, data layout, algorithm, layout, post_ops, "
        "scales, zero point or threads");
  }
  const int64_t eff_r = (R - 1) * dilation + 1;
  const int64_t eff_s = (S - 1) * dilation + 1;
  const int64_t P = (H + 2 * pad - eff_r) / stride + 1;
  const int64_t Q = (W + 2 * pad - eff_s) / stride + 1;
  if (P < 1 || Q < 1) {
    return BadArgument("tune_dnnl_conv2d: the filter does not fit the padded input");
  }
  // The right/bottom padding that makes oneDNN's output size the floor-based P x Q.
  const int64_t pad_b = (P - 1) * stride + eff_r - H - pad;
  const int64_t pad_r = (Q - 1) * stride + eff_s - W - pad;
  if (SaturatesInt8(src_dt)) {
    return SaturatingInt8("tune_dnnl_conv2d_typed");
  }
  const bool has_bias = (post_ops & TUNE_POST_BIAS) != 0;
  const bool typed = src_dt != Dt::f32;
  try {
    omp_set_num_threads(threads);
    // oneDNN 2.6's convolutions take the output scale and zero point when the primitive is made
    // (run-time ones only in its reference loops): they are part of the key.
    const float scale = requant ? *scale_a : scaled ? *scale_a * *scale_b : 1.0f;
    const int32_t zero = requant ? *zero_point : 0;
    int32_t scale_bits = 0;
    std::memcpy(&scale_bits, &scale, sizeof(scale));
    Entry* e = Lookup(
        {3,         N,      C,        H,        W,          K,        R,           S,
         stride,    pad,    dilation, src_type, wei_type,   dst_type, data_layout, scaled,
         algorithm, layout, post_ops, threads,  scale_bits, zero},
        [&] {
          auto entry = std::make_unique<Entry>();
          memory::desc src_md({N, C, H, W}, src_dt, data_tag);
          memory::desc wei_md({K, C, R, S}, wei_dt, wei_tag);
          memory::desc dst_md({N, K, P, Q}, dst_dt, data_tag);
          memory::desc bias_md({K}, dst_dt, Tag::x);
          auto inner = [&](const memory::desc& plain) {
            return layout == 0 ? plain : memory::desc(plain.dims(), plain.data_type(), Tag::any);
          };
          const dnnl::algorithm algo = algorithm == 0   ? dnnl::algorithm::convolution_direct
                                       : algorithm == 1 ? dnnl::algorithm::convolution_winograd
                                                        : dnnl::algorithm::convolution_auto;
          const memory::dims strides = {stride, stride};
          const memory::dims dilates = {dilation - 1, dilation - 1};  // from 0
          const memory::dims pad_l = {pad, pad};
          const memory::dims pad_rb = {pad_b, pad_r};
          const auto prop = dnnl::prop_kind::forward_inference;
          auto desc = has_bias ? dnnl::convolution_forward::desc(
                                     prop, algo, inner(src_md), inner(wei_md), bias_md,
                                     inner(dst_md), strides, dilates, pad_l, pad_rb)
                               : dnnl::convolution_forward::desc(prop, algo, inner(src_md),
                                                                 inner(wei_md), inner(dst_md),
                                                                 strides, dilates, pad_l, pad_rb);
          dnnl::primitive_attr attr = PostOps(post_ops);
          if (scaled) {
            attr.set_output_scales(0, {scale});
          }
          if (requant) {
            attr.set_zero_points(DNNL_ARG_DST, 0, {zero});
          }
          dnnl::convolution_forward::primitive_desc pd(desc, attr, Engine());
          entry->impl = pd.impl_info_str();
          if (typed && entry->impl.starts_with("ref")) {
            // Orders of magnitude from oneDNN's best (bf16 on plain NHWC weights):
            // not a candidate worth a trial.
            throw dnnl::error(dnnl_unimplemented,
                              "only oneDNN's reference implementation computes "
                              "this case; layout=1 lets it pick its own layouts");
          }
          entry->primitive = dnnl::convolution_forward(pd);
          entry->src = std::make_unique<Operand>(src_md, pd.src_desc(), false);
          entry->weights = std::make_unique<Operand>(wei_md, pd.weights_desc(), false);
          entry->dst = std::make_unique<Operand>(dst_md, pd.dst_desc(), true);
          if (has_bias) {
            entry->bias = memory(bias_md, Engine(), DNNL_MEMORY_NONE);
          }
          return entry;
        });
    Execute(*e, src, weights, bias, dst);
    return 0;
  } catch (const dnnl::error& err) {
    return Fail(err, "convolution");
  }
}

// The f32 convolution is the typed one's f32 NCHW case (the same primitive, the same cache).
extern "C" int32_t tune_dnnl_conv2d(const float* src, const float* weights, const float* bias,
                                    float* dst, int64_t N, int64_t C, int64_t H, int64_t W,
                                    int64_t K, int64_t R, int64_t S, int64_t stride, int64_t pad,
                                    int64_t dilation, int32_t algorithm, int32_t layout,
                                    int32_t post_ops, int32_t threads) {
  return tune_dnnl_conv2d_typed(src, weights, bias, dst, nullptr, nullptr, nullptr, N, C, H, W, K,
                                R, S, stride, pad, dilation, TUNE_DNNL_F32, TUNE_DNNL_F32,
                                TUNE_DNNL_F32, TUNE_DNNL_NCHW, /*scaled=*/0, algorithm, layout,
                                post_ops, threads);
}

extern "C" int32_t tune_dnnl_version(char* buf, int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_RUNTIME_BAD_ARGUMENT;
  }
  const dnnl_version_t* v = dnnl::version();
  std::snprintf(buf, static_cast<size_t>(size), "%d.%d.%d", v->major, v->minor, v->patch);
  return 0;
}

extern "C" int32_t tune_dnnl_describe(char* buf, int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_RUNTIME_BAD_ARGUMENT;
  }
  const dnnl_version_t* v = dnnl::version();
  std::lock_guard lock(g_mu);
  std::snprintf(buf, static_cast<size_t>(size), "oneDNN %d.%d.%d (%s); isa=%s; impl=%s%s%s",
                v->major, v->minor, v->patch, v->hash, IsaName(dnnl::get_effective_cpu_isa()),
                g_last_impl.empty() ? "none yet" : g_last_impl.c_str(),
                g_last_error.empty() ? "" : "; last error: ", g_last_error.c_str());
  return 0;
}
