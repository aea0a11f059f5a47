#include "rpc_server/gpu/cuda_api.h"

#include <dlfcn.h>
#include <link.h>

#include <mutex>

#include "common/strings.h"

namespace tune::gpu {
namespace {

std::string LibraryPathOf(void* handle, const char* fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

absl::StatusOr<const CudaApi*> Load() {
  constexpr char kLibrary[] = "libcuda.so.1";
  dlerror();
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    return absl::FailedPreconditionError(
        StrCat(kLibrary, " could not be loaded: ", e != nullptr ? e : "unknown error",
               "; is the NVIDIA driver installed?"));
  }
  auto* api = new CudaApi();
  api->library_path = LibraryPathOf(handle, kLibrary);
  const char* missing_graph = nullptr;
  if (const char* missing = tune_cuda_driver_resolve(handle, api, &missing_graph);
      missing != nullptr) {
    delete api;
    dlclose(handle);
    return absl::FailedPreconditionError(StrCat(kLibrary, " lacks ", missing,
                                                "; the NVIDIA driver is too old (CUDA 11 or newer "
                                                "is needed)"));
  }
  api->missing_graph_api = missing_graph != nullptr ? missing_graph : "";
  return api;  // kept for the life of the process, as is the library
}

}  // namespace

std::string CudaApi::ErrorText(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(result, &name) != kCudaSuccess || name == nullptr) {
    return StrCat("CUDA error ", result);
  }
  if (cuGetErrorString(result, &text) != kCudaSuccess || text == nullptr) {
    return name;
  }
  return StrCat(name, " (", text, ")");
}

absl::StatusOr<const CudaApi*> LoadCudaApi() {
  static std::once_flag once;
  static absl::StatusOr<const CudaApi*>* loaded = nullptr;
  std::call_once(once, [] { loaded = new absl::StatusOr<const CudaApi*>(Load()); });
  return *loaded;
}

}  // namespace tune::gpu
