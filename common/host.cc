#include "common/host.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

namespace tune {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    return "localhost";
  }
  return name;
}

std::string LoadedLibraryRelease(const std::string& library) {
  if (library.empty()) {
    return "";
  }
  void* handle = dlopen(library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) {
    return "";
  }
  link_map* map = nullptr;
  char resolved[PATH_MAX] = {};
  const bool found = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
                     map->l_name != nullptr && realpath(map->l_name, resolved) != nullptr;
  dlclose(handle);  // the reference RTLD_NOLOAD took
  if (!found) {
    return "";
  }
  const std::string path = resolved;
  const size_t so = path.rfind(".so.");
  return so == std::string::npos ? "" : path.substr(so + 4);
}

}  // namespace tune
