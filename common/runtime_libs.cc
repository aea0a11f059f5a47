#include "common/runtime_libs.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>

#include "common/host_cpu.h"
#include "common/strings.h"

namespace tune {
namespace {

// The GPU shims build everywhere (they open their vendor library at run time): no package.
constexpr std::string_view kAlwaysBuilt = "nothing (the shim is always built)";

// OpenMP's variable (oneDNN's runtime, OpenBLAS's OpenMP build) and OpenBLAS's own (its pthread
// build).
constexpr std::string_view kOpenblasThreads[] = {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"};
constexpr std::string_view kDnnlThreads[] = {"OMP_NUM_THREADS"};
// Libraries a worker may load without a shim of tune's (--preload, a micro-kernel's library).
constexpr std::string_view kOtherLibraryThreads[] = {"MKL_NUM_THREADS"};

// Debian's OpenBLAS 0.3.21 picks a core below Sapphire Rapids' AVX-512 (BetterOpenblasCoretype).
constexpr CoreTypeChoice kOpenblasCoreType = {"OpenBLAS", "OPENBLAS_CORETYPE",
                                              "openblas_get_corename", &BetterOpenblasCoretype};

constexpr std::array<RuntimeLibrary, 7> kLibraries = {{
    {"openblas", "libtune_openblas.so", "tune_openblas_describe", "tune_openblas_version",
     "libopenblas-dev", TargetKind::kLlvm, kOpenblasThreads, &kOpenblasCoreType},
    {"dnnl", "libtune_dnnl.so", "tune_dnnl_describe", "tune_dnnl_version", "libdnnl-dev",
     TargetKind::kLlvm, kDnnlThreads},
    {"cublas", "libtune_cublas.so", "tune_cublas_describe", "tune_cublas_version", kAlwaysBuilt,
     TargetKind::kCuda},
    {"cudnn", "libtune_cudnn.so", "tune_cudnn_describe", "tune_cudnn_version", kAlwaysBuilt,
     TargetKind::kCuda},
    {"rocblas", "libtune_rocblas.so", "tune_rocblas_describe", "tune_rocblas_version", kAlwaysBuilt,
     TargetKind::kRocm},
    {"hipblaslt", "libtune_hipblaslt.so", "tune_hipblaslt_describe", "tune_hipblaslt_version",
     kAlwaysBuilt, TargetKind::kRocm},
    {"miopen", "libtune_miopen.so", "tune_miopen_describe", "tune_miopen_version", kAlwaysBuilt,
     TargetKind::kRocm},
}};

}  // namespace

std::span<const RuntimeLibrary> RuntimeLibraries() { return kLibraries; }

const RuntimeLibrary* FindRuntimeLibrary(std::string_view name) {
  for (const RuntimeLibrary& lib : kLibraries) {
    if (lib.name == name) {
      return &lib;
    }
  }
  return nullptr;
}

const RuntimeLibrary* FindRuntimeLibraryByShim(std::string_view file) {
  const size_t slash = file.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? file : file.substr(slash + 1);
  for (const RuntimeLibrary& lib : kLibraries) {
    if (lib.shim_file == base) {
      return &lib;
    }
  }
  return nullptr;
}

std::vector<std::string_view> LibraryThreadVariables() {
  std::vector<std::string_view> out;
  auto add = [&](std::span<const std::string_view> vars) {
    for (std::string_view v : vars) {
      if (std::find(out.begin(), out.end(), v) == out.end()) {
        out.push_back(v);
      }
    }
  };
  for (const RuntimeLibrary& lib : kLibraries) {
    add(lib.thread_env);
  }
  add(kOtherLibraryThreads);
  return out;
}

std::string RuntimeLibraryDir() {
  if (const char* dir = std::getenv("TUNE_RUNTIME_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return "lib";
  }
  return (self.parent_path().parent_path() / "lib").string();
}

absl::StatusOr<std::string> TuneRuntimePath(std::string_view file, std::string_view cmake_target,
                                            std::string_view what) {
  const std::string path = StrCat(RuntimeLibraryDir(), "/", file);
  if (access(path.c_str(), R_OK) != 0) {
    return absl::NotFoundError(StrCat(what, " ", path, " does not exist: build the ", cmake_target,
                                      " target, or set TUNE_RUNTIME_DIR to the "
                                      "folder that holds ",
                                      file));
  }
  return path;
}

absl::StatusOr<std::string> RuntimeLibraryPath(const RuntimeLibrary& library) {
  const std::string path = StrCat(RuntimeLibraryDir(), "/", library.shim_file);
  if (access(path.c_str(), R_OK) != 0) {
    return absl::NotFoundError(
        StrCat("library '", library.name, "': its shim ", path,
               " does not exist; tune was built without it: install ", library.package,
               " and rebuild tune (or set TUNE_RUNTIME_DIR to the folder that holds ",
               library.shim_file, ")"));
  }
  return path;
}

std::optional<std::string> BetterOpenblasCoretype(std::string_view detected_core) {
  const HostCpu& cpu = GetHostCpu();
  auto is_any = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), detected_core) != names.end();
  };
  // OpenBLAS's AVX-512 kernels (SkylakeX, and Cooperlake and SapphireRapids that build on them)
  // need AVX-512 F, BW, DQ and VL: on Intel Skylake-SP and later and on AMD Zen 4 and later alike.
  // (Xeon Phi's AVX-512 lacks BW and VL; it gets Haswell's AVX2.)
  if (cpu.HasFeature("avx512f") && cpu.HasFeature("avx512bw") && cpu.HasFeature("avx512dq") &&
      cpu.HasFeature("avx512vl")) {
    if (is_any({"SkylakeX", "Cooperlake", "SapphireRapids"})) {
      return std::nullopt;
    }
    return "SkylakeX";
  }
  if (cpu.HasFeature("avx2") && cpu.HasFeature("fma")) {
    if (is_any({"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"})) {
      return std::nullopt;
    }
    return "Haswell";
  }
  return std::nullopt;
}

}  // namespace tune
