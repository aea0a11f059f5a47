#include "codegen/templates/conv2d_cpu_winograd.h"

#include <iostream>
#include <random>
#include <set>
#include <vector>

#include "codegen/templates/catalog.h"
#include "codegen/templates/conv2d_cpu_direct.h"
#include "codegen/templates/template_util.h"
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
using testing::RandomCases;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

TEST(Conv2dCpuWinograd, RandomConfigsComputeTheReferenceWithPartialTilesAndPadding) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuWinograd, target,
                  {"conv2d:N=1,C=16,H=7,W=9,K=32,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
                   "conv2d:N=2,C=32,H=13,W=11,K=16,R=3,S=3,stride=1,pad=0,layout=NCHW16c",
                   "conv2d:N=1,C=8,H=12,W=14,K=24,R=3,S=3,stride=1,pad=2,layout=NCHW8c",
                   "conv2d:N=1,C=4,H=5,W=6,K=8,R=3,S=3,stride=1,pad=1,layout=NCHW4c",
                   "conv2d:N=1,C=32,H=3,W=3,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c"},
                  8, 1);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty());
}

TEST(Conv2dCpuWinograd, EveryValueOfEveryKnobComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  // K / 16 = 12 takes kv 1..4 and every gemm_order; 20 x 22 outputs give enough tiles for every
  // tr; C = 32 takes both cc and both input transform orders.
  Workload w = ParseWorkload(
      "conv2d:N=1,C=32,H=20,W=22,K=192,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias_relu");
  std::mt19937_64 rng(3);
  std::vector<std::string> unreachable;
  std::vector<Config> configs =
      testing::ConfigsCoveringEveryKnobValue(kConv2dCpuWinograd, w, target, rng, &unreachable);
  EXPECT_THAT(unreachable, IsEmpty());
  std::vector<KernelCase> cases;
  for (const Config& c : configs) {
    cases.push_back({w, c});
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty());
}

TEST(Conv2dCpuWinograd, ParallelKernelsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=3");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuWinograd, target,
                  {"conv2d:N=2,C=16,H=13,W=11,K=32,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
                   "conv2d:N=1,C=32,H=20,W=20,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c"},
                  6, 4);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty());
}

// Chunks of the GEMMs' reduction (C % cc left over), every GEMM loop order, unrolled channel
// loops and both orders of each transform, on partial tiles, one and two threads.
TEST(Conv2dCpuWinograd, RandomConfigsOfGemmOrdersChunksAndTransformOrdersComputeTheReference) {
  for (const char* target_text : {"llvm -mcpu=native -threads=1", "llvm -mcpu=native -threads=2"}) {
    Target target = ParseTarget(target_text);
    std::vector<KernelCase> cases =
        RandomCases(kConv2dCpuWinograd, target,
                    {"conv2d:N=1,C=48,H=11,W=10,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
                     "conv2d:N=2,C=40,H=9,W=7,K=24,R=3,S=3,stride=1,pad=0,layout=NCHW8c",
                     "conv2d:N=1,C=36,H=6,W=5,K=12,R=3,S=3,stride=1,pad=2,layout=NCHW4c"},
                    6, 7);
    EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty()) << target_text;
  }
}

// Order 2 transforms the next chunk's filters inside the outermost GEMM loop: with xi or the
// register tiles outermost, a last chunk of fewer than cc channels (C = 48, cc = 32), both tile
// sizes and thread counts whose shares of the output-channel chunks differ (5 chunks on 2 and 3
// threads).
TEST(Conv2dCpuWinograd, PipelinedFilterTransformsComputeTheReferenceWithAShortLastChunk) {
  Workload w = ParseWorkload(
      "conv2d:N=1,C=48,H=9,W=10,K=80,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias");
  for (const char* target_text : {"llvm -mcpu=native -threads=1", "llvm -mcpu=native -threads=2",
                                  "llvm -mcpu=native -threads=3"}) {
    Target target = ParseTarget(target_text);
    ConfigSpace space = kConv2dCpuWinograd.space(w, target);
    std::vector<KernelCase> cases;
    for (int64_t m : {2, 4}) {
      for (int64_t cc : {16, 32}) {
        for (int64_t gemm_order : {0, 3}) {
          Config c = kConv2dCpuWinograd.default_config(w, target);
          c["m"] = m;
          c["order"] = 2;
          c["tr"] = 1;
          c["jt"] = 4;
          c["kv"] = 1;
          c["cc"] = cc;
          c["unroll_c"] = 4;
          c["gemm_order"] = gemm_order;
          ASSERT_TRUE(space.IsValid(c)) << ConfigToString(c);
          cases.push_back({w, c});
        }
      }
    }
    EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty()) << target_text;
  }
}

