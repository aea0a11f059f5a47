#include "codegen/templates/cpu_vector_info.h"

#include <algorithm>
#include <array>

#include "common/host_cpu.h"

namespace tune {
namespace {

// LLVM CPU names by vector unit. Names missing from both lists fall back to SSE.
constexpr std::array<std::string_view, 17> kAvx512Cpus = {"skylake-avx512",
                                                          "cascadelake",
                                                          "cooperlake",
                                                          "cannonlake",
                                                          "icelake-client",
                                                          "icelake-server",
                                                          "tigerlake",
                                                          "rocketlake",
                                                          "sapphirerapids",
                                                          "emeraldrapids",
                                                          "graniterapids",
                                                          "graniterapids-d",
                                                          "diamondrapids",
                                                          "znver4",
                                                          "znver5",
                                                          "x86-64-v4",
                                                          "knl"};
constexpr std::array<std::string_view, 19> kAvx2FmaCpus = {
    "haswell",    "broadwell",        "skylake",   "alderlake",   "raptorlake", "meteorlake",
    "arrowlake",  "arrowlake-s",      "lunarlake", "pantherlake", "gracemont",  "sierraforest",
    "grandridge", "clearwaterforest", "znver1",    "znver2",      "znver3",     "x86-64-v3",
    "bdver4"};
constexpr std::array<std::string_view, 2> kAvxCpus = {"sandybridge", "ivybridge"};
// Their matrix instructions (LLVM's X86TargetParser feature lists).
constexpr std::array<std::string_view, 5> kAmxCpus = {
    "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "diamondrapids"};
constexpr std::array<std::string_view, 3> kAvx512Bf16Cpus = {"cooperlake", "znver4", "znver5"};
constexpr std::array<std::string_view, 6> kAvx512VnniCpus = {
    "cascadelake", "cooperlake", "icelake-client", "icelake-server", "tigerlake", "rocketlake"};

template <size_t N>
bool Contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

CpuVectorInfo CpuVectorInfoForName(std::string_view cpu) {
  if (Contains(kAvx512Cpus, cpu)) {
    const bool amx = Contains(kAmxCpus, cpu);
    const bool bf16 = amx || Contains(kAvx512Bf16Cpus, cpu);
    return {.lanes = 16,
            .registers = 32,
            .fma = true,
            .avx512bf16 = bf16,
            .avx512vnni = bf16 || Contains(kAvx512VnniCpus, cpu),
            .avx512fp16 = amx,
            .amx_bf16 = amx,
            .amx_int8 = amx};
  }
  if (Contains(kAvx2FmaCpus, cpu)) {
    return {.lanes = 8, .registers = 16, .fma = true};
  }
  if (Contains(kAvxCpus, cpu)) {
    return {.lanes = 8, .registers = 16, .fma = false};
  }
  return {.lanes = 4, .registers = 16, .fma = false};
}

CpuVectorInfo CpuVectorInfoFor(const Target& target) {
  if (target.cpu != "native") {
    return CpuVectorInfoForName(target.cpu);
  }
  const HostCpu& host = GetHostCpu();
  CpuVectorInfo info;
  info.fma = host.HasFeature("fma");
  if (host.HasFeature("avx512f")) {
    info.lanes = 16;
    info.registers = 32;
  } else if (host.HasFeature("avx")) {
    info.lanes = 8;
  }
  info.avx512bf16 = host.HasFeature("avx512bf16");
  info.avx512vnni = host.HasFeature("avx512vnni");
  info.avx512fp16 = host.HasFeature("avx512fp16");
  info.amx_bf16 = host.HasFeature("amx-tile") && host.HasFeature("amx-bf16");
  info.amx_int8 = host.HasFeature("amx-tile") && host.HasFeature("amx-int8");
  return info;
}

BlockVectors VectorsOfBlock(int64_t block, int lanes) {
  const int64_t width = std::min<int64_t>(block, lanes);
  return {width, block / width};
}

}  // namespace tune
