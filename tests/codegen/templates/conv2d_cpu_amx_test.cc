#include "codegen/templates/conv2d_cpu_amx.h"

#include <random>
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "codegen/templates/conv2d_cpu_amx_nest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"

namespace tune {
namespace {

using testing::CheckKernels;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::KernelCase;

Target ParseTarget(const std::string& text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

TEST(Conv2dCpuAmx, AppliesOnlyToCpusWithAmxAndComesBeforeTheDotProducts) {
  const Workload w =
      ParseWorkload("conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,pad=1,layout=NHWC,dtype=bf16");
  std::vector<std::string> names;
  for (const KernelTemplate* t :
       Catalog::BuiltIn().TemplatesFor(w, ParseTarget("llvm -mcpu=sapphirerapids -threads=1"))) {
    names.emplace_back(t->name);
  }
  EXPECT_THAT(names, ElementsAre("conv2d.cpu.amx", "conv2d.cpu.dot"));
  const Target zen = ParseTarget("llvm -mcpu=znver4 -threads=1");
  names.clear();
  for (const KernelTemplate* t : Catalog::BuiltIn().TemplatesFor(w, zen)) {
    names.emplace_back(t->name);
  }
  EXPECT_THAT(names, ElementsAre("conv2d.cpu.dot"));
  absl::StatusOr<ir::LoweredFunc> refused =
      kConv2dCpuAmx.build(w, zen, kConv2dCpuAmx.default_config(w, zen), "k");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("needs AMX (amx-tile and amx-bf16)"));
  EXPECT_THAT(kConv2dCpuAmx.worker_features(
                  ParseWorkload("conv2d:N=1,C=64,H=8,W=8,K=64,R=1,S=1,layout=NHWC,dtype=u8i8"),
                  ParseTarget("llvm -mcpu=sapphirerapids")),
              ElementsAre("amx-tile", "amx-int8"));
}

// Every dtype's tile product in every layout, the request for the tiles' state, and the parallel
// body configuring its own tiles.
TEST(Conv2dCpuAmx, EmitsTheTileProductOfEachDtypeInEveryLayout) {
  const Target spr = ParseTarget("llvm -mcpu=sapphirerapids -threads=1");
  for (const auto& [text, instruction] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d:N=1,C=40,H=9,W=9,K=40,R=3,S=3,pad=1,layout=NHWC,dtype=bf16", "tdpbf16ps"},
           {"conv2d:N=1,C=32,H=9,W=9,K=48,R=3,S=3,stride=2,layout=NCHW16c,dtype=i8", "tdpbssd"},
           {"conv2d:N=1,C=8,H=9,W=9,K=20,R=1,S=1,dtype=u8i8,out=f32", "tdpbusd"},
           {"conv2d:N=1,C=64,H=7,W=7,K=32,R=1,S=1,layout=NHWC,dtype=u8i8,epilogue=requant",
            "tdpbusd"}}) {
    const Workload w = ParseWorkload(text);
    absl::StatusOr<std::string> assembly =
        testing::AssemblyOf(kConv2dCpuAmx, w, spr, kConv2dCpuAmx.default_config(w, spr));
    ASSERT_TRUE(assembly.ok()) << assembly.status();
    for (const std::string& want : {instruction, std::string("ldtilecfg"), std::string("tileloadd"),
                                    std::string("tilestored"), std::string("tilerelease")}) {
      EXPECT_THAT(*assembly, HasSubstr(want)) << text;
    }
    EXPECT_THAT(*assembly, HasSubstr("$-20")) << text;  // TUNE_CPU_ERROR_AMX_DENIED
  }
  const Target four = ParseTarget("llvm -mcpu=sapphirerapids -threads=4");
  const Workload w =
      ParseWorkload("conv2d:N=2,C=64,H=14,W=14,K=64,R=3,S=3,pad=1,layout=NHWC,dtype=bf16");
  absl::StatusOr<std::string> assembly =
      testing::AssemblyOf(kConv2dCpuAmx, w, four, kConv2dCpuAmx.default_config(w, four));
  ASSERT_TRUE(assembly.ok()) << assembly.status();
  EXPECT_THAT(*assembly, HasSubstr("GOMP_parallel"));
}

// The rows of the implicit GEMM: every position of one phase of the padded image, read in place
// only for a pointwise NHWC layer of whole tile steps with a register block of pixels.
TEST(Conv2dCpuAmx, PlansPhasedCopiesAndReadsOnlyWholePointwiseNhwcLayersInPlace) {
  const Target spr = ParseTarget("llvm -mcpu=sapphirerapids -threads=1");
  const ConvAmxPlan strided = ConvAmxPlanOf(
      ParseWorkload("conv2d:N=2,C=64,H=56,W=56,K=128,R=3,S=3,stride=2,pad=1,layout=NHWC,"
                    "dtype=bf16"),
      spr, 2, 2, 96, false);
  EXPECT_FALSE(strided.in_place);
  EXPECT_EQ(strided.phase_h, 2);
  EXPECT_EQ(strided.phase_w, 2);
  EXPECT_EQ(strided.hs, 29);  // (56 + 2) / 2
  EXPECT_EQ(strided.rows, 2 * 29 * 29);
  const ConvAmxPlan pointwise =
      ConvAmxPlanOf(ParseWorkload("conv2d:N=1,C=256,H=14,W=14,K=64,R=1,S=1,layout=NHWC,dtype=u8i8"),
                    spr, 3, 1, 96, false);
  EXPECT_TRUE(pointwise.in_place);
  EXPECT_EQ(pointwise.rows, 196);
  EXPECT_EQ(pointwise.cp, 256);
  // 48 channels are not whole steps of 64 bytes of u8; NCHW16c is not NHWC.
  EXPECT_FALSE(ConvAmxReadsInPlace(
      ParseWorkload("conv2d:N=1,C=48,H=14,W=14,K=64,R=1,S=1,layout=NHWC,dtype=u8i8"), 1));
  EXPECT_FALSE(ConvAmxReadsInPlace(
      ParseWorkload("conv2d:N=1,C=64,H=14,W=14,K=64,R=1,S=1,layout=NCHW16c,dtype=bf16"), 1));
  EXPECT_FALSE(ConvAmxReadsInPlace(
      ParseWorkload("conv2d:N=1,C=64,H=3,W=3,K=64,R=1,S=1,layout=NHWC,dtype=bf16"), 1));
}

// Odd sizes: channels not whole tile steps (3, 5, 40), output channels not whole panels, rows not
// whole register blocks; stride, dilation and padding; every layout, dtype and output.
TEST(Conv2dCpuAmx, RandomConfigsComputeTheReferenceInEveryLayoutDtypeAndOutput) {
  if (!testing::HostRunsAmx()) {
    GTEST_SKIP() << "the host has no AMX; the kernels are built and inspected above";
  }
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  const std::vector<KernelCase> cases = testing::RandomCases(
      kConv2dCpuAmx, target,
      {"conv2d:N=2,C=5,H=9,W=11,K=37,R=3,S=3,pad=1,layout=NHWC,dtype=bf16",
       "conv2d:N=1,C=16,H=10,W=9,K=32,R=3,S=3,stride=2,pad=1,layout=NCHW16c,dtype=bf16",
       "conv2d:N=1,C=6,H=8,W=7,K=20,R=3,S=2,dilation=2,pad=2,dtype=bf16,out=f32",
       "conv2d:N=2,C=40,H=7,W=9,K=40,R=3,S=3,pad=1,layout=NHWC,dtype=i8",
       "conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=2,layout=NCHW8c,dtype=i8,out=f32",
       "conv2d:N=1,C=3,H=15,W=15,K=24,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=u8i8",
       "conv2d:N=1,C=32,H=7,W=5,K=48,R=1,S=1,layout=NCHW16c,dtype=u8i8,out=f32"},
      4, 17);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuAmx, cases), IsEmpty());
}