TEST(Conv2dCpuWinograd, EveryResNet50LayerItAppliesToHasTenThousandValidConfigs) {
  // The AVX-512 target of the bench host, named so the test is the same on every machine.
  Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  for (const char* text :
       {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,layout=NCHW16c"}) {
    ConfigSpace space = kConv2dCpuWinograd.space(ParseWorkload(text), target);
    EXPECT_GE(space.EnumerateValid(10000).size(), 10000u) << text;
  }
}

TEST(Conv2dCpuWinograd, EveryKnobValueThatAConfigCanTakeChangesTheCode) {
  Workload w = ParseWorkload(
      "conv2d:N=1,C=48,H=10,W=9,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias");
  std::mt19937_64 rng(11);
  EXPECT_THAT(
      testing::KnobChangesThatKeepTheCode(
          kConv2dCpuWinograd, w, ParseTarget("llvm -mcpu=skylake-avx512 -threads=2"), 6, rng),
      IsEmpty());
}

TEST(Conv2dCpuWinograd, BuildRejectsConfigsOutsideTheSpaceNamingTheKnob) {
  Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  Workload w = ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,layout=NCHW16c");
  struct Case {
    const char* knob;
    int64_t value;
    const char* says;
  } cases[] = {
      {"cc", 8, "knob 'cc'"},
      {"gemm_order", 6, "knob 'gemm_order'"},
      {"it_order", 1, "it_order == 0 when the input has one vector of channels"},
      {"ot_order", 1, "ot_order == 0 when the output has one vector of channels"},
      {"gemm_order", 1, "gemm_order is the first order of its nesting"},
  };
  for (const Case& c : cases) {
    Config config = kConv2dCpuWinograd.default_config(w, target);
    config[c.knob] = c.value;
    absl::StatusOr<ir::LoweredFunc> built = kConv2dCpuWinograd.build(w, target, config, "f");
    ASSERT_FALSE(built.ok()) << c.knob;
    EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(built.status().message()), HasSubstr(c.says));
  }
}

TEST(Conv2dCpuWinograd, DefaultConfigsOfResNetLayersComputeTheReferenceWithinTheirTolerance) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases;
  for (const char* text :
       {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=relu",
        "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias"}) {
    Workload w = ParseWorkload(text);
    for (int64_t m : {2, 4}) {
      Config c = kConv2dCpuWinograd.default_config(w, target);
      c["m"] = m;
      c["tr"] = 1;
      cases.push_back({w, c});
    }
  }
  std::vector<double> ratios;
  EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases, &ratios), IsEmpty());
  // The largest error of each, as a fraction of the standard bound: what the stated tolerance
  // was chosen from (bench/RESULTS.md).
  for (size_t i = 0; i < cases.size(); ++i) {
    std::cout << cases[i].workload.ToString() << " F(" << cases[i].config.at("m") << ",3): error "
              << ratios[i] << " of the standard bound\n";
    EXPECT_GE(ratios[i], 0.0);
  }
}

// The parallel loop over blocks of tiles splits statically into contiguous shares: the default
// block size leaves no thread more than one register tile of work behind the others.
TEST(Conv2dCpuWinograd, DefaultBlocksOfTilesShareEvenlyAmongTheThreads) {
  for (const char* text :
       {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=16,H=20,W=22,K=32,R=3,S=3,stride=1,pad=1,layout=NCHW16c"}) {
    for (int threads : {1, 2, 4}) {
      Target target =
          ParseTarget(("llvm -mcpu=native -threads=" + std::to_string(threads)).c_str());
      Workload w = ParseWorkload(text);
      Config c = kConv2dCpuWinograd.default_config(w, target);
      if (c.at("order") != 0) {
        continue;
      }
      const Conv2dShape& s = w.conv2d();
      const int64_t m = c.at("m");
      const int64_t tiles = s.n * CeilDiv(s.p(), m) * CeilDiv(s.q(), m);
      const int64_t jt = c.at("jt");
      const int64_t tb = jt * c.at("tr");
      const int64_t blocks = CeilDiv(tiles, tb);
      const int64_t busiest = std::min(tiles, CeilDiv(blocks, threads) * tb);
      EXPECT_LT(busiest - CeilDiv(tiles, threads), jt)
          << text << " on " << threads << " threads: " << ConfigToString(c) << ", " << tiles
          << " tiles";
    }
  }
}

TEST(Conv2dCpuWinograd, SeedsAreValidDistinctAndComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=2");
  Workload w = ParseWorkload(
      "conv2d:N=1,C=32,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias");
  ConfigSpace space = kConv2dCpuWinograd.space(w, target);
  std::vector<KernelCase> cases;
  for (const Config& c : kConv2dCpuWinograd.seeds(w, target)) {
    EXPECT_TRUE(space.IsValid(c)) << ConfigToString(c);
    for (const KernelCase& seen : cases) {
      EXPECT_NE(seen.config, c) << "seed given twice: " << ConfigToString(c);
    }
    EXPECT_NE(c, kConv2dCpuWinograd.default_config(w, target)) << "the default is no seed";
    cases.push_back({w, c});
  }
  EXPECT_EQ(cases.size(), 11u);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty());
}

