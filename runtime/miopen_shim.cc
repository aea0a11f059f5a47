// libtune_miopen.so: tune's shim over MIOpen's convolution (runtime/tune_gpu_runtime.h).
//
// libMIOpen and the HIP runtime are opened at the first call. Handles are made per (thread,
// device); descriptors, the algorithm miopenFindConvolutionForwardAlgorithm chose and the
// workspace per (thread, device, shape), so that after the warm-up a call only queues the
// convolution on the caller's stream. MIOpen's forward convolution runs an algorithm its find
// step has chosen, so `algo` must be TUNE_GPU_ALGO_SEARCH; there is no fused epilogue here (a
// call with one is TUNE_GPU_UNSUPPORTED; conv2d.rocm.miopen applies to workloads without one).
//
// tune_miopen_conv2d_typed runs the same find and forward call on NHWC tensors of f32, f16, bf16
// or i8 (into i32), each described by its NCHW lengths and NHWC strides. Like the FP32 entry it
// has been compiled and its refusals tested, but it has never run on an AMD GPU.
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/gpu_shim_util.h"
#include "runtime/tune_gpu_runtime.h"

namespace {

using tune_gpu::Format;

// The MIOpen/HIP ABI this shim uses (miopen/miopen.h, hip_runtime_api.h).
using miopenStatus_t = int;
using miopenHandle_t = void*;
using Desc = void*;
// miopenDataType_t. miopenInt32 is what an int8 convolution writes its raw sums as.
constexpr int miopenHalf = 0;
constexpr int miopenFloat = 1;
constexpr int miopenInt32 = 2;
constexpr int miopenInt8 = 3;
constexpr int miopenBFloat16 = 5;
constexpr int miopenConvolution = 0;
// miopenStatus_t values that say MIOpen has no solution for a problem, not that it failed.
constexpr miopenStatus_t miopenStatusNotImplemented = 6;
constexpr miopenStatus_t miopenStatusUnsupportedOp = 8;
struct miopenConvAlgoPerf_t {
  int fwd_algo;  // a union of the forward/backward algorithm enums in miopen.h
  float time;
  size_t memory;
};

struct Miopen {
  std::string file;
  miopenStatus_t (*GetVersion)(size_t*, size_t*, size_t*);
  const char* (*GetErrorString)(miopenStatus_t);
  miopenStatus_t (*Create)(miopenHandle_t*);
  miopenStatus_t (*SetStream)(miopenHandle_t, void*);
  miopenStatus_t (*CreateTensorDescriptor)(Desc*);
  miopenStatus_t (*Set4dTensorDescriptor)(Desc, int, int, int, int, int);
  // (desc, data type, number of dimensions, lengths, strides): lengths stay in NCHW order, the
  // strides say where each dimension lies in memory.
  miopenStatus_t (*SetTensorDescriptor)(Desc, int, int, const int*, const int*);
  miopenStatus_t (*CreateConvolutionDescriptor)(Desc*);
  miopenStatus_t (*InitConvolutionDescriptor)(Desc, int, int, int, int, int, int, int);
  miopenStatus_t (*ForwardGetWorkSpaceSize)(miopenHandle_t, Desc, Desc, Desc, Desc, size_t*);
  miopenStatus_t (*FindForwardAlgorithm)(miopenHandle_t, Desc, const void*, Desc, const void*, Desc,
                                         Desc, void*, int, int*, miopenConvAlgoPerf_t*, void*,
                                         size_t, bool);
  miopenStatus_t (*ConvolutionForward)(miopenHandle_t, const void*, Desc, const void*, Desc,
                                       const void*, Desc, int, const void*, Desc, void*, void*,
                                       size_t);
  const tune_hip_runtime* hip;  // the HIP runtime (tune_hip_runtime.h)
};

std::mutex g_mu;
std::string g_version;     // guarded by g_mu
std::string g_last_path;   // guarded by g_mu
std::string g_last_error;  // guarded by g_mu

int32_t Failed(int32_t code, const std::string& message) {
  {
    std::lock_guard lock(g_mu);
    g_last_error = message;
  }
  return tune_gpu::Fail(code, "miopen: " + message);
}

const Miopen* Load(int32_t* code) {
  static std::string error;
  static const Miopen* lib = []() -> const Miopen* {
    std::string opened;
    void* h = tune_gpu::OpenFirst({"libMIOpen.so", "libMIOpen.so.1"}, &error, &opened);
    if (h == nullptr) {
      return nullptr;
    }
    const tune_hip_runtime* hip = tune_gpu::HipRuntime(&error);
    if (hip == nullptr) {
      return nullptr;
    }
    auto* m = new Miopen();  // lives as long as the process
    m->file = opened;
    m->hip = hip;
    std::string missing;
    auto get = [&](void* from, auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          tune_gpu::Symbol(from, name, &missing));
    };
    get(h, m->GetVersion, "miopenGetVersion");
    get(h, m->GetErrorString, "miopenGetErrorString");
    get(h, m->Create, "miopenCreate");
    get(h, m->SetStream, "miopenSetStream");
    get(h, m->CreateTensorDescriptor, "miopenCreateTensorDescriptor");
    get(h, m->Set4dTensorDescriptor, "miopenSet4dTensorDescriptor");
    get(h, m->SetTensorDescriptor, "miopenSetTensorDescriptor");
    get(h, m->CreateConvolutionDescriptor, "miopenCreateConvolutionDescriptor");
    get(h, m->InitConvolutionDescriptor, "miopenInitConvolutionDescriptor");
    get(h, m->ForwardGetWorkSpaceSize, "miopenConvolutionForwardGetWorkSpaceSize");
    get(h, m->FindForwardAlgorithm, "miopenFindConvolutionForwardAlgorithm");
    get(h, m->ConvolutionForward, "miopenConvolutionForward");
    if (!missing.empty()) {
      error = opened + ": " + missing;
      return nullptr;
    }
    size_t major = 0, minor = 0, patch = 0;
    m->GetVersion(&major, &minor, &patch);
    std::lock_guard lock(g_mu);
    g_version = Format("MIOpen %zu.%zu.%zu (%s)", major, minor, patch, opened.c_str());
    return m;
  }();
  *code = lib != nullptr ? 0 : Failed(TUNE_GPU_NOT_FOUND, error);
  return lib;
}

