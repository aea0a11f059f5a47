// The GPU schedule templates: every default config and random configs of their spaces build
// IR that verifies and lowers for CUDA and ROCm archs, across square, skinny, odd GEMMs and
// ResNet-50 conv layers; configs beyond the GPU limits are rejected naming the limit.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/ir/printer.h"
#include "codegen/ir/verifier.h"
#include "codegen/llvm/gpu_backend.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/lower.h"
#include "codegen/sim/gpu_sim.h"
#include "codegen/templates/template.h"
#include "common/files.h"
#include "common/reference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ::testing::HasSubstr;

const char* const kTargets[] = {"cuda -arch=sm_90", "cuda -arch=sm_80", "rocm -mcpu=gfx90a"};

const char* const kGemms[] = {
    "gemm:M=256,N=256,K=256",
    "gemm:M=1024,N=1024,K=1024",
    "gemm:M=1,N=1000,K=333",
    "gemm:M=7,N=4096,K=512,epilogue=bias",
    "gemm:M=100,N=1000,K=333,epilogue=bias_relu",
    "gemm:M=33,N=65,K=17,epilogue=relu",
    "gemm:M=1,N=1,K=1",
};

const char* const kConvs[] = {
    "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
    "conv2d:N=8,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,epilogue=bias_relu",
    "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,epilogue=relu",
    "conv2d:N=8,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3,epilogue=bias",
    "conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=2,pad=1",
};

// Builds, verifies and lowers one config; returns the failure text or "".
std::string BuildAndLower(const KernelTemplate& tpl, const Workload& w, const Target& t,
                          const Config& c) {
  absl::StatusOr<ir::LoweredFunc> built = tpl.build(w, t, c, DefaultFunctionName(w));
  if (!built.ok()) {
    return std::string(built.status().message());
  }
  if (absl::Status s = ir::Verify(*built); !s.ok()) {
    return std::string(s.message());
  }
  absl::StatusOr<ir::LoweredFunc> lowered = Lower(*std::move(built));
  if (!lowered.ok()) {
    return std::string(lowered.status().message());
  }
  return "";
}

const KernelTemplate* GpuTemplate(std::string_view name, const Target& target, const Workload& w) {
  for (const KernelTemplate* t : TemplatesFor(w, target)) {
    if (t->name == name) {
      return t;
    }
  }
  return nullptr;
}

void CheckTemplate(std::string_view name, const std::vector<std::string>& workloads, int random) {
  for (const char* target_text : kTargets) {
    Target target = *Target::Parse(target_text);
    for (const std::string& text : workloads) {
      Workload w = *Workload::Parse(text);
      const KernelTemplate* tpl = GpuTemplate(name, target, w);
      ASSERT_NE(tpl, nullptr) << name << " not listed for " << target_text << " " << text;
      ConfigSpace space = tpl->space(w, target);
      Config def = tpl->default_config(w, target);
      ASSERT_TRUE(space.IsValid(def)) << ConfigToString(def) << ": " << space.Validate(def);
      EXPECT_EQ(BuildAndLower(*tpl, w, target, def), "")
          << target_text << " " << text << " default " << ConfigToString(def);
      std::mt19937_64 rng(7);
      for (int i = 0; i < random; ++i) {
        std::optional<Config> c = space.Sample(rng);
        ASSERT_TRUE(c.has_value()) << "no valid config sampled for " << text;
        EXPECT_EQ(BuildAndLower(*tpl, w, target, *c), "")
            << target_text << " " << text << " " << ConfigToString(*c);
      }
    }
  }
}

TEST(GemmGpuTiled, DefaultAndRandomConfigsVerifyAndLower) {
  CheckTemplate("gemm.gpu.tiled", {std::begin(kGemms), std::end(kGemms)}, 20);
}

TEST(Conv2dGpuImplicitGemm, DefaultAndRandomConfigsVerifyAndLower) {
  CheckTemplate("conv2d.gpu.implicit_gemm", {std::begin(kConvs), std::end(kConvs)}, 20);
}

TEST(Conv2dGpuDirect, DefaultAndRandomConfigsVerifyAndLower) {
  CheckTemplate("conv2d.gpu.direct", {std::begin(kConvs), std::end(kConvs)}, 20);
}