TEST(Conv2dCpuWinograd, SeedsNearestTheDefaultComeFirstRegisterTileBeforeTileSize) {
  const Target avx512 = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  for (const char* text : {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
                           "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1",
                           "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1"}) {
    const Workload w = ParseWorkload(text);
    const Config def = kConv2dCpuWinograd.default_config(w, avx512);
    const std::vector<Config> seeds = kConv2dCpuWinograd.seeds(w, avx512);
    ASSERT_GE(seeds.size(), 3u) << text;
    auto changes = [&def](const Config& c) {
      return int{c.at("kv") != def.at("kv")} + int{c.at("m") != def.at("m")} +
             int{c.at("order") != def.at("order")};
    };
    // The first seed is the default's class with one vector of output channels.
    ASSERT_EQ(def.at("kv"), 2) << text;
    EXPECT_EQ(seeds[0].at("kv"), 1) << text;
    EXPECT_EQ(seeds[0].at("m"), def.at("m")) << text;
    EXPECT_EQ(seeds[0].at("order"), def.at("order")) << text;
    // Then the other tile size, in the default's order.
    EXPECT_NE(seeds[1].at("m"), def.at("m")) << text;
    EXPECT_EQ(seeds[1].at("order"), def.at("order")) << text;
    for (size_t i = 1; i < seeds.size(); ++i) {
      EXPECT_LE(changes(seeds[i - 1]), changes(seeds[i])) << text << ", seed " << i;
    }
  }
}

// Order 0 keeps all the transformed filters ((m + 2)^2 x C x K floats) between its GEMMs: a seed
// only where they fit in L2 (2 MiB), for each tile size apart.
TEST(Conv2dCpuWinograd, SeedsTryOrderZeroOnlyWhereItsTransformedFiltersFitInL2) {
  const Target avx512 = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  auto order0_tiles = [&](const char* text) {
    std::set<int64_t> m;
    for (const Config& c : kConv2dCpuWinograd.seeds(ParseWorkload(text), avx512)) {
      if (c.at("order") == 0) {
        m.insert(c.at("m"));
      }
    }
    return m;
  };
  // 64 x 64 channels: 0.6 MiB at F(4,3), so both tile sizes (the default is order 0 itself).
  EXPECT_THAT(order0_tiles("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"),
              ElementsAre(2, 4));
  // 128 x 128: 1 MiB at F(2,3), 2.25 MiB at F(4,3).
  EXPECT_THAT(order0_tiles("conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1"),
              ElementsAre(2));
  // 256 x 256 and 512 x 512: 4 MiB and more at either size.
  EXPECT_THAT(order0_tiles("conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1"), IsEmpty());
  EXPECT_THAT(order0_tiles("conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1"), IsEmpty());
}

TEST(Conv2dCpuWinograd, Avx2TargetsComputeTheReferenceWithBlocksOfTwoVectors) {
  Target target = ParseTarget("llvm -mcpu=haswell -threads=1");
  if (!testing::HostRuns(target)) {
    GTEST_SKIP() << "host cannot run AVX2";
  }
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuWinograd, target,
                  {"conv2d:N=1,C=16,H=9,W=10,K=32,R=3,S=3,stride=1,pad=1,layout=NCHW16c"}, 4, 5);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty());
}

TEST(Conv2dCpuWinograd, HoldsF23ToTheStandardBoundAndStatesALooserOneForF43) {
  Workload w = ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,layout=NCHW16c");
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  Config c = kConv2dCpuWinograd.default_config(w, target);
  c["m"] = 2;
  EXPECT_EQ(TemplateTolerance(kConv2dCpuWinograd, w, c), 1.0);
  c["m"] = 4;
  EXPECT_EQ(TemplateTolerance(kConv2dCpuWinograd, w, c), kWinogradF43Tolerance);
  EXPECT_GT(kWinogradF43Tolerance, 1.0);
}

