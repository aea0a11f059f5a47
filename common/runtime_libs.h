// The external libraries that library candidates call, each through a runtime shim of tune's own
// (runtime/tune_runtime.h): the names a target's -libs= and tune-server's --libs accept, the
// shim's file, the Debian package a build needs for it, and where a process finds it.
//
//   name       shim                   describe symbol            build needs
//   (each shim's tune_<name>_version writes the library's version alone, for fingerprints)
//   (each entry also says which environment variables set the library's threads, and any choice
//   of core type tune-server makes for it: OPENBLAS_CORETYPE)
//   openblas   libtune_openblas.so    tune_openblas_describe     libopenblas-dev
//   dnnl       libtune_dnnl.so        tune_dnnl_describe         libdnnl-dev
//   cublas     libtune_cublas.so      tune_cublas_describe       nothing (cuda targets)
//   cudnn      libtune_cudnn.so       tune_cudnn_describe        nothing (cuda targets)
//   rocblas    libtune_rocblas.so     tune_rocblas_describe      nothing (rocm targets)
//   hipblaslt  libtune_hipblaslt.so   tune_hipblaslt_describe    nothing (rocm targets)
//   miopen     libtune_miopen.so      tune_miopen_describe       nothing (rocm targets)
//
// The GPU shims (runtime/tune_gpu_runtime.h) open their vendor library (libcublas.so.13, ...)
// at their first call, so they build and load on any host.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/target.h"

namespace tune {

/// A library's own choice of kernel set, made when it loads from what it detects of the CPU and
/// overridden by an environment variable (OpenBLAS's OPENBLAS_CORETYPE), when that choice may
/// fall short of the CPU: tune-server then sets the variable for its measurement processes so
/// that the library's candidates are measured at their best (a user's own setting is kept).
struct CoreTypeChoice {
  std::string_view library_name;  // as people know it, for messages: "OpenBLAS"
  std::string_view env;           // the variable the library reads when it loads
  std::string_view core_symbol;   // `char* f()`: the core type the loaded library chose
  /// The value that gives this CPU's widest vectors when the detected core does not; nullopt
  /// when the detected core already uses them.
  std::optional<std::string> (*better)(std::string_view detected_core);
};

struct RuntimeLibrary {
  std::string_view name;             // as in -libs=, e.g. "dnnl"
  std::string_view shim_file;        // e.g. "libtune_dnnl.so"
  std::string_view describe_symbol;  // `int32_t f(char* buf, int64_t size)` of the shim
  std::string_view version_symbol;   // the same, writing the library's version alone
  std::string_view package;          // the Debian package the build needs to make the shim
  TargetKind target_kind;            // the kind of targets whose -libs= may name it
  /// The environment variables that set how many threads the library runs (read when it
  /// loads); tune-server sets each to --threads for its measurement processes.
  std::span<const std::string_view> thread_env = {};
  /// The library's core-type choice, or nullptr when it makes none tune-server corrects.
  const CoreTypeChoice* core_type = nullptr;
};

/// Every library tune has a shim for, in a fixed order.
std::span<const RuntimeLibrary> RuntimeLibraries();

/// The library called `name` (as in -libs=), or nullptr.
const RuntimeLibrary* FindRuntimeLibrary(std::string_view name);

/// The library whose shim file is `file` (a file name or a path ending in it), or nullptr.
const RuntimeLibrary* FindRuntimeLibraryByShim(std::string_view file);

/// Where the shims are: $TUNE_RUNTIME_DIR when set, else `lib/` beside the running program's
/// `bin/` folder (the build tree and an installed prefix alike).
std::string RuntimeLibraryDir();

/// The path of one of tune's own runtime libraries (`file`, e.g. libtune_gpurt.so, built by
/// the CMake target `cmake_target`) in RuntimeLibraryDir(). NotFound naming the path, what it
/// is (`what`, e.g. "the GPU runtime"), the target to build and TUNE_RUNTIME_DIR.
absl::StatusOr<std::string> TuneRuntimePath(std::string_view file, std::string_view cmake_target,
                                            std::string_view what);

/// The path of `library`'s shim. NotFound naming the path looked at, the library and the
/// package to install (then rebuild tune) when it is not there.
absl::StatusOr<std::string> RuntimeLibraryPath(const RuntimeLibrary& library);

/// Every variable that sets a library's thread count, each once: those of the table's libraries
/// (RuntimeLibrary::thread_env, in table order), then those of libraries that a worker may load
/// without a shim of tune's (--preload, a micro-kernel's library: Intel MKL's MKL_NUM_THREADS).
/// tune-server sets them all to --threads, whichever libraries it was asked for.
std::vector<std::string_view> LibraryThreadVariables();

/// The OpenBLAS core type (OPENBLAS_CORETYPE, read when OpenBLAS loads) that gives this CPU's
/// widest vectors, when OpenBLAS's own choice `detected_core` (openblas_get_corename) does not:
/// Debian's OpenBLAS 0.3.21 does not know Sapphire and Emerald Rapids and picks "Prescott"
/// (SSE3), a fifth of its AVX-512 speed there; on AMD it takes Zen 4 for an AVX2 "Zen". Decided
/// by the CPU's features, not its vendor: "SkylakeX" where AVX-512 (F, BW, DQ, VL) exists, else
/// "Haswell" where AVX2 and FMA do. nullopt when the detected core already uses them.
std::optional<std::string> BetterOpenblasCoretype(std::string_view detected_core);

}  // namespace tune
