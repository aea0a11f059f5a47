// The CUDA driver API as tune-server's measurement child opens it: dlopen("libcuda.so.1") at run
// time, so that nothing in the build needs the CUDA toolkit. The entry points are the one table
// of runtime/tune_cuda_driver.h (shared with the GPU runtime and the library shims); the
// constants below are the driver's own values (cuda.h), declared here under tune's names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/tune_cuda_driver.h"

namespace tune::gpu {

using CUresult = tune_cu_result;
using CUdevice = tune_cu_device;
using CUdeviceptr = tune_cu_deviceptr;
using CUcontext = tune_cu_context;
using CUmodule = tune_cu_module;
using CUfunction = tune_cu_function;
using CUstream = tune_cu_stream;
using CUevent = tune_cu_event;
using CUgraph = tune_cu_graph;
using CUgraphExec = tune_cu_graph_exec;

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

/// The driver's entry points (tune_cuda_driver.h: each resolved by its versioned name where
/// cuda.h maps one). The stream capture and graph entries (CUDA 11.4 and newer) are null when
/// the driver lacks one: graph timing is then refused and the events reading stands.
struct CudaApi : tune_cuda_driver {
  std::string library_path;  // where libcuda.so.1 was found (dladdr), for the fingerprint
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