// Pointwise NHWC layers read in place, the last register block moved back over pixels already
// written; strided pointwise layers through the phased copy.
TEST(Conv2dCpuAmx, PointwiseLayersComputeTheReferenceInPlaceAndStrided) {
  if (!testing::HostRunsAmx()) {
    GTEST_SKIP() << "the host has no AMX";
  }
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  const std::vector<KernelCase> cases = testing::RandomCases(
      kConv2dCpuAmx, target,
      {"conv2d:N=1,C=64,H=7,W=7,K=48,R=1,S=1,layout=NHWC,dtype=bf16,epilogue=bias_relu",
       "conv2d:N=2,C=128,H=5,W=9,K=64,R=1,S=1,layout=NHWC,dtype=i8",
       "conv2d:N=1,C=64,H=14,W=14,K=96,R=1,S=1,stride=2,layout=NHWC,dtype=u8i8,"
       "epilogue=requant"},
      4, 5);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuAmx, cases), IsEmpty());
}

TEST(Conv2dCpuAmx, EveryValueOfEveryKnobComputesTheReference) {
  if (!testing::HostRunsAmx()) {
    GTEST_SKIP() << "the host has no AMX";
  }
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  for (const char* text :
       {"conv2d:N=1,C=32,H=20,W=20,K=80,R=3,S=3,pad=1,layout=NHWC,dtype=bf16,epilogue=bias",
        "conv2d:N=1,C=64,H=30,W=30,K=64,R=1,S=1,layout=NCHW16c,dtype=i8"}) {
    const Workload w = ParseWorkload(text);
    std::mt19937_64 rng(3);
    std::vector<std::string> unreachable;
    std::vector<KernelCase> cases;
    for (const Config& c :
         testing::ConfigsCoveringEveryKnobValue(kConv2dCpuAmx, w, target, rng, &unreachable)) {
      cases.push_back({w, c});
    }
    EXPECT_THAT(unreachable, IsEmpty()) << text;
    EXPECT_THAT(CheckKernels(target, kConv2dCpuAmx, cases), IsEmpty()) << text;
  }
}

