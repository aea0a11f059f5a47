// GpuDevice over the CUDA driver API (cuda_api.h, opened with dlopen): CudaDevice, which
// GpuDevice::Open(kCuda, ...) returns.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/status.h"
#include "common/strings.h"
#include "rpc_server/gpu/cuda_api.h"
#include "rpc_server/gpu/gpu_device.h"
#include "rpc_server/gpu/tensor_map.h"
#include "runtime/tune_launch_ex.h"

namespace tune::gpu {
namespace {
// Static shared memory beyond this needs no opt-in; dynamic shared memory beyond it does.
constexpr int kDefaultSharedLimit = 48 * 1024;

class CudaDevice final : public GpuDevice {
 public:
  static absl::StatusOr<std::unique_ptr<GpuDevice>> Open(int index) {
    absl::StatusOr<const CudaApi*> api = LoadCudaApi();
    if (!api.ok()) {
      return api.status();
    }
    const CudaApi& cu = **api;
    if (CUresult r = cu.cuInit(0); r != kCudaSuccess) {
      return absl::FailedPreconditionError(
          StrCat("cuInit failed: ", cu.ErrorText(r),
                 r == kCudaErrorNoDevice ? "; this host has no CUDA device" : ""));
    }
    int count = 0;
    if (CUresult r = cu.cuDeviceGetCount(&count); r != kCudaSuccess) {
      return absl::FailedPreconditionError(StrCat("cuDeviceGetCount failed: ", cu.ErrorText(r)));
    }
    if (index < 0 || index >= count) {
      return absl::FailedPreconditionError(
          StrCat(DeviceName(TargetKind::kCuda, index), " does not exist: this host has ", count,
                 " CUDA device(s)", count > 0 ? StrCat(" (cuda:0 to cuda:", count - 1, ")") : ""));
    }
    auto device = std::unique_ptr<CudaDevice>(new CudaDevice(cu));
    RETURN_IF_ERROR(device->Init(index));
    return device;
  }

  ~CudaDevice() override {
    if (stream_ != nullptr && !broken_) {
      cu_.cuStreamDestroy(stream_);
    }
    if (context_ != nullptr && !broken_) {
      cu_.cuDevicePrimaryCtxRelease(device_);
    }
  }

  void* stream() const override { return stream_; }

