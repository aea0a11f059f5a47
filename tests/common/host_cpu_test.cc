#include "common/host_cpu.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tune
