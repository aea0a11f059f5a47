#include "rpc_server/gpu/gpu_candidate.h"

#include <dlfcn.h>

#include <utility>

#include "common/files.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "rpc_server/timing.h"
#include "rpc_server/worker_faults.h"
#include "runtime/tune_launch_ex.h"

namespace tune::gpu {
namespace {

// 90 for "sm_90" and "sm_90a"; 0 for what is not an sm_ name.
int ComputeCapability(const std::string& arch) {
  int version = 0;
  if (arch.rfind("sm_", 0) != 0) {
    return 0;
  }
  for (size_t i = 3; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i) {
    version = version * 10 + (arch[i] - '0');
  }
  return version;
}

// Empty when the launch fits the device; otherwise names the limit it passes.
std::string CheckLaunch(const GpuLaunch& l, const KernelAttributes& attrs,
                        const GpuDeviceInfo& info) {
  constexpr const char* kAxis[] = {"x", "y", "z"};
  if (info.max_threads_per_block > 0 &&
      l.ThreadsPerBlock() > uint64_t(info.max_threads_per_block)) {
    return StrCat("block of ", l.ThreadsPerBlock(), " threads exceeds the device's ",
                  info.max_threads_per_block, " threads per block");
  }
  for (int a = 0; a < 3; ++a) {
    if (info.max_block[a] > 0 && l.block[a] > info.max_block[a]) {
      return StrCat("block.", kAxis[a], "=", l.block[a], " exceeds the device's maximum block ",
                    kAxis[a], " dimension ", info.max_block[a]);
    }
    if (info.max_grid[a] > 0 && l.grid[a] > info.max_grid[a]) {
      return StrCat("grid.", kAxis[a], "=", l.grid[a], " exceeds the device's maximum grid ",
                    kAxis[a], " dimension ", info.max_grid[a]);
    }
  }
  const bool clustered = l.cluster != std::array<uint32_t, 3>{1, 1, 1};
  if ((clustered || !l.tensor_maps.empty()) && info.kind != TargetKind::kCuda) {
    return StrCat("launch has ", clustered ? "a thread-block cluster" : "tensor maps",
                  ", which are CUDA-only");
  }
  // Clusters and tensor maps came with sm_90 (Hopper).
  if ((clustered || !l.tensor_maps.empty()) && ComputeCapability(info.arch) < 90) {
    return StrCat("launch has ", clustered ? "a thread-block cluster" : "tensor maps",
                  ", which need sm_90 or newer; this device is ", info.arch);
  }
  if (clustered) {
    char error[512] = "";
    if (!tune_cluster_check(l.grid.data(), l.cluster.data(), error, sizeof error)) {
      return error;
    }
  }
  const int64_t shared = int64_t{attrs.shared_bytes} + l.dynamic_shared_bytes;
  if (info.max_shared_bytes_per_block > 0 && shared > info.max_shared_bytes_per_block) {
    return StrCat("shared memory of ", shared, " bytes per block (", attrs.shared_bytes,
                  " static + ", l.dynamic_shared_bytes,
                  " dynamic) exceeds the device's maximum of ", info.max_shared_bytes_per_block);
  }
  return "";
}

// Sets `*failure` to the trial's measurement when a candidate cannot be loaded; returns the
// candidate that the loaders then return (none).
std::unique_ptr<GpuCandidate> Refuse(Measurement* failure, ErrorKind kind, std::string message,
                                     std::string library_info = "") {
  *failure = Measurement::Failed(kind, std::move(message));
  failure->library_info = std::move(library_info);
  return nullptr;
}

// SHARED_OBJECT host code, dlclose()d when the candidate ends.
class HostEntry final : public GpuCandidate {
 public:
  static std::unique_ptr<GpuCandidate> Load(GpuDevice& dev, const v1::MeasureChildTrial& trial,
                                            const std::vector<DevicePtr>& buffers,
                                            Measurement* failure) {
    dlerror();
    void* handle = dlopen(trial.artifact_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      const std::string error = e != nullptr ? e : "unknown error";
      return Refuse(failure, rpc::DlopenFailureKind(error),
                    StrCat("cannot load artifact: ", error));
    }
    auto candidate = std::unique_ptr<HostEntry>(new HostEntry(dev, handle, buffers));
    candidate->entry_ = dlsym(handle, trial.entry_symbol().c_str());
    if (candidate->entry_ == nullptr) {
      return Refuse(failure, ErrorKind::kLoadError,
                    StrCat("entry symbol '", trial.entry_symbol(), "' not found"));
    }
    return candidate;
  }

