#include "rpc_server/gpu/gpu_device.h"

#include "common/strings.h"

namespace tune::gpu {

std::string DeviceName(TargetKind kind, int index) {
  return StrCat(kind == TargetKind::kRocm ? "rocm" : "cuda", ":", index);
}

absl::StatusOr<std::unique_ptr<GpuDevice>> GpuDevice::Open(TargetKind kind, int index) {
  switch (kind) {
    case TargetKind::kCuda:
      return OpenCudaDevice(index);
    case TargetKind::kRocm:
      return OpenHipDevice(index);
    case TargetKind::kLlvm:
      break;
  }
  return absl::InvalidArgumentError("GpuDevice::Open: not a GPU kind");
}

}  // namespace tune::gpu
