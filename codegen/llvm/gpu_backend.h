// The GPU backends: lowered IR with GPU loops -> optimised LLVM module -> PTX text (NVPTX, cuda
// targets) or an HSA code object (AMDGPU, rocm targets, linked with ld.lld-19).
//
// Kernel ABI (see codegen/README.md, "GPU kernels"): each LoweredFunc becomes a void kernel
// named after it whose parameters are its buffers as global float pointers (no aliasing), in
// order. Launch geometry is read off the IR: grid[a] = extent of the gpu_block loop on axis a,
// block[a] = extent of the gpu_thread loop on axis a (1 where absent).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/ir.h"
#include "codegen/llvm/gpu_launch.h"
#include "common/artifact_hash.h"
#include "common/gpu_arch.h"
#include "common/target.h"

namespace tune {

struct GpuCodegenOptions {
  Target target;      // a cuda or rocm target (GpuArchFor must know its arch); a rocm target's
                      //   -code-object-version picks the HSA code object version
  int opt_level = 3;  // 0..3
};

/// One kernel of a GPU module and how to launch it.
struct GpuKernel {
  std::string name;  // the entry symbol (PTX .entry / AMDGPU kernel symbol)
  GpuLaunch launch;
};

struct GpuModule {
  CodeFormat format = CodeFormat::kPtx;  // kPtx (cuda) or kHsaco (rocm)
  std::string code;                      // PTX text, or the HSA code object (ELF) bytes
  std::vector<GpuKernel> kernels;        // in input order
  std::string llvm_ir;                   // optimised LLVM IR of the module
  std::string assembly;                  // PTX text, or the AMDGPU assembly
};

/// Translates lowered GPU kernels into one module for the target's arch: PTX for cuda targets,
/// an HSA code object for rocm targets. Errors: a target that is not cuda/rocm or an unknown
/// arch (InvalidArgument), a kernel GpuLaunchOf refuses (InvalidArgument), IR the GPU backends
/// cannot lower (CallExtern, AddressOf, returned statuses: Unimplemented), a function name used
/// twice (InvalidArgument), an LLVM or linker failure (Internal, with its message).
absl::StatusOr<GpuModule> EmitGpuModule(const std::vector<ir::LoweredFunc>& funcs,
                                        const GpuCodegenOptions& options);

}  // namespace tune
