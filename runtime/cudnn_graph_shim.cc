// libtune_cudnn.so's typed convolution (tune_cudnn_conv2d_typed, runtime/tune_gpu_runtime.h)
// through cuDNN's graph (backend) API: the convolution and its epilogue (the scales, the bias,
// ReLU) are one operation graph, which cuDNN's heuristic maps to engine configurations; the
// `algo`-th configuration that finalizes into an execution plan runs it.
//
// Handles are per (thread, device) (cudnn_shim_internal.h); the graph, the plan and its workspace
// per (thread, device, shape, types, epilogue, algo, alignment), and the variant pack per plan
// until the caller's pointers change, so that after the warm-up a call is one cudnnBackendExecute
// on the caller's stream. Descriptors live as long as the process, as the legacy half's do.
//
// Engines whose numerical notes say they compute differently from a sum of products in the
// accumulation type are passed over: reduced-precision reductions (f16 partial sums), FFT and
// Winograd transforms, and for f32 data down-converted inputs and tensor cores (TF32) unless the
// inputs are tf32. The candidates' tolerance then stays that of a plain sum.
#include <array>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/cudnn_graph_api.h"
#include "runtime/cudnn_shim_internal.h"
#include "runtime/gpu_shim_util.h"
#include "runtime/tune_gpu_runtime.h"