TEST(Conv2dCpuWinograd, RefusesLayersItDoesNotApplyToNamingTheFields) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  struct Case {
    const char* workload;
    const char* field;
  } cases[] = {
      {"conv2d:N=1,C=16,H=8,W=8,K=16,R=1,S=1,stride=1,pad=0,layout=NCHW16c", "R=1,S=1"},
      {"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=2,pad=1,layout=NCHW16c", "stride=2"},
      {"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=2,dilation=2,layout=NCHW16c",
       "dilation=2"},
  };
  for (const Case& c : cases) {
    Workload w = ParseWorkload(c.workload);
    absl::Status shape = CheckTemplateShape(kConv2dCpuWinograd, w);
    EXPECT_THAT(shape.message(), HasSubstr(c.field)) << c.workload;
    EXPECT_THAT(shape.message(), HasSubstr("R=3,S=3,stride=1,dilation=1")) << c.workload;
    EXPECT_THAT(Catalog::BuiltIn().TemplatesFor(w, target),
                ::testing::Not(::testing::Contains(&kConv2dCpuWinograd)));
    Config config = {{"m", 2}, {"jt", 4}, {"kv", 1}, {"tr", 1}};
    absl::StatusOr<ir::LoweredFunc> built =
        kConv2dCpuWinograd.build(w, target, config, "tune_wino");
    EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument) << c.workload;
    EXPECT_THAT(built.status().message(), HasSubstr(c.field)) << c.workload;
  }
}

TEST(Conv2dCpuWinograd, AppliesToThreeByThreeStrideOneLayersInBlockedAndPlainLayouts) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  EXPECT_THAT(Catalog::BuiltIn().TemplatesFor(
                  ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,"
                                "layout=NCHW16c"),
                  target),
              ::testing::Contains(&kConv2dCpuWinograd));
  EXPECT_THAT(Catalog::BuiltIn().TemplatesFor(
                  ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1"), target),
              ::testing::Contains(&kConv2dCpuWinograd));
}

// Its default beats the direct and blocked templates' from 16 input channels up and loses below
// (bench/RESULTS.md), so there it comes first: an untuned build gets it, a search measures it
// first.
TEST(Conv2dCpuWinograd, LeadsTheTemplatesFromSixteenInputChannelsAndFollowsBelow) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  auto first = [&](const char* workload) {
    return Catalog::BuiltIn().TemplatesFor(ParseWorkload(workload), target).front()->name;
  };
  EXPECT_EQ(first("conv2d:N=1,C=16,H=8,W=8,K=4,R=3,S=3,stride=1,pad=1"), "conv2d.cpu.winograd");
  EXPECT_EQ(first("conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1"),
            "conv2d.cpu.winograd");
  EXPECT_EQ(first("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,layout=NCHW16c"),
            "conv2d.cpu.winograd");
  EXPECT_EQ(first("conv2d:N=1,C=8,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"), "conv2d.cpu.direct");
  EXPECT_EQ(first("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=2,pad=1"), "conv2d.cpu.direct");
  std::vector<const KernelTemplate*> all = Catalog::BuiltIn().TemplatesFor(
      ParseWorkload("conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1"), target);
  EXPECT_THAT(all, ::testing::ElementsAre(&kConv2dCpuWinograd, &kConv2dCpuDirect));
}

// In NCHW the vectors gather channels in groups of 4 or more: C = 3 (an RGB input) has none.
TEST(Conv2dCpuWinograd, RefusesPlainLayersWhoseChannelsDoNotGroupByFour) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  Workload w = ParseWorkload("conv2d:N=1,C=3,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1");
  absl::Status shape = CheckTemplateShape(kConv2dCpuWinograd, w);
  EXPECT_THAT(shape.message(), HasSubstr("C=3,K=16"));
  EXPECT_THAT(shape.message(), HasSubstr("layout=NCHW with C and K multiples of 4"));
  EXPECT_THAT(Catalog::BuiltIn().TemplatesFor(w, target),
              ::testing::Not(::testing::Contains(&kConv2dCpuWinograd)));
}

