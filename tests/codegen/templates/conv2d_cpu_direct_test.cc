#include "codegen/templates/conv2d_cpu_direct.h"

#include <random>

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

TEST(Conv2dCpuDirect, RandomConfigsComputeTheReferenceWithPaddingAndStrides) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuDirect, target,
                  {"conv2d:N=1,C=3,H=7,W=9,K=5,R=3,S=3,stride=1,pad=1",
                   "conv2d:N=2,C=4,H=13,W=11,K=17,R=5,S=5,stride=2,pad=2",
                   "conv2d:N=1,C=2,H=15,W=13,K=33,R=7,S=7,stride=2,pad=0"},
                  16, 1);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDirect, cases), IsEmpty());
}

TEST(Conv2dCpuDirect, RandomConfigsComputeTheReferenceWithDilationAndPointwise) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuDirect, target,
                  {"conv2d:N=1,C=3,H=12,W=14,K=7,R=3,S=3,stride=1,pad=2,dilation=2",
                   "conv2d:N=1,C=8,H=9,W=31,K=31,R=1,S=1,stride=1,pad=0",
                   "conv2d:N=3,C=2,H=5,W=5,K=1,R=5,S=5,stride=1,pad=0",
                   "conv2d:N=1,C=1,H=1,W=1,K=1,R=1,S=1,stride=1,pad=0"},
                  12, 2);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDirect, cases), IsEmpty());
}

TEST(Conv2dCpuDirect, EveryValueOfEveryKnobComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  // K, P, Q and C large enough for every candidate of kv, kt, pt, qt, cc and unroll_c.
  Workload w =
      ParseWorkload("conv2d:N=1,C=16,H=9,W=16,K=130,R=3,S=3,stride=1,pad=1,epilogue=bias_relu");
  std::mt19937_64 rng(3);
  std::vector<std::string> unreachable;
  std::vector<Config> configs =
      testing::ConfigsCoveringEveryKnobValue(kConv2dCpuDirect, w, target, rng, &unreachable);
  EXPECT_THAT(unreachable, IsEmpty());
  std::vector<KernelCase> cases;
  for (const Config& c : configs) {
    cases.push_back({w, c});
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDirect, cases), IsEmpty());
}

TEST(Conv2dCpuDirect, ParallelKernelsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=3");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuDirect, target,
                  {"conv2d:N=2,C=4,H=13,W=11,K=17,R=3,S=3,stride=2,pad=1",
                   "conv2d:N=1,C=16,H=20,W=20,K=40,R=3,S=3,stride=1,pad=1"},
                  6, 4);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDirect, cases), IsEmpty());
}

// Tiles of rows, groups of channel blocks in both orders and reductions in chunks (inside and
// around the parallel loop, unrolled), with tails everywhere: P % pt, K % (kv * lanes),
// blocks % kt and C % cc left over.
TEST(Conv2dCpuDirect, RandomConfigsOfRowTilesChannelGroupsAndChunksComputeTheReference) {
  for (const char* target_text : {"llvm -mcpu=native -threads=1", "llvm -mcpu=native -threads=2"}) {
    Target target = ParseTarget(target_text);
    std::vector<KernelCase> cases =
        RandomCases(kConv2dCpuDirect, target,
                    {"conv2d:N=1,C=7,H=11,W=10,K=45,R=3,S=3,stride=1,pad=1",
                     "conv2d:N=2,C=10,H=13,W=12,K=37,R=3,S=3,stride=2,pad=1",
                     "conv2d:N=1,C=5,H=14,W=9,K=23,R=3,S=3,stride=1,pad=2,dilation=2",
                     "conv2d:N=1,C=36,H=5,W=7,K=50,R=1,S=1,stride=1,pad=0"},
                    4, 7);
    EXPECT_THAT(CheckKernels(target, kConv2dCpuDirect, cases), IsEmpty()) << target_text;
  }
}