TEST(GemmGpuTiled, DefaultForLargeShapesIsTheClassicTile) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  Workload w = *Workload::Parse("gemm:M=4096,N=4096,K=4096");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
  ASSERT_NE(tpl, nullptr);
  Config c = tpl->default_config(w, target);
  EXPECT_EQ(
      ConfigToString(c),
      R"({"async":0,"bk":8,"bm":128,"bn":128,"fragpipe":0,"gridk":1,"splitk":1,"stages":2,"tm":8,"tn":8,"vec":4})");
}

TEST(GemmGpuTiled, DefaultSplitsTheReductionAcrossBlocksWhenTilesCannotFillTheGpu) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  Workload w = *Workload::Parse("gemm:M=1024,N=1024,K=1024");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
  ASSERT_NE(tpl, nullptr);
  // 64 tiles of 128 x 128: two blocks per tile make 128.
  Config c = tpl->default_config(w, target);
  EXPECT_EQ(c.at("bm"), 128);
  EXPECT_EQ(c.at("bn"), 128);
  EXPECT_EQ(c.at("gridk"), 2);
}

TEST(GpuMatmulTemplates, SeedsAreValidDistinctBuildAndSplitTheReductionWhereTilesAreFew) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"gemm.gpu.tiled", "gemm:M=1024,N=1024,K=1024"},
           {"gemm.gpu.tiled", "gemm:M=1,N=4096,K=4096"},
           {"conv2d.gpu.implicit_gemm", "conv2d:N=8,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1"}}) {
    Workload w = *Workload::Parse(text);
    const KernelTemplate* tpl = GpuTemplate(name, target, w);
    ASSERT_NE(tpl, nullptr);
    ASSERT_TRUE(tpl->seeds) << name;
    std::vector<Config> seeds = tpl->seeds(w, target);
    EXPECT_GE(seeds.size(), 8u) << text;
    EXPECT_LE(seeds.size(), 40u) << text;
    ConfigSpace space = tpl->space(w, target);
    std::set<std::string> distinct;
    bool split = false;
    for (const Config& c : seeds) {
      EXPECT_TRUE(space.IsValid(c)) << ConfigToString(c) << ": " << space.Validate(c);
      EXPECT_TRUE(distinct.insert(ConfigToString(c)).second) << ConfigToString(c);
      split = split || c.at("gridk") > 1;
    }
    EXPECT_TRUE(split) << text;
    for (size_t i = 0; i < seeds.size(); i += 5) {
      EXPECT_EQ(BuildAndLower(*tpl, w, target, seeds[i]), "") << ConfigToString(seeds[i]);
    }
  }
}

TEST(GemmGpuTiled, AReluEpilogueKeepsEachReductionInOneBlock) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  Workload relu = *Workload::Parse("gemm:M=16,N=4096,K=4096,epilogue=bias_relu");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, relu);
  ASSERT_NE(tpl, nullptr);
  EXPECT_EQ(tpl->space(relu, target).FindKnob("gridk")->values, std::vector<int64_t>{1});
  Workload bias = *Workload::Parse("gemm:M=16,N=4096,K=4096,epilogue=bias");
  EXPECT_GT(tpl->space(bias, target).FindKnob("gridk")->values.size(), 4u);
}

