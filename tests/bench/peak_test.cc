// bench/peak.h: every instruction set this CPU has is measured (a chain count of its kernels,
// as many runs as asked, positive rates); the others are refused naming what the CPU lacks.
#include "bench/peak.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/host_cpu.h"

namespace tune::bench {
namespace {

// The CPU features each ISA needs (HostCpu's names), as a user would check them.
std::vector<std::string> Needs(PeakIsa isa) {
  switch (isa) {
    case PeakIsa::kAvx2:
      return {"avx2", "fma"};
    case PeakIsa::kAvx512:
      return {"avx512f"};
    case PeakIsa::kAvx512Fp16:
      return {"avx512fp16"};
    case PeakIsa::kAvx512Bf16:
      return {"avx512bf16"};
    case PeakIsa::kAvx512Vnni:
      return {"avx512vnni"};
    case PeakIsa::kAmxBf16:
      return {"amx-tile", "amx-bf16"};
    case PeakIsa::kAmxInt8:
      return {"amx-tile", "amx-int8"};
  }
  return {};
}

TEST(CpuPeak, MeasuresEveryIsaThisCpuHasAndNamesWhatItLacksForTheOthers) {
  PeakOptions options;
  options.runs = 2;
  options.run_s = 0.002;
  options.warmup_s = 0.001;
  options.threads = 1;
  const HostCpu& cpu = GetHostCpu();
  int measured = 0;
  for (PeakIsa isa : AllPeakIsas()) {
    SCOPED_TRACE(PeakIsaName(isa));
    std::string lacking;
    for (const std::string& f : Needs(isa)) {
      if (!cpu.HasFeature(f)) {
        lacking = f;
      }
    }
    std::string why_not;
    const std::optional<Peak> peak = MeasurePeak(isa, options, &why_not);
    if (!lacking.empty()) {
      ASSERT_FALSE(peak.has_value());
      EXPECT_NE(why_not.find(lacking), std::string::npos) << why_not;
      continue;
    }
    if (!peak && why_not.find("arch_prctl") != std::string::npos) {
      continue;  // AMX the kernel does not grant: named, not measured
    }
    ASSERT_TRUE(peak.has_value()) << why_not;
    ++measured;
    EXPECT_EQ(peak->isa, isa);
    EXPECT_GT(peak->chains, 0);
    EXPECT_EQ(peak->one_core_runs.size(), 2u);
    EXPECT_EQ(peak->all_core_runs.size(), 2u);
    EXPECT_EQ(peak->threads, 1);
    EXPECT_GT(peak->one_core_gops, 0);
    EXPECT_GT(peak->all_core_gops, 0);
  }
  // Every x86-64 machine tune runs on has AVX2 at least.
  EXPECT_GE(measured, 1);
}

TEST(CpuPeak, NamesEachIsasElementType) {
  EXPECT_STREQ(PeakDtype(PeakIsa::kAvx512), "f32");
  EXPECT_STREQ(PeakDtype(PeakIsa::kAvx512Bf16), "bf16");
  EXPECT_STREQ(PeakDtype(PeakIsa::kAmxInt8), "i8");
  EXPECT_TRUE(PeakIsInteger(PeakIsa::kAvx512Vnni));
  EXPECT_FALSE(PeakIsInteger(PeakIsa::kAmxBf16));
  EXPECT_STREQ(PeakIsaName(PeakIsa::kAmxBf16), "amx-bf16");
}

}  // namespace
}  // namespace tune::bench
