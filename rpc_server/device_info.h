// What this worker is: its device key, the capabilities it registers with and the fingerprint
// stamped on every measurement. CPU only for now; CUDA and ROCm devices are recognised by name
// and refused until their runtimes are built in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/host_cpu.h"
#include "rpc_server/preload.h"
#include "tune/v1/worker.pb.h"

namespace tune::rpc {

/// Checks the --device flag. "cpu" is OK; "cuda" and "rocm" are Unimplemented ("not built into
/// this worker yet"); anything else is InvalidArgument naming the accepted values.
absl::Status CheckDeviceKind(std::string_view device);

/// The device key of this host's CPU, e.g. "cpu/x86_64/znver4" (the same text that
/// Target::DeviceKey() gives for "llvm -mcpu=native").
std::string HostCpuDeviceKey();

/// A one-line description of what runs the kernels:
/// "<device key> cores=N threads=T isa=<notable features> features=<hash> preload=<names>".
std::string DeviceFingerprint(const HostCpu& cpu, int threads,
                              const std::vector<PreloadedLibrary>& preloaded);

/// The capabilities of this host's CPU worker (`threads` <= 0 means all cores).
v1::Capabilities HostCpuCapabilities(int threads, int capacity,
                                     const std::vector<PreloadedLibrary>& preloaded);

}  // namespace tune::rpc