TEST(GemmGpuTiled, ConfigsBeyondTheLimitsAreRejectedNamingTheLimit) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  Workload w = *Workload::Parse("gemm:M=1024,N=1024,K=1024");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
  ASSERT_NE(tpl, nullptr);
  ConfigSpace space = tpl->space(w, target);
  // 256 x 256 / (1 x 1) threads.
  Config threads = {{"bm", 256},  {"bn", 256},     {"tm", 1},   {"tn", 1},
                    {"bk", 8},    {"stages", 1},   {"vec", 4},  {"splitk", 1},
                    {"gridk", 1}, {"fragpipe", 0}, {"async", 0}};
  EXPECT_THAT(space.Validate(threads).message(), HasSubstr("max_threads_per_block (1024)"));
  // 2 stages of 64 x (256 + 260) floats: 258 KiB of shared memory.
  Config shared = {{"bm", 256},  {"bn", 256},     {"tm", 8},   {"tn", 8},
                   {"bk", 64},   {"stages", 2},   {"vec", 4},  {"splitk", 1},
                   {"gridk", 1}, {"fragpipe", 0}, {"async", 0}};
  EXPECT_THAT(space.Validate(shared).message(), HasSubstr("max_shared_bytes_per_block"));
  // 8 x 8 accumulators over 16 threads: the staged loads alone blow the register budget.
  Config regs = {{"bm", 32},   {"bn", 32},      {"tm", 8},   {"tn", 8},
                 {"bk", 64},   {"stages", 2},   {"vec", 4},  {"splitk", 1},
                 {"gridk", 1}, {"fragpipe", 0}, {"async", 0}};
  EXPECT_THAT(space.Validate(regs).message(), HasSubstr("registers per thread"));
  // 3 x 16 threads: not a whole number of warps.
  Config warp = {{"bm", 16},   {"bn", 64},      {"tm", 4},   {"tn", 4},
                 {"bk", 8},    {"stages", 2},   {"vec", 4},  {"splitk", 1},
                 {"gridk", 1}, {"fragpipe", 0}, {"async", 0}};
  warp["bm"] = 8;
  warp["tm"] = 2;
  warp["bn"] = 64;
  warp["tn"] = 8;
  warp["splitk"] = 1;
  // 4 x 8 = 32 threads is fine; 2 groups of 4 x 8 = 64 too; 8 / 2 x 64 / 8 x 2 ...
  EXPECT_TRUE(space.Validate(warp).ok()) << space.Validate(warp);
}

TEST(GemmGpuTiled, IsListedForCudaAndRocmUnderOneName) {
  Workload w = *Workload::Parse("gemm:M=64,N=64,K=64");
  for (const char* text : {"cuda -arch=sm_90", "rocm -mcpu=gfx942"}) {
    Target target = *Target::Parse(text);
    std::vector<const KernelTemplate*> list = TemplatesFor(w, target);
    ASSERT_FALSE(list.empty()) << text;
    EXPECT_EQ(list.front()->name, "gemm.gpu.tiled") << text;
    EXPECT_TRUE(TemplateBuildsFor(*list.front(), target.kind)) << text;
  }
}

}  // namespace
}  // namespace tune

// ---------------------------------------------------------------------------------------------
// Correctness on the GPU simulator, against common/reference.h.

