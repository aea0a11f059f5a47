// The HIP runtime functions tune-server's measurement child uses on ROCm devices, opened at run
// time with dlopen (libamdhip64.so, then .so.6 and .so.5), so that nothing in the build needs
// ROCm. The enum values are those of ROCm 6's hip_runtime_api.h (hipDeviceAttribute_t,
// hipFunction_attribute), declared here under tune's names; the device properties struct is
// never declared (its layout changed between releases): its arch name is found by scanning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tune::gpu {

using hipError_t = int;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
using hipEvent_t = struct ihipEvent_t*;
using hipGraph_t = struct ihipGraph*;
using hipGraphExec_t = struct hipGraphExec*;
using hipGraphNode_t = struct hipGraphNode*;

inline constexpr hipError_t kHipSuccess = 0;

enum HipDeviceAttribute : int {
  kHipAttrClockRate = 5,
  kHipAttrL2CacheSize = 19,
  kHipAttrComputeCapabilityMajor = 23,
  kHipAttrMaxBlockDimX = 26,
  kHipAttrMaxBlockDimY = 27,
  kHipAttrMaxBlockDimZ = 28,
  kHipAttrMaxGridDimX = 29,
  kHipAttrMaxGridDimY = 30,
  kHipAttrMaxGridDimZ = 31,
  kHipAttrMaxThreadsPerBlock = 56,
  kHipAttrMemoryClockRate = 60,
  kHipAttrComputeCapabilityMinor = 61,
  kHipAttrMultiprocessorCount = 63,
  kHipAttrMaxSharedMemoryPerBlock = 74,
};

enum HipFunctionAttribute : int {
  kHipFuncAttrSharedSizeBytes = 1,
  kHipFuncAttrLocalSizeBytes = 3,
  kHipFuncAttrNumRegs = 4,
};

inline constexpr int kHipMemcpyHostToDevice = 1;
inline constexpr int kHipMemcpyDeviceToHost = 2;
inline constexpr unsigned kHipStreamNonBlocking = 1;
// hipStreamCaptureMode: any call that is unsafe during a capture, from any thread, fails.
inline constexpr int kHipStreamCaptureModeGlobal = 0;

struct HipApi {
  std::string library_path;

  hipError_t (*hipInit)(unsigned flags);
  hipError_t (*hipDriverGetVersion)(int* version);
  const char* (*hipGetErrorName)(hipError_t error);
  const char* (*hipGetErrorString)(hipError_t error);
  hipError_t (*hipGetDeviceCount)(int* count);
  hipError_t (*hipSetDevice)(int device);
  hipError_t (*hipDeviceGetName)(char* name, int len, int device);
  hipError_t (*hipDeviceGetAttribute)(int* value, int attribute, int device);
  hipError_t (*hipDeviceTotalMem)(size_t* bytes, int device);
  // hipGetDevicePropertiesR0600 (ROCm 6) or hipGetDeviceProperties (ROCm 5), into a buffer
  // larger than either struct.
  hipError_t (*hipGetDeviceProperties)(void* props, int device);
  hipError_t (*hipDeviceSynchronize)();
  hipError_t (*hipMalloc)(void** ptr, size_t bytes);
  hipError_t (*hipFree)(void* ptr);
  hipError_t (*hipMemcpy)(void* dst, const void* src, size_t bytes, int kind);
  hipError_t (*hipMemsetAsync)(void* dst, int value, size_t bytes, hipStream_t stream);
  hipError_t (*hipMemsetD32Async)(void* dst, int value, size_t count, hipStream_t stream);
  hipError_t (*hipModuleLoadData)(hipModule_t* module, const void* image);
  hipError_t (*hipModuleUnload)(hipModule_t module);
  hipError_t (*hipModuleGetFunction)(hipFunction_t* function, hipModule_t module, const char* name);
  hipError_t (*hipFuncGetAttribute)(int* value, int attribute, hipFunction_t function);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t function, unsigned grid_x, unsigned grid_y,
                                      unsigned grid_z, unsigned block_x, unsigned block_y,
                                      unsigned block_z, unsigned shared_bytes, hipStream_t stream,
                                      void** params, void** extra);
  hipError_t (*hipStreamCreateWithFlags)(hipStream_t* stream, unsigned flags);
  hipError_t (*hipStreamDestroy)(hipStream_t stream);
  hipError_t (*hipStreamSynchronize)(hipStream_t stream);
  hipError_t (*hipEventCreate)(hipEvent_t* event);
  hipError_t (*hipEventDestroy)(hipEvent_t event);
  hipError_t (*hipEventRecord)(hipEvent_t event, hipStream_t stream);

  // Stream capture and graphs. Null when the runtime lacks one: graph timing is then refused
  // and the events reading stands.
  hipError_t (*hipStreamBeginCapture)(hipStream_t stream, int mode) = nullptr;
  hipError_t (*hipStreamEndCapture)(hipStream_t stream, hipGraph_t* graph) = nullptr;
  hipError_t (*hipGraphInstantiate)(hipGraphExec_t* exec, hipGraph_t graph,
                                    hipGraphNode_t* error_node, char* log,
                                    size_t log_bytes) = nullptr;
  hipError_t (*hipGraphLaunch)(hipGraphExec_t exec, hipStream_t stream) = nullptr;
  hipError_t (*hipGraphExecDestroy)(hipGraphExec_t exec) = nullptr;
  hipError_t (*hipGraphDestroy)(hipGraph_t graph) = nullptr;
  /// The first graph entry point the runtime lacks; empty when it has them all.
  std::string missing_graph_api;
  hipError_t (*hipEventSynchronize)(hipEvent_t event);
  hipError_t (*hipEventElapsedTime)(float* ms, hipEvent_t start, hipEvent_t end);

  /// "hipErrorIllegalAddress (an illegal memory access was encountered)".
  std::string ErrorText(hipError_t error) const;
};

/// Opens the HIP runtime once per process (libamdhip64.so, libamdhip64.so.6, libamdhip64.so.5)
/// and resolves every entry point. FailedPrecondition "libamdhip64.so could not be loaded:
/// <dlerror>; is ROCm installed?" when none loads, or naming the first missing symbol.
absl::StatusOr<const HipApi*> LoadHipApi();

}  // namespace tune::gpu