std::string Status(const Miopen& m, const char* what, miopenStatus_t s) {
  return Format("%s failed: MIOpen status %d (%s)", what, s, m.GetErrorString(s));
}

struct Plan {
  Desc x = nullptr, w = nullptr, y = nullptr, conv = nullptr;
  int algo = -1;
  void* workspace = nullptr;
  size_t workspace_size = 0;
  std::string name;
};

// The calling thread's MIOpen handle for the current device, bound to `stream`.
int32_t Handle(const Miopen& m, void* stream, int* device, miopenHandle_t* out) {
  if (int e = m.hip->hipGetDevice(device); e != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Format("hipGetDevice failed: HIP error %d", e));
  }
  thread_local std::map<int, miopenHandle_t> handles;
  auto h = handles.find(*device);
  if (h == handles.end()) {
    miopenHandle_t handle = nullptr;
    if (miopenStatus_t s = m.Create(&handle); s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(m, "miopenCreate", s));
    }
    h = handles.emplace(*device, handle).first;
  }
  if (miopenStatus_t s = m.SetStream(h->second, stream); s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(m, "miopenSetStream", s));
  }
  *out = h->second;
  return 0;
}

const char* TypeName(int32_t type) {
  static constexpr const char* kNames[] = {"f32",     "tf32", "f16", "bf16",        "fp8e4m3",
                                           "fp8e5m2", "i8",   "i32", "fp8e4m3fnuz", "fp8e5m2fnuz"};
  return type >= 0 && type <= TUNE_GPU_TYPE_FP8E5M2FNUZ ? kNames[type] : "?";
}

// The miopenDataType_t of the input and of the output of a served `in` -> `out`; false when the
// typed entry does not serve it.
bool MiopenTypes(int32_t in, int32_t out, int* in_type, int* out_type) {
  if (in == TUNE_GPU_TYPE_I8 && out == TUNE_GPU_TYPE_I32) {
    *in_type = miopenInt8;
    *out_type = miopenInt32;
    return true;
  }
  if (in != out) {
    return false;
  }
  *in_type = *out_type = in == TUNE_GPU_TYPE_F32    ? miopenFloat
                         : in == TUNE_GPU_TYPE_F16  ? miopenHalf
                         : in == TUNE_GPU_TYPE_BF16 ? miopenBFloat16
                                                    : -1;
  return *in_type >= 0;
}