namespace tune {
namespace {

// Runs one config of `tpl` on the simulator and compares with the reference; "" when right.
std::string SimulateAndCompare(const KernelTemplate& tpl, const Workload& w, const Target& t,
                               const Config& c) {
  absl::StatusOr<ir::LoweredFunc> built = tpl.build(w, t, c, DefaultFunctionName(w));
  if (!built.ok()) {
    return std::string(built.status().message());
  }
  absl::StatusOr<ir::LoweredFunc> lowered = Lower(*std::move(built));
  if (!lowered.ok()) {
    return std::string(lowered.status().message());
  }
  TensorSet tensors(w, 11);
  std::vector<float> want(static_cast<size_t>(tensors.output_size()));
  RunReference(w, tensors.InputPointers(), want.data());
  std::vector<std::span<float>> args;
  std::vector<TensorArg> abi = w.Arguments();
  std::vector<void*> ptrs = tensors.AbiPointers();
  for (size_t i = 0; i < abi.size(); ++i) {
    args.emplace_back(static_cast<float*>(ptrs[i]), static_cast<size_t>(abi[i].NumElements()));
  }
  // As a launcher does: the outputs the kernel accumulates into start at zero.
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*lowered);
  if (!launch.ok()) {
    return std::string(launch.status().message());
  }
  for (uint32_t arg : launch->zeroed_args) {
    std::fill(args[arg].begin(), args[arg].end(), 0.0f);
  }
  GpuSimOptions options;
  options.block_workers = 2;
  if (absl::Status s = RunGpuKernel(*lowered, args, options); !s.ok()) {
    return std::string(s.message());
  }
  CompareResult r = CompareOutputs(w, tensors.output(), want.data(), tensors.output_size());
  return r.ok ? "" : r.message;
}

void CheckOnSimulator(std::string_view name, const std::vector<std::string>& workloads, int random,
                      const char* target_text = "cuda -arch=sm_90") {
  Target target = *Target::Parse(target_text);
  for (const std::string& text : workloads) {
    Workload w = *Workload::Parse(text);
    const KernelTemplate* tpl = GpuTemplate(name, target, w);
    ASSERT_NE(tpl, nullptr);
    Config def = tpl->default_config(w, target);
    EXPECT_EQ(SimulateAndCompare(*tpl, w, target, def), "")
        << text << " default " << ConfigToString(def);
    ConfigSpace space = tpl->space(w, target);
    std::mt19937_64 rng(5);
    for (int i = 0; i < random; ++i) {
      std::optional<Config> c = space.Sample(rng);
      ASSERT_TRUE(c.has_value());
      EXPECT_EQ(SimulateAndCompare(*tpl, w, target, *c), "") << text << " " << ConfigToString(*c);
    }
  }
}

TEST(GemmGpuTiledSim, DefaultAndRandomConfigsComputeTheReference) {
  CheckOnSimulator("gemm.gpu.tiled",
                   {"gemm:M=33,N=65,K=17", "gemm:M=33,N=64,K=20,epilogue=bias_relu",
                    "gemm:M=1,N=40,K=37,epilogue=bias", "gemm:M=64,N=64,K=64,epilogue=relu",
                    "gemm:M=5,N=24,K=300,epilogue=bias"},
                   6);
}

TEST(Conv2dGpuImplicitGemmSim, DefaultAndRandomConfigsComputeTheReference) {
  CheckOnSimulator("conv2d.gpu.implicit_gemm",
                   {"conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=1,pad=1",
                    "conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=2,pad=1,epilogue=bias_relu",
                    "conv2d:N=2,C=5,H=8,W=8,K=12,R=1,S=1,stride=1,pad=0,epilogue=bias",
                    "conv2d:N=1,C=3,H=11,W=10,K=6,R=3,S=3,stride=1,pad=2,dilation=2",
                    "conv2d:N=1,C=32,H=5,W=5,K=8,R=3,S=3,stride=1,pad=1,epilogue=bias"},
                   5);
}

TEST(Conv2dGpuDirectSim, DefaultAndRandomConfigsComputeTheReference) {
  CheckOnSimulator("conv2d.gpu.direct",
                   {"conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=1,pad=1",
                    "conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=2,pad=1,epilogue=bias_relu",
                    "conv2d:N=2,C=5,H=8,W=8,K=12,R=1,S=1,stride=1,pad=0,epilogue=bias",
                    "conv2d:N=1,C=3,H=11,W=10,K=6,R=3,S=3,stride=1,pad=2,dilation=2"},
                   5);
}

TEST(GemmGpuTiledSim, SplitKAndSingleStageComputeTheReference) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  Workload w = *Workload::Parse("gemm:M=7,N=40,K=70,epilogue=bias_relu");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
  ASSERT_NE(tpl, nullptr);
  for (int64_t stages : {1, 2}) {
    for (int64_t splitk : {2, 4}) {
      for (int64_t fragpipe : {0, 1}) {
        if (fragpipe == 1 && stages == 1) {
          continue;
        }
        Config c = {{"bm", 8},          {"bn", 16},
                    {"tm", 4},          {"tn", 2},
                    {"bk", 16},         {"vec", 4},
                    {"splitk", splitk}, {"gridk", 1},
                    {"stages", stages}, {"fragpipe", fragpipe},
                    {"async", 0}};
        EXPECT_EQ(SimulateAndCompare(*tpl, w, target, c), "") << ConfigToString(c);
      }
    }
  }
}

TEST(GemmGpuTiledSim, SixteenWideTilesAndPipelinedFragmentsComputeTheReferenceOnEdgeTiles) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  Workload w = *Workload::Parse("gemm:M=70,N=136,K=21,epilogue=bias");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
  ASSERT_NE(tpl, nullptr);
  for (auto [tm, tn] : {std::pair<int64_t, int64_t>{8, 16}, {16, 8}, {8, 8}}) {
    for (int64_t fragpipe : {0, 1}) {
      Config c = {{"bm", 64},    {"bn", 128}, {"tm", tm},    {"tn", tn},   {"bk", 8},
                  {"stages", 2}, {"vec", 1},  {"splitk", 1}, {"gridk", 1}, {"fragpipe", fragpipe},
                  {"async", 0}};
      ASSERT_TRUE(tpl->space(w, target).IsValid(c)) << ConfigToString(c);
      EXPECT_EQ(SimulateAndCompare(*tpl, w, target, c), "") << ConfigToString(c);
    }
  }
}

