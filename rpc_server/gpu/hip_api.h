// The HIP runtime as tune-server's measurement child opens it on ROCm devices: dlopen
// (libamdhip64.so, then .so.6 and .so.5) at run time, so that nothing in the build needs ROCm.
// The entry points are the one table of runtime/tune_hip_runtime.h (shared with the GPU runtime
// and the library shims). The enum values are those of ROCm 6's hip_runtime_api.h
// (hipDeviceAttribute_t, hipFunction_attribute), declared here under tune's names; the device
// properties struct is never declared (its layout changed between releases): its arch name is
// found by scanning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/tune_hip_runtime.h"

namespace tune::gpu {

using hipError_t = tune_hip_error;
using hipModule_t = tune_hip_module;
using hipFunction_t = tune_hip_function;
using hipStream_t = tune_hip_stream;
using hipEvent_t = tune_hip_event;
using hipGraph_t = tune_hip_graph;
using hipGraphExec_t = tune_hip_graph_exec;
using hipGraphNode_t = tune_hip_graph_node;

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

/// The runtime's entry points (tune_hip_runtime.h). The stream capture and graph entries are
/// null when the runtime lacks one: graph timing is then refused and the events reading stands.
struct HipApi : tune_hip_runtime {
  std::string library_path;

  /// The first graph entry point the runtime lacks; empty when it has them all.
  std::string missing_graph_api;

  /// "hipErrorIllegalAddress (an illegal memory access was encountered)".
  std::string ErrorText(hipError_t error) const;
};

/// Opens the HIP runtime once per process (libamdhip64.so, libamdhip64.so.6, libamdhip64.so.5)
/// and resolves every entry point. FailedPrecondition "libamdhip64.so could not be loaded:
/// <dlerror>; is ROCm installed?" when none loads, or naming the first missing symbol.
absl::StatusOr<const HipApi*> LoadHipApi();

}  // namespace tune::gpu
