#include "runtime/gpu_shim_util.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "runtime/tune_gpu_runtime.h"

namespace tune_gpu {
namespace {

// The epilogue kernel, written by hand: a grid-stride loop over the output.
constexpr char kEpiloguePtx[] = R"(//
// tune's GPU shims: the bias/ReLU epilogue run after a library call (tune_gpu_runtime.h).
.version 7.0
.target sm_80
.address_size 64

.visible .entry tune_bias_relu(
    .param .u64 p_y,
    .param .u64 p_bias,
    .param .u64 p_total,
    .param .u64 p_channels,
    .param .u64 p_inner,
    .param .u32 p_mode
)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<14>;
    .reg .f32 %f<3>;

    ld.param.u64 %rd1, [p_y];
    ld.param.u64 %rd2, [p_bias];
    ld.param.u64 %rd3, [p_total];
    ld.param.u64 %rd4, [p_channels];
    ld.param.u64 %rd5, [p_inner];
    ld.param.u32 %r1, [p_mode];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mul.wide.u32 %rd6, %r2, %r3;
    cvt.u64.u32 %rd7, %r4;
    add.u64 %rd6, %rd6, %rd7;
    mov.u32 %r5, %nctaid.x;
    mul.wide.u32 %rd8, %r5, %r3;
    and.b32 %r6, %r1, 1;
    setp.ne.u32 %p2, %r6, 0;
    and.b32 %r7, %r1, 2;
    setp.ne.u32 %p3, %r7, 0;
LOOP:
    setp.ge.u64 %p1, %rd6, %rd3;
    @%p1 bra DONE;
    shl.b64 %rd9, %rd6, 2;
    add.u64 %rd10, %rd1, %rd9;
    ld.global.f32 %f1, [%rd10];
    @!%p2 bra NO_BIAS;
    div.u64 %rd11, %rd6, %rd5;
    rem.u64 %rd11, %rd11, %rd4;
    shl.b64 %rd12, %rd11, 2;
    add.u64 %rd13, %rd2, %rd12;
    ld.global.f32 %f2, [%rd13];
    add.rn.f32 %f1, %f1, %f2;
NO_BIAS:
    @!%p3 bra STORE;
    max.f32 %f1, %f1, 0f00000000;
STORE:
    st.global.f32 [%rd10], %f1;
    add.u64 %rd6, %rd6, %rd8;
    bra LOOP;
DONE:
    ret;
}
)";

// The driver once its symbols are resolved (CudaError names codes through it).
const CudaDriver* g_resolved_driver = nullptr;

std::mutex g_error_mu;
std::string g_last_error;  // guarded by g_error_mu

}  // namespace

void* OpenFirst(std::initializer_list<const char*> names, std::string* error, std::string* opened) {
  std::string first_error;
  std::string tried;
  for (const char* name : names) {
    dlerror();
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL); lib != nullptr) {
      if (opened != nullptr) {
        *opened = name;
      }
      return lib;
    }
    if (first_error.empty()) {
      const char* e = dlerror();
      first_error = e != nullptr ? e : "dlopen failed";
    }
    tried += tried.empty() ? name : std::string(" or ") + name;
  }
  *error = tried + " not found (" + first_error + ")";
  return nullptr;
}

void* Symbol(void* lib, const char* name, std::string* missing) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr && missing->empty()) {
    *missing = std::string("no symbol ") + name;
  }
  return sym;
}

