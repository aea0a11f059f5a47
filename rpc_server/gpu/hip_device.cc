// GpuDevice over the HIP runtime (hip_api.h, opened with dlopen): HipDevice, which
// GpuDevice::Open(kRocm, ...) returns.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/status.h"
#include "common/strings.h"
#include "rpc_server/gpu/gpu_device.h"
#include "rpc_server/gpu/hip_api.h"

namespace tune::gpu {
namespace {

// The arch name inside a hipDeviceProp_t (gcnArchName, e.g. "gfx90a:sramecc+:xnack-"), found
// by scanning the struct for a NUL-terminated "gfx" name, so that its layout, which changed
// between ROCm releases, need not be declared. Returns the part before the first ':'.
std::string FindGcnArchName(const std::vector<char>& props) {
  for (size_t i = 0; i + 4 < props.size(); ++i) {
    if (std::memcmp(&props[i], "gfx", 3) != 0 || (i > 0 && props[i - 1] != '\0')) {
      continue;
    }
    size_t end = i + 3;
    while (end < props.size() && props[end] != '\0' && props[end] != ':') {
      ++end;
    }
    std::string name(&props[i], end - i);
    bool plausible = name.size() >= 5 && name.size() <= 12;
    for (char c : name) {
      plausible &= (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    }
    if (plausible) {
      return name;
    }
  }
  return "";
}

class HipDevice final : public GpuDevice {
 public:
  static absl::StatusOr<std::unique_ptr<GpuDevice>> Open(int index) {
    absl::StatusOr<const HipApi*> api = LoadHipApi();
    if (!api.ok()) {
      return api.status();
    }
    const HipApi& hip = **api;
    if (hipError_t r = hip.hipInit(0); r != kHipSuccess) {
      return absl::FailedPreconditionError(StrCat("hipInit failed: ", hip.ErrorText(r)));
    }
    int count = 0;
    if (hipError_t r = hip.hipGetDeviceCount(&count); r != kHipSuccess) {
      return absl::FailedPreconditionError(StrCat("hipGetDeviceCount failed: ", hip.ErrorText(r)));
    }
    if (index < 0 || index >= count) {
      return absl::FailedPreconditionError(
          StrCat(DeviceName(TargetKind::kRocm, index), " does not exist: this host has ", count,
                 " ROCm device(s)", count > 0 ? StrCat(" (rocm:0 to rocm:", count - 1, ")") : ""));
    }
    auto device = std::unique_ptr<HipDevice>(new HipDevice(hip));
    RETURN_IF_ERROR(device->Init(index));
    return device;
  }

  ~HipDevice() override {
    if (stream_ != nullptr && !broken_) {
      hip_.hipStreamDestroy(stream_);
    }
  }

  void* stream() const override { return stream_; }

  absl::StatusOr<DevicePtr> Allocate(size_t bytes) override {
    void* ptr = nullptr;
    RETURN_IF_ERROR(Check(hip_.hipMalloc(&ptr, bytes), StrCat("hipMalloc(", bytes, ")")));
    return reinterpret_cast<DevicePtr>(ptr);
  }
  void Free(DevicePtr ptr) override {
    if (ptr != 0 && !broken_) {
      hip_.hipFree(reinterpret_cast<void*>(ptr));
    }
  }
  absl::Status CopyToDevice(DevicePtr dst, const void* src, size_t bytes) override {
    RETURN_IF_ERROR(Synchronize());
    return Check(hip_.hipMemcpy(reinterpret_cast<void*>(dst), src, bytes, kHipMemcpyHostToDevice),
                 "hipMemcpy");
  }
  absl::Status CopyToHost(void* dst, DevicePtr src, size_t bytes) override {
    RETURN_IF_ERROR(Synchronize());
    return Check(hip_.hipMemcpy(dst, reinterpret_cast<void*>(src), bytes, kHipMemcpyDeviceToHost),
                 "hipMemcpy");
  }
  absl::Status Memset8(DevicePtr dst, uint8_t value, size_t bytes) override {
    return Check(hip_.hipMemsetAsync(reinterpret_cast<void*>(dst), value, bytes, stream_),
                 "hipMemsetAsync");
  }
  absl::Status Memset32(DevicePtr dst, uint32_t value, size_t count) override {
    return Check(hip_.hipMemsetD32Async(reinterpret_cast<void*>(dst), static_cast<int>(value),
                                        count, stream_),
                 "hipMemsetD32Async");
  }
  absl::StatusOr<void*> LoadModule(std::string_view image) override {
    std::string bytes(image);
    hipModule_t module = nullptr;
    hipError_t r = hip_.hipModuleLoadData(&module, bytes.data());
    if (r != kHipSuccess) {
      NoteFailure();
      return absl::FailedPreconditionError(StrCat("hipModuleLoadData: ", hip_.ErrorText(r)));
    }
    return static_cast<void*>(module);
  }
  void UnloadModule(void* module) override {
    if (module != nullptr && !broken_) {
      hip_.hipModuleUnload(static_cast<hipModule_t>(module));
    }
  }
  absl::StatusOr<void*> GetFunction(void* module, const std::string& name) override {
    hipFunction_t fn = nullptr;
    hipError_t r = hip_.hipModuleGetFunction(&fn, static_cast<hipModule_t>(module), name.c_str());
    if (r != kHipSuccess) {
      return absl::NotFoundError(
          StrCat("kernel '", name, "' not found in the code object: ", hip_.ErrorText(r)));
    }
    return static_cast<void*>(fn);
  }
  KernelAttributes Attributes(void* function) override {
    KernelAttributes a;
    auto fn = static_cast<hipFunction_t>(function);
    hip_.hipFuncGetAttribute(&a.registers, kHipFuncAttrNumRegs, fn);
    hip_.hipFuncGetAttribute(&a.local_bytes, kHipFuncAttrLocalSizeBytes, fn);
    hip_.hipFuncGetAttribute(&a.shared_bytes, kHipFuncAttrSharedSizeBytes, fn);
    return a;
  }
  absl::Status Launch(void* function, const GpuLaunch& l, void** params) override {
    if (l.cluster != std::array<uint32_t, 3>{1, 1, 1}) {
      return absl::UnimplementedError(
          StrCat("launch ", ToString(l), ": thread-block clusters are CUDA-only"));
    }
    return Check(
        hip_.hipModuleLaunchKernel(static_cast<hipFunction_t>(function), l.grid[0], l.grid[1],
                                   l.grid[2], l.block[0], l.block[1], l.block[2],
                                   l.dynamic_shared_bytes, stream_, params, nullptr),
        "hipModuleLaunchKernel");
  }
  absl::Status EncodeTensorMap(const GpuTensorMap& map, uint32_t, DevicePtr, void*) override {
    return absl::UnimplementedError(
        StrCat("tensor map over argument ", map.arg, ": TMA tensor maps are CUDA-only"));
  }
  absl::StatusOr<void*> CreateEvent() override {
    hipEvent_t event = nullptr;
    RETURN_IF_ERROR(Check(hip_.hipEventCreate(&event), "hipEventCreate"));
    return static_cast<void*>(event);
  }
  void DestroyEvent(void* event) override {
    if (event != nullptr && !broken_) {
      hip_.hipEventDestroy(static_cast<hipEvent_t>(event));
    }
  }
  absl::Status Record(void* event) override {
    return Check(hip_.hipEventRecord(static_cast<hipEvent_t>(event), stream_), "hipEventRecord");
  }
  absl::StatusOr<float> ElapsedMs(void* start, void* end) override {
    RETURN_IF_ERROR(
        Check(hip_.hipEventSynchronize(static_cast<hipEvent_t>(end)), "hipEventSynchronize"));
    float ms = 0;
    RETURN_IF_ERROR(Check(
        hip_.hipEventElapsedTime(&ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(end)),
        "hipEventElapsedTime"));
    return ms;
  }
  absl::Status Synchronize() override {
    return Check(hip_.hipStreamSynchronize(stream_), "hipStreamSynchronize");
  }
  absl::Status BeginCapture() override {
    if (!hip_.missing_graph_api.empty()) {
      return absl::UnimplementedError(
          StrCat("the runtime (", hip_.library_path, ") lacks ", hip_.missing_graph_api));
    }
    RETURN_IF_ERROR(Check(hip_.hipStreamBeginCapture(stream_, kHipStreamCaptureModeGlobal),
                          "hipStreamBeginCapture"));
    capturing_ = true;
    return absl::OkStatus();
  }
  absl::StatusOr<void*> EndCapture() override {
    capturing_ = false;
    hipGraph_t graph = nullptr;
    absl::Status s = Check(hip_.hipStreamEndCapture(stream_, &graph), "hipStreamEndCapture");
    hipGraphExec_t exec = nullptr;
    if (s.ok()) {
      s = Check(hip_.hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0), "hipGraphInstantiate");
    }
    if (graph != nullptr) {
      hip_.hipGraphDestroy(graph);
    }
    if (!s.ok()) {
      return s;
    }
    return static_cast<void*>(exec);
  }
  absl::Status LaunchGraph(void* graph) override {
    return Check(hip_.hipGraphLaunch(static_cast<hipGraphExec_t>(graph), stream_),
                 "hipGraphLaunch");
  }
  void DestroyGraph(void* graph) override {
    if (graph != nullptr && !broken_) {
      hip_.hipGraphExecDestroy(static_cast<hipGraphExec_t>(graph));
    }
  }

 private:
  explicit HipDevice(const HipApi& hip) : hip_(hip) {}

  absl::Status Init(int index) {
    const std::string where = DeviceName(TargetKind::kRocm, index);
    if (hipError_t r = hip_.hipSetDevice(index); r != kHipSuccess) {
      return absl::FailedPreconditionError(StrCat(where, ": hipSetDevice: ", hip_.ErrorText(r)));
    }
    if (hipError_t r = hip_.hipStreamCreateWithFlags(&stream_, kHipStreamNonBlocking);
        r != kHipSuccess) {
      stream_ = nullptr;
      return absl::FailedPreconditionError(StrCat(where, ": hipStreamCreate: ", hip_.ErrorText(r)));
    }
    info_.kind = TargetKind::kRocm;
    info_.index = index;
    char name[256] = {};
    hip_.hipDeviceGetName(name, sizeof(name) - 1, index);
    info_.name = name;
    std::vector<char> props(64 * 1024, '\0');  // far larger than any hipDeviceProp_t
    if (hip_.hipGetDeviceProperties(props.data(), index) == kHipSuccess) {
      info_.arch = FindGcnArchName(props);
    }
    if (info_.arch.empty()) {
      return absl::FailedPreconditionError(
          StrCat(where, ": hipGetDeviceProperties gave no gcnArchName (gfx...)"));
    }
    auto attr = [&](int attribute) {
      int value = 0;
      hip_.hipDeviceGetAttribute(&value, attribute, index);
      return value;
    };
    info_.multiprocessors = attr(kHipAttrMultiprocessorCount);
    size_t total = 0;
    hip_.hipDeviceTotalMem(&total, index);
    info_.total_memory_bytes = static_cast<int64_t>(total);
    info_.sm_clock_khz = attr(kHipAttrClockRate);
    info_.memory_clock_khz = attr(kHipAttrMemoryClockRate);
    info_.l2_cache_bytes = attr(kHipAttrL2CacheSize);
    hip_.hipDriverGetVersion(&info_.driver_version);
    info_.runtime_library = hip_.library_path;
    info_.max_threads_per_block = attr(kHipAttrMaxThreadsPerBlock);
    info_.max_block = {attr(kHipAttrMaxBlockDimX), attr(kHipAttrMaxBlockDimY),
                       attr(kHipAttrMaxBlockDimZ)};
    info_.max_grid = {attr(kHipAttrMaxGridDimX), attr(kHipAttrMaxGridDimY),
                      attr(kHipAttrMaxGridDimZ)};
    info_.max_shared_bytes_per_block = attr(kHipAttrMaxSharedMemoryPerBlock);
    return absl::OkStatus();
  }

  absl::Status Check(hipError_t r, std::string_view call) {
    if (r == kHipSuccess) {
      return absl::OkStatus();
    }
    NoteFailure();
    return absl::InternalError(StrCat(call, ": ", hip_.ErrorText(r)));
  }
  // Not while capturing (as CudaDevice::NoteFailure).
  void NoteFailure() {
    if (!broken_ && !capturing_ && hip_.hipDeviceSynchronize() != kHipSuccess) {
      broken_ = true;
    }
  }

  const HipApi& hip_;
  hipStream_t stream_ = nullptr;
  bool capturing_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuDevice>> OpenHipDevice(int index) {
  return HipDevice::Open(index);
}

}  // namespace tune::gpu
