#include "common/host_cpu.h"

#include <cpuid.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

#include "common/cpu_amx.h"

namespace tune {
namespace {

struct Regs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs Cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  Regs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

bool Bit(uint32_t reg, int bit) { return (reg >> bit) & 1u; }

// XCR0: the register state the operating system saves on a context switch, so that a process
// may use it (xgetbv needs OSXSAVE).
uint64_t Xcr0() {
  uint32_t lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// Maps family/model to LLVM's CPU names for the server-class parts tune targets; unknown
// models fall back to an x86-64 micro-architecture level, which LLVM also accepts.
std::string ModelName(bool intel, bool amd, uint32_t family, uint32_t model) {
  if (amd) {
    if (family == 0x17) {
      return model >= 0x30 ? "znver2" : "znver1";
    }
    if (family == 0x19) {
      if ((model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x7f) ||
          (model >= 0xa0 && model <= 0xaf)) {
        return "znver4";
      }
      return "znver3";
    }
    if (family == 0x1a) {
      return "znver5";
    }
  }
  if (intel && family == 6) {
    switch (model) {
      case 0x3c:
      case 0x3f:
      case 0x45:
      case 0x46:
        return "haswell";
      case 0x3d:
      case 0x47:
      case 0x4f:
      case 0x56:
        return "broadwell";
      case 0x4e:
      case 0x5e:
      case 0x8e:
      case 0x9e:
        return "skylake";
      case 0x55:
        return "skylake-avx512";
      case 0x6a:
      case 0x6c:
        return "icelake-server";
      case 0x8f:
      case 0xcf:  // Emerald Rapids: LLVM's host detection names it sapphirerapids
        return "sapphirerapids";
      case 0xad:
      case 0xae:
        return "graniterapids";
      default:
        break;
    }
  }
  return "";
}

// CPUID's brand string, trimmed; empty where the CPU has none.
std::string BrandString() {
  if (Cpuid(0x80000000).eax < 0x80000004) {
    return "";
  }
  char brand[49] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    Regs r = Cpuid(0x80000002 + i);
    std::copy_n(reinterpret_cast<char*>(&r), 16, brand + 16 * i);
  }
  std::string text(brand);
  const size_t first = text.find_first_not_of(' ');
  const size_t last = text.find_last_not_of(' ');
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

// The first "microcode" line of /proc/cpuinfo; empty where there is none.
std::string Microcode() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("microcode")) {
      const size_t colon = line.find(':');
      const size_t value =
          colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
      return value == std::string::npos ? "" : line.substr(value);
    }
  }
  return "";
}

HostCpu Detect() {
  HostCpu cpu;
  Regs v = Cpuid(0);
  char vendor[13] = {};
  std::copy_n(reinterpret_cast<char*>(&v.ebx), 4, vendor);
  std::copy_n(reinterpret_cast<char*>(&v.edx), 4, vendor + 4);
  std::copy_n(reinterpret_cast<char*>(&v.ecx), 4, vendor + 8);
  std::string vendor_s(vendor);
  bool intel = vendor_s == "GenuineIntel";
  bool amd = vendor_s == "AuthenticAMD";

  Regs l1 = Cpuid(1);
  uint32_t family = (l1.eax >> 8) & 0xf;
  uint32_t model = (l1.eax >> 4) & 0xf;
  if (family == 0xf) {
    family += (l1.eax >> 20) & 0xff;
  }
  if (family == 0x6 || family >= 0xf) {
    model |= ((l1.eax >> 16) & 0xf) << 4;
  }

  Regs l7 = v.eax >= 7 ? Cpuid(7, 0) : Regs{};
  auto add = [&](bool present, const char* name) {
    if (present) {
      cpu.features.emplace_back(name);
    }
  };
  // A feature is listed where the CPU has it and the kernel saves its registers (LLVM's host
  // detection asks the same): AVX's ymm state (XCR0 bits 1-2), AVX-512's opmask and zmm state
  // (bits 5-7), AMX's tile configuration and data (bits 17-18). AMX's tile data also needs a
  // Linux that enables it per process (common/cpu_amx.h): a kernel that cannot does not list it,
  // and neither AMX feature is listed then.
  const uint64_t xcr0 = Bit(l1.ecx, 27) ? Xcr0() : 0;
  const bool avx_state = (xcr0 & 0x6) == 0x6;
  const bool avx512_state = avx_state && (xcr0 & 0xe0) == 0xe0;
  const bool amx_state = (xcr0 & 0x60000) == 0x60000 && Bit(l7.edx, 24) && KernelSupportsAmx();
  add(Bit(l1.ecx, 0), "sse3");
  add(Bit(l1.ecx, 9), "ssse3");
  add(Bit(l1.ecx, 19), "sse4.1");
  add(Bit(l1.ecx, 20), "sse4.2");
  add(Bit(l1.ecx, 23), "popcnt");
  add(avx_state && Bit(l1.ecx, 28), "avx");
  add(avx_state && Bit(l1.ecx, 12), "fma");
  add(avx_state && Bit(l1.ecx, 29), "f16c");
  add(Bit(l7.ebx, 3), "bmi");
  add(avx_state && Bit(l7.ebx, 5), "avx2");
  add(Bit(l7.ebx, 8), "bmi2");
  add(avx512_state && Bit(l7.ebx, 16), "avx512f");
  add(avx512_state && Bit(l7.ebx, 17), "avx512dq");
  add(avx512_state && Bit(l7.ebx, 28), "avx512cd");
  add(avx512_state && Bit(l7.ebx, 30), "avx512bw");
  add(avx512_state && Bit(l7.ebx, 31), "avx512vl");
  add(avx512_state && Bit(l7.ecx, 11), "avx512vnni");
  add(amx_state && Bit(l7.edx, 22), "amx-bf16");
  add(avx512_state && Bit(l7.edx, 23), "avx512fp16");
  add(amx_state && Bit(l7.edx, 24), "amx-tile");
  add(amx_state && Bit(l7.edx, 25), "amx-int8");
  // Leaf 7's subleaf 1, where leaf 7 says it has one.
  const Regs l7_1 = l7.eax >= 1 ? Cpuid(7, 1) : Regs{};
  add(avx_state && Bit(l7_1.eax, 4), "avxvnni");
  add(avx512_state && Bit(l7_1.eax, 5), "avx512bf16");
  std::sort(cpu.features.begin(), cpu.features.end());

  cpu.name = ModelName(intel, amd, family, model);
  if (cpu.name.empty()) {
    auto has = [&](const char* f) { return cpu.HasFeature(f); };
    if (has("avx512f") && has("avx512bw") && has("avx512cd") && has("avx512dq") &&
        has("avx512vl")) {
      cpu.name = "x86-64-v4";
    } else if (has("avx2") && has("fma") && has("bmi2")) {
      cpu.name = "x86-64-v3";
    } else if (has("sse4.2") && has("popcnt")) {
      cpu.name = "x86-64-v2";
    } else {
      cpu.name = "x86-64";
    }
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpu.cores = n > 0 ? static_cast<int>(n) : 1;
  cpu.model = BrandString();
  cpu.microcode = Microcode();
  return cpu;
}

}  // namespace

bool HostCpu::HasFeature(const std::string& feature) const {
  return std::binary_search(features.begin(), features.end(), feature);
}

const HostCpu& GetHostCpu() {
  static const HostCpu cpu = Detect();
  return cpu;
}

}  // namespace tune
