// Libraries loaded once into a process before any kernel (dlopen RTLD_NOW | RTLD_GLOBAL), so
// that kernels calling their symbols resolve: OpenBLAS, oneDNN, a vendor micro-kernel library.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tune::rpc {

struct PreloadedLibrary {
  std::string path;      // as given (absolute, relative, or a bare name the loader searches)
  std::string basename;  // file name, e.g. "libopenblas.so.0"
};

/// dlopen()s each path with RTLD_NOW | RTLD_GLOBAL, in order, and keeps it loaded for the life
/// of the process. The first library that is missing or has an unresolved symbol stops the
/// loading: InvalidArgument naming the path and dlerror()'s text.
absl::StatusOr<std::vector<PreloadedLibrary>> PreloadLibraries(
    const std::vector<std::string>& paths);

/// The file name part of a path ("libfoo.so.1" for "/opt/x/libfoo.so.1").
std::string Basename(std::string_view path);

/// True when a library the artifact needs ("openblas" or "libopenblas.so.0") is among the
/// preloaded basenames: the same file name, or one starting with "lib<name>.so" / "<name>.so".
bool IsLibraryPreloaded(std::string_view needed, const std::vector<std::string>& basenames);

}  // namespace tune::rpc
