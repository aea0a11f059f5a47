// The CUDA driver API functions tune-server's measurement child uses, opened at run time with
// dlopen("libcuda.so.1"), so that nothing in the build needs the CUDA toolkit. The types and
// constants below are the driver's own values (cuda.h), declared here under tune's names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tune::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorNoDevice = 100;

// CUdevice_attribute values.
enum CudaDeviceAttribute : int {
  kCuDevAttrMaxThreadsPerBlock = 1,
  kCuDevAttrMaxBlockDimX = 2,
  kCuDevAttrMaxBlockDimY = 3,
  kCuDevAttrMaxBlockDimZ = 4,
  kCuDevAttrMaxGridDimX = 5,
  kCuDevAttrMaxGridDimY = 6,
  kCuDevAttrMaxGridDimZ = 7,
  kCuDevAttrMaxSharedMemoryPerBlock = 8,
  kCuDevAttrClockRate = 13,
  kCuDevAttrMultiprocessorCount = 16,
  kCuDevAttrMemoryClockRate = 36,
  kCuDevAttrL2CacheSize = 38,
  kCuDevAttrComputeCapabilityMajor = 75,
  kCuDevAttrComputeCapabilityMinor = 76,
  kCuDevAttrMaxSharedMemoryPerBlockOptin = 97,
};

// CUfunction_attribute values.
enum CudaFunctionAttribute : int {
  kCuFuncAttrSharedSizeBytes = 1,
  kCuFuncAttrLocalSizeBytes = 3,
  kCuFuncAttrNumRegs = 4,
  kCuFuncAttrMaxDynamicSharedSizeBytes = 8,
};

// CUjit_option values.
enum CudaJitOption : int {
  kCuJitInfoLogBuffer = 3,
  kCuJitInfoLogBufferSizeBytes = 4,
  kCuJitErrorLogBuffer = 5,
  kCuJitErrorLogBufferSizeBytes = 6,
};

inline constexpr unsigned kCuStreamNonBlocking = 1;
// CUstreamCaptureMode: any call that is unsafe during a capture, from any thread, fails.
inline constexpr int kCuStreamCaptureModeGlobal = 0;

/// The driver's entry points (each resolved by its versioned name where cuda.h maps one).
struct CudaApi {
  std::string library_path;  // where libcuda.so.1 was found (dladdr), for the fingerprint

  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t* bytes, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr ptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count, CUstream s);
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, size_t count, CUstream s);
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned num_options,
                                 int* options, void** values);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuFuncGetAttribute)(int* value, int attribute, CUfunction function);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params, void** extra);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end);

  // Stream capture and graphs (CUDA 11.4 and newer). Null when the driver lacks one: graph
  // timing is then refused and the events reading stands.
  CUresult (*cuStreamBeginCapture)(CUstream stream, int mode) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph* graph) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph,
                                          unsigned long long flags) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph graph) = nullptr;
  /// The first graph entry point the driver lacks; empty when it has them all.
  std::string missing_graph_api;

  /// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)", or the number
  /// when the driver does not know the code.
  std::string ErrorText(CUresult result) const;
};

/// Opens libcuda.so.1 once per process and resolves every entry point. FailedPrecondition
/// "libcuda.so.1 could not be loaded: <dlerror>; is the NVIDIA driver installed?" when the
/// library is missing, or naming the first missing symbol (a driver older than CUDA 11).
absl::StatusOr<const CudaApi*> LoadCudaApi();

}  // namespace tune::gpu