  ~HostEntry() override { dlclose(handle_); }

  absl::Status Call() override {
    // The GPU host ABI: the device pointers, then the stream (the last of call_args_).
    call_args_.back() = dev_.stream();
    if (int32_t rc = callable_ ? rpc::CallWithPointers(entry_, call_args_) : -1; rc != 0) {
      // The shims' codes (runtime/tune_gpu_runtime.h): -2 no implementation for this shape
      // and these knobs, -6 the library rejects the requested algorithm here. Both say the
      // candidate does not apply, not that it failed.
      if (rc == -2 || rc == -6) {
        return absl::UnimplementedError(StrCat("entry returned ", rc));
      }
      // -1: a vendor library could not be opened; -5: cuBLASLt is missing.
      if (rc == -1 || rc == -5) {
        return absl::FailedPreconditionError(
            StrCat("entry returned ", rc, ": a vendor library could not be loaded"));
      }
      return absl::AbortedError(StrCat("entry returned ", rc));
    }
    return absl::OkStatus();
  }

 private:
  HostEntry(GpuDevice& dev, void* handle, const std::vector<DevicePtr>& buffers)
      : dev_(dev),
        handle_(handle),
        callable_(buffers.size() >= static_cast<size_t>(rpc::kMinKernelArgs) &&
                  buffers.size() <= static_cast<size_t>(rpc::kMaxKernelArgs)) {
    for (DevicePtr p : buffers) {
      call_args_.push_back(reinterpret_cast<void*>(p));
    }
    call_args_.push_back(nullptr);  // the stream, set at each call
  }

  GpuDevice& dev_;
  void* handle_;
  void* entry_ = nullptr;
  const bool callable_;  // the host ABI's count of buffers
  // The entry's arguments, built once: the buffers' device pointers, then the stream.
  std::vector<void*> call_args_;
};

// A PTX / HSACO kernel, its module unloaded when the candidate ends.
class Kernel final : public GpuCandidate {
 public:
  static std::unique_ptr<GpuCandidate> Load(GpuDevice& dev, const v1::MeasureChildTrial& trial,
                                            const Workload& workload,
                                            const std::vector<TensorArg>& args,
                                            const std::vector<DevicePtr>& buffers,
                                            Measurement* failure) {
    absl::StatusOr<std::string> image = ReadFile(trial.artifact_path());
    if (!image.ok()) {  // the worker's cached copy
      return Refuse(failure, ErrorKind::kWorkerError, std::string(image.status().message()));
    }
    if (image->empty()) {
      return Refuse(failure, ErrorKind::kLoadError, "artifact is empty");
    }
    absl::StatusOr<void*> loaded = dev.LoadModule(*image);
    if (!loaded.ok()) {
      return Refuse(failure,
                    dev.broken()
                        ? ErrorKind::kRuntimeCrash
                        : rpc::ModuleLoadFailureKind(std::string(loaded.status().message())),
                    std::string(loaded.status().message()));
    }
    auto kernel = std::unique_ptr<Kernel>(
        new Kernel(dev, *loaded, LaunchFromProto(trial.launch()), args, buffers));
    const GpuLaunch& launch = kernel->launch_;
    std::vector<DevicePtr>& ptrs = kernel->buffers_;
    absl::StatusOr<void*> fn = dev.GetFunction(kernel->module_, trial.entry_symbol());
    if (!fn.ok()) {
      return Refuse(failure, ErrorKind::kLoadError, std::string(fn.status().message()));
    }
    kernel->function_ = *fn;
    KernelAttributes attrs = dev.Attributes(*fn);
    const std::string library_info =
        StrCat("kernel: regs=", attrs.registers, " local=", attrs.local_bytes,
               " shared=", attrs.shared_bytes, " ", ToString(launch));
    if (std::string over = CheckLaunch(launch, attrs, dev.info()); !over.empty()) {
      return Refuse(failure, ErrorKind::kUnsupported, over, library_info);
    }
    for (uint32_t arg : launch.zeroed_args) {
      if (arg >= ptrs.size()) {
        return Refuse(
            failure, ErrorKind::kLoadError,
            StrCat("launch.zeroed_args names argument ", arg, " but the kernel of ",
                   workload.ToString(), " takes ", ptrs.size(), " (0..", ptrs.size() - 1, ")"),
            library_info);
      }
    }
    // The tensor maps, encoded once: the buffers stay where they are for the whole
    // measurement, and each map is passed by value after the arguments.
    kernel->tensor_maps_.resize(launch.tensor_maps.size());
    for (size_t m = 0; m < launch.tensor_maps.size(); ++m) {
      const GpuTensorMap& map = launch.tensor_maps[m];
      if (map.arg >= ptrs.size()) {
        return Refuse(
            failure, ErrorKind::kLoadError,
            StrCat("launch.tensor_maps[", m, "] names argument ", map.arg, " but the kernel of ",
                   workload.ToString(), " takes ", ptrs.size(), " (0..", ptrs.size() - 1, ")"),
            library_info);
      }
      if (absl::Status s = dev.EncodeTensorMap(map, static_cast<uint32_t>(ptrs.size()),
                                               ptrs[map.arg], &kernel->tensor_maps_[m]);
          !s.ok()) {
        return Refuse(failure,
                      absl::IsUnimplemented(s) ? ErrorKind::kUnsupported : ErrorKind::kLoadError,
                      StrCat("launch.tensor_maps[", m, "]: ", s.message()), library_info);
      }
    }
    for (DevicePtr& p : ptrs) {
      kernel->params_.push_back(&p);
    }
    for (tune_cu_tensor_map& map : kernel->tensor_maps_) {
      kernel->params_.push_back(&map);
    }
    kernel->library_info_ = library_info;
    return kernel;
  }

