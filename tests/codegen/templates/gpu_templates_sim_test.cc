// The GPU schedule templates on the GPU simulator (codegen/sim), against common/reference.h:
// defaults, random configs, split reductions, pipelined fragments and asynchronous copies.
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
#include "tests/codegen/templates/gpu_template_cases.h"

namespace tune {
namespace {

using testing::GpuTemplate;
using testing::kConvs;
using testing::kGemms;

using ::testing::HasSubstr;

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