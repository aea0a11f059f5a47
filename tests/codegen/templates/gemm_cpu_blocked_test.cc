#include "codegen/templates/gemm_cpu_blocked.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

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

TEST(GemmCpuBlocked, RandomConfigsComputeTheReferenceOnOddShapes) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases =
      RandomCases(kGemmCpuBlocked, target,
                  {"gemm:M=1,N=1,K=1", "gemm:M=7,N=13,K=5", "gemm:M=67,N=31,K=129"}, 24, 1);
  EXPECT_THAT(CheckKernels(target, kGemmCpuBlocked, cases), IsEmpty());
}

TEST(GemmCpuBlocked, RandomConfigsComputeTheReferenceOnBlockedShapes) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases = RandomCases(
      kGemmCpuBlocked, target, {"gemm:M=128,N=96,K=64", "gemm:M=100,N=400,K=70"}, 24, 2);
  EXPECT_THAT(CheckKernels(target, kGemmCpuBlocked, cases), IsEmpty());
}

TEST(GemmCpuBlocked, EveryValueOfEveryKnobComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  // Large enough that every candidate of every knob exists (mc, nc, kc get several blocks).
  Workload w = ParseWorkload("gemm:M=100,N=400,K=70,epilogue=bias_relu");
  std::mt19937_64 rng(3);
  std::vector<std::string> unreachable;
  std::vector<Config> configs =
      testing::ConfigsCoveringEveryKnobValue(kGemmCpuBlocked, w, target, rng, &unreachable);
  EXPECT_THAT(unreachable, IsEmpty());
  std::vector<KernelCase> cases;
  for (const Config& c : configs) {
    cases.push_back({w, c});
  }
  EXPECT_THAT(CheckKernels(target, kGemmCpuBlocked, cases), IsEmpty());
}

// With at most 16 rows the reduction may be blocked by 8 or 16 (matrix-vector streams B that
// way); a K that neither divides leaves a short last block.
TEST(GemmCpuBlocked, FewRowGemmsTakeShortReductionBlocksThatComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  EXPECT_THAT(
      kGemmCpuBlocked.space(ParseWorkload("gemm:M=16,N=64,K=512"), target).FindKnob("kc")->values,
      ::testing::ElementsAre(8, 16, 32, 64, 128, 256, 384, 512));
  EXPECT_THAT(
      kGemmCpuBlocked.space(ParseWorkload("gemm:M=17,N=64,K=512"), target).FindKnob("kc")->values,
      ::testing::ElementsAre(32, 64, 128, 256, 384, 512));
  std::vector<KernelCase> cases;
  for (const char* text : {"gemm:M=1,N=300,K=77,epilogue=bias", "gemm:M=3,N=100,K=45"}) {
    Workload w = ParseWorkload(text);
    std::mt19937_64 rng(5);
    std::vector<std::string> unreachable;
    for (const Config& c :
         testing::ConfigsCoveringEveryKnobValue(kGemmCpuBlocked, w, target, rng, &unreachable)) {
      cases.push_back({w, c});
    }
    EXPECT_THAT(unreachable, IsEmpty()) << text;
    Config def = kGemmCpuBlocked.default_config(w, target);
    EXPECT_EQ(def.at("kc"), 8) << text;
    cases.push_back({w, def});
  }
  EXPECT_THAT(CheckKernels(target, kGemmCpuBlocked, cases), IsEmpty());
}

// Prepared weights: with pack_b the preparation packs every block of B once and the kernel
// reads the panels (partial column, reduction and panel blocks included); without, a copy. On
// one and three threads, every knob value, the defaults and the seeds (CheckKernels fills the
// prepared buffer with NaN first: a panel element the preparation misses fails the check).
TEST(GemmCpuBlocked, KernelsOnPreparedWeightsComputeTheReference) {
  for (const char* target_text : {"llvm -mcpu=native -threads=1", "llvm -mcpu=native -threads=3"}) {
    Target target = ParseTarget(target_text);
    std::vector<KernelCase> cases;
    for (const char* text : {"gemm:M=1,N=300,K=77,epilogue=bias,weights=prepared",
                             "gemm:M=37,N=129,K=300,weights=prepared",
                             "gemm:M=16,N=64,K=512,epilogue=relu,weights=prepared"}) {
      Workload w = ParseWorkload(text);
      std::mt19937_64 rng(9);
      std::vector<std::string> unreachable;
      for (const Config& c :
           testing::ConfigsCoveringEveryKnobValue(kGemmCpuBlocked, w, target, rng, &unreachable)) {
        cases.push_back({w, c});
      }
      Config def = kGemmCpuBlocked.default_config(w, target);
      EXPECT_EQ(def.at("pack_b"), 1) << text << ": prepared weights come packed";
      cases.push_back({w, def});
      for (const Config& seed : kGemmCpuBlocked.seeds(w, target)) {
        cases.push_back({w, seed});
      }
    }
    EXPECT_THAT(CheckKernels(target, kGemmCpuBlocked, cases), IsEmpty()) << target_text;
  }
}