// Plain NCHW kernels gather the input's and the weights' vectors of channels and scatter the
// output's: groups of 16, 8 and 4 channels, partial tiles, padding, an epilogue, every order.
TEST(Conv2dCpuWinograd, PlainLayoutKernelsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases =
      RandomCases(kConv2dCpuWinograd, target,
                  {"conv2d:N=1,C=32,H=7,W=9,K=48,R=3,S=3,stride=1,pad=1",
                   "conv2d:N=2,C=24,H=13,W=11,K=8,R=3,S=3,stride=1,pad=0,epilogue=bias_relu",
                   "conv2d:N=1,C=12,H=12,W=10,K=20,R=3,S=3,stride=1,pad=2",
                   "conv2d:N=1,C=64,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1,epilogue=relu"},
                  8, 2);
  for (const char* text : {"conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1",
                           "conv2d:N=1,C=128,H=7,W=7,K=64,R=3,S=3,stride=1,pad=1,epilogue=bias"}) {
    Workload w = ParseWorkload(text);
    cases.push_back({w, kConv2dCpuWinograd.default_config(w, target)});
    for (const Config& seed : kConv2dCpuWinograd.seeds(w, target)) {
      cases.push_back({w, seed});
    }
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty());
}

TEST(Conv2dCpuWinograd, ParallelPlainLayoutKernelsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=2");
  std::vector<KernelCase> cases = RandomCases(
      kConv2dCpuWinograd, target, {"conv2d:N=1,C=32,H=20,W=20,K=64,R=3,S=3,stride=1,pad=1"}, 6, 6);
  EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty());
}

// Prepared weights (weights=prepared): the kernels read the filters that their preparation
// transformed, in the chunks their order reads, blocked and plain, every order with split and
// whole reductions, one and two threads (CheckKernels fills the prepared buffer with NaN first,
// so a float the preparation leaves unwritten and the kernel reads fails the check).
TEST(Conv2dCpuWinograd, KernelsOnPreparedWeightsComputeTheReferenceInEveryOrder) {
  for (const char* target_text : {"llvm -mcpu=native -threads=1", "llvm -mcpu=native -threads=2"}) {
    Target target = ParseTarget(target_text);
    std::vector<KernelCase> cases;
    for (const char* text :
         {"conv2d:N=1,C=48,H=9,W=10,K=80,R=3,S=3,stride=1,pad=1,layout=NCHW16c,weights=prepared",
          "conv2d:N=1,C=32,H=7,W=9,K=48,R=3,S=3,stride=1,pad=1,weights=prepared,epilogue=bias"}) {
      Workload w = ParseWorkload(text);
      ConfigSpace space = kConv2dCpuWinograd.space(w, target);
      for (int64_t order : {0, 1, 2}) {
        for (int64_t m : {2, 4}) {
          Config c = kConv2dCpuWinograd.default_config(w, target);
          c["order"] = order;
          c["m"] = m;
          c["kv"] = 1;
          c["tr"] = 1;
          c["cc"] = order == 2 ? 16 : w.conv2d().c;
          if (space.IsValid(c)) {
            cases.push_back({w, c});
          }
        }
      }
      std::vector<KernelCase> random = RandomCases(kConv2dCpuWinograd, target, {text}, 6, 11);
      cases.insert(cases.end(), random.begin(), random.end());
    }
    ASSERT_GE(cases.size(), 16u);
    EXPECT_THAT(CheckKernels(target, kConv2dCpuWinograd, cases), IsEmpty()) << target_text;
  }
}

// The kernel on prepared weights transforms no filter: its IR reads the prepared buffer and not
// the weights, and the preparation writes (alpha^2 points x C x K, plus the padding between
// points) floats: 16 points of 64 x 64 channels for F(2,3), 36 for F(4,3).
TEST(Conv2dCpuWinograd, PreparedWeightsAreTheTransformedFiltersInTheOrderTheGemmsReadThem) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1");
  Workload w = ParseWorkload(
      "conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c,weights=prepared");
  for (int64_t m : {2, 4}) {
    Config c = kConv2dCpuWinograd.default_config(w, target);
    c["m"] = m;
    c["order"] = 0;
    ASSERT_TRUE(kConv2dCpuWinograd.space(w, target).IsValid(c));
    absl::StatusOr<ir::LoweredFunc> kernel = kConv2dCpuWinograd.build(w, target, c, "k");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    ASSERT_EQ(kernel->params.size(), 3u);
    EXPECT_EQ(kernel->params[1].name(), "prepared");
    absl::StatusOr<PreparedWeights> prepared =
        kConv2dCpuWinograd.prepare(w, target, c, "k_prepare");
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    const int64_t points = (m + 2) * (m + 2);
    EXPECT_GE(prepared->floats, points * 64 * 64);
    EXPECT_LE(prepared->floats, points * (64 * 64 + 64));
    EXPECT_EQ(prepared->func.name, "k_prepare");
  }
}

}  // namespace
}  // namespace tune
