#include "rpc_server/gpu/hip_api.h"

#include <dlfcn.h>
#include <link.h>

#include <mutex>

#include "common/strings.h"

namespace tune::gpu {
namespace {

absl::StatusOr<const HipApi*> Load() {
  void* handle = nullptr;
  std::string first_error;
  const char* opened = nullptr;
  for (const char* name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}) {
    dlerror();
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      opened = name;
      break;
    }
    if (first_error.empty()) {
      const char* e = dlerror();
      first_error = e != nullptr ? e : "unknown error";
    }
  }
  if (handle == nullptr) {
    return absl::FailedPreconditionError(
        StrCat("libamdhip64.so could not be loaded (nor libamdhip64.so.6, libamdhip64.so.5): ",
               first_error, "; is ROCm installed?"));
  }
  auto* api = new HipApi();
  link_map* map = nullptr;
  api->library_path = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
                              map->l_name != nullptr && map->l_name[0] != '\0'
                          ? map->l_name
                          : opened;
  const char* missing_graph = nullptr;
  if (const char* missing = tune_hip_runtime_resolve(handle, api, &missing_graph);
      missing != nullptr) {
    delete api;
    dlclose(handle);
    return absl::FailedPreconditionError(
        StrCat(opened, " lacks ", missing, "; ROCm 5 or newer is needed"));
  }
  api->missing_graph_api = missing_graph != nullptr ? missing_graph : "";
  return api;
}

}  // namespace

std::string HipApi::ErrorText(hipError_t error) const {
  const char* name = hipGetErrorName(error);
  const char* text = hipGetErrorString(error);
  if (name == nullptr) {
    return StrCat("HIP error ", error);
  }
  return text != nullptr ? StrCat(name, " (", text, ")") : std::string(name);
}

absl::StatusOr<const HipApi*> LoadHipApi() {
  static std::once_flag once;
  static absl::StatusOr<const HipApi*>* loaded = nullptr;
  std::call_once(once, [] { loaded = new absl::StatusOr<const HipApi*>(Load()); });
  return *loaded;
}

}  // namespace tune::gpu