TEST(Conv2dCpuAmx, RequantisedPreparedAndThreadedKernelsComputeTheReference) {
  if (!testing::HostRunsAmx()) {
    GTEST_SKIP() << "the host has no AMX";
  }
  const Target one = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases = testing::RandomCases(
      kConv2dCpuAmx, one,
      {"conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,pad=1,layout=NHWC,dtype=i8,epilogue=requant",
       "conv2d:N=1,C=16,H=7,W=7,K=48,R=3,S=3,pad=1,layout=NCHW16c,dtype=u8i8,epilogue=requant",
       "conv2d:N=1,C=10,H=9,W=9,K=30,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=bf16,"
       "weights=prepared",
       "conv2d:N=1,C=16,H=6,W=6,K=32,R=3,S=3,pad=1,layout=NCHW16c,dtype=i8,weights=prepared"},
      3, 23);
  EXPECT_THAT(CheckKernels(one, kConv2dCpuAmx, cases), IsEmpty());
  const Target four = ParseTarget("llvm -mcpu=native -threads=4");
  for (const char* text :
       {"conv2d:N=2,C=64,H=14,W=14,K=64,R=3,S=3,pad=1,layout=NHWC,dtype=bf16",
        "conv2d:N=1,C=64,H=14,W=14,K=48,R=1,S=1,layout=NHWC,dtype=i8,epilogue=requant"}) {
    const Workload w = ParseWorkload(text);
    Config c = kConv2dCpuAmx.default_config(w, four);
    EXPECT_THAT(CheckKernels(four, kConv2dCpuAmx, {{w, c}}), IsEmpty()) << text;
    c["order"] = 1;
    EXPECT_THAT(CheckKernels(four, kConv2dCpuAmx, {{w, c}}), IsEmpty()) << text;
  }
}

}  // namespace
}  // namespace tune