TEST(GemmGpuTiled, PipelinedFragmentsNeedTwoOrMoreStagesAndAnEvenStepPerGroup) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  Workload w = *Workload::Parse("gemm:M=64,N=64,K=64");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
  ASSERT_NE(tpl, nullptr);
  ConfigSpace space = tpl->space(w, target);
  Config c = {{"bm", 32}, {"bn", 32},    {"tm", 4},    {"tn", 4},       {"bk", 8},   {"stages", 2},
              {"vec", 4}, {"splitk", 1}, {"gridk", 1}, {"fragpipe", 1}, {"async", 0}};
  EXPECT_TRUE(space.IsValid(c)) << space.Validate(c);
  c["stages"] = 1;
  EXPECT_THAT(space.Validate(c).message(), HasSubstr("fragpipe == 0 or (stages >= 2"));
  c["stages"] = 2;
  c["splitk"] = 8;  // one row per group and step
  EXPECT_THAT(space.Validate(c).message(), HasSubstr("(bk / splitk) % 2 == 0"));
}

TEST(GemmGpuTiled, AsynchronousCopiesAreOfferedForCudaOnlyAndStageThreeOrMoreNeedsThem) {
  Workload w = *Workload::Parse("gemm:M=64,N=64,K=64");
  Target rocm = *Target::Parse("rocm -mcpu=gfx90a");
  const KernelTemplate* amd = GpuTemplate("gemm.gpu.tiled", rocm, w);
  ASSERT_NE(amd, nullptr);
  EXPECT_EQ(amd->space(w, rocm).FindKnob("async")->values, std::vector<int64_t>{0});
  Target sm90 = *Target::Parse("cuda -arch=sm_90");
  EXPECT_EQ(GpuTemplate("gemm.gpu.tiled", sm90, w)->space(w, sm90).FindKnob("async")->values,
            (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(amd->space(w, rocm).FindKnob("stages")->values, (std::vector<int64_t>{1, 2}));
  Target cuda = *Target::Parse("cuda -arch=sm_80");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", cuda, w);
  ASSERT_NE(tpl, nullptr);
  ConfigSpace space = tpl->space(w, cuda);
  Config c = {{"bm", 32}, {"bn", 32},    {"tm", 4},    {"tn", 4},       {"bk", 8},   {"stages", 3},
              {"vec", 4}, {"splitk", 1}, {"gridk", 1}, {"fragpipe", 1}, {"async", 1}};
  EXPECT_TRUE(space.IsValid(c)) << space.Validate(c);
  c["async"] = 0;
  EXPECT_THAT(space.Validate(c).message(), HasSubstr("async >= 1 or stages <= 2"));
  c["async"] = 1;
  c["stages"] = 1;
  c["fragpipe"] = 0;
  EXPECT_THAT(space.Validate(c).message(), HasSubstr("async == 0 or stages >= 2"));
}

TEST(GemmGpuTiledSim, AsynchronousCopiesComputeTheReferenceAtEveryStageCountOnEdgeTiles) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  // K = 45: A unaligned (4-byte copies, each a column of the transposed tile), B in 16-byte
  // copies; edge tiles in M and N; K = 5 is one step, fewer than the stages in flight.
  for (const char* text : {"gemm:M=70,N=136,K=45,epilogue=bias", "gemm:M=9,N=20,K=5"}) {
    Workload w = *Workload::Parse(text);
    const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
    ASSERT_NE(tpl, nullptr);
    for (int64_t stages : {2, 3, 4}) {
      for (int64_t fragpipe : {0, 1}) {
        for (int64_t gridk : {1, 2}) {
          Config c = {{"bm", 32},
                      {"bn", 64},
                      {"tm", 4},
                      {"tn", 4},
                      {"bk", 8},
                      {"vec", 4},
                      {"splitk", 1},
                      {"gridk", gridk},
                      {"stages", stages},
                      // 1: both operands by copies; 2: B by copies, A through registers.
                      {"async", 1 + (stages + fragpipe + gridk) % 2},
                      {"fragpipe", fragpipe}};
          if (!tpl->space(w, target).IsValid(c)) {
            continue;  // gridk 2 where K has one step
          }
          EXPECT_EQ(SimulateAndCompare(*tpl, w, target, c), "") << text << " " << ConfigToString(c);
        }
      }
    }
  }
}

TEST(GemmGpuTiledSim, ReductionsSharedByBlocksAddUpToTheReferenceWithTheBiasOnce) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  // K = 300 in steps of 16: 19 steps, so the last block's run is shorter.
  Workload w = *Workload::Parse("gemm:M=7,N=40,K=300,epilogue=bias");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
  ASSERT_NE(tpl, nullptr);
  for (int64_t stages : {1, 2}) {
    for (int64_t splitk : {1, 2}) {
      for (int64_t gridk : {2, 3, 4}) {
        Config c = {{"bm", 8},          {"bn", 16},
                    {"tm", 4},          {"tn", 2},
                    {"bk", 16},         {"vec", 4},
                    {"splitk", splitk}, {"gridk", gridk},
                    {"stages", stages}, {"fragpipe", stages == 2 && gridk != 3 ? 1 : 0},
                    {"async", 0}};
        ASSERT_TRUE(tpl->space(w, target).IsValid(c)) << ConfigToString(c);
        EXPECT_EQ(SimulateAndCompare(*tpl, w, target, c), "") << ConfigToString(c);
      }
    }
  }
}

}  // namespace
}  // namespace tune