  ~Kernel() override { dev_.UnloadModule(module_); }

  // A kernel that accumulates into an argument needs it zeroed before every launch; the fill
  // is part of the measured time, as it is part of every call of the kernel.
  absl::Status Call() override {
    for (uint32_t arg : launch_.zeroed_args) {
      if (absl::Status s =
              dev_.Memset8(buffers_[arg], 0, static_cast<size_t>(args_[arg].NumBytes()));
          !s.ok()) {
        return s;
      }
    }
    return dev_.Launch(function_, launch_, params_.data());
  }

 private:
  Kernel(GpuDevice& dev, void* module, GpuLaunch launch, std::vector<TensorArg> args,
         std::vector<DevicePtr> buffers)
      : dev_(dev),
        module_(module),
        launch_(std::move(launch)),
        args_(std::move(args)),
        buffers_(std::move(buffers)) {}

  GpuDevice& dev_;
  void* module_;
  void* function_ = nullptr;
  GpuLaunch launch_;
  std::vector<TensorArg> args_;
  std::vector<DevicePtr> buffers_;
  std::vector<tune_cu_tensor_map> tensor_maps_;  // 128-byte aligned, as the driver wants them
  std::vector<void*> params_;  // cuLaunchKernel's: the buffers' addresses, then the maps'
};

}  // namespace

std::unique_ptr<GpuCandidate> GpuCandidate::LoadHostEntry(GpuDevice& dev,
                                                          const v1::MeasureChildTrial& trial,
                                                          const std::vector<DevicePtr>& buffers,
                                                          Measurement* failure) {
  return HostEntry::Load(dev, trial, buffers, failure);
}

std::unique_ptr<GpuCandidate> GpuCandidate::LoadKernel(GpuDevice& dev,
                                                       const v1::MeasureChildTrial& trial,
                                                       const Workload& workload,
                                                       const std::vector<TensorArg>& args,
                                                       const std::vector<DevicePtr>& buffers,
                                                       Measurement* failure) {
  return Kernel::Load(dev, trial, workload, args, buffers, failure);
}

}  // namespace tune::gpu
