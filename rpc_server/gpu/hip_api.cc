#include "rpc_server/gpu/hip_api.h"

#include <dlfcn.h>
#include <link.h>

#include <initializer_list>
#include <mutex>

#include "common/strings.h"

namespace tune::gpu {
namespace {

template <typename Fn>
bool Resolve(void* handle, Fn* fn, std::initializer_list<const char*> names, std::string* missing) {
  for (const char* name : names) {
    if (void* sym = dlsym(handle, name)) {
      *fn = reinterpret_cast<Fn>(sym);
      return true;
    }
  }
  if (missing->empty()) {
    *missing = *names.begin();
  }
  return false;
}

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
  std::string missing;
  bool ok = true;
  ok &= Resolve(handle, &api->hipInit, {"hipInit"}, &missing);
  ok &= Resolve(handle, &api->hipDriverGetVersion, {"hipDriverGetVersion"}, &missing);
  ok &= Resolve(handle, &api->hipGetErrorName, {"hipGetErrorName"}, &missing);
  ok &= Resolve(handle, &api->hipGetErrorString, {"hipGetErrorString"}, &missing);
  ok &= Resolve(handle, &api->hipGetDeviceCount, {"hipGetDeviceCount"}, &missing);
  ok &= Resolve(handle, &api->hipSetDevice, {"hipSetDevice"}, &missing);
  ok &= Resolve(handle, &api->hipDeviceGetName, {"hipDeviceGetName"}, &missing);
  ok &= Resolve(handle, &api->hipDeviceGetAttribute, {"hipDeviceGetAttribute"}, &missing);
  ok &= Resolve(handle, &api->hipDeviceTotalMem, {"hipDeviceTotalMem"}, &missing);
  ok &= Resolve(handle, &api->hipGetDeviceProperties,
                {"hipGetDevicePropertiesR0600", "hipGetDeviceProperties"}, &missing);
  ok &= Resolve(handle, &api->hipDeviceSynchronize, {"hipDeviceSynchronize"}, &missing);
  ok &= Resolve(handle, &api->hipMalloc, {"hipMalloc"}, &missing);
  ok &= Resolve(handle, &api->hipFree, {"hipFree"}, &missing);
  ok &= Resolve(handle, &api->hipMemcpy, {"hipMemcpy"}, &missing);
  ok &= Resolve(handle, &api->hipMemsetAsync, {"hipMemsetAsync"}, &missing);
  ok &= Resolve(handle, &api->hipMemsetD32Async, {"hipMemsetD32Async"}, &missing);
  ok &= Resolve(handle, &api->hipModuleLoadData, {"hipModuleLoadData"}, &missing);
  ok &= Resolve(handle, &api->hipModuleUnload, {"hipModuleUnload"}, &missing);
  ok &= Resolve(handle, &api->hipModuleGetFunction, {"hipModuleGetFunction"}, &missing);
  ok &= Resolve(handle, &api->hipFuncGetAttribute, {"hipFuncGetAttribute"}, &missing);
  ok &= Resolve(handle, &api->hipModuleLaunchKernel, {"hipModuleLaunchKernel"}, &missing);
  ok &= Resolve(handle, &api->hipStreamCreateWithFlags, {"hipStreamCreateWithFlags"}, &missing);
  ok &= Resolve(handle, &api->hipStreamDestroy, {"hipStreamDestroy"}, &missing);
  ok &= Resolve(handle, &api->hipStreamSynchronize, {"hipStreamSynchronize"}, &missing);
  ok &= Resolve(handle, &api->hipEventCreate, {"hipEventCreate"}, &missing);
  ok &= Resolve(handle, &api->hipEventDestroy, {"hipEventDestroy"}, &missing);
  ok &= Resolve(handle, &api->hipEventRecord, {"hipEventRecord"}, &missing);
  ok &= Resolve(handle, &api->hipEventSynchronize, {"hipEventSynchronize"}, &missing);
  ok &= Resolve(handle, &api->hipEventElapsedTime, {"hipEventElapsedTime"}, &missing);
  if (!ok) {
    delete api;
    dlclose(handle);
    return absl::FailedPreconditionError(
        StrCat(opened, " lacks ", missing, "; ROCm 5 or newer is needed"));
  }
  std::string graph_missing;
  Resolve(handle, &api->hipStreamBeginCapture, {"hipStreamBeginCapture"}, &graph_missing);
  Resolve(handle, &api->hipStreamEndCapture, {"hipStreamEndCapture"}, &graph_missing);
  Resolve(handle, &api->hipGraphInstantiate, {"hipGraphInstantiate"}, &graph_missing);
  Resolve(handle, &api->hipGraphLaunch, {"hipGraphLaunch"}, &graph_missing);
  Resolve(handle, &api->hipGraphExecDestroy, {"hipGraphExecDestroy"}, &graph_missing);
  Resolve(handle, &api->hipGraphDestroy, {"hipGraphDestroy"}, &graph_missing);
  api->missing_graph_api = graph_missing;
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
