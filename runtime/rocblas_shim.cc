// libtune_rocblas.so: tune's shim over rocBLAS (runtime/tune_gpu_runtime.h).
//
// librocblas and the HIP runtime are opened at the first call; handles are made per (thread,
// device) and kept. rocBLAS has no fused epilogue and this shim no HIP epilogue kernel: a call
// with an epilogue is TUNE_GPU_UNSUPPORTED (the gemm.rocm.rocblas template applies only to
// workloads without one). FP32: the math mode is rocblas_default_math (no XF32) where rocBLAS
// has math modes.
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "runtime/gpu_shim_util.h"
#include "runtime/tune_gpu_runtime.h"

namespace {

using tune_gpu::Format;

// The rocBLAS/HIP ABI this shim uses (rocblas-types.h, rocblas-functions.h, hip_runtime_api.h).
using rocblas_status = int;
using rocblas_handle = void*;
constexpr int rocblas_operation_none = 111;
constexpr int rocblas_default_math = 0;

struct Rocblas {
  std::string file;
  rocblas_status (*CreateHandle)(rocblas_handle*);
  rocblas_status (*SetStream)(rocblas_handle, void*);
  rocblas_status (*Sgemm)(rocblas_handle, int, int, int, int, int, const float*, const float*, int,
                          const float*, int, const float*, float*, int);
  rocblas_status (*GetVersionString)(char*, size_t);
  const char* (*StatusToString)(rocblas_status);       // may be absent
  rocblas_status (*SetMathMode)(rocblas_handle, int);  // may be absent (before ROCm 5.7)
  const tune_hip_runtime* hip;                         // the HIP runtime (tune_hip_runtime.h)
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
  return tune_gpu::Fail(code, "rocblas: " + message);
}

const Rocblas* Load(int32_t* code) {
  static std::string error;
  static const Rocblas* lib = []() -> const Rocblas* {
    std::string opened;
    void* h = tune_gpu::OpenFirst({"librocblas.so", "librocblas.so.4", "librocblas.so.5"}, &error,
                                  &opened);
    if (h == nullptr) {
      return nullptr;
    }
    const tune_hip_runtime* hip = tune_gpu::HipRuntime(&error);
    if (hip == nullptr) {
      return nullptr;
    }
    auto* r = new Rocblas();  // lives as long as the process
    r->file = opened;
    r->hip = hip;
    std::string missing;
    auto get = [&](void* from, auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          tune_gpu::Symbol(from, name, &missing));
    };
    get(h, r->CreateHandle, "rocblas_create_handle");
    get(h, r->SetStream, "rocblas_set_stream");
    get(h, r->Sgemm, "rocblas_sgemm");
    get(h, r->GetVersionString, "rocblas_get_version_string");
    if (!missing.empty()) {
      error = opened + ": " + missing;
      return nullptr;
    }
    r->StatusToString =
        reinterpret_cast<decltype(r->StatusToString)>(dlsym(h, "rocblas_status_to_string"));
    r->SetMathMode = reinterpret_cast<decltype(r->SetMathMode)>(dlsym(h, "rocblas_set_math_mode"));
    char version[128] = {};
    r->GetVersionString(version, sizeof(version));
    std::lock_guard lock(g_mu);
    g_version = Format("rocBLAS %s (%s)", version, opened.c_str());
    return r;
  }();
  *code = lib != nullptr ? 0 : Failed(TUNE_GPU_NOT_FOUND, error);
  return lib;
}

std::string Status(const Rocblas& r, const char* what, rocblas_status s) {
  const char* name = r.StatusToString != nullptr ? r.StatusToString(s) : "";
  return Format("%s failed: rocBLAS status %d %s", what, s, name != nullptr ? name : "");
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t
tune_rocblas_sgemm(const float* A, const float* B, const float* bias_or_null, float* C, int64_t M,
                   int64_t N, int64_t K, int32_t epilogue, int32_t epilogue_mode, void* stream) {
  if (A == nullptr || B == nullptr || C == nullptr || M < 1 || N < 1 || K < 1 || M > 0x7fffffff ||
      N > 0x7fffffff || K > 0x7fffffff ||
      !tune_gpu::ValidEpilogue(epilogue, epilogue_mode, bias_or_null)) {
    return Failed(TUNE_GPU_BAD_ARGUMENT,
                  "tune_rocblas_sgemm: null pointer, shape out of [1, 2^31) or bad epilogue");
  }
  if (epilogue != TUNE_GPU_EPILOGUE_NONE) {
    return Failed(TUNE_GPU_UNSUPPORTED, "tune_rocblas_sgemm has no bias/ReLU epilogue");
  }
  int32_t rc = 0;
  const Rocblas* r = Load(&rc);
  if (r == nullptr) {
    return rc;
  }
  int device = 0;
  if (int e = r->hip->hipGetDevice(&device); e != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Format("hipGetDevice failed: HIP error %d", e));
  }
  thread_local std::map<int, rocblas_handle> handles;
  auto it = handles.find(device);
  if (it == handles.end()) {
    rocblas_handle h = nullptr;
    if (rocblas_status s = r->CreateHandle(&h); s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*r, "rocblas_create_handle", s));
    }
    if (r->SetMathMode != nullptr) {
      if (rocblas_status s = r->SetMathMode(h, rocblas_default_math); s != 0) {
        return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*r, "rocblas_set_math_mode(default)", s));
      }
    }
    it = handles.emplace(device, h).first;
  }
  if (rocblas_status s = r->SetStream(it->second, stream); s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*r, "rocblas_set_stream", s));
  }
  const float alpha = 1.0f, beta = 0.0f;
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  // Row-major C[M][N] = A B is column-major C^T[N][M] = B^T[N][K] A^T[K][M].
  if (rocblas_status s = r->Sgemm(it->second, rocblas_operation_none, rocblas_operation_none, n, m,
                                  k, &alpha, B, n, A, k, &beta, C, n);
      s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(*r, "rocblas_sgemm", s));
  }
  std::lock_guard lock(g_mu);
  g_last_path =
      r->SetMathMode != nullptr ? "rocblas_sgemm, default math (no XF32)" : "rocblas_sgemm";
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_rocblas_describe(char* buf,
                                                                                int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;
  }
  std::lock_guard lock(g_mu);
  std::snprintf(buf, static_cast<size_t>(size), "%s; last call: %s%s%s",
                g_version.empty() ? "rocBLAS not loaded yet" : g_version.c_str(),
                g_last_path.empty() ? "none yet" : g_last_path.c_str(),
                g_last_error.empty() ? "" : "; last error: ", g_last_error.c_str());
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_rocblas_version(char* buf,
                                                                               int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;  // before anything is loaded
  }
  int32_t rc = 0;
  const Rocblas* r = Load(&rc);
  if (r == nullptr) {
    return rc;
  }
  char version[128] = {};
  r->GetVersionString(version, sizeof(version));
  return tune_gpu::WriteVersion(buf, size, version);
}
