#include "codegen/templates/conv2d_cpu_pointwise.h"

#include <random>

#include "codegen/templates/catalog.h"
#include "codegen/templates/gemm_cpu_blocked.h"
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

TEST(Conv2dCpuPointwise, RandomConfigsComputeTheReferenceForBatchesAndOddSizes) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuPointwise, target,
                  {"conv2d:N=2,C=17,H=7,W=9,K=33,R=1,S=1,stride=1,pad=0",
                   "conv2d:N=1,C=64,H=14,W=14,K=48,R=1,S=1,stride=1,pad=0",
                   "conv2d:N=3,C=5,H=3,W=5,K=7,R=1,S=1,stride=1,pad=0"},
                  12, 1);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuPointwise, cases), IsEmpty());
}

TEST(Conv2dCpuPointwise, EveryValueOfEveryKnobComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  Workload w =
      ParseWorkload("conv2d:N=2,C=40,H=10,W=13,K=36,R=1,S=1,stride=1,pad=0,epilogue=bias_relu");
  std::mt19937_64 rng(5);
  std::vector<std::string> unreachable;
  std::vector<Config> configs =
      testing::ConfigsCoveringEveryKnobValue(kConv2dCpuPointwise, w, target, rng, &unreachable);
  EXPECT_THAT(unreachable, IsEmpty());
  std::vector<KernelCase> cases;
  for (const Config& c : configs) {
    cases.push_back({w, c});
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuPointwise, cases), IsEmpty());
}

TEST(Conv2dCpuPointwise, ParallelKernelsAndTheDefaultsAndSeedsOfResNetLayersComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=2");
  std::vector<KernelCase> cases = RandomCases(
      kConv2dCpuPointwise, target, {"conv2d:N=2,C=32,H=12,W=12,K=64,R=1,S=1,stride=1,pad=0"}, 8, 2);
  for (const char* text : {"conv2d:N=1,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,epilogue=bias",
                           "conv2d:N=1,C=1024,H=14,W=14,K=256,R=1,S=1,stride=1,pad=0"}) {
    Workload w = ParseWorkload(text);
    cases.push_back({w, kConv2dCpuPointwise.default_config(w, target)});
    for (const Config& c : kConv2dCpuPointwise.seeds(w, target)) {
      if (kConv2dCpuPointwise.space(w, target).IsValid(c) && cases.size() < 24) {
        cases.push_back({w, c});
      }
    }
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuPointwise, cases), IsEmpty());
}

TEST(Conv2dCpuPointwise, ItsSpaceIsTheGemmSpaceOfOneImage) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  Workload conv = ParseWorkload("conv2d:N=4,C=64,H=14,W=14,K=256,R=1,S=1,stride=1,pad=0");
  Workload gemm = PointwiseGemmOf(conv);
  EXPECT_EQ(gemm.ToString(), "gemm:M=256,N=196,K=64");
  EXPECT_EQ(kConv2dCpuPointwise.space(conv, target).Fingerprint(),
            kGemmCpuBlocked.space(gemm, target).Fingerprint());
}

TEST(Conv2dCpuPointwise, OnAvx512ItsDefaultFitsTheLayersPixelCountAndElsewhereIsTheGemmDefault) {
  const Target avx512 = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  const Workload wide = ParseWorkload("conv2d:N=1,C=256,H=14,W=14,K=1024,R=1,S=1,stride=1,pad=0");
  const Config w = kConv2dCpuPointwise.default_config(wide, avx512);
  EXPECT_EQ(w.at("pack_a"), 0);
  EXPECT_EQ(w.at("pack_b"), 0);
  EXPECT_EQ(w.at("mr"), 8);
  EXPECT_EQ(w.at("nr"), 48);
  EXPECT_EQ(w.at("nc"), 192);
  const Workload narrow = ParseWorkload("conv2d:N=1,C=2048,H=7,W=7,K=512,R=1,S=1,stride=1,pad=0");
  const Config n = kConv2dCpuPointwise.default_config(narrow, avx512);
  EXPECT_EQ(n.at("mr"), 4);
  EXPECT_EQ(n.at("nr"), 64);
  EXPECT_EQ(n.at("nc"), 49);
  EXPECT_EQ(n.at("order"), 0) << "row blocks, not the one column block, go to the threads";
  for (const Workload& layer : {wide, narrow}) {
    const Config def = kConv2dCpuPointwise.default_config(layer, avx512);
    const ConfigSpace space = kConv2dCpuPointwise.space(layer, avx512);
    EXPECT_TRUE(space.IsValid(def)) << ConfigToString(def);
    const std::vector<Config> seeds = kConv2dCpuPointwise.seeds(layer, avx512);
    EXPECT_THAT(
        seeds, ::testing::Contains(kGemmCpuBlocked.default_config(PointwiseGemmOf(layer), avx512)));
    EXPECT_THAT(seeds, ::testing::Not(::testing::Contains(def)));
    for (const Config& seed : seeds) {
      EXPECT_TRUE(space.IsValid(seed)) << ConfigToString(seed);
    }
  }
  const Target avx2 = ParseTarget("llvm -mcpu=haswell -threads=1");
  EXPECT_EQ(kConv2dCpuPointwise.default_config(wide, avx2),
            kGemmCpuBlocked.default_config(PointwiseGemmOf(wide), avx2));
  EXPECT_EQ(kConv2dCpuPointwise.seeds(wide, avx2),
            kGemmCpuBlocked.seeds(PointwiseGemmOf(wide), avx2));
}

TEST(Conv2dCpuPointwise, RefusesLayersItDoesNotApplyToNamingTheFields) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1", "R=3,S=3"},
           {"conv2d:N=1,C=16,H=8,W=8,K=16,R=1,S=1,stride=2,pad=0", "stride=2"},
           {"conv2d:N=1,C=16,H=8,W=8,K=16,R=1,S=1,stride=1,pad=1", "pad=1"}}) {
    Workload w = ParseWorkload(text);
    EXPECT_THAT(CheckTemplateShape(kConv2dCpuPointwise, w).message(), HasSubstr(field)) << text;
    EXPECT_THAT(Catalog::BuiltIn().TemplatesFor(w, target),
                ::testing::Not(::testing::Contains(&kConv2dCpuPointwise)));
  }
  EXPECT_THAT(Catalog::BuiltIn().TemplatesFor(
                  ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=1,S=1,stride=1,pad=0,"
                                "layout=NCHW16c"),
                  target),
              ::testing::Not(::testing::Contains(&kConv2dCpuPointwise)));
}

}  // namespace
}  // namespace tune