// Why `in` -> `out` is not served, naming what is.
std::string Unserved(int32_t in, int32_t out) {
  const bool fp8 = in == TUNE_GPU_TYPE_FP8E4M3 || in == TUNE_GPU_TYPE_FP8E5M2 ||
                   in == TUNE_GPU_TYPE_FP8E4M3FNUZ || in == TUNE_GPU_TYPE_FP8E5M2FNUZ;
  const char* why =
      fp8 || (in == TUNE_GPU_TYPE_I8 && out != TUNE_GPU_TYPE_I32)
          ? " (a scaled form: MIOpen's alpha is a host scalar, and the scales are device "
            "pointers that only work queued on the stream may read)"
      : in == TUNE_GPU_TYPE_TF32 ? " (MIOpen has no tf32 reading of f32)"
      : in == out                ? ""
                                 : " (MIOpen's convolution writes the type it reads)";
  return Format(
      "%s -> %s is not served%s; tune_miopen_conv2d_typed serves f32 -> f32, f16 -> f16, "
      "bf16 -> bf16 and i8 -> i32 (the raw sums), without an epilogue",
      TypeName(in), TypeName(out), why);
}

// A 4-d tensor of lengths (n, c, h, w), as MIOpen orders them, laid out channels last
// ([n][h][w][c]: NHWC, or KRSC for weights).
miopenStatus_t SetNhwc(const Miopen& m, Desc desc, int type, int64_t n, int64_t c, int64_t h,
                       int64_t w) {
  const int lengths[4] = {static_cast<int>(n), static_cast<int>(c), static_cast<int>(h),
                          static_cast<int>(w)};
  const int strides[4] = {static_cast<int>(h * w * c), 1, static_cast<int>(w * c),
                          static_cast<int>(c)};
  return m.SetTensorDescriptor(desc, type, 4, lengths, strides);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t tune_miopen_conv2d(
    const float* x, const float* w, const float* bias_or_null, float* y, int64_t N, int64_t C,
    int64_t H, int64_t W, int64_t K, int64_t R, int64_t S, int64_t stride, int64_t pad,
    int64_t dilation, int32_t epilogue, int32_t epilogue_mode, int32_t algo, void* stream) {
  const int64_t P = (H + 2 * pad - (R - 1) * dilation - 1) / stride + 1;
  const int64_t Q = (W + 2 * pad - (S - 1) * dilation - 1) / stride + 1;
  if (x == nullptr || w == nullptr || y == nullptr || N < 1 || C < 1 || H < 1 || W < 1 || K < 1 ||
      R < 1 || S < 1 || stride < 1 || pad < 0 || dilation < 1 || P < 1 || Q < 1 ||
      N * C * H * W > 0x7fffffff || N * K * P * Q > 0x7fffffff ||
      !tune_gpu::ValidEpilogue(epilogue, epilogue_mode, bias_or_null)) {
    return Failed(TUNE_GPU_BAD_ARGUMENT,
                  "tune_miopen_conv2d: null pointer, bad shape or bad epilogue");
  }
  if (epilogue != TUNE_GPU_EPILOGUE_NONE) {
    return Failed(TUNE_GPU_UNSUPPORTED, "tune_miopen_conv2d has no bias/ReLU epilogue");
  }
  if (algo != TUNE_GPU_ALGO_SEARCH) {
    return Failed(TUNE_GPU_ALGO_UNSUPPORTED,
                  Format("tune_miopen_conv2d runs the algorithm MIOpen's find chooses (algo -1), "
                         "not %d",
                         algo));
  }
  int32_t rc = 0;
  const Miopen* m = Load(&rc);
  if (m == nullptr) {
    return rc;
  }
  int device = 0;
  miopenHandle_t handle = nullptr;
  if (rc = Handle(*m, stream, &device, &handle); rc != 0) {
    return rc;
  }
  using Key = std::vector<int64_t>;
  thread_local std::map<Key, Plan> plans;
  const Key key = {device, N, C, H, W, K, R, S, stride, pad, dilation};
  auto it = plans.find(key);
  if (it == plans.end()) {
    Plan p;
    miopenStatus_t s = m->CreateTensorDescriptor(&p.x);
    auto step = [&](miopenStatus_t next) {
      if (s == 0) {
        s = next;
      }
    };
    const int n = static_cast<int>(N), ci = static_cast<int>(C), k = static_cast<int>(K);
    step(m->Set4dTensorDescriptor(p.x, miopenFloat, n, ci, static_cast<int>(H),
                                  static_cast<int>(W)));
    step(m->CreateTensorDescriptor(&p.w));
    step(m->Set4dTensorDescriptor(p.w, miopenFloat, k, ci, static_cast<int>(R),
                                  static_cast<int>(S)));
    step(m->CreateTensorDescriptor(&p.y));
    step(
        m->Set4dTensorDescriptor(p.y, miopenFloat, n, k, static_cast<int>(P), static_cast<int>(Q)));
    step(m->CreateConvolutionDescriptor(&p.conv));
    const int pd = static_cast<int>(pad), st = static_cast<int>(stride),
              dl = static_cast<int>(dilation);
    step(m->InitConvolutionDescriptor(p.conv, miopenConvolution, pd, pd, st, st, dl, dl));
    step(m->ForwardGetWorkSpaceSize(handle, p.w, p.x, p.conv, p.y, &p.workspace_size));
    if (s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*m, "MIOpen descriptors", s));
    }
    if (p.workspace_size > 0) {
      if (int e = m->hip->hipMalloc(&p.workspace, p.workspace_size); e != 0) {
        return Failed(TUNE_GPU_LIBRARY_ERROR,
                      Format("hipMalloc(%zu) failed: HIP error %d", p.workspace_size, e));
      }
    }
    // Find runs the candidates on the caller's buffers (y is overwritten, then written again).
    miopenConvAlgoPerf_t perf[4] = {};
    int found = 0;
    if (s = m->FindForwardAlgorithm(handle, p.x, x, p.w, w, p.conv, p.y, y, 4, &found, perf,
                                    p.workspace, p.workspace_size, false);
        s != 0 || found < 1) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*m, "miopenFindConvolutionForwardAlgorithm", s));
    }
    p.algo = perf[0].fwd_algo;
    p.name = Format(
        "miopenConvolutionForward algo %d (found by "
        "miopenFindConvolutionForwardAlgorithm), workspace %zu B",
        p.algo, p.workspace_size);
    it = plans.emplace(key, p).first;
  }
  const Plan& p = it->second;
  const float one = 1.0f, zero = 0.0f;
  if (miopenStatus_t s = m->ConvolutionForward(handle, &one, p.x, x, p.w, w, p.conv, p.algo, &zero,
                                               p.y, y, p.workspace, p.workspace_size);
      s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*m, "miopenConvolutionForward", s));
  }
  std::lock_guard lock(g_mu);
  g_last_path = p.name;
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_miopen_conv2d_typed(
    const void* x, const void* w, const void* bias_or_null, void* y, const float* scale_x,
    const float* scale_w, int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R,
    int64_t S, int64_t stride, int64_t pad, int64_t dilation, int32_t in_type, int32_t out_type,
    int32_t epilogue, int32_t algo, void* stream) {
  const int64_t P = (H + 2 * pad - (R - 1) * dilation - 1) / stride + 1;
  const int64_t Q = (W + 2 * pad - (S - 1) * dilation - 1) / stride + 1;
  const bool known_types = in_type >= TUNE_GPU_TYPE_F32 && in_type <= TUNE_GPU_TYPE_FP8E5M2FNUZ &&
                           out_type >= TUNE_GPU_TYPE_F32 && out_type <= TUNE_GPU_TYPE_FP8E5M2FNUZ;
  if (x == nullptr || w == nullptr || y == nullptr || N < 1 || C < 1 || H < 1 || W < 1 || K < 1 ||
      R < 1 || S < 1 || stride < 1 || pad < 0 || dilation < 1 || P < 1 || Q < 1 ||
      N * C * H * W > 0x7fffffff || N * K * P * Q > 0x7fffffff || K * R * S * C > 0x7fffffff ||
      !known_types ||
      !tune_gpu::ValidEpilogue(epilogue, TUNE_GPU_EPILOGUE_SEPARATE,
                               static_cast<const float*>(bias_or_null))) {
    return Failed(TUNE_GPU_BAD_ARGUMENT,
                  "tune_miopen_conv2d_typed: null pointer, bad shape, type not a "
                  "TUNE_GPU_TYPE_* code or bad epilogue");
  }
  if (epilogue != TUNE_GPU_EPILOGUE_NONE) {
    return Failed(TUNE_GPU_UNSUPPORTED, "tune_miopen_conv2d_typed has no bias/ReLU epilogue");
  }
  int x_type = -1, y_type = -1;
  if (!MiopenTypes(in_type, out_type, &x_type, &y_type)) {
    return Failed(TUNE_GPU_UNSUPPORTED, Unserved(in_type, out_type));
  }
  if (algo != TUNE_GPU_ALGO_SEARCH) {
    return Failed(TUNE_GPU_ALGO_UNSUPPORTED,
                  Format("tune_miopen_conv2d_typed runs the algorithm MIOpen's find chooses "
                         "(algo -1), not %d",
                         algo));
  }
  int32_t rc = 0;
  const Miopen* m = Load(&rc);
  if (m == nullptr) {
    return rc;
  }
  int device = 0;
  miopenHandle_t handle = nullptr;
  if (rc = Handle(*m, stream, &device, &handle); rc != 0) {
    return rc;
  }
  using Key = std::vector<int64_t>;
  thread_local std::map<Key, Plan> plans;
  const Key key = {device, N, C, H, W, K, R, S, stride, pad, dilation, in_type, out_type};
  auto it = plans.find(key);
  if (it == plans.end()) {
    Plan p;
    miopenStatus_t s = m->CreateTensorDescriptor(&p.x);
    auto step = [&](miopenStatus_t next) {
      if (s == 0) {
        s = next;
      }
    };
    step(SetNhwc(*m, p.x, x_type, N, C, H, W));
    step(m->CreateTensorDescriptor(&p.w));
    step(SetNhwc(*m, p.w, x_type, K, C, R, S));  // KRSC: the weights' "channels" are C too
    step(m->CreateTensorDescriptor(&p.y));
    step(SetNhwc(*m, p.y, y_type, N, K, P, Q));
    step(m->CreateConvolutionDescriptor(&p.conv));
    const int pd = static_cast<int>(pad), st = static_cast<int>(stride),
              dl = static_cast<int>(dilation);
    step(m->InitConvolutionDescriptor(p.conv, miopenConvolution, pd, pd, st, st, dl, dl));
    step(m->ForwardGetWorkSpaceSize(handle, p.w, p.x, p.conv, p.y, &p.workspace_size));
    if (s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*m, "MIOpen NHWC descriptors", s));
    }
    if (p.workspace_size > 0) {
      if (int e = m->hip->hipMalloc(&p.workspace, p.workspace_size); e != 0) {
        return Failed(TUNE_GPU_LIBRARY_ERROR,
                      Format("hipMalloc(%zu) failed: HIP error %d", p.workspace_size, e));
      }
    }
    // Find runs the candidates on the caller's buffers (y is overwritten, then written again).
    miopenConvAlgoPerf_t perf[4] = {};
    int found = 0;
    s = m->FindForwardAlgorithm(handle, p.x, x, p.w, w, p.conv, p.y, y, 4, &found, perf,
                                p.workspace, p.workspace_size, false);
    if (s == miopenStatusNotImplemented || s == miopenStatusUnsupportedOp ||
        (s == 0 && found < 1)) {
      return Failed(
          TUNE_GPU_UNSUPPORTED,
          Format("MIOpen's find has no NHWC %s -> %s convolution for N=%lld C=%lld "
                 "H=%lld W=%lld K=%lld R=%lld S=%lld here (%s)",
                 TypeName(in_type), TypeName(out_type), static_cast<long long>(N),
                 static_cast<long long>(C), static_cast<long long>(H), static_cast<long long>(W),
                 static_cast<long long>(K), static_cast<long long>(R), static_cast<long long>(S),
                 Status(*m, "miopenFindConvolutionForwardAlgorithm", s).c_str()));
    }
    if (s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*m, "miopenFindConvolutionForwardAlgorithm", s));
    }
    p.algo = perf[0].fwd_algo;
    p.name = Format(
        "miopenConvolutionForward NHWC %s -> %s algo %d (found by "
        "miopenFindConvolutionForwardAlgorithm), workspace %zu B",
        TypeName(in_type), TypeName(out_type), p.algo, p.workspace_size);
    it = plans.emplace(key, p).first;
  }
  const Plan& p = it->second;
  // alpha and beta are floats for every data type (MIOpen's int8 path among them).
  const float one = 1.0f, zero = 0.0f;
  if (miopenStatus_t s = m->ConvolutionForward(handle, &one, p.x, x, p.w, w, p.conv, p.algo, &zero,
                                               p.y, y, p.workspace, p.workspace_size);
      s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*m, "miopenConvolutionForward", s));
  }
  std::lock_guard lock(g_mu);
  g_last_path = p.name;
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_miopen_describe(char* buf,
                                                                               int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;
  }
  std::lock_guard lock(g_mu);
  std::snprintf(buf, static_cast<size_t>(size), "%s; last call: %s%s%s",
                g_version.empty() ? "MIOpen not loaded yet" : g_version.c_str(),
                g_last_path.empty() ? "none yet" : g_last_path.c_str(),
                g_last_error.empty() ? "" : "; last error: ", g_last_error.c_str());
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_miopen_version(char* buf,
                                                                              int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;  // before anything is loaded
  }
  int32_t rc = 0;
  const Miopen* m = Load(&rc);
  if (m == nullptr) {
    return rc;
  }
  size_t major = 0, minor = 0, patch = 0;
  m->GetVersion(&major, &minor, &patch);
  return tune_gpu::WriteVersion(buf, size, Format("%zu.%zu.%zu", major, minor, patch));
}