// The chunks of the reduction meet every epilogue: the bias and the ReLU only after the last.
TEST(Conv2dCpuDirect, ChunkedReductionsApplyTheEpilogueOnce) {
  Target target = ParseTarget("llvm -mcpu=native -threads=2");
  Workload w = ParseWorkload("conv2d:N=1,C=9,H=8,W=9,K=20,R=3,S=3,stride=1,pad=1");
  Config c = kConv2dCpuDirect.default_config(w, target);
  c["cc"] = 2;
  c["unroll_c"] = 2;
  std::vector<KernelCase> cases;
  for (Epilogue e : {Epilogue::kNone, Epilogue::kBias, Epilogue::kRelu, Epilogue::kBiasRelu}) {
    for (int64_t outer : {0, 1}) {
      c["chunk_outer"] = outer;
      cases.push_back({testing::WithEpilogue(w, e), c});
    }
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDirect, cases), IsEmpty());
}

TEST(Conv2dCpuDirect, EveryResNet50LayerHasTenThousandValidConfigs) {
  // The AVX-512 target of the bench host, named so the test is the same on every machine.
  Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  for (const char* text : {"conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3",
                           "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
                           "conv2d:N=1,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0",
                           "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1",
                           "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1",
                           "conv2d:N=1,C=1024,H=14,W=14,K=256,R=1,S=1,stride=1,pad=0",
                           "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1"}) {
    ConfigSpace space = kConv2dCpuDirect.space(ParseWorkload(text), target);
    EXPECT_GE(space.EnumerateValid(10000).size(), 10000u) << text;
  }
}

TEST(Conv2dCpuDirect, EveryKnobValueThatAConfigCanTakeChangesTheCode) {
  Workload w = ParseWorkload("conv2d:N=1,C=12,H=9,W=11,K=40,R=3,S=3,stride=1,pad=1,epilogue=bias");
  std::mt19937_64 rng(11);
  for (const char* target_text :
       {"llvm -mcpu=skylake-avx512 -threads=1", "llvm -mcpu=skylake-avx512 -threads=2"}) {
    EXPECT_THAT(
        testing::KnobChangesThatKeepTheCode(kConv2dCpuDirect, w, ParseTarget(target_text), 4, rng),
        IsEmpty())
        << target_text;
  }
}

TEST(Conv2dCpuDirect, DefaultConfigsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases;
  for (const char* text : {"conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1",
                           "conv2d:N=1,C=3,H=32,W=32,K=16,R=7,S=7,stride=2,pad=3,epilogue=relu",
                           "conv2d:N=2,C=5,H=3,W=3,K=3,R=3,S=3,stride=1,pad=2"}) {
    Workload w = ParseWorkload(text);
    cases.push_back({w, kConv2dCpuDirect.default_config(w, target)});
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuDirect, cases), IsEmpty());
}

TEST(Conv2dCpuDirect, Avx2AndSseTargetsComputeTheReference) {
  for (const char* text : {"llvm -mcpu=haswell -threads=1", "llvm -mcpu=x86-64 -threads=1"}) {
    Target target = ParseTarget(text);
    if (!testing::HostRuns(target)) {
      GTEST_SKIP() << "host cannot run " << text;
    }
    std::vector<KernelCase> cases = RandomCases(
        kConv2dCpuDirect, target, {"conv2d:N=1,C=3,H=9,W=10,K=11,R=3,S=3,stride=2,pad=1"}, 6, 5);
    EXPECT_THAT(CheckKernels(target, kConv2dCpuDirect, cases), IsEmpty()) << text;
  }
}