// ---------------------------------------------------------------------------------------------
// PTX of the defaults, assembled by ptxas when it is installed: no spills.

namespace tune {
namespace {

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

// This process's own directory for PTX files and ptxas logs. ctest runs each test in a process
// of its own, several at once, and two tests may assemble the same workload: a shared directory
// would let one overwrite the other's file between its write and its read.
const std::string& PtxDir() {
  static const TempDir dir = TempDir::Create("tune-ptx-").value();  // removed at exit
  return dir.path();
}

// ptxas -v's report for the PTX of one config ("" when ptxas failed: see *error).
std::string PtxasReport(const KernelTemplate& tpl, const Workload& w, const Config& c,
                        std::string* error) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  absl::StatusOr<ir::LoweredFunc> built = tpl.build(w, target, c, DefaultFunctionName(w));
  if (!built.ok()) {
    *error = built.status().ToString();
    return "";
  }
  absl::StatusOr<ir::LoweredFunc> lowered = Lower(*std::move(built));
  if (!lowered.ok()) {
    *error = lowered.status().ToString();
    return "";
  }
  absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = target});
  if (!module.ok()) {
    *error = module.status().ToString();
    return "";
  }
  const std::string& dir = PtxDir();
  const std::string ptx = dir + "/" + lowered->name + ".ptx";
  const std::string log = dir + "/" + lowered->name + ".log";
  std::ofstream(ptx) << module->code;
  const std::string cmd =
      std::string(kPtxas) + " -arch=sm_90 -v -o /dev/null " + ptx + " > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  if (rc != 0) {
    *error = text.str();
    return "";
  }
  return text.str();
}

// Assembles `config` (the template's default when empty) for each workload: no spills.
void CheckNoSpills(std::string_view name, const std::vector<std::string>& workloads,
                   const Config& config = {}) {
  if (!std::filesystem::exists(kPtxas)) {
    GTEST_SKIP() << kPtxas << " is not installed";
  }
  Target target = *Target::Parse("cuda -arch=sm_90");
  for (const std::string& text : workloads) {
    Workload w = *Workload::Parse(text);
    const KernelTemplate* tpl = GpuTemplate(name, target, w);
    ASSERT_NE(tpl, nullptr);
    Config c = config.empty() ? tpl->default_config(w, target) : config;
    ASSERT_TRUE(tpl->space(w, target).IsValid(c)) << text << " " << ConfigToString(c);
    std::string error;
    std::string report = PtxasReport(*tpl, w, c, &error);
    ASSERT_FALSE(report.empty()) << text << ": " << error;
    EXPECT_THAT(report, HasSubstr("0 bytes spill stores")) << text << "\n" << report;
    EXPECT_THAT(report, HasSubstr("0 bytes spill loads")) << text << "\n" << report;
    std::smatch regs;
    if (std::regex_search(report, regs, std::regex("Used ([0-9]+) registers"))) {
      std::cout << name << " " << text << " " << ConfigToString(c) << ": " << regs[1]
                << " registers\n";
    }
  }
}

