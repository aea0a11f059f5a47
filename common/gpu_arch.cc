#include "common/gpu_arch.h"

#include "absl/strings/str_join.h"
#include "common/strings.h"

namespace tune {
namespace {

// Per-block and per-multiprocessor limits from the vendors' programming guides (CUDA C++
// Programming Guide, "Compute Capabilities", whose opt-in maximum is the dynamic shared memory;
// AMD CDNA2/CDNA3/RDNA3 ISA guides). PTX ISA versions are the lowest that LLVM 19 accepts for
// the arch, so older drivers load the PTX.
const GpuArch kArchs[] = {
    {TargetKind::kCuda, "sm_80", 32, 1024, 48 * 1024, 255, 65536, 2048, 32, "nvptx64-nvidia-cuda",
     "sm_80", "+ptx70", 163 * 1024},
    {TargetKind::kCuda, "sm_86", 32, 1024, 48 * 1024, 255, 65536, 1536, 16, "nvptx64-nvidia-cuda",
     "sm_86", "+ptx71", 99 * 1024},
    {TargetKind::kCuda, "sm_89", 32, 1024, 48 * 1024, 255, 65536, 1536, 24, "nvptx64-nvidia-cuda",
     "sm_89", "+ptx78", 99 * 1024},
    {TargetKind::kCuda, "sm_90", 32, 1024, 48 * 1024, 255, 65536, 2048, 32, "nvptx64-nvidia-cuda",
     "sm_90", "+ptx78", 227 * 1024},
    // Hopper's arch-specific features (wgmma, setmaxnreg): PTX 8.0, run by sm_90 devices only.
    {TargetKind::kCuda, "sm_90a", 32, 1024, 48 * 1024, 255, 65536, 2048, 32, "nvptx64-nvidia-cuda",
     "sm_90a", "+ptx80", 227 * 1024},
    // CDNA2/CDNA3: 4 SIMDs of 512 VGPRs x 64 lanes per CU, 64 KiB LDS per workgroup.
    {TargetKind::kRocm, "gfx90a", 64, 1024, 64 * 1024, 512, 131072, 2048, 32, "amdgcn-amd-amdhsa",
     "gfx90a", ""},
    {TargetKind::kRocm, "gfx942", 64, 1024, 64 * 1024, 512, 131072, 2048, 32, "amdgcn-amd-amdhsa",
     "gfx942", ""},
    // RDNA3: wave32, 2 SIMDs of 1536 VGPRs x 32 lanes per CU.
    {TargetKind::kRocm, "gfx1100", 32, 1024, 64 * 1024, 256, 98304, 2048, 32, "amdgcn-amd-amdhsa",
     "gfx1100", ""},
};

}  // namespace

std::vector<GpuArch> SupportedGpuArchs(TargetKind kind) {
  std::vector<GpuArch> out;
  for (const GpuArch& arch : kArchs) {
    if (arch.kind == kind) {
      out.push_back(arch);
    }
  }
  return out;
}

std::string SupportedGpuArchNames(TargetKind kind) {
  std::string out;
  for (const GpuArch& arch : SupportedGpuArchs(kind)) {
    out += out.empty() ? "" : ", ";
    out += arch.name;
  }
  return out;
}

absl::StatusOr<GpuArch> GpuArchFor(const Target& target) {
  if (target.kind == TargetKind::kLlvm) {
    return absl::InvalidArgumentError(
        StrCat("target '", target.ToString(), "' is not a GPU target (cuda or rocm)"));
  }
  for (const GpuArch& arch : kArchs) {
    if (arch.kind == target.kind && arch.name == target.cpu) {
      return arch;
    }
  }
  const bool cuda = target.kind == TargetKind::kCuda;
  return absl::InvalidArgumentError(
      StrCat("target '", target.ToString(), "': ", cuda ? "-arch=" : "-mcpu=", target.cpu,
             " is not supported; accepted: ", SupportedGpuArchNames(target.kind)));
}

std::string ToString(const GpuLaunch& launch) {
  std::string text =
      StrCat("grid=(", launch.grid[0], ",", launch.grid[1], ",", launch.grid[2], ") block=(",
             launch.block[0], ",", launch.block[1], ",", launch.block[2],
             ") shared=", launch.dynamic_shared_bytes + launch.static_shared_bytes);
  if (!launch.zeroed_args.empty()) {
    StrAppend(&text, " zeroed_args=", absl::StrJoin(launch.zeroed_args, ","));
  }
  if (launch.cluster != std::array<uint32_t, 3>{1, 1, 1}) {
    StrAppend(&text, " cluster=(", launch.cluster[0], ",", launch.cluster[1], ",",
              launch.cluster[2], ")");
  }
  if (launch.workspace_bytes > 0) {
    StrAppend(&text, " workspace=", launch.workspace_bytes);
  }
  if (!launch.tensor_maps.empty()) {
    std::vector<uint32_t> args;
    for (const GpuTensorMap& map : launch.tensor_maps) {
      args.push_back(map.arg);
    }
    StrAppend(&text, " tensor_maps=", absl::StrJoin(args, ","));
  }
  return text;
}

}  // namespace tune
