// The x86-64 CPU backend: lowered IR -> optimised LLVM module -> ELF object -> shared library.
//
// Runtime ABI of the produced code (see codegen/README.md): each LoweredFunc becomes the C
// function `int32_t name(float* p0, float* p1, ...)` returning 0; parallel loops call libgomp's
// GOMP_parallel with an outlined body when `threads` > 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/ir/ir.h"
#include "common/target.h"

namespace tune {

struct CpuCodegenOptions {
  std::string cpu = "native";  // LLVM -mcpu name; "native" resolves to the host
                               //   (GetHostCpu().name + LLVM's host feature list)
  int threads = 1;             // parallel loops use up to this many threads; 1 = run serially
  ThreadBinding bind = ThreadBinding::kNone;  // where their threads run (-bind)
  int opt_level = 3;                          // 0..3
};

/// A constant the module exports beside its functions: `const int64_t name = value;` (the size
/// of a kernel's prepared weights, common/workload.h).
struct ExportedConstant {
  std::string name;  // a C identifier, distinct from every function's
  int64_t value = 0;
};

/// Translates lowered functions to an optimised LLVM module and emits an x86-64 ELF object,
/// with `constants` defined in it. `llvm_ir` (optional) receives the optimised LLVM IR text. An
/// unknown CPU name, bad options or a symbol name used twice are InvalidArgument; IR the CPU
/// backend cannot lower (GPU loops, barriers, GPU memory scopes, an external symbol declared
/// with two signatures) is Unimplemented or InvalidArgument; an LLVM failure is Internal.
absl::StatusOr<std::string> EmitCpuObject(const std::vector<ir::LoweredFunc>& funcs,
                                          const CpuCodegenOptions& options,
                                          std::string* llvm_ir = nullptr,
                                          const std::vector<ExportedConstant>& constants = {});

/// Like EmitCpuObject, but returns the x86-64 assembly text (for inspection and tests).
absl::StatusOr<std::string> EmitCpuAssembly(const std::vector<ir::LoweredFunc>& funcs,
                                            const CpuCodegenOptions& options);

/// The OpenMP runtime that parallel kernels (threads > 1) need at run time.
inline constexpr char kOpenMpRuntime[] = "libgomp.so.1";

/// Links relocatable objects into a shared library at `out_path` with ld.lld-19 (found next to
/// the LLVM install, /usr/lib/llvm-19/bin/ld.lld, or `ld.lld-19` on PATH), and the given extra
/// libraries (`name` -> -lname; a path or an option starting with '-' is passed as is). This is
/// the one place that decides whether a kernel needs the OpenMP runtime: exactly when an object
/// has an undefined GOMP_* / omp_* symbol, the library gets DT_NEEDED kOpenMpRuntime (and
/// -z nodelete), and `runtime_libs` (optional) receives {kOpenMpRuntime}; otherwise it is
/// cleared. Errors (linker missing, unreadable object, link failure with its stderr) are a
/// Status, and leave `runtime_libs` unspecified.
absl::Status LinkSharedObject(const std::vector<std::string>& object_files,
                              const std::vector<std::string>& extra_libs,
                              const std::string& out_path,
                              std::vector<std::string>* runtime_libs = nullptr);

/// The host CPU as LLVM's own detection names it. Codegen does not use it (the name of
/// `-mcpu=native` comes from common/host_cpu.h); tests use it to check that both agree.
std::string LlvmHostCpuName();

}  // namespace tune