TEST(GemmGpuTiledPtx, DefaultsAssembleWithoutSpills) {
  CheckNoSpills("gemm.gpu.tiled",
                {"gemm:M=1024,N=1024,K=1024", "gemm:M=4096,N=4096,K=4096,epilogue=bias_relu",
                 "gemm:M=1,N=1000,K=333", "gemm:M=7,N=4096,K=512", "gemm:M=100,N=1000,K=333"});
}

TEST(GemmGpuTiledPtx, SixteenWideRegisterTilesAssembleWithoutSpillsPipelinedOrNot) {
  const std::vector<std::string> shapes = {"gemm:M=4096,N=4096,K=4096", "gemm:M=1000,N=1000,K=1000",
                                           "gemm:M=333,N=4096,K=777"};
  for (auto [tm, tn] : {std::pair<int64_t, int64_t>{8, 16}, {16, 8}}) {
    for (int64_t fragpipe : {0, 1}) {
      CheckNoSpills("gemm.gpu.tiled", shapes,
                    {{"bm", 128},
                     {"bn", 128},
                     {"tm", tm},
                     {"tn", tn},
                     {"bk", 8},
                     {"stages", 2},
                     {"vec", 4},
                     {"splitk", 1},
                     {"gridk", 1},
                     {"fragpipe", fragpipe},
                     {"async", 0}});
    }
  }
}

TEST(GemmGpuTiledPtx, AsynchronousCopiesAssembleToCpAsyncWithoutSpills) {
  CheckNoSpills("gemm.gpu.tiled", {"gemm:M=4096,N=4096,K=4096", "gemm:M=1000,N=1000,K=1000"},
                {{"bm", 128},
                 {"bn", 64},
                 {"tm", 8},
                 {"tn", 8},
                 {"bk", 8},
                 {"stages", 3},
                 {"vec", 4},
                 {"splitk", 1},
                 {"gridk", 1},
                 {"fragpipe", 1},
                 {"async", 1}});
  // B by copies, A through registers.
  CheckNoSpills("gemm.gpu.tiled", {"gemm:M=333,N=4096,K=777"},
                {{"bm", 128},
                 {"bn", 64},
                 {"tm", 8},
                 {"tn", 8},
                 {"bk", 8},
                 {"stages", 3},
                 {"vec", 4},
                 {"splitk", 1},
                 {"gridk", 2},
                 {"fragpipe", 1},
                 {"async", 2}});
  if (!std::filesystem::exists(kPtxas)) {
    return;
  }
  // The PTX that ptxas read: 16-byte copies of B, 4-byte ones of the transposed A tile, one
  // group per step, waiting until one is in flight.
  std::stringstream ptx;
  ptx << std::ifstream(PtxDir() + "/tune_gemm_M1000_N1000_K1000.ptx").rdbuf();
  EXPECT_THAT(ptx.str(), HasSubstr("cp.async.cg.shared.global"));
  EXPECT_THAT(ptx.str(), HasSubstr("cp.async.ca.shared.global"));
  EXPECT_THAT(ptx.str(), HasSubstr("cp.async.commit_group"));
  EXPECT_THAT(ptx.str(), HasSubstr("cp.async.wait_group 1"));
}

TEST(Conv2dGpuImplicitGemmPtx, DefaultsAssembleWithoutSpills) {
  CheckNoSpills("conv2d.gpu.implicit_gemm", {std::begin(kConvs), std::end(kConvs)});
}

TEST(Conv2dGpuDirectPtx, DefaultsAssembleWithoutSpills) {
  CheckNoSpills("conv2d.gpu.direct", {std::begin(kConvs), std::end(kConvs)});
}

}  // namespace
}  // namespace tune
