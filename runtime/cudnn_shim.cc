// libtune_cudnn.so: tune's shim over cuDNN's convolution (runtime/tune_gpu_runtime.h). This half
// holds what both entries share (cudnn_shim_internal.h) and tune_cudnn_conv2d, the FP32 NCHW
// convolution of the legacy API (cudnnConvolutionForward, cudnnConvolutionBiasActivationForward);
// cudnn_graph_shim.cc holds the typed NHWC one of the graph API.
//
// libcudnn is opened at the first call. Handles are made per (thread, device); descriptors, the
// chosen algorithm and its workspace per (thread, device, shape, knobs), so that after the
// warm-up a call only queues the convolution on the caller's stream. FP32 throughout:
// convolutions use CUDNN_FMA_MATH, which keeps cuDNN off tensor cores and so off TF32
// (CUDNN_DEFAULT_MATH lets cuDNN 8/9 pick TF32 kernels for float data on Ampere and later).
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/cudnn_shim_internal.h"
#include "runtime/gpu_shim_util.h"
#include "runtime/tune_gpu_runtime.h"

namespace tune_cudnn {

using tune_gpu::CUdevice;
using tune_gpu::Format;

namespace {

std::mutex g_mu;
std::string g_version;     // guarded by g_mu
std::string g_last_path;   // guarded by g_mu: how the last call ran
std::string g_last_error;  // guarded by g_mu

}  // namespace

int32_t Failed(int32_t code, const std::string& message) {
  {
    std::lock_guard lock(g_mu);
    g_last_error = message;
  }
  return tune_gpu::Fail(code, "cudnn: " + message);
}

void RecordPath(const std::string& path) {
  std::lock_guard lock(g_mu);
  g_last_path = path;
}

const Cudnn* LoadCudnn(int32_t* code) {
  static std::string error;
  static const Cudnn* lib = []() -> const Cudnn* {
    std::string opened;
    void* h = tune_gpu::OpenFirst({"libcudnn.so.9", "libcudnn.so"}, &error, &opened);
    if (h == nullptr) {
      return nullptr;
    }
    auto* c = new Cudnn();  // lives as long as the process
    c->file = opened;
    std::string missing;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          tune_gpu::Symbol(h, name, &missing));
    };
    get(c->GetVersion, "cudnnGetVersion");
    get(c->GetErrorString, "cudnnGetErrorString");
    get(c->Create, "cudnnCreate");
    get(c->SetStream, "cudnnSetStream");
    get(c->CreateTensorDescriptor, "cudnnCreateTensorDescriptor");
    get(c->SetTensor4dDescriptor, "cudnnSetTensor4dDescriptor");
    get(c->CreateFilterDescriptor, "cudnnCreateFilterDescriptor");
    get(c->SetFilter4dDescriptor, "cudnnSetFilter4dDescriptor");
    get(c->CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor");
    get(c->SetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor");
    get(c->SetConvolutionMathType, "cudnnSetConvolutionMathType");
    get(c->GetConvolution2dForwardOutputDim, "cudnnGetConvolution2dForwardOutputDim");
    get(c->CreateActivationDescriptor, "cudnnCreateActivationDescriptor");
    get(c->SetActivationDescriptor, "cudnnSetActivationDescriptor");
    get(c->FindConvolutionForwardAlgorithm, "cudnnFindConvolutionForwardAlgorithm");
    get(c->GetConvolutionForwardWorkspaceSize, "cudnnGetConvolutionForwardWorkspaceSize");
    get(c->ConvolutionForward, "cudnnConvolutionForward");
    get(c->ConvolutionBiasActivationForward, "cudnnConvolutionBiasActivationForward");
    get(c->BackendCreateDescriptor, "cudnnBackendCreateDescriptor");
    get(c->BackendDestroyDescriptor, "cudnnBackendDestroyDescriptor");
    get(c->BackendFinalize, "cudnnBackendFinalize");
    get(c->BackendSetAttribute, "cudnnBackendSetAttribute");
    get(c->BackendGetAttribute, "cudnnBackendGetAttribute");
    get(c->BackendExecute, "cudnnBackendExecute");
    if (!missing.empty()) {
      error = opened + ": " + missing;
      return nullptr;
    }
    c->GetLastErrorString =
        reinterpret_cast<void (*)(char*, size_t)>(dlsym(h, "cudnnGetLastErrorString"));
    const size_t v = c->GetVersion();
    std::lock_guard lock(g_mu);
    g_version = Format("cuDNN %zu.%zu.%zu (%s)", v / 10000, v / 100 % 100, v % 100, opened.c_str());
    return c;
  }();
  *code = lib != nullptr ? 0 : Failed(TUNE_GPU_NOT_FOUND, error);
  return lib;
}

std::string Status(const Cudnn& c, const char* what, cudnnStatus_t s) {
  std::string line = Format("%s failed: cuDNN status %d (%s)", what, s, c.GetErrorString(s));
  if (c.GetLastErrorString != nullptr) {
    char detail[512] = {};
    c.GetLastErrorString(detail, sizeof(detail));
    if (detail[0] != '\0') {
      line += Format(": %s", detail);
    }
  }
  return line;
}

int32_t Handle(const Cudnn& c, CUdevice device, void* stream, cudnnHandle_t* out) {
  thread_local std::map<CUdevice, cudnnHandle_t> handles;
  auto h = handles.find(device);
  if (h == handles.end()) {
    cudnnHandle_t handle = nullptr;
    if (cudnnStatus_t s = c.Create(&handle); s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(c, "cudnnCreate", s));
    }
    h = handles.emplace(device, handle).first;
  }
  if (cudnnStatus_t s = c.SetStream(h->second, stream); s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(c, "cudnnSetStream", s));
  }
  *out = h->second;
  return 0;
}

}  // namespace tune_cudnn

