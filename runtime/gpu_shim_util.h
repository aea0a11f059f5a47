// What the GPU shims share (compiled into each of them; not an interface of its own): opening
// vendor libraries lazily, recording failures for tune_gpu_last_error(), the few functions of
// the CUDA driver API and the HIP runtime (tune_cuda_driver.h, tune_hip_runtime.h: libcuda.so.1 and
// libamdhip64.so, opened with dlopen) and the epilogue kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "runtime/tune_cuda_driver.h"
#include "runtime/tune_hip_runtime.h"

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

// The CUDA driver API: the table of tune_cuda_driver.h, shared with the GPU runtime and the
// worker (handles are pointers).
using CUresult = tune_cu_result;
using CUdevice = tune_cu_device;
using CUcontext = tune_cu_context;
using CUmodule = tune_cu_module;
using CUfunction = tune_cu_function;
using CUstream = tune_cu_stream;
using CUdeviceptr = tune_cu_deviceptr;
using CudaDriver = tune_cuda_driver;

// libcuda.so.1, opened at the first call; nullptr after recording why (TUNE_GPU_NOT_FOUND).
const CudaDriver* Driver();

// The HIP runtime (libamdhip64.so, .so.6 or .so.5; the table of tune_hip_runtime.h), opened at
// the first call; nullptr with `error` set to why ("libamdhip64.so or ... not found (...)",
// "libamdhip64.so: no symbol ...").
const tune_hip_runtime* HipRuntime(std::string* error);

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
                       uint64_t channels, uint64_t inner, uint32_t mode, void* stream);

// The epilogue's TUNE_GPU_EPILOGUE_* value as launch mode bits, and a check of the arguments.
bool ValidEpilogue(int32_t epilogue, int32_t mode, const float* bias);

// snprintf into a std::string.
std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The version in the resolved file name of the library that defines `symbol` (after ".so.":
// libhipblaslt.so.0 -> libhipblaslt.so.0.8.60200 gives "0.8.60200"); "unknown" when the name
// holds none.
std::string FileVersion(const void* symbol);

// The tune_*_version functions' ending: `version` into buf[size], truncated, NUL-terminated;
// returns 0, or TUNE_GPU_BAD_ARGUMENT for a null or empty buffer.
int32_t WriteVersion(char* buf, int64_t size, const std::string& version);

}  // namespace tune_gpu
