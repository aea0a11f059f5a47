#include "codegen/templates/conv2d_cpu_blocked.h"

#include <random>

#include "codegen/templates/conv2d_cpu_direct.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"

namespace tune {
namespace {

using testing::CheckKernels;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::KernelCase;
using testing::RandomCases;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

TEST(Conv2dCpuBlocked, RandomConfigsComputeTheReferenceWithPaddingStridesAndDilation) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuBlocked, target,
                  {"conv2d:N=1,C=16,H=7,W=9,K=32,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
                   "conv2d:N=2,C=32,H=13,W=11,K=16,R=5,S=5,stride=2,pad=2,layout=NCHW16c",
                   "conv2d:N=1,C=8,H=12,W=14,K=24,R=3,S=3,stride=1,pad=2,dilation=2,layout=NCHW8c",
                   "conv2d:N=1,C=4,H=15,W=13,K=8,R=7,S=7,stride=2,pad=3,layout=NCHW4c",
                   "conv2d:N=1,C=32,H=5,W=5,K=64,R=1,S=1,stride=1,pad=0,layout=NCHW16c"},
                  10, 1);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuBlocked, cases), IsEmpty());
}

TEST(Conv2dCpuBlocked, EveryValueOfEveryKnobComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  // K / 16 = 12 takes kb 1..4; Q = 30 takes every qt.
  Workload w = ParseWorkload(
      "conv2d:N=1,C=16,H=4,W=30,K=192,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias_relu");
  std::mt19937_64 rng(3);
  std::vector<std::string> unreachable;
  std::vector<Config> configs =
      testing::ConfigsCoveringEveryKnobValue(kConv2dCpuBlocked, w, target, rng, &unreachable);
  EXPECT_THAT(unreachable, IsEmpty());
  std::vector<KernelCase> cases;
  for (const Config& c : configs) {
    cases.push_back({w, c});
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuBlocked, cases), IsEmpty());
}

TEST(Conv2dCpuBlocked, ParallelKernelsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=3");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuBlocked, target,
                  {"conv2d:N=2,C=16,H=13,W=11,K=32,R=3,S=3,stride=2,pad=1,layout=NCHW16c",
                   "conv2d:N=1,C=32,H=20,W=20,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c"},
                  6, 4);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuBlocked, cases), IsEmpty());
}

TEST(Conv2dCpuBlocked, DefaultConfigsOfResNetLayersComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases;
  for (const char* text :
       {"conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias",
        "conv2d:N=1,C=64,H=14,W=14,K=256,R=1,S=1,stride=1,pad=0,layout=NCHW16c,epilogue=relu"}) {
    Workload w = ParseWorkload(text);
    cases.push_back({w, kConv2dCpuBlocked.default_config(w, target)});
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuBlocked, cases), IsEmpty());
}

TEST(Conv2dCpuBlocked, Avx2TargetsComputeTheReferenceWithBlocksOfTwoVectors) {
  Target target = ParseTarget("llvm -mcpu=haswell -threads=1");
  if (!testing::HostRuns(target)) {
    GTEST_SKIP() << "host cannot run AVX2";
  }
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuBlocked, target,
                  {"conv2d:N=1,C=16,H=9,W=10,K=32,R=3,S=3,stride=2,pad=1,layout=NCHW16c",
                   "conv2d:N=1,C=8,H=6,W=6,K=16,R=3,S=3,stride=1,pad=1,layout=NCHW8c"},
                  6, 5);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuBlocked, cases), IsEmpty());
}

TEST(Conv2dCpuBlocked, OnlyBlockedWorkloadsGetTheBlockedTemplate) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<std::string> names;
  for (const KernelTemplate* t : TemplatesFor(
           ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,layout=NCHW16c"),
           target)) {
    names.push_back(std::string(t->name));
  }
  EXPECT_THAT(names, ::testing::ElementsAre("conv2d.cpu.blocked", "conv2d.cpu.winograd"));
  Workload plain = ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1");
  for (const KernelTemplate* t : TemplatesFor(plain, target)) {
    EXPECT_NE(t->name, "conv2d.cpu.blocked");
  }
}

TEST(Conv2dCpuBlocked, EachLayoutsTemplateRejectsTheOtherLayoutNamingIt) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  Workload blocked =
      ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,layout=NCHW16c");
  Workload plain = ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1");
  absl::StatusOr<ir::LoweredFunc> direct =
      kConv2dCpuDirect.build(blocked, target, kConv2dCpuDirect.default_config(plain, target), "f");
  ASSERT_FALSE(direct.ok());
  EXPECT_THAT(std::string(direct.status().message()), HasSubstr("layout=NCHW"));
  absl::StatusOr<ir::LoweredFunc> blocked_build = kConv2dCpuBlocked.build(
      plain, target, kConv2dCpuBlocked.default_config(blocked, target), "f");
  ASSERT_FALSE(blocked_build.ok());
  EXPECT_THAT(std::string(blocked_build.status().message()), HasSubstr("NCHW16c"));
}

}  // namespace
}  // namespace tune
