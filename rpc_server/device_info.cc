#include "rpc_server/device_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include "common/element_type.h"
#include "common/fingerprint.h"
#include "common/gpu_arch.h"
#include "common/host.h"
#include "common/strings.h"
#include "common/target.h"
#include "common/version.h"
#include "rpc_server/gpu/reference_ptx.h"

namespace tune::rpc {
namespace {

// The vector and matrix features that matter most for kernel speed, shown by name in the
// fingerprint; the full list only enters through its hash.
constexpr std::array<std::string_view, 9> kNotableFeatures = {
    "avx2",       "fma",      "avx512f",  "avx512vnni", "avx512bf16",
    "avx512fp16", "amx-tile", "amx-bf16", "amx-int8"};

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

// The fingerprint's preload= (the preloaded files' names) and lib.<name>= fields.
void SetLibraries(const std::vector<PreloadedLibrary>& preloaded, const LibraryVersions& libraries,
                  Fingerprint* fp) {
  std::vector<std::string> names;
  for (const PreloadedLibrary& lib : preloaded) {
    names.push_back(lib.basename);
  }
  fp->Set("preload", Join(names, ","));
  for (const auto& [name, version] : libraries) {
    fp->Set(StrCat("lib.", name), version);
  }
}

// Capabilities.dtypes: the names of `dtypes`, sorted.
void SetDtypes(DtypeSet dtypes, v1::Capabilities* caps) {
  std::vector<std::string> names;
  for (Dtype d : dtypes.ToVector()) {
    names.emplace_back(DtypeName(d));
  }
  std::sort(names.begin(), names.end());
  caps->clear_dtypes();
  for (std::string& name : names) {
    caps->add_dtypes(std::move(name));
  }
}

}  // namespace

std::string DeviceSpec::ToString() const {
  switch (kind) {
    case TargetKind::kLlvm:
      return "cpu";
    case TargetKind::kCuda:
      return StrCat("cuda:", index);
    case TargetKind::kRocm:
      return StrCat("rocm:", index);
  }
  return "cpu";
}

absl::StatusOr<DeviceSpec> ParseDeviceSpec(std::string_view device) {
  auto bad = [&] {
    return absl::InvalidArgumentError(
        StrCat("--device '", device,
               "' is not recognised; accepted: cpu, cuda:N or rocm:N (N the device ordinal, "
               "e.g. cuda:0)"));
  };
  if (device == "cpu") {
    return DeviceSpec{};
  }
  std::string_view kind_text = device.substr(0, device.find(':'));
  DeviceSpec spec;
  if (kind_text == "cuda") {
    spec.kind = TargetKind::kCuda;
  } else if (kind_text == "rocm") {
    spec.kind = TargetKind::kRocm;
  } else {
    return bad();
  }
  if (kind_text.size() == device.size()) {
    return spec;  // "cuda" alone: device 0
  }
  std::string_view digits = device.substr(kind_text.size() + 1);
  if (digits.empty() || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad();
  }
  spec.index = 0;
  for (char c : digits) {
    spec.index = spec.index * 10 + (c - '0');
  }
  return spec;
}

std::string GpuDeviceKey(const v1::GpuDevice& gpu) {
  return StrCat(gpu.runtime(), "/", gpu.arch());
}

absl::Status CheckGpuArchSupported(const v1::GpuDevice& gpu) {
  Target target;
  target.kind = gpu.runtime() == "rocm" ? TargetKind::kRocm : TargetKind::kCuda;
  target.cpu = gpu.arch();
  if (GpuArchFor(target).ok()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(StrCat(
      gpu.runtime(), ":", gpu.index(), " (", gpu.name(), ") is ", gpu.arch(),
      ", which tune does not generate code for; supported: ", SupportedGpuArchNames(target.kind)));
}

std::string GpuDeviceFingerprint(const v1::GpuDevice& gpu,
                                 const std::vector<PreloadedLibrary>& preloaded,
                                 const LibraryVersions& libraries) {
  Fingerprint fp(GpuDeviceKey(gpu));
  fp.Set("gpu", gpu.name());
  fp.Set("sms", std::to_string(gpu.multiprocessors()));
  fp.Set("mem",
         fmt::format("{:.1f}GiB", static_cast<double>(gpu.total_memory_bytes()) / (1 << 30)));
  fp.Set("sm_clock", fmt::format("{}MHz", gpu.sm_clock_khz() / 1000));
  fp.Set("mem_clock", fmt::format("{}MHz", gpu.memory_clock_khz() / 1000));
  fp.Set("l2", fmt::format("{:.1f}MiB", static_cast<double>(gpu.l2_cache_bytes()) / (1 << 20)));
  fp.Set("driver", gpu.driver_release());
  // cuDriverGetVersion's 13000 is CUDA 13.0; hipDriverGetVersion's 60241134 is HIP 6.2.
  const int api = gpu.driver_version();
  fp.Set(gpu.runtime() == "rocm" ? "hip" : "cuda",
         gpu.runtime() == "rocm" ? fmt::format("{}.{}", api / 10000000, api / 100000 % 100)
                                 : fmt::format("{}.{}", api / 1000, api % 1000 / 10));
  SetLibraries(preloaded, libraries, &fp);
  return fp.ToString();
}

v1::Capabilities GpuCapabilities(const v1::GpuDevice& gpu, int threads, int capacity,
                                 const std::vector<PreloadedLibrary>& preloaded,
                                 const LibraryVersions& libraries) {
  v1::Capabilities caps = HostCpuCapabilities(threads, capacity, preloaded);
  *caps.mutable_gpu() = gpu;
  // What the measurement child references there: on CUDA the device kernels' dtypes
  // (gpu/reference_ptx.h; fp8 from sm_89 on, the first with fp8 conversions; the integer
  // kernels on every arch), on ROCm the
  // host's (every dtype). Which ones the GPU runs at all is checked at submit time.
  if (gpu.runtime() == "cuda") {
    DtypeSet dtypes = gpu::CudaReferenceDtypes();
    const int sm = gpu.arch().starts_with("sm_") ? std::atoi(gpu.arch().c_str() + 3) : 0;
    if (sm < 89) {
      dtypes = dtypes & DtypeSet{Dtype::kF32,  Dtype::kTf32, Dtype::kF16,
                                 Dtype::kBf16, Dtype::kI8,   Dtype::kU8I8};
    }
    SetDtypes(dtypes, &caps);
  }
  caps.set_device_fingerprint(GpuDeviceFingerprint(gpu, preloaded, libraries));
  return caps;
}

std::string HostCpuDeviceKey() {
  Target target;
  target.kind = TargetKind::kLlvm;
  target.cpu = GetHostCpu().name;
  return target.DeviceKey();
}

std::string DeviceFingerprint(const HostCpu& cpu, int threads,
                              const std::vector<PreloadedLibrary>& preloaded,
                              const LibraryVersions& libraries) {
  std::vector<std::string> notable;
  for (std::string_view f : kNotableFeatures) {
    if (cpu.HasFeature(std::string(f))) {
      notable.emplace_back(f);
    }
  }
  Target target;
  target.cpu = cpu.name;
  Fingerprint fp(target.DeviceKey());
  fp.Set("cpu", cpu.model);
  fp.Set("microcode", cpu.microcode);
  fp.Set("cores", std::to_string(cpu.cores));
  fp.Set("threads", std::to_string(threads > 0 ? threads : cpu.cores));
  fp.Set("isa", notable.empty() ? "-" : Join(notable, ","));
  fp.Set("features", fmt::format("{:08x}", Fnv1a(Join(cpu.features, ","))));
  SetLibraries(preloaded, libraries, &fp);
  return fp.ToString();
}

v1::Capabilities HostCpuCapabilities(int threads, int capacity,
                                     const std::vector<PreloadedLibrary>& preloaded,
                                     const LibraryVersions& libraries) {
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
  caps.set_device_fingerprint(DeviceFingerprint(cpu, threads, preloaded, libraries));
  // The measurement child generates, references and checks every element type on the host.
  SetDtypes(DtypeSet::All(), &caps);
  return caps;
}

}  // namespace tune::rpc