std::string Format(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

int32_t Fail(int32_t code, const std::string& message) {
  // When several shims are loaded RTLD_GLOBAL, tune_gpu_last_error() resolves to the first one's:
  // record there, so that one function describes the failures of all of them.
  using Record = void (*)(const char*);
  static const Record record = [] {
    auto r = reinterpret_cast<Record>(dlsym(RTLD_DEFAULT, "tune_gpu_record_error"));
    return r != nullptr ? r : &tune_gpu_record_error;
  }();
  record(message.c_str());
  return code;
}

const CudaDriver* Driver() {
  static const CudaDriver* driver = []() -> const CudaDriver* {
    std::string error;
    void* lib = OpenFirst({"libcuda.so.1"}, &error, nullptr);
    if (lib == nullptr) {
      Fail(TUNE_GPU_NOT_FOUND, "CUDA driver: " + error);
      return nullptr;
    }
    auto* cu = new CudaDriver();  // lives as long as the process
    if (const char* missing = tune_cuda_driver_resolve(lib, cu, nullptr); missing != nullptr) {
      Fail(TUNE_GPU_NOT_FOUND, std::string("CUDA driver libcuda.so.1: no symbol ") + missing);
      return nullptr;
    }
    g_resolved_driver = cu;
    if (CUresult rc = cu->cuInit(0); rc != 0) {
      Fail(TUNE_GPU_LIBRARY_ERROR, CudaError("cuInit", rc));
    }
    return cu;
  }();
  return driver;
}

const tune_hip_runtime* HipRuntime(std::string* error) {
  static std::string why;
  static const tune_hip_runtime* hip = []() -> const tune_hip_runtime* {
    std::string opened;
    void* lib =
        OpenFirst({"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}, &why, &opened);
    if (lib == nullptr) {
      return nullptr;
    }
    auto* table = new tune_hip_runtime();  // lives as long as the process
    if (const char* missing = tune_hip_runtime_resolve(lib, table, nullptr); missing != nullptr) {
      why = opened + ": no symbol " + missing;
      delete table;
      return nullptr;
    }
    return table;
  }();
  if (hip == nullptr) {
    *error = why;
  }
  return hip;
}

std::string CudaError(const char* what, CUresult rc) {
  const char* name = nullptr;
  if (g_resolved_driver != nullptr) {
    g_resolved_driver->cuGetErrorString(rc, &name);
  }
  return Format("%s failed: CUDA error %d (%s)", what, rc, name != nullptr ? name : "unknown");
}

int32_t CurrentDevice(const CudaDriver& cu, CUdevice* device) {
  if (CUresult rc = cu.cuCtxGetDevice(device); rc != 0) {
    return Fail(TUNE_GPU_LIBRARY_ERROR,
                CudaError("cuCtxGetDevice (is a context current on this thread?)", rc));
  }
  return 0;
}

int32_t AllocDevice(const CudaDriver& cu, size_t bytes, CUdeviceptr* ptr) {
  *ptr = 0;
  if (bytes == 0) {
    return 0;
  }
  if (CUresult rc = cu.cuMemAlloc(ptr, bytes); rc != 0) {
    return Fail(TUNE_GPU_LIBRARY_ERROR, CudaError(Format("cuMemAlloc(%zu)", bytes).c_str(), rc));
  }
  return 0;
}

int32_t LaunchEpilogue(const CudaDriver& cu, float* y, const float* bias, uint64_t total,
                       uint64_t channels, uint64_t inner, uint32_t mode, void* stream) {
  if (mode == 0 || total == 0) {
    return 0;
  }
  CUcontext ctx = nullptr;
  if (CUresult rc = cu.cuCtxGetCurrent(&ctx); rc != 0 || ctx == nullptr) {
    return Fail(TUNE_GPU_LIBRARY_ERROR, CudaError("cuCtxGetCurrent (no current context)", rc));
  }
  static std::mutex mu;
  static auto* functions = new std::map<CUcontext, CUfunction>();  // one module per context
  CUfunction fn = nullptr;
  {
    std::lock_guard lock(mu);
    auto it = functions->find(ctx);
    if (it == functions->end()) {
      CUmodule module = nullptr;
      if (CUresult rc = cu.cuModuleLoadData(&module, kEpiloguePtx); rc != 0) {
        return Fail(TUNE_GPU_LIBRARY_ERROR, CudaError("cuModuleLoadData (epilogue PTX)", rc));
      }
      if (CUresult rc = cu.cuModuleGetFunction(&fn, module, "tune_bias_relu"); rc != 0) {
        return Fail(TUNE_GPU_LIBRARY_ERROR, CudaError("cuModuleGetFunction(tune_bias_relu)", rc));
      }
      it = functions->emplace(ctx, fn).first;
    }
    fn = it->second;
  }
  constexpr uint64_t kBlock = 256;
  const uint64_t blocks = std::min<uint64_t>((total + kBlock - 1) / kBlock, 65535);
  const float* bias_arg = bias != nullptr ? bias : y;  // never read without the bias bit
  void* params[] = {&y, &bias_arg, &total, &channels, &inner, &mode};
  if (CUresult rc = cu.cuLaunchKernel(fn, static_cast<unsigned>(blocks), 1, 1, kBlock, 1, 1, 0,
                                      static_cast<CUstream>(stream), params, nullptr);
      rc != 0) {
    return Fail(TUNE_GPU_LIBRARY_ERROR, CudaError("cuLaunchKernel(tune_bias_relu)", rc));
  }
  return 0;
}

bool ValidEpilogue(int32_t epilogue, int32_t mode, const float* bias) {
  if (epilogue < TUNE_GPU_EPILOGUE_NONE || epilogue > TUNE_GPU_EPILOGUE_BIAS_RELU) {
    return false;
  }
  if (mode != TUNE_GPU_EPILOGUE_SEPARATE && mode != TUNE_GPU_EPILOGUE_LIBRARY) {
    return false;
  }
  return (epilogue & TUNE_GPU_EPILOGUE_BIAS) == 0 || bias != nullptr;
}

std::string FileVersion(const void* symbol) {
  Dl_info info{};
  char resolved[PATH_MAX] = {};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr ||
      realpath(info.dli_fname, resolved) == nullptr) {
    return "unknown";
  }
  const char* so = std::strstr(resolved, ".so.");
  return so != nullptr && so[4] != '\0' ? std::string(so + 4) : "unknown";
}

int32_t WriteVersion(char* buf, int64_t size, const std::string& version) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;
  }
  std::snprintf(buf, static_cast<size_t>(size), "%s", version.c_str());
  return 0;
}

}  // namespace tune_gpu

extern "C" {

// Records the last failure (called by the shims through Fail; not part of the public ABI).
__attribute__((visibility("default"))) void tune_gpu_record_error(const char* message) {
  std::lock_guard lock(tune_gpu::g_error_mu);
  tune_gpu::g_last_error = message;
}

__attribute__((visibility("default"))) const char* tune_gpu_last_error(void) {
  thread_local std::string copy;
  std::lock_guard lock(tune_gpu::g_error_mu);
  copy = tune_gpu::g_last_error;
  return copy.c_str();
}

__attribute__((visibility("default"))) const char* tune_cuda_epilogue_ptx(void) {
  return tune_gpu::kEpiloguePtx;
}

}  // extern "C"