  absl::StatusOr<DevicePtr> Allocate(size_t bytes) override {
    CUdeviceptr ptr = 0;
    RETURN_IF_ERROR(Check(cu_.cuMemAlloc(&ptr, bytes), StrCat("cuMemAlloc(", bytes, ")")));
    return ptr;
  }
  void Free(DevicePtr ptr) override {
    if (ptr != 0 && !broken_) {
      cu_.cuMemFree(ptr);
    }
  }
  absl::Status CopyToDevice(DevicePtr dst, const void* src, size_t bytes) override {
    RETURN_IF_ERROR(Synchronize());
    return Check(cu_.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  }
  absl::Status CopyToHost(void* dst, DevicePtr src, size_t bytes) override {
    RETURN_IF_ERROR(Synchronize());
    return Check(cu_.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
  }
  absl::Status Memset8(DevicePtr dst, uint8_t value, size_t bytes) override {
    return Check(cu_.cuMemsetD8Async(dst, value, bytes, stream_), "cuMemsetD8Async");
  }
  absl::Status Memset32(DevicePtr dst, uint32_t value, size_t count) override {
    return Check(cu_.cuMemsetD32Async(dst, value, count, stream_), "cuMemsetD32Async");
  }

  absl::StatusOr<void*> LoadModule(std::string_view image) override {
    std::string text(image);  // NUL-terminated for the JIT
    std::vector<char> error_log(16384, '\0');
    std::vector<char> info_log(4096, '\0');
    int options[] = {kCuJitErrorLogBuffer, kCuJitErrorLogBufferSizeBytes, kCuJitInfoLogBuffer,
                     kCuJitInfoLogBufferSizeBytes};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(error_log.size()), info_log.data(),
                      reinterpret_cast<void*>(info_log.size())};
    CUmodule module = nullptr;
    CUresult r = cu_.cuModuleLoadDataEx(&module, text.c_str(), 4, options, values);
    if (r != kCudaSuccess) {
      NoteFailure(r);
      std::string log(error_log.data(), strnlen(error_log.data(), error_log.size()));
      while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) {
        log.pop_back();
      }
      return absl::FailedPreconditionError(StrCat("cuModuleLoadDataEx: ", cu_.ErrorText(r),
                                                  log.empty() ? "" : StrCat("; JIT log: ", log)));
    }
    return static_cast<void*>(module);
  }
  void UnloadModule(void* module) override {
    if (module != nullptr && !broken_) {
      cu_.cuModuleUnload(static_cast<CUmodule>(module));
    }
  }
  absl::StatusOr<void*> GetFunction(void* module, const std::string& name) override {
    CUfunction fn = nullptr;
    CUresult r = cu_.cuModuleGetFunction(&fn, static_cast<CUmodule>(module), name.c_str());
    if (r != kCudaSuccess) {
      return absl::NotFoundError(
          StrCat("kernel '", name, "' not found in the module: ", cu_.ErrorText(r)));
    }
    return static_cast<void*>(fn);
  }
  KernelAttributes Attributes(void* function) override {
    KernelAttributes a;
    auto fn = static_cast<CUfunction>(function);
    cu_.cuFuncGetAttribute(&a.registers, kCuFuncAttrNumRegs, fn);
    cu_.cuFuncGetAttribute(&a.local_bytes, kCuFuncAttrLocalSizeBytes, fn);
    cu_.cuFuncGetAttribute(&a.shared_bytes, kCuFuncAttrSharedSizeBytes, fn);
    return a;
  }
  absl::Status Launch(void* function, const GpuLaunch& l, void** params) override {
    auto fn = static_cast<CUfunction>(function);
    if (l.dynamic_shared_bytes > kDefaultSharedLimit) {
      RETURN_IF_ERROR(Check(cu_.cuFuncSetAttribute(fn, kCuFuncAttrMaxDynamicSharedSizeBytes,
                                                   static_cast<int>(l.dynamic_shared_bytes)),
                            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"));
    }
    if (l.cluster == std::array<uint32_t, 3>{1, 1, 1}) {
      return Check(cu_.cuLaunchKernel(fn, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                                      l.block[2], l.dynamic_shared_bytes, stream_, params, nullptr),
                   "cuLaunchKernel");
    }
    if (cu_.cuLaunchKernelEx == nullptr) {
      return absl::UnimplementedError(
          StrCat("the driver (", cu_.library_path,
                 ") lacks cuLaunchKernelEx (CUDA 12 and newer): thread-block clusters cannot be "
                 "launched"));
    }
    tune_cu_launch_attribute cluster{};
    cluster.id = TUNE_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.cluster_dim.x = l.cluster[0];
    cluster.value.cluster_dim.y = l.cluster[1];
    cluster.value.cluster_dim.z = l.cluster[2];
    tune_cu_launch_config config{};
    config.grid_x = l.grid[0];
    config.grid_y = l.grid[1];
    config.grid_z = l.grid[2];
    config.block_x = l.block[0];
    config.block_y = l.block[1];
    config.block_z = l.block[2];
    config.shared_bytes = l.dynamic_shared_bytes;
    config.stream = stream_;
    config.attrs = &cluster;
    config.num_attrs = 1;
    return Check(cu_.cuLaunchKernelEx(&config, fn, params, nullptr),
                 StrCat("cuLaunchKernelEx(cluster ", l.cluster[0], "x", l.cluster[1], "x",
                        l.cluster[2], ")"));
  }
  absl::Status EncodeTensorMap(const GpuTensorMap& map, uint32_t num_args, DevicePtr address,
                               void* out) override {
    ASSIGN_OR_RETURN(tune_tensor_map_encoding encoding, PrepareTensorMap(map, num_args, address));
    if (!tune_tensor_map_can_encode(&cu_, &encoding)) {
      return absl::UnimplementedError(StrCat("the driver (", cu_.library_path, ") lacks ",
                                             tune_tensor_map_encoder(&encoding),
                                             " (CUDA 12 and newer): the tensor map cannot be "
                                             "encoded"));
    }
    // A refusal here is about the map, not the context: not a sticky error.
    if (CUresult r = tune_tensor_map_encode(&cu_, &encoding, static_cast<tune_cu_tensor_map*>(out));
        r != kCudaSuccess) {
      char described[512];
      const tune_gpurt_tensor_map descriptor = ToRuntimeTensorMap(map);
      tune_tensor_map_describe(&descriptor, described, sizeof described);
      return absl::InvalidArgumentError(StrCat(tune_tensor_map_encoder(&encoding),
                                               " refused the tensor map over ", described, ": ",
                                               cu_.ErrorText(r), " (", TUNE_TENSOR_MAP_RULES, ")"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<void*> CreateEvent() override {
    CUevent event = nullptr;
    RETURN_IF_ERROR(Check(cu_.cuEventCreate(&event, 0), "cuEventCreate"));
    return static_cast<void*>(event);
  }
  void DestroyEvent(void* event) override {
    if (event != nullptr && !broken_) {
      cu_.cuEventDestroy(static_cast<CUevent>(event));
    }
  }
  absl::Status Record(void* event) override {
    return Check(cu_.cuEventRecord(static_cast<CUevent>(event), stream_), "cuEventRecord");
  }
  absl::StatusOr<float> ElapsedMs(void* start, void* end) override {
    RETURN_IF_ERROR(Check(cu_.cuEventSynchronize(static_cast<CUevent>(end)), "cuEventSynchronize"));
    float ms = 0;
    RETURN_IF_ERROR(
        Check(cu_.cuEventElapsedTime(&ms, static_cast<CUevent>(start), static_cast<CUevent>(end)),
              "cuEventElapsedTime"));
    return ms;
  }
  absl::Status Synchronize() override {
    return Check(cu_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }
  absl::Status BeginCapture() override {
    if (!cu_.missing_graph_api.empty()) {
      return absl::UnimplementedError(
          StrCat("the driver (", cu_.library_path, ") lacks ", cu_.missing_graph_api));
    }
    RETURN_IF_ERROR(Check(cu_.cuStreamBeginCapture(stream_, kCuStreamCaptureModeGlobal),
                          "cuStreamBeginCapture"));
    capturing_ = true;
    return absl::OkStatus();
  }
  absl::StatusOr<void*> EndCapture() override {
    capturing_ = false;
    CUgraph graph = nullptr;
    // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED when a call was refused during the capture.
    absl::Status s = Check(cu_.cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    if (s.ok()) {
      s = Check(cu_.cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
    }
    if (graph != nullptr) {
      cu_.cuGraphDestroy(graph);
    }
    if (!s.ok()) {
      return s;
    }
    return static_cast<void*>(exec);
  }
  absl::Status LaunchGraph(void* graph) override {
    return Check(cu_.cuGraphLaunch(static_cast<CUgraphExec>(graph), stream_), "cuGraphLaunch");
  }
  void DestroyGraph(void* graph) override {
    if (graph != nullptr && !broken_) {
      cu_.cuGraphExecDestroy(static_cast<CUgraphExec>(graph));
    }
  }

 private:
  explicit CudaDevice(const CudaApi& cu) : cu_(cu) {}

  absl::Status Init(int index) {
    const std::string where = DeviceName(TargetKind::kCuda, index);
    CUresult r = cu_.cuDeviceGet(&device_, index);
    if (r != kCudaSuccess) {
      return absl::FailedPreconditionError(StrCat(where, ": cuDeviceGet: ", cu_.ErrorText(r)));
    }
    if (r = cu_.cuDevicePrimaryCtxRetain(&context_, device_); r != kCudaSuccess) {
      context_ = nullptr;
      return absl::FailedPreconditionError(
          StrCat(where, ": cuDevicePrimaryCtxRetain: ", cu_.ErrorText(r)));
    }
    if (r = cu_.cuCtxSetCurrent(context_); r != kCudaSuccess) {
      return absl::FailedPreconditionError(StrCat(where, ": cuCtxSetCurrent: ", cu_.ErrorText(r)));
    }
    if (r = cu_.cuStreamCreate(&stream_, kCuStreamNonBlocking); r != kCudaSuccess) {
      stream_ = nullptr;
      return absl::FailedPreconditionError(StrCat(where, ": cuStreamCreate: ", cu_.ErrorText(r)));
    }
    info_.kind = TargetKind::kCuda;
    info_.index = index;
    char name[256] = {};
    cu_.cuDeviceGetName(name, sizeof(name) - 1, device_);
    info_.name = name;
    auto attr = [&](int attribute) {
      int value = 0;
      cu_.cuDeviceGetAttribute(&value, attribute, device_);
      return value;
    };
    info_.arch = StrCat("sm_", attr(kCuDevAttrComputeCapabilityMajor),
                        attr(kCuDevAttrComputeCapabilityMinor));
    info_.multiprocessors = attr(kCuDevAttrMultiprocessorCount);
    size_t total = 0;
    cu_.cuDeviceTotalMem(&total, device_);
    info_.total_memory_bytes = static_cast<int64_t>(total);
    info_.sm_clock_khz = attr(kCuDevAttrClockRate);
    info_.memory_clock_khz = attr(kCuDevAttrMemoryClockRate);
    info_.l2_cache_bytes = attr(kCuDevAttrL2CacheSize);
    cu_.cuDriverGetVersion(&info_.driver_version);
    info_.runtime_library = cu_.library_path;
    info_.max_threads_per_block = attr(kCuDevAttrMaxThreadsPerBlock);
    info_.max_block = {attr(kCuDevAttrMaxBlockDimX), attr(kCuDevAttrMaxBlockDimY),
                       attr(kCuDevAttrMaxBlockDimZ)};
    info_.max_grid = {attr(kCuDevAttrMaxGridDimX), attr(kCuDevAttrMaxGridDimY),
                      attr(kCuDevAttrMaxGridDimZ)};
    info_.max_shared_bytes_per_block = std::max(attr(kCuDevAttrMaxSharedMemoryPerBlockOptin),
                                                attr(kCuDevAttrMaxSharedMemoryPerBlock));
    return absl::OkStatus();
  }

  // OK, or Internal naming the call and the driver's error; notes a sticky error.
  absl::Status Check(CUresult r, std::string_view call) {
    if (r == kCudaSuccess) {
      return absl::OkStatus();
    }
    NoteFailure(r);
    return absl::InternalError(StrCat(call, ": ", cu_.ErrorText(r)));
  }
  // A sticky error makes every later call fail, synchronisation included.
  // Not while capturing: synchronising would itself be refused and end the capture; nothing
  // runs during a capture, so its failures are never sticky.
  void NoteFailure(CUresult) {
    if (!broken_ && !capturing_ && cu_.cuCtxSynchronize() != kCudaSuccess) {
      broken_ = true;
    }
  }

  const CudaApi& cu_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  bool capturing_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuDevice>> OpenCudaDevice(int index) {
  return CudaDevice::Open(index);
}

}  // namespace tune::gpu
