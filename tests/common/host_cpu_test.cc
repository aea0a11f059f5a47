#include "common/host_cpu.h"

#include <gtest/gtest.h>

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