TEST(Conv2dCpuDirect, SpaceClipsCandidatesToTheProblem) {
  Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  ConfigSpace tiny = kConv2dCpuDirect.space(
      ParseWorkload("conv2d:N=1,C=1,H=1,W=1,K=1,R=1,S=1,stride=1,pad=0"), target);
  EXPECT_THAT(tiny.FindKnob("kv")->values, ::testing::ElementsAre(1));
  EXPECT_THAT(tiny.FindKnob("qt")->values, ::testing::ElementsAre(1));
  ConfigSpace mid = kConv2dCpuDirect.space(
      ParseWorkload("conv2d:N=1,C=8,H=8,W=8,K=40,R=3,S=3,stride=1,pad=1"), target);
  EXPECT_THAT(mid.FindKnob("kv")->values, ::testing::ElementsAre(1, 2, 3));
  EXPECT_THAT(mid.FindKnob("qt")->values, ::testing::ElementsAre(1, 2, 3, 4, 6, 8));
}

TEST(Conv2dCpuDirect, DefaultConfigIsValidForEveryTarget) {
  for (const char* target_text : {"llvm -mcpu=znver4 -threads=1", "llvm -mcpu=haswell -threads=4",
                                  "llvm -mcpu=x86-64 -threads=1"}) {
    Target target = ParseTarget(target_text);
    for (const char* text : {"conv2d:N=1,C=1,H=1,W=1,K=1,R=1,S=1,stride=1,pad=0",
                             "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
                             "conv2d:N=8,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3"}) {
      Workload w = ParseWorkload(text);
      Config c = kConv2dCpuDirect.default_config(w, target);
      EXPECT_TRUE(kConv2dCpuDirect.space(w, target).IsValid(c))
          << target_text << " " << text << " " << ConfigToString(c);
    }
  }
}

// On short output rows the default tile is shaped to the row: 2 rows x 4 positions on rows of 4
// to 7, a 1x1 filter's row of 14 whole; other rows, and 16-register targets, keep one row of up
// to 10. Every such default computes the reference.
TEST(Conv2dCpuDirect, OnShortOutputRowsTheDefaultTileIsShapedToTheRow) {
  const Target avx512 = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  struct Case {
    const char* workload;
    int64_t pt, qt;
  } cases[] = {
      {"conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,stride=2,pad=1", 2, 4},
      {"conv2d:N=1,C=64,H=14,W=14,K=128,R=1,S=1,stride=2,pad=0", 2, 4},
      {"conv2d:N=1,C=64,H=28,W=28,K=128,R=1,S=1,stride=2,pad=0", 1, 14},
      {"conv2d:N=1,C=32,H=28,W=28,K=32,R=3,S=3,stride=2,pad=1", 1, 10},
      {"conv2d:N=1,C=32,H=56,W=56,K=32,R=3,S=3,stride=1,pad=1", 1, 10},
  };
  for (const Case& c : cases) {
    const Workload w = ParseWorkload(c.workload);
    const Config config = kConv2dCpuDirect.default_config(w, avx512);
    EXPECT_EQ(config.at("pt"), c.pt) << c.workload;
    EXPECT_EQ(config.at("qt"), c.qt) << c.workload;
  }
  const Config avx2 = kConv2dCpuDirect.default_config(ParseWorkload(cases[0].workload),
                                                      ParseTarget("llvm -mcpu=haswell -threads=1"));
  EXPECT_EQ(avx2.at("pt"), 1);
  const Target native = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> kernels;
  for (const char* text : {"conv2d:N=1,C=8,H=13,W=13,K=20,R=3,S=3,stride=2,pad=1,epilogue=relu",
                           "conv2d:N=1,C=8,H=27,W=28,K=40,R=1,S=1,stride=2,pad=0"}) {
    const Workload w = ParseWorkload(text);
    kernels.push_back({w, kConv2dCpuDirect.default_config(w, native)});
  }
  EXPECT_THAT(CheckKernels(native, kConv2dCpuDirect, kernels), IsEmpty());
}

