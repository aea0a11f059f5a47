#include "codegen/templates/conv2d_cpu_blocked.h"

#include <random>

#include "codegen/templates/catalog.h"
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
  // K / 16 = 12 takes kb 1..4 and kt up to 8; P = 9 every pt; Q = 30 every qt; C / 16 = 2 input
  // blocks the chunks.
  Workload w = ParseWorkload(
      "conv2d:N=1,C=32,H=9,W=30,K=192,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias_relu");
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

// Tiles of rows (blocks of rows inside the input and at its top and bottom), groups of register
// tiles in both orders, reductions in chunks of input blocks and partly unrolled channel loops,
// with tails: P % pt, groups % kt and input blocks % cbc left over.
TEST(Conv2dCpuBlocked, RandomConfigsOfRowTilesGroupsAndChunksComputeTheReference) {
  for (const char* target_text : {"llvm -mcpu=native -threads=1", "llvm -mcpu=native -threads=2"}) {
    Target target = ParseTarget(target_text);
    std::vector<KernelCase> cases = RandomCases(
        kConv2dCpuBlocked, target,
        {"conv2d:N=1,C=48,H=11,W=10,K=80,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
         "conv2d:N=2,C=24,H=13,W=12,K=40,R=3,S=3,stride=2,pad=1,layout=NCHW8c",
         "conv2d:N=1,C=12,H=14,W=9,K=20,R=3,S=3,stride=1,pad=2,dilation=2,layout=NCHW4c",
         "conv2d:N=1,C=80,H=5,W=7,K=48,R=1,S=1,stride=1,pad=0,layout=NCHW16c"},
        4, 7);
    EXPECT_THAT(CheckKernels(target, kConv2dCpuBlocked, cases), IsEmpty()) << target_text;
  }
}

// The chunks of the reduction meet every epilogue: the bias and the ReLU only after the last.
TEST(Conv2dCpuBlocked, ChunkedReductionsApplyTheEpilogueOnce) {
  Target target = ParseTarget("llvm -mcpu=native -threads=2");
  Workload w = ParseWorkload("conv2d:N=1,C=48,H=7,W=9,K=32,R=3,S=3,stride=1,pad=1,layout=NCHW16c");
  Config c = kConv2dCpuBlocked.default_config(w, target);
  c["cbc"] = 2;
  c["kb"] = 1;
  c["pt"] = 2;
  c["qt"] = 2;  // a register tile that fits 16 vector registers (AVX2) as well as 32; 9 = 4 * 2 + 1
  ASSERT_TRUE(kConv2dCpuBlocked.space(w, target).IsValid(c)) << ConfigToString(c);
  std::vector<KernelCase> cases;
  for (Epilogue e : {Epilogue::kNone, Epilogue::kBias, Epilogue::kRelu, Epilogue::kBiasRelu}) {
    for (int64_t outer : {0, 1}) {
      c["chunk_outer"] = outer;
      cases.push_back({testing::WithEpilogue(w, e), c});
    }
  }
  EXPECT_THAT(CheckKernels(target, kConv2dCpuBlocked, cases), IsEmpty());
}

TEST(Conv2dCpuBlocked, EveryResNet50LayerHasTenThousandValidConfigs) {
  // The AVX-512 target of the bench host, named so the test is the same on every machine.
  Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  for (const char* text :
       {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,layout=NCHW16c",
        "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1,layout=NCHW16c",
        "conv2d:N=1,C=1024,H=14,W=14,K=256,R=1,S=1,stride=1,pad=0,layout=NCHW16c",
        "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,layout=NCHW16c"}) {
    ConfigSpace space = kConv2dCpuBlocked.space(ParseWorkload(text), target);
    EXPECT_GE(space.EnumerateValid(10000).size(), 10000u) << text;
  }
}

TEST(Conv2dCpuBlocked, EveryKnobValueThatAConfigCanTakeChangesTheCode) {
  Workload w = ParseWorkload(
      "conv2d:N=1,C=48,H=9,W=11,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c,epilogue=bias");
  std::mt19937_64 rng(11);
  for (const char* target_text :
       {"llvm -mcpu=skylake-avx512 -threads=1", "llvm -mcpu=skylake-avx512 -threads=2"}) {
    EXPECT_THAT(
        testing::KnobChangesThatKeepTheCode(kConv2dCpuBlocked, w, ParseTarget(target_text), 3, rng),
        IsEmpty())
        << target_text;
  }
}

TEST(Conv2dCpuBlocked, BuildRejectsConfigsOutsideTheSpaceNamingTheKnob) {
  Target target = ParseTarget("llvm -mcpu=skylake-avx512 -threads=1");
  Workload w = ParseWorkload("conv2d:N=1,C=32,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1,layout=NCHW16c");
  struct Case {
    const char* knob;
    int64_t value;
    const char* says;
  } cases[] = {
      {"pt", 5, "knob 'pt'"},
      {"unroll_ci", 3, "knob 'unroll_ci'"},
      {"cbc", 3, "knob 'cbc'"},
      {"chunk_outer", 1, "chunk_outer == 0 when cbc == 2"},
      {"tile_order", 1, "tile_order == 0 unless kt > 1"},
      {"kt", 2, "kt <= 2 / kb"},
  };
  for (const Case& c : cases) {
    Config config = kConv2dCpuBlocked.default_config(w, target);
    config[c.knob] = c.value;
    absl::StatusOr<ir::LoweredFunc> built = kConv2dCpuBlocked.build(w, target, config, "f");
    ASSERT_FALSE(built.ok()) << c.knob;
    EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(built.status().message()), HasSubstr(c.says));
  }
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
  for (const KernelTemplate* t : Catalog::BuiltIn().TemplatesFor(
           ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,layout=NCHW16c"),
           target)) {
    names.push_back(std::string(t->name));
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("conv2d.cpu.blocked", "conv2d.cpu.winograd"));
  Workload plain = ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1");
  for (const KernelTemplate* t : Catalog::BuiltIn().TemplatesFor(plain, target)) {
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
