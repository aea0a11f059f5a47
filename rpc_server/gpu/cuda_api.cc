#include "rpc_server/gpu/cuda_api.h"

#include <dlfcn.h>
#include <link.h>

#include <initializer_list>
#include <mutex>

#include "common/strings.h"

namespace tune::gpu {
namespace {

// Resolves the first of `names` that the library exports into `*fn`.
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
  std::string missing;
  bool ok = true;
  ok &= Resolve(handle, &api->cuInit, {"cuInit"}, &missing);
  ok &= Resolve(handle, &api->cuDriverGetVersion, {"cuDriverGetVersion"}, &missing);
  ok &= Resolve(handle, &api->cuGetErrorName, {"cuGetErrorName"}, &missing);
  ok &= Resolve(handle, &api->cuGetErrorString, {"cuGetErrorString"}, &missing);
  ok &= Resolve(handle, &api->cuDeviceGetCount, {"cuDeviceGetCount"}, &missing);
  ok &= Resolve(handle, &api->cuDeviceGet, {"cuDeviceGet"}, &missing);
  ok &= Resolve(handle, &api->cuDeviceGetName, {"cuDeviceGetName"}, &missing);
  ok &= Resolve(handle, &api->cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, &missing);
  ok &= Resolve(handle, &api->cuDeviceTotalMem, {"cuDeviceTotalMem_v2"}, &missing);
  ok &= Resolve(handle, &api->cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, &missing);
  ok &= Resolve(handle, &api->cuDevicePrimaryCtxRelease,
                {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, &missing);
  ok &= Resolve(handle, &api->cuCtxSetCurrent, {"cuCtxSetCurrent"}, &missing);
  ok &= Resolve(handle, &api->cuCtxSynchronize, {"cuCtxSynchronize"}, &missing);
  ok &= Resolve(handle, &api->cuMemAlloc, {"cuMemAlloc_v2"}, &missing);
  ok &= Resolve(handle, &api->cuMemFree, {"cuMemFree_v2"}, &missing);
  ok &= Resolve(handle, &api->cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, &missing);
  ok &= Resolve(handle, &api->cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, &missing);
  ok &= Resolve(handle, &api->cuMemsetD8Async, {"cuMemsetD8Async"}, &missing);
  ok &= Resolve(handle, &api->cuMemsetD32Async, {"cuMemsetD32Async"}, &missing);
  ok &= Resolve(handle, &api->cuModuleLoadDataEx, {"cuModuleLoadDataEx"}, &missing);
  ok &= Resolve(handle, &api->cuModuleUnload, {"cuModuleUnload"}, &missing);
  ok &= Resolve(handle, &api->cuModuleGetFunction, {"cuModuleGetFunction"}, &missing);
  ok &= Resolve(handle, &api->cuFuncGetAttribute, {"cuFuncGetAttribute"}, &missing);
  ok &= Resolve(handle, &api->cuFuncSetAttribute, {"cuFuncSetAttribute"}, &missing);
  ok &= Resolve(handle, &api->cuLaunchKernel, {"cuLaunchKernel"}, &missing);
  ok &= Resolve(handle, &api->cuStreamCreate, {"cuStreamCreate"}, &missing);
  ok &= Resolve(handle, &api->cuStreamDestroy, {"cuStreamDestroy_v2"}, &missing);
  ok &= Resolve(handle, &api->cuStreamSynchronize, {"cuStreamSynchronize"}, &missing);
  ok &= Resolve(handle, &api->cuEventCreate, {"cuEventCreate"}, &missing);
  ok &= Resolve(handle, &api->cuEventDestroy, {"cuEventDestroy_v2"}, &missing);
  ok &= Resolve(handle, &api->cuEventRecord, {"cuEventRecord"}, &missing);
  ok &= Resolve(handle, &api->cuEventSynchronize, {"cuEventSynchronize"}, &missing);
  ok &= Resolve(handle, &api->cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
                &missing);
  if (!ok) {
    delete api;
    dlclose(handle);
    return absl::FailedPreconditionError(StrCat(kLibrary, " lacks ", missing,
                                                "; the NVIDIA driver is too old (CUDA 11 or newer "
                                                "is needed)"));
  }
  std::string graph_missing;
  Resolve(handle, &api->cuStreamBeginCapture, {"cuStreamBeginCapture_v2"}, &graph_missing);
  Resolve(handle, &api->cuStreamEndCapture, {"cuStreamEndCapture"}, &graph_missing);
  Resolve(handle, &api->cuGraphInstantiateWithFlags, {"cuGraphInstantiateWithFlags"},
          &graph_missing);
  Resolve(handle, &api->cuGraphLaunch, {"cuGraphLaunch"}, &graph_missing);
  Resolve(handle, &api->cuGraphExecDestroy, {"cuGraphExecDestroy"}, &graph_missing);
  Resolve(handle, &api->cuGraphDestroy, {"cuGraphDestroy"}, &graph_missing);
  api->missing_graph_api = graph_missing;
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