TEST(Conv2dCpuDirect, SeedsAreValidVariantsOfTheDefaultThatComputeTheReference) {
  struct Case {
    const char* target;
    const char* workload;
  } cases[] = {
      {"llvm -mcpu=skylake-avx512 -threads=1",
       "conv2d:N=1,C=128,H=56,W=56,K=128,R=3,S=3,stride=2,pad=1"},
      {"llvm -mcpu=skylake-avx512 -threads=1",
       "conv2d:N=1,C=1024,H=14,W=14,K=2048,R=1,S=1,stride=2,pad=0"},
      {"llvm -mcpu=haswell -threads=2", "conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3"},
      {"llvm -mcpu=haswell -threads=1", "conv2d:N=1,C=1,H=1,W=1,K=1,R=1,S=1,stride=1,pad=0"},
  };
  for (const Case& c : cases) {
    const Target target = ParseTarget(c.target);
    const Workload w = ParseWorkload(c.workload);
    const Config def = kConv2dCpuDirect.default_config(w, target);
    const std::vector<Config> seeds = kConv2dCpuDirect.seeds(w, target);
    for (const Config& seed : seeds) {
      EXPECT_TRUE(kConv2dCpuDirect.space(w, target).IsValid(seed)) << ConfigToString(seed);
      EXPECT_NE(seed, def) << c.workload;
    }
    if (w.conv2d().c > 1) {
      ASSERT_FALSE(seeds.empty()) << c.workload;
      EXPECT_EQ(seeds.front().at("kv"), 1) << c.workload;  // one vector, two rows first
    }
  }
  // On 7x7 outputs with many input channels: the chunked reduction, rows outer.
  const Target avx512 = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  const Workload projection =
      ParseWorkload("conv2d:N=1,C=1024,H=14,W=14,K=2048,R=1,S=1,stride=2,pad=0");
  EXPECT_THAT(kConv2dCpuDirect.seeds(projection, avx512),
              ::testing::Contains(
                  ::testing::AllOf(::testing::Contains(Config::value_type("cc", 128)),
                                   ::testing::Contains(Config::value_type("loop_order", 1)))));
  const Target native = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> kernels;
  for (const char* text : {"conv2d:N=1,C=160,H=13,W=13,K=40,R=3,S=3,stride=2,pad=1,epilogue=relu",
                           "conv2d:N=1,C=136,H=18,W=18,K=24,R=1,S=1,stride=1,pad=0"}) {
    const Workload w = ParseWorkload(text);
    for (const Config& seed : kConv2dCpuDirect.seeds(w, native)) {
      kernels.push_back({w, seed});
    }
  }
  EXPECT_THAT(kernels, ::testing::SizeIs(::testing::Ge(4)));
  EXPECT_THAT(CheckKernels(native, kConv2dCpuDirect, kernels), IsEmpty());
}

TEST(Conv2dCpuDirect, BuildRejectsAConfigOutsideTheSpace) {
  Target target = ParseTarget("llvm -mcpu=znver4 -threads=1");
  Workload w = ParseWorkload("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,stride=1,pad=1");
  Config c = kConv2dCpuDirect.default_config(w, target);
  c["qt"] = 9;
  absl::StatusOr<ir::LoweredFunc> built = kConv2dCpuDirect.build(w, target, c, "f");
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(built.status().message()), HasSubstr("qt"));
}

TEST(Conv2dCpuDirect, BuildRejectsNewKnobsOutsideTheSpaceNamingThem) {
  Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  Workload w = ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1");
  struct Case {
    const char* knob;
    int64_t value;
    const char* says;
  } cases[] = {
      {"pt", 5, "knob 'pt'"},
      {"unroll_c", 3, "knob 'unroll_c'"},
      {"chunk_outer", 1, "chunk_outer == 0 when cc == 16"},
      {"tile_order", 1, "tile_order == 0 unless kt > 1"},
      {"kt", 2, "kt <= channel blocks"},
  };
  for (const Case& c : cases) {
    Config config = kConv2dCpuDirect.default_config(w, target);
    config[c.knob] = c.value;
    absl::StatusOr<ir::LoweredFunc> built = kConv2dCpuDirect.build(w, target, config, "f");
    ASSERT_FALSE(built.ok()) << c.knob;
    EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(built.status().message()), HasSubstr(c.says));
  }
}

}  // namespace
}  // namespace tune
