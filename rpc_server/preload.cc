#include "rpc_server/preload.h"

#include <dlfcn.h>

#include "common/strings.h"

namespace tune::rpc {

std::string Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

absl::StatusOr<std::vector<PreloadedLibrary>> PreloadLibraries(
    const std::vector<std::string>& paths) {
  std::vector<PreloadedLibrary> loaded;
  for (const std::string& path : paths) {
    if (path.empty()) {
      return absl::InvalidArgumentError("--preload: empty path; expected a shared library path");
    }
    dlerror();
    // Deliberately never dlclose()d: the library stays for the life of the process.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return absl::InvalidArgumentError(StrCat(
          "--preload ", path, ": cannot load: ", why != nullptr ? why : "unknown dlopen error"));
    }
    loaded.push_back({path, Basename(path)});
  }
  return loaded;
}

bool IsLibraryPreloaded(std::string_view needed, const std::vector<std::string>& basenames) {
  if (needed.empty()) {
    return true;
  }
  std::string base = Basename(needed);
  std::string lib_prefix = StrCat("lib", base, ".so");
  std::string plain_prefix = StrCat(base, ".so");
  for (const std::string& have : basenames) {
    if (have == base || have.starts_with(lib_prefix) || have.starts_with(plain_prefix)) {
      return true;
    }
  }
  return false;
}

}  // namespace tune::rpc
