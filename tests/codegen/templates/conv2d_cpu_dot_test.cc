#include "codegen/templates/conv2d_cpu_dot.h"

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "codegen/ir/printer.h"
#include "codegen/templates/catalog.h"
#include "common/host_cpu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"

namespace tune {
namespace {

using testing::CheckKernels;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::KernelCase;
using ::testing::Not;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

// Odd sizes: channel counts not a multiple of the group, output channels not a multiple of a
// panel, rows not a multiple of the pixel tile, stride, dilation and padding.
TEST(Conv2dCpuDot, RandomConfigsComputeTheReferenceInEveryLayoutDtypeAndOutput) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  const std::vector<KernelCase> cases = testing::RandomCases(
      kConv2dCpuDot, target,
      {"conv2d:N=2,C=5,H=9,W=11,K=37,R=3,S=3,pad=1,layout=NHWC,dtype=bf16",
       "conv2d:N=1,C=16,H=10,W=9,K=32,R=3,S=3,stride=2,pad=1,layout=NCHW16c,dtype=bf16",
       "conv2d:N=1,C=6,H=8,W=7,K=20,R=3,S=2,dilation=2,pad=2,dtype=bf16,out=f32",
       "conv2d:N=2,C=13,H=7,W=9,K=40,R=3,S=3,pad=1,layout=NHWC,dtype=i8",
       "conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=2,layout=NCHW8c,dtype=i8,out=f32",
       "conv2d:N=1,C=12,H=6,W=10,K=24,R=5,S=5,pad=2,dtype=u8i8",
       "conv2d:N=1,C=32,H=7,W=5,K=48,R=1,S=1,layout=NCHW16c,dtype=u8i8,out=f32"},
      4, 17);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDot, cases), IsEmpty());
}

// Where the padded copy's border is zero the sums leave out the filter rows, and in a row's first
// and last tiles the taps, that read it: rows and pixels all of border (padding beyond the
// filter's reach, a padded 1x1), strides, dilation, a stem-like 7x7 of three channels; i8's
// shifted border (128) keeps every tap. Each computes the reference.
TEST(Conv2dCpuDot, TapsThatReadTheBorderAreLeftOutAndTheSumsStayTheReference) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  const std::vector<std::string> workloads = {
      "conv2d:N=1,C=4,H=5,W=5,K=16,R=1,S=1,pad=1,layout=NHWC,dtype=bf16",
      "conv2d:N=1,C=6,H=4,W=4,K=16,R=3,S=3,pad=3,layout=NHWC,dtype=bf16,epilogue=bias_relu",
      "conv2d:N=2,C=8,H=7,W=7,K=32,R=3,S=3,pad=1,layout=NHWC,dtype=bf16",
      "conv2d:N=1,C=3,H=15,W=15,K=16,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16",
      "conv2d:N=1,C=8,H=6,W=7,K=16,R=3,S=3,stride=2,dilation=2,pad=3,layout=NHWC,dtype=u8i8",
      "conv2d:N=1,C=16,H=7,W=6,K=32,R=3,S=3,pad=1,layout=NCHW16c,dtype=bf16,weights=prepared",
      "conv2d:N=1,C=8,H=5,W=5,K=16,R=3,S=3,pad=2,layout=NHWC,dtype=i8"};
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDot,
                           testing::RandomCases(kConv2dCpuDot, target, workloads, 6, 43)),
              IsEmpty());
  // The filter rows a padded bf16 kernel runs depend on the output row; i8's run all three.
  for (const auto& [text, all_rows] :
       std::vector<std::pair<std::string, bool>>{{workloads[2], false}, {workloads[6], true}}) {
    const Workload w = ParseWorkload(text);
    absl::StatusOr<ir::LoweredFunc> built =
        kConv2dCpuDot.build(w, target, kConv2dCpuDot.default_config(w, target), "k");
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ(ir::ToText(*built).find("for.serial (r, 0, 3)") != std::string::npos, all_rows)
        << text;
  }
}

