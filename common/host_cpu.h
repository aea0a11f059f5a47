// Host CPU identification without LLVM (tune-server never links LLVM): the CPU's LLVM name from
// CPUID, so that a worker's device key and a target's `-mcpu` speak the same names.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace tune {

/// The matrix features among HostCpu::features (sorted): the instructions of the typed
/// templates, which a template may need of a worker (KernelTemplate::worker_features).
inline constexpr std::array<std::string_view, 6> kMatrixFeatures = {
    "amx-bf16", "amx-int8", "amx-tile", "avx512bf16", "avx512fp16", "avx512vnni"};

struct HostCpu {
  std::string name;  // LLVM -mcpu name, e.g. "znver4", "sapphirerapids",
                     // or a level "x86-64-v3" when the model is not known
  // "avx2", "fma", "avx512f", ..., "avxvnni", the matrix features "avx512vnni", "avx512bf16",
  // "avx512fp16", "amx-tile", "amx-bf16", "amx-int8" (LLVM's names; sorted): what the CPU has
  // and the kernel saves the registers of (XCR0); AMX only where Linux can grant a process its
  // tile data. A process that runs AMX instructions must still ask for it once
  // (common/cpu_amx.h's RequestAmx), which this does not do.
  std::vector<std::string> features;
  int cores = 1;  // online logical CPUs
  // The processor's brand string (CPUID 0x80000002-4), e.g. "AMD EPYC 9B45 128-Core
  // Processor"; empty where the CPU has none.
  std::string model;
  // The microcode revision Linux reports (/proc/cpuinfo), e.g. "0xb002110"; empty where it is
  // not visible (some virtual machines).
  std::string microcode;
  bool HasFeature(const std::string& feature) const;
};

/// Describes the machine this process runs on (computed once, then cached).
const HostCpu& GetHostCpu();

}  // namespace tune
