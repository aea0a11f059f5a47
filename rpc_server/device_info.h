// What this worker is: its device (--device cpu|cuda:N|rocm:N), its device key, the
// capabilities it registers with and the fingerprint stamped on every measurement. A GPU's
// facts come from the measurement child that opened it (MeasureChildReady.gpu): the worker
// process never initialises a GPU.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/host_cpu.h"
#include "common/target.h"
#include "rpc_server/preload.h"
#include "tune/v1/worker.pb.h"

namespace tune::rpc {

/// The device a worker measures on.
struct DeviceSpec {
  TargetKind kind = TargetKind::kLlvm;  // kLlvm for the host CPU
  int index = 0;                        // GPU ordinal
  /// "cpu", "cuda:0", "rocm:1".
  std::string ToString() const;
};

/// Parses --device: "cpu", "cuda:N" or "rocm:N" (N a device ordinal, 0-999; "cuda" and "rocm"
/// alone mean N=0). Anything else is InvalidArgument naming the accepted forms.
absl::StatusOr<DeviceSpec> ParseDeviceSpec(std::string_view device);

/// The device key of a GPU: "cuda/sm_90", "rocm/gfx90a".
std::string GpuDeviceKey(const v1::GpuDevice& gpu);

/// OK when common/gpu_arch.h supports the GPU's arch; otherwise FailedPrecondition naming the
/// device, its arch and the supported ones (tune generates no code for other archs).
absl::Status CheckGpuArchSupported(const v1::GpuDevice& gpu);

/// Library name (as in --libs) -> the version its shim reports (MeasureChildReady).
using LibraryVersions = std::map<std::string, std::string>;

/// A GPU's fingerprint (common/fingerprint.h): "<device key> fp=2 gpu='<name>' sms=N
/// mem=<GiB> sm_clock=<MHz> mem_clock=<MHz> l2=<MiB> driver=<release> cuda=<major.minor>
/// preload=<names> lib.<name>=<version>..." (hip= for ROCm; driver= where the runtime library's
/// file names its release).
std::string GpuDeviceFingerprint(const v1::GpuDevice& gpu,
                                 const std::vector<PreloadedLibrary>& preloaded,
                                 const LibraryVersions& libraries = {});

/// The capabilities of a GPU worker: the host's facts as for a CPU worker plus `gpu`, with the
/// GPU's fingerprint.
v1::Capabilities GpuCapabilities(const v1::GpuDevice& gpu, int threads, int capacity,
                                 const std::vector<PreloadedLibrary>& preloaded,
                                 const LibraryVersions& libraries = {});

/// The device key of this host's CPU, e.g. "cpu/x86_64/znver4" (the same text that
/// Target::DeviceKey() gives for "llvm -mcpu=native").
std::string HostCpuDeviceKey();

/// A CPU's fingerprint (common/fingerprint.h): "<device key> fp=2 cpu='<model>'
/// microcode=<revision> cores=N threads=T isa=<notable features> features=<hash>
/// preload=<names> lib.<name>=<version>..." (cpu= and microcode= where the CPU and Linux show
/// them).
std::string DeviceFingerprint(const HostCpu& cpu, int threads,
                              const std::vector<PreloadedLibrary>& preloaded,
                              const LibraryVersions& libraries = {});

/// The capabilities of this host's CPU worker (`threads` <= 0 means all cores).
v1::Capabilities HostCpuCapabilities(int threads, int capacity,
                                     const std::vector<PreloadedLibrary>& preloaded,
                                     const LibraryVersions& libraries = {});

}  // namespace tune::rpc