// Blocked input without a border is read in place, the reduction taken block by block of
// channels (several blocks and taps, strides, the 4-channel block holding one quad of u8i8).
TEST(Conv2dCpuDot, BlockedInputWithoutABorderIsReadInPlaceBlockByBlock) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  const std::vector<KernelCase> cases = testing::RandomCases(
      kConv2dCpuDot, target,
      {"conv2d:N=2,C=12,H=9,W=9,K=20,R=3,S=3,stride=2,layout=NCHW4c,dtype=bf16",
       "conv2d:N=1,C=32,H=8,W=8,K=32,R=3,S=3,layout=NCHW16c,dtype=bf16,epilogue=bias_relu",
       "conv2d:N=1,C=16,H=7,W=6,K=24,R=2,S=3,layout=NCHW4c,dtype=u8i8,weights=prepared",
       "conv2d:N=1,C=48,H=10,W=10,K=32,R=1,S=1,stride=2,layout=NCHW16c,dtype=u8i8,"
       "epilogue=requant"},
      3, 31);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDot, cases), IsEmpty());
}

// A pointwise layer is one row of pixels per image: tiles run across the image's rows, in place
// (NHWC with whole groups of channels) or through the padded copy (i8's shift, other layouts).
TEST(Conv2dCpuDot, PointwiseLayersRunTilesAcrossImageRows) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  const std::vector<KernelCase> cases = testing::RandomCases(
      kConv2dCpuDot, target,
      {"conv2d:N=2,C=24,H=5,W=7,K=33,R=1,S=1,layout=NHWC,dtype=bf16,epilogue=bias_relu",
       "conv2d:N=1,C=20,H=6,W=6,K=64,R=1,S=1,layout=NHWC,dtype=i8",
       "conv2d:N=1,C=7,H=9,W=3,K=18,R=1,S=1,dtype=bf16"},
      4, 5);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDot, cases), IsEmpty());
}

TEST(Conv2dCpuDot, EveryValueOfEveryKnobComputesTheReference) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  for (const char* text :
       {"conv2d:N=1,C=32,H=20,W=20,K=80,R=3,S=3,pad=1,layout=NHWC,dtype=bf16,epilogue=bias",
        "conv2d:N=1,C=64,H=30,W=30,K=64,R=1,S=1,layout=NCHW16c,dtype=i8"}) {
    const Workload w = ParseWorkload(text);
    std::mt19937_64 rng(3);
    std::vector<std::string> unreachable;
    std::vector<KernelCase> cases;
    for (const Config& c :
         testing::ConfigsCoveringEveryKnobValue(kConv2dCpuDot, w, target, rng, &unreachable)) {
      cases.push_back({w, c});
    }
    EXPECT_THAT(unreachable, IsEmpty()) << text;
    EXPECT_THAT(CheckKernels(target, kConv2dCpuDot, cases), IsEmpty()) << text;
  }
}

TEST(Conv2dCpuDot, RequantisedPreparedAndThreadedKernelsComputeTheReference) {
  const Target one = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases = testing::RandomCases(
      kConv2dCpuDot, one,
      {"conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,pad=1,layout=NHWC,dtype=i8,epilogue=requant",
       "conv2d:N=1,C=16,H=7,W=7,K=48,R=3,S=3,pad=1,layout=NCHW16c,dtype=u8i8,epilogue=requant",
       "conv2d:N=1,C=10,H=9,W=9,K=30,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=bf16,"
       "weights=prepared",
       "conv2d:N=1,C=16,H=6,W=6,K=32,R=3,S=3,pad=1,layout=NCHW16c,dtype=i8,weights=prepared"},
      3, 23);
  EXPECT_THAT(CheckKernels(one, kConv2dCpuDot, cases), IsEmpty());
  const Target four = ParseTarget("llvm -mcpu=native -threads=4");
  for (const char* text :
       {"conv2d:N=2,C=16,H=14,W=14,K=64,R=3,S=3,pad=1,layout=NHWC,dtype=bf16",
        "conv2d:N=1,C=32,H=14,W=14,K=48,R=1,S=1,layout=NHWC,dtype=i8,epilogue=requant"}) {
    const Workload w = ParseWorkload(text);
    Config c = kConv2dCpuDot.default_config(w, four);
    EXPECT_THAT(CheckKernels(four, kConv2dCpuDot, {{w, c}}), IsEmpty()) << text;
    c["order"] = 1;
    EXPECT_THAT(CheckKernels(four, kConv2dCpuDot, {{w, c}}), IsEmpty()) << text;
  }
}