TEST(GemmCpuBlocked, ParallelKernelsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=3");
  std::vector<KernelCase> cases =
      RandomCases(kGemmCpuBlocked, target, {"gemm:M=67,N=31,K=129", "gemm:M=200,N=50,K=9"}, 8, 4);
  Workload big = ParseWorkload("gemm:M=256,N=256,K=256,epilogue=bias");
  cases.push_back({big, kGemmCpuBlocked.default_config(big, target)});
  EXPECT_THAT(CheckKernels(target, kGemmCpuBlocked, cases), IsEmpty());
}

TEST(GemmCpuBlocked, DefaultConfigsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases;
  for (const char* text : {"gemm:M=1,N=1,K=1", "gemm:M=3,N=1000,K=2", "gemm:M=513,N=17,K=300",
                           "gemm:M=256,N=256,K=256,epilogue=relu"}) {
    Workload w = ParseWorkload(text);
    cases.push_back({w, kGemmCpuBlocked.default_config(w, target)});
  }
  EXPECT_THAT(CheckKernels(target, kGemmCpuBlocked, cases), IsEmpty());
}

TEST(GemmCpuBlocked, Avx2AndSseTargetsComputeTheReference) {
  for (const char* text : {"llvm -mcpu=haswell -threads=1", "llvm -mcpu=x86-64 -threads=1"}) {
    Target target = ParseTarget(text);
    if (!testing::HostRuns(target)) {
      GTEST_SKIP() << "host cannot run " << text;
    }
    std::vector<KernelCase> cases =
        RandomCases(kGemmCpuBlocked, target, {"gemm:M=7,N=13,K=5", "gemm:M=67,N=31,K=129"}, 6, 5);
    EXPECT_THAT(CheckKernels(target, kGemmCpuBlocked, cases), IsEmpty()) << text;
  }
}

TEST(GemmCpuBlocked, SpaceClipsCandidatesToTheProblem) {
  Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  ConfigSpace tiny = kGemmCpuBlocked.space(ParseWorkload("gemm:M=1,N=1,K=1"), target);
  EXPECT_THAT(tiny.FindKnob("mr")->values, ::testing::ElementsAre(1));
  EXPECT_THAT(tiny.FindKnob("nr")->values, ::testing::ElementsAre(16));
  EXPECT_THAT(tiny.FindKnob("kc")->values, ::testing::ElementsAre(1));
  EXPECT_THAT(tiny.FindKnob("mc")->values, ::testing::ElementsAre(1));
  EXPECT_THAT(tiny.FindKnob("nc")->values, ::testing::ElementsAre(1));

  ConfigSpace avx2 = kGemmCpuBlocked.space(ParseWorkload("gemm:M=512,N=512,K=512"),
                                           ParseTarget("llvm -mcpu=haswell -threads=1"));
  EXPECT_THAT(avx2.FindKnob("nr")->values, ::testing::ElementsAre(8, 16, 24, 32));
  EXPECT_THAT(avx2.FindKnob("kc")->values, ::testing::ElementsAre(32, 64, 128, 256, 384, 512));
}

TEST(GemmCpuBlocked, DefaultConfigIsValidAndUsesTheVectorRegisters) {
  for (const char* target_text : {"llvm -mcpu=znver4 -threads=1", "llvm -mcpu=haswell -threads=4",
                                  "llvm -mcpu=x86-64 -threads=1"}) {
    Target target = ParseTarget(target_text);
    for (const char* text : {"gemm:M=1,N=1,K=1", "gemm:M=512,N=512,K=512", "gemm:M=5,N=3000,K=7",
                             "gemm:M=1000,N=8,K=1000"}) {
      Workload w = ParseWorkload(text);
      Config c = kGemmCpuBlocked.default_config(w, target);
      EXPECT_TRUE(kGemmCpuBlocked.space(w, target).IsValid(c))
          << target_text << " " << text << " " << ConfigToString(c);
    }
  }
  Workload big = ParseWorkload("gemm:M=512,N=512,K=512");
  Config c = kGemmCpuBlocked.default_config(big, ParseTarget("llvm -mcpu=znver4 -threads=1"));
  EXPECT_GE(c["mr"] * c["nr"], 6 * 32) << ConfigToString(c);
  EXPECT_EQ(c["pack_b"], 1);
}

