// One GPU, opened in the measurement child through the CUDA driver API (cuda_api.h) or the HIP
// runtime (hip_api.h): the device's facts, memory, modules loaded from an image, kernel
// launches on the child's own stream, events, and whether a sticky error has made the context
// unusable. The worker process never opens one.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/gpu_arch.h"
#include "common/target.h"

namespace tune::gpu {

/// What a device is (sent to the worker in MeasureChildReady, registered as GpuDevice).
struct GpuDeviceInfo {
  TargetKind kind = TargetKind::kCuda;  // kCuda or kRocm
  int index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string arch;  // "sm_90", "gfx90a"
  int multiprocessors = 0;
  int64_t total_memory_bytes = 0;
  int sm_clock_khz = 0;
  int memory_clock_khz = 0;
  int64_t l2_cache_bytes = 0;
  int driver_version = 0;       // cuDriverGetVersion / hipDriverGetVersion
  std::string runtime_library;  // the path of libcuda.so.1 / libamdhip64.so that was opened
  // Launch limits.
  int max_threads_per_block = 0;
  std::array<int64_t, 3> max_block = {0, 0, 0};
  std::array<int64_t, 3> max_grid = {0, 0, 0};
  int64_t max_shared_bytes_per_block = 0;  // with opt-in where the device has one
};

/// "cuda:0" / "rocm:1".
std::string DeviceName(TargetKind kind, int index);

using DevicePtr = uint64_t;

/// cuFuncGetAttribute / hipFuncGetAttribute of one kernel.
struct KernelAttributes {
  int registers = 0;     // NUM_REGS, per thread
  int local_bytes = 0;   // LOCAL_SIZE_BYTES, per thread (spills and local arrays)
  int shared_bytes = 0;  // SHARED_SIZE_BYTES, static shared memory per block
};

class GpuDevice {
 public:
  /// Loads the runtime, initialises it, checks that `index` exists, makes the device current
  /// (CUDA: retains its primary context; HIP: hipSetDevice) and creates a non-blocking stream.
  /// FailedPrecondition with a message naming the problem: no runtime library, an init
  /// failure (the driver's error name), or "cuda:3 does not exist: this host has 1 CUDA
  /// device(s)".
  static absl::StatusOr<std::unique_ptr<GpuDevice>> Open(TargetKind kind, int index);

  virtual ~GpuDevice() = default;

  const GpuDeviceInfo& info() const { return info_; }
  /// The stream every launch, copy and event of this device uses (CUstream / hipStream_t),
  /// also handed to host-ABI library candidates.
  virtual void* stream() const = 0;

  virtual absl::StatusOr<DevicePtr> Allocate(size_t bytes) = 0;
  virtual void Free(DevicePtr ptr) = 0;
  /// Synchronous copies (they wait for the stream's earlier work).
  virtual absl::Status CopyToDevice(DevicePtr dst, const void* src, size_t bytes) = 0;
  virtual absl::Status CopyToHost(void* dst, DevicePtr src, size_t bytes) = 0;
  /// Asynchronous fills on the stream.
  virtual absl::Status Memset8(DevicePtr dst, uint8_t value, size_t bytes) = 0;
  virtual absl::Status Memset32(DevicePtr dst, uint32_t value, size_t count) = 0;

  /// Loads a module from an image (PTX text, NUL-terminated by the callee; or an HSA code
  /// object). The error names the runtime's error and, for PTX, the JIT's error log.
  virtual absl::StatusOr<void*> LoadModule(std::string_view image) = 0;
  virtual void UnloadModule(void* module) = 0;
  /// NotFound naming the symbol when the module lacks it.
  virtual absl::StatusOr<void*> GetFunction(void* module, const std::string& name) = 0;
  virtual KernelAttributes Attributes(void* function) = 0;
  /// Launches `function` on the stream with `params` (cuLaunchKernel's kernelParams: one
  /// pointer to each argument's value, the encoded tensor maps after the arguments). A cluster
  /// other than {1, 1, 1} is launched with cuLaunchKernelEx's cluster-dimension attribute;
  /// Unimplemented when the runtime cannot (HIP: clusters are CUDA-only; a CUDA driver older
  /// than 12).
  virtual absl::Status Launch(void* function, const GpuLaunch& launch, void** params) = 0;
  /// Encodes `map` over the buffer at `address` of a kernel with `num_args` arguments into the
  /// 128 bytes at `out` (a CUtensorMap, whose address the driver wants 64-byte aligned:
  /// runtime/tune_cuda_driver.h's tune_cu_tensor_map is 128-byte aligned, as cuda.h's type is)
  /// with cuTensorMapEncodeTiled (cuTensorMapEncodeIm2col for an im2col map), once per buffer:
  /// the map holds the address.
  /// InvalidArgument naming the map, what is wrong and the rules (runtime/tune_launch_ex.h), or the
  /// driver's refusal; Unimplemented when the runtime has no tensor maps (HIP: they are CUDA-only;
  /// a CUDA driver older than 12).
  virtual absl::Status EncodeTensorMap(const GpuTensorMap& map, uint32_t num_args,
                                       DevicePtr address, void* out) = 0;

  virtual absl::StatusOr<void*> CreateEvent() = 0;
  virtual void DestroyEvent(void* event) = 0;
  virtual absl::Status Record(void* event) = 0;
  /// Waits for `end` and returns the milliseconds between the two events.
  virtual absl::StatusOr<float> ElapsedMs(void* start, void* end) = 0;
  /// Waits for everything queued on the stream.
  virtual absl::Status Synchronize() = 0;

  /// Starts capturing the stream's work into a graph (cuStreamBeginCapture /
  /// hipStreamBeginCapture, global mode: a call that is unsafe during a capture, such as a
  /// synchronisation or an allocation, fails instead of running). Until EndCapture, launches
  /// and fills on the stream are recorded, not run. Unimplemented when the runtime has no
  /// graph API. Every BeginCapture that succeeds must be followed by EndCapture.
  virtual absl::Status BeginCapture() = 0;
  /// Ends the capture and instantiates what was captured; returns an executable graph for
  /// LaunchGraph and DestroyGraph. When a call was refused during the capture (the runtime
  /// then invalidates it) or instantiating fails, the capture is still ended, nothing is left
  /// allocated, and the error names the runtime's refusal.
  virtual absl::StatusOr<void*> EndCapture() = 0;
  /// Queues one replay of an executable graph on the stream.
  virtual absl::Status LaunchGraph(void* graph) = 0;
  virtual void DestroyGraph(void* graph) = 0;

  /// True once an error was sticky (an illegal address, a launch failure, ...): the context is
  /// unusable and the process must end for the device to be used again.
  bool broken() const { return broken_; }

 protected:
  GpuDeviceInfo info_;
  bool broken_ = false;
};

/// GpuDevice::Open's two implementations: over the CUDA driver API (cuda_device.cc) and the
/// HIP runtime (hip_device.cc).
absl::StatusOr<std::unique_ptr<GpuDevice>> OpenCudaDevice(int index);
absl::StatusOr<std::unique_ptr<GpuDevice>> OpenHipDevice(int index);

}  // namespace tune::gpu