TEST(Conv2dCpuDot, UsesVdpbf16psAndVpdpbusdWhereTheCpuHasThem) {
  struct Case {
    const char* workload;
    const char* instruction;
  };
  for (const Case& c :
       {Case{"conv2d:N=1,C=32,H=8,W=8,K=32,R=3,S=3,pad=1,layout=NHWC,dtype=bf16", "vdpbf16ps"},
        Case{"conv2d:N=1,C=32,H=8,W=8,K=32,R=3,S=3,pad=1,layout=NHWC,dtype=i8", "vpdpbusd"}}) {
    const Workload w = ParseWorkload(c.workload);
    for (const char* cpu : {"znver4", "skylake-avx512"}) {
      const Target target = *Target::Parse(std::string("llvm -mcpu=") + cpu + " -threads=1");
      absl::StatusOr<std::string> assembly =
          testing::AssemblyOf(kConv2dCpuDot, w, target, kConv2dCpuDot.default_config(w, target));
      ASSERT_TRUE(assembly.ok()) << assembly.status();
      if (std::string(cpu) == "znver4") {
        EXPECT_THAT(*assembly, HasSubstr(c.instruction)) << c.workload;
      } else {
        EXPECT_THAT(*assembly, Not(HasSubstr(c.instruction))) << c.workload << " on " << cpu;
      }
    }
  }
}

TEST(Conv2dCpuDot, F16ComputesTheReferenceWhereTheCpuHasAvx512Fp16) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  if (!GetHostCpu().HasFeature("avx512fp16")) {
    GTEST_SKIP() << "the host has no AVX512-FP16, which f16 needs";
  }
  const std::vector<KernelCase> cases = testing::RandomCases(
      kConv2dCpuDot, target,
      {"conv2d:N=1,C=6,H=9,W=9,K=20,R=3,S=3,pad=1,layout=NHWC,dtype=f16",
       "conv2d:N=1,C=16,H=7,W=7,K=32,R=3,S=3,pad=1,layout=NCHW16c,dtype=f16,out=f32"},
      3, 29);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDot, cases), IsEmpty());
}

// Kernels that use vdpbf16ps, vpdpbusd or AVX512-FP16 go only to workers that report them; on a
// target without them the plain vector code needs nothing.
TEST(Conv2dCpuDot, KernelsUsingTheDotInstructionsGoOnlyToWorkersThatReportThem) {
  const std::string conv = "conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=NHWC,dtype=";
  const Target spr = ParseTarget("llvm -mcpu=sapphirerapids");
  EXPECT_THAT(kConv2dCpuDot.worker_features(ParseWorkload(conv + "bf16"), spr),
              ::testing::ElementsAre("avx512bf16"));
  EXPECT_THAT(kConv2dCpuDot.worker_features(ParseWorkload(conv + "u8i8"), spr),
              ::testing::ElementsAre("avx512vnni"));
  EXPECT_THAT(kConv2dCpuDot.worker_features(ParseWorkload(conv + "f16"), spr),
              ::testing::ElementsAre("avx512fp16"));
  EXPECT_THAT(
      kConv2dCpuDot.worker_features(ParseWorkload(conv + "i8"), ParseTarget("llvm -mcpu=haswell")),
      IsEmpty());
}

// The typed convolutions are the CPU's: the catalog offers conv2d.cpu.dot for them and no FP32
// template, and it builds f32 no more than gemm.cpu.dot does.
TEST(Conv2dCpuDot, IsTheCatalogsTemplateForTypedConvolutionsOnTheCpu) {
  const Catalog& catalog = Catalog::BuiltIn();
  const Target target = ParseTarget("llvm -mcpu=znver4 -threads=1");
  for (const char* layout : {"NCHW", "NCHW16c", "NHWC"}) {
    const Workload w = ParseWorkload(
        std::string("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,dtype=bf16,layout=") + layout);
    std::vector<std::string> names;
    for (const KernelTemplate* t : catalog.TemplatesFor(w, target)) {
      names.emplace_back(t->name);
    }
    EXPECT_THAT(names, ::testing::ElementsAre("conv2d.cpu.dot")) << layout;
  }
  EXPECT_FALSE(TemplateBuildsForm(kConv2dCpuDot,
                                  ParseWorkload("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,layout=NHWC")));
}

}  // namespace
}  // namespace tune