// On Sapphire and Emerald Rapids (measured on Emerald Rapids, bench/RESULTS.md) the FP32 default
// is the 6 x 4-vector tile over kc 256 and the seeds try 8 x 3 next; the AMD cores keep 8 x 2
// over kc 512, with 6 x 4 among the seeds.
TEST(GemmCpuBlocked, IntelServerCoresDefaultToSixRowsByFourVectorsOverShortReductionBlocks) {
  const Workload w = ParseWorkload("gemm:M=1024,N=1024,K=1024");
  for (const char* intel :
       {"llvm -mcpu=sapphirerapids -threads=1", "llvm -mcpu=emeraldrapids -threads=1"}) {
    const Target target = ParseTarget(intel);
    const Config c = kGemmCpuBlocked.default_config(w, target);
    EXPECT_EQ(c.at("mr"), 6) << intel << " " << ConfigToString(c);
    EXPECT_EQ(c.at("nr"), 64) << intel << " " << ConfigToString(c);
    EXPECT_EQ(c.at("kc"), 256) << intel << " " << ConfigToString(c);
    const std::vector<Config> seeds = kGemmCpuBlocked.seeds(w, target);
    ASSERT_FALSE(seeds.empty());
    EXPECT_EQ(seeds.front().at("mr"), 8) << ConfigToString(seeds.front());
    EXPECT_EQ(seeds.front().at("nr"), 48) << ConfigToString(seeds.front());
  }
  for (const char* amd : {"llvm -mcpu=znver4 -threads=1", "llvm -mcpu=znver5 -threads=1"}) {
    const Config c = kGemmCpuBlocked.default_config(w, ParseTarget(amd));
    EXPECT_EQ(c.at("mr"), 8) << amd << " " << ConfigToString(c);
    EXPECT_EQ(c.at("nr"), 32) << amd << " " << ConfigToString(c);
    EXPECT_EQ(c.at("kc"), 512) << amd << " " << ConfigToString(c);
  }
}

// Each register tile shape of the seeds (or the default) comes with a row block it divides, near
// the default's. A 14-row tile once got the largest block up to M instead: all of M, or above 576
// rows an invalid 576 that dropped the seed.
TEST(GemmCpuBlocked, SeedsHoldEveryRegisterTileShapeWithARowBlockItDivides) {
  const Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  for (const char* text : {"gemm:M=1024,N=1024,K=1024", "gemm:M=784,N=256,K=64"}) {
    const Workload w = ParseWorkload(text);
    std::vector<Config> seeds = kGemmCpuBlocked.seeds(w, target);
    seeds.push_back(kGemmCpuBlocked.default_config(w, target));
    for (auto [mr, vectors] :
         std::vector<std::pair<int64_t, int64_t>>{{8, 2}, {6, 4}, {12, 2}, {4, 3}, {14, 2}}) {
      const bool found = std::any_of(seeds.begin(), seeds.end(), [&](const Config& c) {
        return c.at("mr") == mr && c.at("nr") == vectors * 16 && c.at("mc") % mr == 0 &&
               c.at("mc") <= 128;
      });
      EXPECT_TRUE(found) << text << ": no seed of tile " << mr << " x " << vectors << " vectors";
    }
  }
}

TEST(GemmCpuBlocked, BuildRejectsAConfigOutsideTheSpace) {
  Target target = ParseTarget("llvm -mcpu=znver4 -threads=1");
  Workload w = ParseWorkload("gemm:M=64,N=64,K=64");
  Config c = kGemmCpuBlocked.default_config(w, target);
  c["mr"] = 5;
  absl::StatusOr<ir::LoweredFunc> built = kGemmCpuBlocked.build(w, target, c, "f");
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(built.status().message()), HasSubstr("mr"));
}

TEST(GemmCpuBlocked, BuildRejectsAConvolution) {
  Target target = ParseTarget("llvm -mcpu=znver4 -threads=1");
  Workload conv = ParseWorkload("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,stride=1,pad=1");
  absl::StatusOr<ir::LoweredFunc> built = kGemmCpuBlocked.build(conv, target, Config{}, "f");
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tune
