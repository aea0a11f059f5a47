// GPU kernel libraries: what Compiler::BuildLibrary links for cuda and rocm targets. One host
// shared object (x86-64) with the GPU host ABI of codegen/README.md,
//
//   int NAME(const float* A, const float* B, [const float* bias,] float* C, void* stream)
//
// (device pointers in Workload::Arguments() order, then the CUstream / hipStream_t), made of:
//   - GPU kernels (lowered IR with GPU loops): all of them go into ONE device module (PTX for
//     cuda, an HSA code object for rocm) that the library embeds, and each gets a host stub
//     (codegen/llvm/host_stub.h) that launches it through libtune_gpurt.so with the launch
//     geometry read off its IR;
//   - host kernels (lowered IR without GPU loops: the library candidates' kernels, which call a
//     vendor library through a runtime shim with the stream): compiled by the CPU backend into
//     the same shared object, their shims linked like a CPU library's.
// The library has DT_NEEDED libtune_gpurt.so and a RUNPATH of `$ORIGIN` and the folder the
// runtime was found in (common/runtime_libs.h: RuntimeLibraryDir).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/ir.h"
#include "codegen/llvm/gpu_backend.h"
#include "common/target.h"

namespace tune {

/// The device-code backend (EmitGpuModule in production; tests may pass their own).
using GpuModuleEmitter = std::function<absl::StatusOr<GpuModule>(
    const std::vector<ir::LoweredFunc>&, const GpuCodegenOptions&)>;

/// True when `func` is a GPU kernel (its body has a gpu_block or gpu_thread loop); otherwise it
/// is host code of a GPU library (a library kernel with the GPU host ABI).
bool IsGpuKernel(const ir::LoweredFunc& func);

/// A linked GPU library, in memory.
struct GpuLibraryBinary {
  std::string shared_object;  // the .so bytes
  CodeFormat device_format = CodeFormat::kPtx;
  std::string device_code;                 // the embedded image (empty without GPU kernels)
  std::vector<GpuKernel> kernels;          // the GPU kernels with their launch geometry
  std::vector<std::string> needed_libs;    // libtune_gpurt.so, runtime shims of host kernels
  std::vector<std::string> external_libs;  // called by host kernels, not linked
  std::string llvm_ir;                     // device module, host stubs and host kernels
};

/// What a GPU library links besides its kernels (the entry points of shape ranges): objects,
/// link arguments (libraries, -rpath=...) and the needed libraries they add.
struct GpuLibraryExtras {
  std::vector<std::string> objects;
  std::vector<std::string> link_args;
  std::vector<std::string> needed_libs;
};

/// Builds the device module of the GPU kernels with `emit`, the host stubs, the host kernels,
/// and links them into one shared object whose DT_SONAME is `soname`. `target` must be a cuda
/// or rocm target. Function names must be distinct C identifiers. Errors: the backend's, the
/// runtime library missing (NotFound naming where it was looked for), a link failure.
absl::StatusOr<GpuLibraryBinary> LinkGpuLibrary(const Target& target,
                                                const std::vector<ir::LoweredFunc>& funcs,
                                                const std::string& soname,
                                                const GpuModuleEmitter& emit,
                                                const GpuLibraryExtras& extras = {});

}  // namespace tune