namespace {

using tune_cudnn::Cudnn;
using tune_cudnn::cudnnHandle_t;
using tune_cudnn::cudnnStatus_t;
using tune_cudnn::Desc;
using tune_cudnn::Failed;
using tune_gpu::CudaDriver;
using tune_gpu::CUdevice;
using tune_gpu::CUdeviceptr;
using tune_gpu::Format;
using namespace tune_cudnn::graph;  // the graph API's constants and the Builder

// The variant pack's tensors: the caller's, by unique id.
enum Uid : int64_t { kX = 1, kW, kY, kBias, kScaleX, kScaleW, kVirtual = 100 };

const char* TypeName(int32_t type) {
  static constexpr const char* kNames[] = {"f32",     "tf32",    "f16", "bf16",
                                           "fp8e4m3", "fp8e5m2", "i8",  "i32"};
  return type >= 0 && type <= TUNE_GPU_TYPE_I32 ? kNames[type] : "?";
}

// cudnnDataType_t of a TUNE_GPU_TYPE_* (tf32 inputs are f32 data); -1 for an unknown code.
int CudnnType(int32_t type) {
  switch (type) {
    case TUNE_GPU_TYPE_F32:
    case TUNE_GPU_TYPE_TF32:
      return CUDNN_DATA_FLOAT;
    case TUNE_GPU_TYPE_F16:
      return CUDNN_DATA_HALF;
    case TUNE_GPU_TYPE_BF16:
      return CUDNN_DATA_BFLOAT16;
    case TUNE_GPU_TYPE_FP8E4M3:
      return CUDNN_DATA_FP8_E4M3;
    case TUNE_GPU_TYPE_FP8E5M2:
      return CUDNN_DATA_FP8_E5M2;
    case TUNE_GPU_TYPE_I8:
      return CUDNN_DATA_INT8;
    case TUNE_GPU_TYPE_I32:
      return CUDNN_DATA_INT32;
    default:
      return -1;
  }
}

// Whether tune's element-type table lets `in` inputs produce an `out` output (common/
// element_type.h): f32 and tf32 give f32; f16 and bf16 their own type or f32; i8 i32 or f32;
// fp8 bf16 or f32.
bool TuneAcceptsOutput(int32_t in, int32_t out) {
  switch (in) {
    case TUNE_GPU_TYPE_F32:
    case TUNE_GPU_TYPE_TF32:
      return out == TUNE_GPU_TYPE_F32;
    case TUNE_GPU_TYPE_F16:
    case TUNE_GPU_TYPE_BF16:
      return out == in || out == TUNE_GPU_TYPE_F32;
    case TUNE_GPU_TYPE_I8:
      return out == TUNE_GPU_TYPE_I32 || out == TUNE_GPU_TYPE_F32;
    case TUNE_GPU_TYPE_FP8E4M3:
    case TUNE_GPU_TYPE_FP8E5M2:
      return out == TUNE_GPU_TYPE_BF16 || out == TUNE_GPU_TYPE_F32;
    default:
      return false;
  }
}

// Whether the call takes the two per-tensor scales: 8-bit inputs into a float output.
bool TakesScales(int32_t in, int32_t out) {
  return (in == TUNE_GPU_TYPE_I8 || in == TUNE_GPU_TYPE_FP8E4M3 || in == TUNE_GPU_TYPE_FP8E5M2) &&
         out != TUNE_GPU_TYPE_I32;
}

// The largest power of two (at most 16) that divides every address: the byte alignment the
// tensors are declared with, so that a plan never assumes more than the caller's pointers give.
int64_t Alignment(std::initializer_list<const void*> pointers) {
  int64_t a = 16;
  for (const void* p : pointers) {
    const auto v = reinterpret_cast<uintptr_t>(p);
    while (a > 1 && v % static_cast<uintptr_t>(a) != 0) {
      a /= 2;
    }
  }
  return a;
}

// cuDNN's NOT_SUPPORTED family (3000-3999): the library has no implementation for the graph.
bool NotSupported(cudnnStatus_t s) { return s / 1000 == 3; }

// What an engine configuration is: its engine's global index, numerical notes and knobs.
struct ConfigInfo {
  int64_t engine = -1;
  std::vector<int> notes;
  std::string knobs;  // "TYPE=value,..." by cudnnBackendKnobType_t number
};

ConfigInfo Describe(const Cudnn& c, Desc config) {
  ConfigInfo info;
  Desc engine = nullptr;
  if (c.BackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != 0) {
    return info;
  }
  int64_t n = 0;
  if (c.BackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                            &n, &engine) == 0) {
    c.BackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                          &info.engine);
    std::array<int, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
    if (c.BackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                              notes.size(), &n, notes.data()) == 0) {
      info.notes.assign(notes.begin(), notes.begin() + std::min<int64_t>(n, notes.size()));
    }
  }
  c.BackendDestroyDescriptor(engine);
  std::vector<Desc> choices(kMaxKnobs, nullptr);
  int made = 0;
  while (made < kMaxKnobs &&
         c.BackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &choices[made]) == 0) {
    ++made;
  }
  if (c.BackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                            CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &n, choices.data()) == 0) {
    for (int64_t i = 0; i < std::min<int64_t>(n, made); ++i) {
      int type = -1;
      int64_t value = 0, got = 0;
      c.BackendGetAttribute(choices[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1,
                            &got, &type);
      c.BackendGetAttribute(choices[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1,
                            &got, &value);
      info.knobs +=
          Format("%s%d=%lld", info.knobs.empty() ? "" : ",", type, static_cast<long long>(value));
    }
  }
  for (int i = 0; i < made; ++i) {
    c.BackendDestroyDescriptor(choices[i]);
  }
  return info;
}

// Why an engine is passed over (its numerical notes; see the file comment), or nullptr.
const char* Excluded(const ConfigInfo& info, int32_t in_type) {
  const bool f32 = in_type == TUNE_GPU_TYPE_F32, tf32 = in_type == TUNE_GPU_TYPE_TF32;
  for (int note : info.notes) {
    if (note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) {
      return "reduced-precision reduction";
    }
    if (note == CUDNN_NUMERICAL_NOTE_FFT || (note >= CUDNN_NUMERICAL_NOTE_WINOGRAD &&
                                             note <= CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13)) {
      return "FFT or Winograd transform";
    }
    if ((f32 || tf32) && note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) {
      return "down-converted f32 inputs";
    }
    if (f32 && note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) {
      return "tensor cores (TF32) on f32 data";
    }
  }
  return nullptr;
}

// One typed convolution of (device, shape, types, epilogue, algo, alignment).
struct GraphPlan {
  Desc plan = nullptr;
  CUdeviceptr workspace = 0;
  int64_t workspace_size = 0;
  std::vector<int64_t> uids;  // the variant pack's tensors, in `Pointers` order
  Desc pack = nullptr;        // the variant pack of `bound`
  std::vector<void*> bound;
  std::string name;
};

// The caller's pointers of the variant pack, in the order of GraphPlan::uids.
std::vector<void*> Pointers(const std::vector<int64_t>& uids, const void* x, const void* w,
                            const void* bias, void* y, const float* scale_x, const float* scale_w) {
  std::vector<void*> out;
  for (int64_t uid : uids) {
    const void* p = uid == kX        ? x
                    : uid == kW      ? w
                    : uid == kY      ? y
                    : uid == kBias   ? bias
                    : uid == kScaleX ? static_cast<const void*>(scale_x)
                                     : static_cast<const void*>(scale_w);
    out.push_back(const_cast<void*>(p));
  }
  return out;
}

struct Shape {
  int64_t n, c, h, w, k, r, s, stride, pad, dilation, p, q;
};

// Builds the operation graph and the plan of the `algo`-th configuration that finalizes.
int32_t BuildPlan(const Cudnn& c, const CudaDriver& cu, cudnnHandle_t handle, const Shape& sh,
                  int32_t in_type, int32_t out_type, int32_t epilogue, int32_t algo,
                  int64_t alignment, GraphPlan* out) {
  const bool scales = TakesScales(in_type, out_type);
  const bool bias = (epilogue & TUNE_GPU_EPILOGUE_BIAS) != 0;
  const bool relu = (epilogue & TUNE_GPU_EPILOGUE_RELU) != 0;
  const bool integer = in_type == TUNE_GPU_TYPE_I8;
  const int in = CudnnType(in_type), out_dt = CudnnType(out_type);
  // The convolution's own output: the caller's y when nothing follows it, else a virtual tensor
  // of f32, and so the epilogue's arithmetic; i32 into an i32 output, whose sums and bias f32
  // would round beyond 2^24.
  // cuDNN 9.14 on an H200 runs f16/bf16 -> f32 and i8 -> i32 convolutions only when a pointwise
  // operation converts the convolution's result (written directly, it found no engine for the
  // first and wrote wrong i32 values for the second): an identity then ends such graphs.
  const bool converts = out_type != in_type && in_type != TUNE_GPU_TYPE_TF32;
  const bool identity = !scales && !bias && !relu && converts;
  const int steps = (scales ? 2 : 0) + (bias ? 1 : 0) + (relu ? 1 : 0) + (identity ? 1 : 0);
  const int acc = out_type == TUNE_GPU_TYPE_I32 ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT;
  const std::string what = Format(
      "%s x %s -> %s NHWC N=%lld C=%lld H=%lld W=%lld K=%lld R=%lld S=%lld stride=%lld "
      "pad=%lld dilation=%lld%s%s%s",
      TypeName(in_type), TypeName(in_type), TypeName(out_type), static_cast<long long>(sh.n),
      static_cast<long long>(sh.c), static_cast<long long>(sh.h), static_cast<long long>(sh.w),
      static_cast<long long>(sh.k), static_cast<long long>(sh.r), static_cast<long long>(sh.s),
      static_cast<long long>(sh.stride), static_cast<long long>(sh.pad),
      static_cast<long long>(sh.dilation), scales ? " x scales" : "", bias ? " + bias" : "",
      relu ? ", ReLU" : "");

  Builder b(c);
  Desc x = b.Tensor(kX, in, sh.n, sh.c, sh.h, sh.w, false, alignment);
  Desc w = b.Tensor(kW, in, sh.k, sh.c, sh.r, sh.s, false, alignment);
  int64_t next_virtual = kVirtual;
  auto activation = [&](bool last, int type) {
    return last ? b.Tensor(kY, out_dt, sh.n, sh.k, sh.p, sh.q, false, alignment)
                : b.Tensor(next_virtual++, type, sh.n, sh.k, sh.p, sh.q, true, alignment);
  };
  Desc conv_out = activation(steps == 0, acc);

  Desc conv = b.Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  b.SetEnum(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE,
            integer ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT);
  b.SetEnum(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
            CUDNN_CROSS_CORRELATION);
  b.SetInt(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 2);
  b.SetInts(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, {sh.dilation, sh.dilation});
  b.SetInts(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, {sh.stride, sh.stride});
  b.SetInts(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, {sh.pad, sh.pad});
  b.SetInts(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, {sh.pad, sh.pad});
  b.Finalize(conv, "the convolution descriptor");

  std::vector<Desc> ops;
  Desc fprop = b.Make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  const float one = 1.0f, zero = 0.0f;
  b.SetDesc(fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
  b.SetDesc(fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
  b.SetDesc(fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, conv_out);
  b.SetDesc(fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
  b.Set(fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &one);
  b.Set(fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &zero);
  b.Finalize(fprop, "the convolution operation");
  ops.push_back(fprop);

  std::vector<int64_t> uids = {kX, kW, kY};
  Desc current = conv_out;
  int done = 0;
  auto step = [&](int mode, Desc operand) {
    ++done;
    Desc next = activation(done == steps, acc);
    ops.push_back(b.Pointwise(mode, acc, current, operand, next));
    current = next;
  };
  if (scales) {
    // One f32 each, broadcast over the output (their pointers' alignment is a float's).
    Desc sx = b.Tensor(kScaleX, CUDNN_DATA_FLOAT, 1, 1, 1, 1, false, 4);
    Desc sw = b.Tensor(kScaleW, CUDNN_DATA_FLOAT, 1, 1, 1, 1, false, 4);
    step(CUDNN_POINTWISE_MUL, sx);
    step(CUDNN_POINTWISE_MUL, sw);
    uids.insert(uids.end(), {kScaleX, kScaleW});
  }
  if (bias) {
    Desc bt = b.Tensor(kBias, out_dt, 1, sh.k, 1, 1, false, alignment);
    step(CUDNN_POINTWISE_ADD, bt);
    uids.push_back(kBias);
  }
  if (relu) {
    step(CUDNN_POINTWISE_RELU_FWD, nullptr);
  }
  if (identity) {
    step(CUDNN_POINTWISE_IDENTITY, nullptr);
  }
  if (!b.ok()) {
    return Failed(NotSupported(b.status()) ? TUNE_GPU_UNSUPPORTED : TUNE_GPU_LIBRARY_ERROR,
                  Format("the graph of %s: %s", what.c_str(), b.what().c_str()));
  }

  Desc graph = b.Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  b.Set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        static_cast<int64_t>(ops.size()), ops.data());
  b.Set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  b.Finalize(graph, "the operation graph");
  if (!b.ok()) {
    return Failed(NotSupported(b.status()) ? TUNE_GPU_UNSUPPORTED : TUNE_GPU_LIBRARY_ERROR,
                  Format("the graph of %s: %s", what.c_str(), b.what().c_str()));
  }
  // The algo-th configuration that is not passed over and finalizes into a plan: heuristic A's
  // ranking first, then the fallback list, which holds engines A may leave out.
  int usable = 0, excluded = 0, listed = 0;
  std::string last_refusal;
  for (const int mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Builder hb(c);
    Desc heur = hb.Make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    hb.SetDesc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    hb.SetEnum(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode);
    hb.Finalize(heur, "the engine heuristic");
    int64_t count = 0;
    if (hb.ok()) {
      if (cudnnStatus_t s =
              c.BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr);
          s != 0) {
        last_refusal = tune_cudnn::Status(c, "the heuristic's result count", s);
        continue;
      }
    } else {
      last_refusal = hb.what();
      continue;
    }
    std::vector<Desc> configs(count, nullptr);
    for (Desc& d : configs) {
      d = hb.Make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    }
    int64_t returned = 0;
    if (cudnnStatus_t s = hb.ok() ? c.BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                                          &returned, configs.data())
                                  : hb.status();
        s != 0) {
      last_refusal = tune_cudnn::Status(c, "the heuristic's results", s);
      continue;
    }
    listed += static_cast<int>(returned);
    for (int64_t i = 0; i < returned; ++i) {
      const ConfigInfo info = Describe(c, configs[i]);
      if (Excluded(info, in_type) != nullptr) {
        ++excluded;
        continue;
      }
      Builder pb(c);
      Desc plan = pb.Make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      pb.Set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      pb.SetDesc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i]);
      pb.Finalize(plan, "the execution plan");
      if (!pb.ok()) {
        last_refusal = pb.what();
        if (plan != nullptr) {
          c.BackendDestroyDescriptor(plan);
        }
        continue;
      }
      if (usable++ < algo) {
        c.BackendDestroyDescriptor(plan);
        continue;
      }
      out->plan = plan;
      int64_t got = 0;
      if (cudnnStatus_t s = c.BackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                  CUDNN_TYPE_INT64, 1, &got, &out->workspace_size);
          s != 0) {
        return Failed(TUNE_GPU_LIBRARY_ERROR,
                      tune_cudnn::Status(c, "the plan's workspace size", s));
      }
      if (int32_t rc =
              tune_gpu::AllocDevice(cu, static_cast<size_t>(out->workspace_size), &out->workspace);
          rc != 0) {
        return Failed(rc, tune_gpu_last_error());
      }
      std::string notes;
      for (int note : info.notes) {
        notes += Format("%s%d", notes.empty() ? "" : ",", note);
      }
      out->uids = uids;
      out->name = Format(
          "cudnnBackendExecute (graph API) %s: heuristic %s config %lld of %lld, plan %d of "
          "those that finalize (engine %lld, knobs {%s}, numerical notes {%s}), workspace %lld B",
          what.c_str(), mode == CUDNN_HEUR_MODE_A ? "A" : "FALLBACK", static_cast<long long>(i + 1),
          static_cast<long long>(returned), algo + 1, static_cast<long long>(info.engine),
          info.knobs.c_str(), notes.c_str(), static_cast<long long>(out->workspace_size));
      return 0;
    }
  }
  if (usable == 0) {
    return Failed(TUNE_GPU_UNSUPPORTED,
                  Format("cuDNN has no engine for %s: none of the %d engine configs its "
                         "heuristics (A, FALLBACK) list finalizes into a plan (%d passed over for "
                         "their numerics)%s%s",
                         what.c_str(), listed, excluded,
                         last_refusal.empty() ? "" : "; last: ", last_refusal.c_str()));
  }
  return Failed(TUNE_GPU_ALGO_UNSUPPORTED,
                Format("cuDNN's heuristics gave %d usable plans for %s, not %d", usable,
                       what.c_str(), algo + 1));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t tune_cudnn_conv2d_typed(
    const void* x, const void* w, const void* bias_or_null, void* y, const float* scale_x,
    const float* scale_w, int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R,
    int64_t S, int64_t stride, int64_t pad, int64_t dilation, int32_t in_type, int32_t out_type,
    int32_t epilogue, int32_t algo, void* stream) {
  const int64_t P = stride < 1 ? 0 : (H + 2 * pad - (R - 1) * dilation - 1) / stride + 1;
  const int64_t Q = stride < 1 ? 0 : (W + 2 * pad - (S - 1) * dilation - 1) / stride + 1;
  const bool scales = TakesScales(in_type, out_type);
  if (x == nullptr || w == nullptr || y == nullptr || N < 1 || C < 1 || H < 1 || W < 1 || K < 1 ||
      R < 1 || S < 1 || stride < 1 || pad < 0 || dilation < 1 || P < 1 || Q < 1 ||
      N * H * W * C > 0x7fffffff || N * P * Q * K > 0x7fffffff || K * R * S * C > 0x7fffffff ||
      algo < 0 || algo >= 8 || CudnnType(in_type) < 0 || CudnnType(out_type) < 0 ||
      !TuneAcceptsOutput(in_type, out_type) ||
      (scales && (scale_x == nullptr || scale_w == nullptr)) ||
      !tune_gpu::ValidEpilogue(epilogue, TUNE_GPU_EPILOGUE_LIBRARY,
                               static_cast<const float*>(bias_or_null))) {
    return Failed(TUNE_GPU_BAD_ARGUMENT,
                  "tune_cudnn_conv2d_typed: null pointer, bad shape, algo not in [0, 8), bad "
                  "epilogue, missing scales (8-bit inputs into a float output), or types outside "
                  "f32|tf32 -> f32, f16 -> f16|f32, bf16 -> bf16|f32, i8 -> i32|f32, "
                  "fp8e4m3|fp8e5m2 -> bf16|f32");
  }
  int32_t rc = 0;
  const Cudnn* c = tune_cudnn::LoadCudnn(&rc);
  if (c == nullptr) {
    return rc;
  }
  const CudaDriver* cu = tune_gpu::Driver();
  if (cu == nullptr) {
    return Failed(TUNE_GPU_NOT_FOUND, tune_gpu_last_error());
  }
  CUdevice device = 0;
  if (rc = tune_gpu::CurrentDevice(*cu, &device); rc != 0) {
    return Failed(rc, tune_gpu_last_error());
  }
  cudnnHandle_t handle = nullptr;
  if (rc = tune_cudnn::Handle(*c, device, stream, &handle); rc != 0) {
    return rc;
  }
  const int64_t alignment = Alignment({x, w, y, bias_or_null == nullptr ? y : bias_or_null});
  using Key =
      std::tuple<CUdevice, std::array<int64_t, 10>, int32_t, int32_t, int32_t, int32_t, int64_t>;
  thread_local std::map<Key, GraphPlan> plans;
  const Key key{
      device,   {N, C, H, W, K, R, S, stride, pad, dilation}, in_type, out_type, epilogue, algo,
      alignment};
  auto it = plans.find(key);
  if (it == plans.end()) {
    GraphPlan p;
    const Shape shape{N, C, H, W, K, R, S, stride, pad, dilation, P, Q};
    if (rc = BuildPlan(*c, *cu, handle, shape, in_type, out_type, epilogue, algo, alignment, &p);
        rc != 0) {
      return rc;
    }
    it = plans.emplace(key, std::move(p)).first;
  }
  GraphPlan& p = it->second;
  std::vector<void*> pointers = Pointers(p.uids, x, w, bias_or_null, y, scale_x, scale_w);
  if (p.pack == nullptr || pointers != p.bound) {
    // A plan outlives the buffers it was made with: the pack is made again when they change.
    if (p.pack != nullptr) {
      c->BackendDestroyDescriptor(p.pack);
      p.pack = nullptr;
    }
    Builder b(*c);
    Desc pack = b.Make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    void* workspace = reinterpret_cast<void*>(p.workspace);
    b.Set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
          static_cast<int64_t>(p.uids.size()), p.uids.data());
    b.Set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
          static_cast<int64_t>(pointers.size()), pointers.data());
    b.Set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    b.Finalize(pack, "the variant pack");
    if (!b.ok()) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, b.what());
    }
    p.pack = pack;
    p.bound = std::move(pointers);
  }
  if (cudnnStatus_t s = c->BackendExecute(handle, p.plan, p.pack); s != 0) {
    return Failed(NotSupported(s) ? TUNE_GPU_ALGO_UNSUPPORTED : TUNE_GPU_LIBRARY_ERROR,
                  tune_cudnn::Status(*c, "cudnnBackendExecute", s));
  }
  tune_cudnn::RecordPath(p.name);
  return 0;
}
