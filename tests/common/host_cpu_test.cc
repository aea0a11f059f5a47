#include "common/host_cpu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "common/cpu_amx.h"
#include "common/runtime_libs.h"

namespace tune {
namespace {

TEST(HostCpuTest, NamesTheHostAndListsSortedFeatures) {
  const HostCpu& cpu = GetHostCpu();
  EXPECT_FALSE(cpu.name.empty());
  EXPECT_GE(cpu.cores, 1);
  EXPECT_TRUE(std::is_sorted(cpu.features.begin(), cpu.features.end()));
  // Every x86-64 machine tune supports has SSE4.2; AVX-512 implies AVX2.
  EXPECT_TRUE(cpu.HasFeature("sse4.2"));
  if (cpu.HasFeature("avx512f")) {
    EXPECT_TRUE(cpu.HasFeature("avx2"));
  }
}

TEST(HostCpuTest, ListsEveryMatrixFeatureTheKernelLists) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) {
        flags.insert(w);
      }
      break;
    }
  }
  if (flags.empty()) {
    GTEST_SKIP() << "/proc/cpuinfo lists no flags";
  }
  // The kernel's name of each feature, and tune's (LLVM's). The kernel may hide a feature the
  // CPU has (AMX where it cannot save the tiles), so only this direction must hold.
  const std::pair<const char*, const char*> names[] = {
      {"avx512f", "avx512f"},        {"avx512_vnni", "avx512vnni"}, {"avx512_bf16", "avx512bf16"},
      {"avx512_fp16", "avx512fp16"}, {"amx_tile", "amx-tile"},      {"amx_bf16", "amx-bf16"},
      {"amx_int8", "amx-int8"},      {"avx_vnni", "avxvnni"},
  };
  const HostCpu& cpu = GetHostCpu();
  for (const auto& [kernel_name, name] : names) {
    if (flags.contains(kernel_name)) {
      EXPECT_TRUE(cpu.HasFeature(name)) << name;
    }
  }
}

TEST(HostCpuTest, ListsAmxOnlyWhereLinuxGrantsThisProcessTheTileData) {
  const HostCpu& cpu = GetHostCpu();
  const absl::Status granted = RequestAmx();
  if (cpu.HasFeature("amx-tile")) {
    EXPECT_TRUE(KernelSupportsAmx());
    EXPECT_TRUE(granted.ok()) << granted;
    return;
  }
  EXPECT_FALSE(cpu.HasFeature("amx-bf16"));
  EXPECT_FALSE(cpu.HasFeature("amx-int8"));
  if (!KernelSupportsAmx()) {
    EXPECT_FALSE(granted.ok());
    EXPECT_THAT(granted.message(), ::testing::HasSubstr("arch_prctl(ARCH_REQ_XCOMP_PERM"));
  }
}

TEST(HostCpuTest, OpenblasGetsTheCoreOfTheWidestVectorsOnlyWhereItsOwnChoiceLacksThem) {
  const HostCpu& cpu = GetHostCpu();
  // An SSE3 fallback (Debian's OpenBLAS on Emerald Rapids) is replaced where wider vectors exist.
  std::optional<std::string> from_prescott = BetterOpenblasCoretype("Prescott");
  if (cpu.HasFeature("avx512f") && cpu.HasFeature("avx512bw") && cpu.HasFeature("avx512dq") &&
      cpu.HasFeature("avx512vl")) {
    EXPECT_EQ(from_prescott, "SkylakeX");
    EXPECT_EQ(BetterOpenblasCoretype("Haswell"), "SkylakeX");
    // Debian's 0.3.21 on an AVX-512 Zen 4 picks its AVX2 "Zen"; a later one picks Cooperlake.
    EXPECT_EQ(BetterOpenblasCoretype("Zen"), "SkylakeX");
    EXPECT_EQ(BetterOpenblasCoretype("Cooperlake"), std::nullopt);
    EXPECT_EQ(BetterOpenblasCoretype("SkylakeX"), std::nullopt);
    EXPECT_EQ(BetterOpenblasCoretype("SapphireRapids"), std::nullopt);
  } else if (cpu.HasFeature("avx2") && cpu.HasFeature("fma")) {
    EXPECT_EQ(from_prescott, "Haswell");
    EXPECT_EQ(BetterOpenblasCoretype("Zen"), std::nullopt);
  } else {
    EXPECT_EQ(from_prescott, std::nullopt);
  }
}

}  // namespace
}  // namespace tune
