// Host stubs of a GPU kernel library: an x86-64 object (generic x86-64 CPU) that embeds the
// library's device code and gives every GPU kernel a C function with the GPU host ABI,
//
//   int32_t NAME(float* p0, ..., float* pN, void* stream)
//
// (device pointers in the kernel's argument order, then the CUstream / hipStream_t), which
// calls libtune_gpurt.so's tune_gpurt_launch (runtime/tune_gpurt.h) with the kernel's name and
// launch geometry and returns its code; a kernel that accumulates into arguments with atomic
// adds first has them zeroed (tune_gpurt_zero). A kernel with TMA tensor maps or a thread-block
// cluster (CUDA only) is launched with tune_gpurt_launch_ex instead, which encodes the maps from
// the pointer arguments at every call and passes them after the arguments. The object holds:
//   - the image (PTX text with its terminating NUL, or the HSA code object) as a private
//     constant in section .tune_gpu_image;
//   - one tune_gpurt_module for the image (every stub of the object launches from it, so the
//     runtime loads the image once per process and context);
//   - per stub, its kernel's name and grid/block constants, and for tune_gpurt_launch_ex its
//     cluster and its tensor maps (tune_gpurt_tensor_map descriptors, in order).
// Linking the object needs -ltune_gpurt (LinkSharedObject with the runtime's path).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/gpu_arch.h"

namespace tune {

/// Which GPU runtime the stubs launch through (tune_gpurt_module.api).
enum class GpuApi : uint8_t { kCuda = 1, kHip = 2 };

struct HostStub {
  std::string func_name;    // the exported C function (a C identifier)
  std::string kernel_name;  // the kernel's entry symbol in the image
  int num_args = 0;         // device pointer parameters (the stream comes after them)
  GpuLaunch launch;
  /// Bytes of each of launch.zeroed_args, in that order: the stub zeroes them on the stream
  /// (tune_gpurt_zero) before the launch.
  std::vector<uint64_t> zeroed_bytes = {};
};

struct HostStubModule {
  GpuApi api = GpuApi::kCuda;
  std::string image;  // PTX text (cuda) or HSA code object bytes (hip)
  std::vector<HostStub> stubs;
};

/// The stubs as an x86-64 ELF relocatable object. `llvm_ir` (optional) receives the module's
/// LLVM IR with the image elided. Errors: no stubs, an empty image, a bad name or a stub
/// without arguments, geometry with a zero dimension, zeroed_args that name no argument or
/// lack their zeroed_bytes, a cluster that does not divide the grid or holds more than 8
/// blocks, a tensor map that names no argument or breaks the encoding rules
/// (runtime/tune_launch_ex.h), tensor maps or a cluster for HIP (InvalidArgument); an LLVM
/// failure (Internal).
absl::StatusOr<std::string> EmitHostStubObject(const HostStubModule& module,
                                               std::string* llvm_ir = nullptr);

/// The symbol of the runtime function the stubs call (for tests and link checks).
inline constexpr char kGpuLaunchSymbol[] = "tune_gpurt_launch";
inline constexpr char kGpuZeroSymbol[] = "tune_gpurt_zero";
/// The launch with clusters and tensor maps (only stubs that have one of them call it).
inline constexpr char kGpuLaunchExSymbol[] = "tune_gpurt_launch_ex";

/// The file name of the GPU runtime library the stubs need (DT_NEEDED).
inline constexpr char kGpuRuntimeLibrary[] = "libtune_gpurt.so";

}  // namespace tune
