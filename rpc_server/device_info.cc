#include "rpc_server/device_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>

#include "common/host.h"
#include "common/strings.h"
#include "common/target.h"
#include "common/version.h"

namespace tune::rpc {
namespace {

// The features that matter most for kernel speed, shown by name in the fingerprint; the full
// list only enters through its hash.
constexpr std::array<std::string_view, 6> kNotableFeatures = {"avx2",       "fma",      "avx512f",
                                                              "avx512vnni", "amx-tile", "amx-bf16"};

uint32_t Fnv1a(std::string_view text) {
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::string MachineName() {
  utsname u{};
  if (uname(&u) != 0) {
    return "x86_64";
  }
  return u.machine;
}

}  // namespace

absl::Status CheckDeviceKind(std::string_view device) {
  if (device == "cpu") {
    return absl::OkStatus();
  }
  if (device == "cuda" || device == "rocm") {
    return absl::UnimplementedError(
        StrCat("--device ", device, ": the ", device,
               " runtime is not built into this worker yet; accepted: cpu"));
  }
  return absl::InvalidArgumentError(
      StrCat("--device '", device, "' is not recognised; accepted: cpu (cuda, rocm later)"));
}

std::string HostCpuDeviceKey() {
  Target target;
  target.kind = TargetKind::kLlvm;
  target.cpu = GetHostCpu().name;
  return target.DeviceKey();
}

std::string DeviceFingerprint(const HostCpu& cpu, int threads,
                              const std::vector<PreloadedLibrary>& preloaded) {
  std::vector<std::string> notable;
  for (std::string_view f : kNotableFeatures) {
    if (cpu.HasFeature(std::string(f))) {
      notable.emplace_back(f);
    }
  }
  std::vector<std::string> names;
  for (const PreloadedLibrary& lib : preloaded) {
    names.push_back(lib.basename);
  }
  Target target;
  target.cpu = cpu.name;
  std::string out =
      fmt::format("{} cores={} threads={} isa={} features={:08x}", target.DeviceKey(), cpu.cores,
                  threads > 0 ? threads : cpu.cores, notable.empty() ? "-" : Join(notable, ","),
                  Fnv1a(Join(cpu.features, ",")));
  if (!names.empty()) {
    StrAppend(&out, " preload=", Join(names, ","));
  }
  return out;
}

v1::Capabilities HostCpuCapabilities(int threads, int capacity,
                                     const std::vector<PreloadedLibrary>& preloaded) {
  const HostCpu& cpu = GetHostCpu();
  v1::Capabilities caps;
  caps.set_isa(MachineName());
  for (const std::string& f : cpu.features) {
    caps.add_features(f);
  }
  caps.set_cores(cpu.cores);
  caps.set_threads(threads > 0 ? threads : cpu.cores);
  for (const PreloadedLibrary& lib : preloaded) {
    v1::PreloadedLibrary* out = caps.add_preloaded_libraries();
    out->set_path(lib.path);
    out->set_basename(lib.basename);
  }
  caps.set_capacity(capacity > 0 ? capacity : 1);
  caps.set_tune_version(kTuneVersion);
  caps.set_hostname(HostName());
  caps.set_pid(getpid());
  caps.set_cpu_name(cpu.name);
  caps.set_device_fingerprint(DeviceFingerprint(cpu, threads, preloaded));
  return caps;
}

}  // namespace tune::rpc