namespace {

using tune_cudnn::Cudnn;
using tune_cudnn::CUDNN_STATUS_BAD_PARAM;
using tune_cudnn::CUDNN_STATUS_NOT_SUPPORTED;
using tune_cudnn::cudnnConvolutionFwdAlgoPerf_t;
using tune_cudnn::cudnnHandle_t;
using tune_cudnn::cudnnStatus_t;
using tune_cudnn::Desc;
using tune_cudnn::Failed;
using tune_cudnn::Handle;
using tune_cudnn::LoadCudnn;
using tune_cudnn::RecordPath;
using tune_cudnn::Status;
using tune_gpu::CudaDriver;
using tune_gpu::CUdevice;
using tune_gpu::CUdeviceptr;
using tune_gpu::Format;

// The legacy API's constants (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h of cuDNN 9).
constexpr int CUDNN_DATA_FLOAT = 0;
constexpr int CUDNN_TENSOR_NCHW = 0;
constexpr int CUDNN_CROSS_CORRELATION = 1;
constexpr int CUDNN_FMA_MATH = 3;
constexpr int CUDNN_ACTIVATION_RELU = 1;
constexpr int CUDNN_ACTIVATION_IDENTITY = 5;
constexpr int CUDNN_NOT_PROPAGATE_NAN = 0;
constexpr int kImplicitPrecompGemm = 1;
constexpr int kAlgoCount = 8;
constexpr const char* kAlgoNames[kAlgoCount] = {
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
    "WINOGRAD",      "WINOGRAD_NONFUSED"};

// One convolution of (device, shape, knobs): descriptors, algorithm, workspace.
struct Plan {
  Desc x = nullptr, w = nullptr, y = nullptr, bias = nullptr, conv = nullptr, act = nullptr;
  int algo = -1;
  CUdeviceptr workspace = 0;
  size_t workspace_size = 0;
  CUdeviceptr zero_bias = 0;  // a ReLU without bias through the fused call
  std::string name;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t tune_cudnn_conv2d(
    const float* x, const float* w, const float* bias_or_null, float* y, int64_t N, int64_t C,
    int64_t H, int64_t W, int64_t K, int64_t R, int64_t S, int64_t stride, int64_t pad,
    int64_t dilation, int32_t epilogue, int32_t epilogue_mode, int32_t algo, void* stream) {
  const int64_t P = (H + 2 * pad - (R - 1) * dilation - 1) / stride + 1;
  const int64_t Q = (W + 2 * pad - (S - 1) * dilation - 1) / stride + 1;
  if (x == nullptr || w == nullptr || y == nullptr || N < 1 || C < 1 || H < 1 || W < 1 || K < 1 ||
      R < 1 || S < 1 || stride < 1 || pad < 0 || dilation < 1 || P < 1 || Q < 1 ||
      N * C * H * W > 0x7fffffff || N * K * P * Q > 0x7fffffff || algo < TUNE_GPU_ALGO_SEARCH ||
      algo >= kAlgoCount || !tune_gpu::ValidEpilogue(epilogue, epilogue_mode, bias_or_null)) {
    return Failed(TUNE_GPU_BAD_ARGUMENT,
                  "tune_cudnn_conv2d: null pointer, bad shape, algo outside [-1, 7] or bad "
                  "epilogue");
  }
  const bool fused =
      epilogue != TUNE_GPU_EPILOGUE_NONE && epilogue_mode == TUNE_GPU_EPILOGUE_LIBRARY;
  const bool identity = epilogue == TUNE_GPU_EPILOGUE_BIAS;
  if (fused && identity && algo != TUNE_GPU_ALGO_SEARCH && algo != kImplicitPrecompGemm) {
    return Failed(TUNE_GPU_UNSUPPORTED,
                  Format("cudnnConvolutionBiasActivationForward with a bias and no ReLU "
                         "(CUDNN_ACTIVATION_IDENTITY) needs algorithm 1 (IMPLICIT_PRECOMP_GEMM), "
                         "not %d",
                         algo));
  }
  int32_t rc = 0;
  const Cudnn* c = LoadCudnn(&rc);
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
  if (rc = Handle(*c, device, stream, &handle); rc != 0) {
    return rc;
  }

  using Key = std::vector<int64_t>;
  thread_local std::map<Key, Plan> plans;
  const Key key = {device,        N,   C, H, W, K, R, S, stride, pad, dilation, epilogue,
                   epilogue_mode, algo};
  auto it = plans.find(key);
  if (it == plans.end()) {
    Plan p;
    const int n = static_cast<int>(N), ci = static_cast<int>(C), k = static_cast<int>(K);
    cudnnStatus_t s = c->CreateTensorDescriptor(&p.x);
    auto step = [&](cudnnStatus_t next) {
      if (s == 0) {
        s = next;
      }
    };
    step(c->SetTensor4dDescriptor(p.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, ci,
                                  static_cast<int>(H), static_cast<int>(W)));
    step(c->CreateFilterDescriptor(&p.w));
    step(c->SetFilter4dDescriptor(p.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, ci,
                                  static_cast<int>(R), static_cast<int>(S)));
    step(c->CreateConvolutionDescriptor(&p.conv));
    const int pd = static_cast<int>(pad), st = static_cast<int>(stride),
              dl = static_cast<int>(dilation);
    step(c->SetConvolution2dDescriptor(p.conv, pd, pd, st, st, dl, dl, CUDNN_CROSS_CORRELATION,
                                       CUDNN_DATA_FLOAT));
    step(c->SetConvolutionMathType(p.conv, CUDNN_FMA_MATH));
    step(c->CreateTensorDescriptor(&p.y));
    step(c->SetTensor4dDescriptor(p.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, k,
                                  static_cast<int>(P), static_cast<int>(Q)));
    if (fused) {
      step(c->CreateTensorDescriptor(&p.bias));
      step(c->SetTensor4dDescriptor(p.bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, k, 1, 1));
      step(c->CreateActivationDescriptor(&p.act));
      step(c->SetActivationDescriptor(p.act,
                                      identity ? CUDNN_ACTIVATION_IDENTITY : CUDNN_ACTIVATION_RELU,
                                      CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    if (s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*c, "cuDNN descriptors", s));
    }
    int on, oc, oh, ow;
    if (s = c->GetConvolution2dForwardOutputDim(p.conv, p.x, p.w, &on, &oc, &oh, &ow);
        s != 0 || on != n || oc != k || oh != P || ow != Q) {
      return Failed(TUNE_GPU_LIBRARY_ERROR,
                    Format("cuDNN's output shape %dx%dx%dx%d is not NxKxPxQ = "
                           "%lldx%lldx%lldx%lld (status %d)",
                           on, oc, oh, ow, static_cast<long long>(N), static_cast<long long>(K),
                           static_cast<long long>(P), static_cast<long long>(Q), s));
    }
    const char* how = "given";
    if (algo == TUNE_GPU_ALGO_SEARCH) {
      // cuDNN times each algorithm on this device (on the handle's stream) and ranks them.
      cudnnConvolutionFwdAlgoPerf_t perf[kAlgoCount] = {};
      int found = 0;
      if (s = c->FindConvolutionForwardAlgorithm(handle, p.x, p.w, p.conv, p.y, kAlgoCount, &found,
                                                 perf);
          s != 0) {
        return Failed(TUNE_GPU_LIBRARY_ERROR,
                      Status(*c, "cudnnFindConvolutionForwardAlgorithm", s));
      }
      for (int i = 0; i < found && p.algo < 0; ++i) {
        if (perf[i].status == 0 && perf[i].mathType == CUDNN_FMA_MATH &&
            (!(fused && identity) || perf[i].algo == kImplicitPrecompGemm)) {
          p.algo = perf[i].algo;
        }
      }
      if (p.algo < 0) {
        return Failed(TUNE_GPU_UNSUPPORTED,
                      Format("cudnnFindConvolutionForwardAlgorithm found no FP32 (FMA) algorithm "
                             "%sfor this shape (%d ranked)",
                             fused && identity ? "usable with a bias and no ReLU " : "", found));
      }
      how = "found by cudnnFindConvolutionForwardAlgorithm";
    } else {
      p.algo = algo;
    }
    if (s = c->GetConvolutionForwardWorkspaceSize(handle, p.x, p.w, p.conv, p.y, p.algo,
                                                  &p.workspace_size);
        s != 0) {
      const int32_t code = s == CUDNN_STATUS_NOT_SUPPORTED || s == CUDNN_STATUS_BAD_PARAM
                               ? TUNE_GPU_ALGO_UNSUPPORTED
                               : TUNE_GPU_LIBRARY_ERROR;
      return Failed(code, Status(*c,
                                 Format("cudnnGetConvolutionForwardWorkspaceSize(algo %d %s)",
                                        p.algo, kAlgoNames[p.algo])
                                     .c_str(),
                                 s));
    }
    if (rc = tune_gpu::AllocDevice(*cu, p.workspace_size, &p.workspace); rc != 0) {
      return Failed(rc, tune_gpu_last_error());
    }
    if (fused && bias_or_null == nullptr) {
      if (rc = tune_gpu::AllocDevice(*cu, sizeof(float) * K, &p.zero_bias); rc != 0) {
        return Failed(rc, tune_gpu_last_error());
      }
      if (tune_gpu::CUresult r =
              cu->cuMemsetD32Async(p.zero_bias, 0, K, static_cast<tune_gpu::CUstream>(stream));
          r != 0) {
        return Failed(TUNE_GPU_LIBRARY_ERROR, tune_gpu::CudaError("cuMemsetD32Async", r));
      }
    }
    p.name = Format("%s algo %d %s (%s), FMA math (TF32 off), workspace %zu B",
                    fused ? "cudnnConvolutionBiasActivationForward" : "cudnnConvolutionForward",
                    p.algo, kAlgoNames[p.algo], how, p.workspace_size);
    it = plans.emplace(key, p).first;
  }
  const Plan& p = it->second;
  const float one = 1.0f, zero = 0.0f;
  void* ws = reinterpret_cast<void*>(p.workspace);
  cudnnStatus_t s = 0;
  if (fused) {
    const void* bias = bias_or_null != nullptr ? static_cast<const void*>(bias_or_null)
                                               : reinterpret_cast<const void*>(p.zero_bias);
    // y = act(1 * conv(x, w) + 0 * z + bias), with z = y (ignored: alpha2 = 0).
    s = c->ConvolutionBiasActivationForward(handle, &one, p.x, x, p.w, w, p.conv, p.algo, ws,
                                            p.workspace_size, &zero, p.y, y, p.bias, bias, p.act,
                                            p.y, y);
  } else {
    s = c->ConvolutionForward(handle, &one, p.x, x, p.w, w, p.conv, p.algo, ws, p.workspace_size,
                              &zero, p.y, y);
  }
  if (s != 0) {
    const int32_t code =
        s == CUDNN_STATUS_NOT_SUPPORTED ? TUNE_GPU_ALGO_UNSUPPORTED : TUNE_GPU_LIBRARY_ERROR;
    return Failed(
        code,
        Status(*c, fused ? "cudnnConvolutionBiasActivationForward" : "cudnnConvolutionForward", s));
  }
  if (!fused && epilogue != TUNE_GPU_EPILOGUE_NONE) {
    if (rc = tune_gpu::LaunchEpilogue(*cu, y, bias_or_null, static_cast<uint64_t>(N * K * P * Q),
                                      static_cast<uint64_t>(K), static_cast<uint64_t>(P * Q),
                                      static_cast<uint32_t>(epilogue), stream);
        rc != 0) {
      return Failed(rc, tune_gpu_last_error());
    }
  }
  RecordPath(p.name + (!fused && epilogue != TUNE_GPU_EPILOGUE_NONE
                           ? ", then tune's bias/ReLU kernel on the same stream"
                           : ""));
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_cudnn_describe(char* buf,
                                                                              int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;
  }
  using tune_cudnn::g_last_error;
  using tune_cudnn::g_last_path;
  using tune_cudnn::g_version;
  std::lock_guard lock(tune_cudnn::g_mu);
  std::snprintf(buf, static_cast<size_t>(size), "%s; last call: %s%s%s",
                g_version.empty() ? "cuDNN not loaded yet" : g_version.c_str(),
                g_last_path.empty() ? "none yet" : g_last_path.c_str(),
                g_last_error.empty() ? "" : "; last error: ", g_last_error.c_str());
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_cudnn_version(char* buf,
                                                                             int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;  // before anything is loaded
  }
  int32_t rc = 0;
  const tune_cudnn::Cudnn* c = LoadCudnn(&rc);
  if (c == nullptr) {
    return rc;
  }
  const size_t v = c->GetVersion();  // major * 10000 + minor * 100 + patch
  return tune_gpu::WriteVersion(buf, size,
                                tune_gpu::Format("%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100));
}
