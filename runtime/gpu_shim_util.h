// What the GPU shims share (compiled into each of them; not an interface of its own): opening
// vendor libraries lazily, recording failures for tune_gpu_last_error(), the few functions of
// the CUDA driver API they need (libcuda.so.1, opened with dlopen) and the epilogue kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

// Records the last failure; exported so that all loaded shims share the first one's record.
extern "C" void tune_gpu_record_error(const char* message);

namespace tune_gpu {

// The first of `names` that dlopen opens (RTLD_NOW | RTLD_LOCAL), or nullptr with `error` set to
// "<names joined by ' or '> not found (<dlerror of the first>)".
void* OpenFirst(std::initializer_list<const char*> names, std::string* error, std::string* opened);

// dlsym of `name` in `lib`, recording "<lib>: no symbol <name>" in `missing` when absent.
void* Symbol(void* lib, const char* name, std::string* missing);

// Records `message` as the last failure of the GPU shims of this process and returns `code`.
int32_t Fail(int32_t code, const std::string& message);

// The CUDA driver API, as much as the shims use of it (CUDA 12/13 ABI; handles are pointers).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;

struct CudaDriver {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuCtxGetDevice)(CUdevice*);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, unsigned int, CUstream, void**, void**);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

// libcuda.so.1, opened at the first call; nullptr after recording why (TUNE_GPU_NOT_FOUND).
const CudaDriver* Driver();

// "<what> failed: CUDA error <code> (<name>)".
std::string CudaError(const char* what, CUresult rc);

// The device of the calling thread's current context; TUNE_GPU_LIBRARY_ERROR without one.
int32_t CurrentDevice(const CudaDriver& cu, CUdevice* device);

// A device buffer of at least `bytes` owned by the caller's cache (never freed: the caches live
// as long as the process). 0 bytes is a null pointer.
int32_t AllocDevice(const CudaDriver& cu, size_t bytes, CUdeviceptr* ptr);

// y[i] = relu?(y[i] + bias[(i / inner) % channels]) for i < total, on `stream` (mode bit 0: bias,
// bit 1: ReLU) with the shim's PTX kernel, loaded once per context.
int32_t LaunchEpilogue(const CudaDriver& cu, float* y, const float* bias, uint64_t total,
                       uint64_t channels, uint64_t inner, uint32_t mode, CUstream stream);

// The epilogue's TUNE_GPU_EPILOGUE_* value as launch mode bits, and a check of the arguments.
bool ValidEpilogue(int32_t epilogue, int32_t mode, const float* bias);

// snprintf into a std::string.
std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace tune_gpu
