// The GPU schedule templates: every default config and random configs of their spaces build
// IR that verifies and lowers for CUDA and ROCm archs, across square, skinny, odd GEMMs and
// ResNet-50 conv layers; configs beyond the GPU limits are rejected naming the limit. (On the
// GPU simulator: gpu_templates_sim_test.cc; through ptxas: gpu_templates_ptxas_test.cc.)
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

const char* const kTargets[] = {"cuda -arch=sm_90", "cuda -arch=sm_80", "rocm -mcpu=gfx90a"};

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

// Columns past 65535 blocks of the widest tile leave no valid config (the grid's y dimension):
// the SIMT matmul templates do not apply there, where their default config used to abort
// (found by the config fuzzer: N = 256888888).
TEST(GemmGpuTiled, DoesNotApplyWhereTheGridCannotHoldTheColumns) {
  const Target target = *Target::Parse("cuda -arch=sm_90");
  EXPECT_EQ(GpuTemplate("gemm.gpu.tiled", target, *Workload::Parse("gemm:M=128,N=256888888,K=128")),
            nullptr);
  EXPECT_EQ(GpuTemplate("conv2d.gpu.implicit_gemm", target,
                        *Workload::Parse("conv2d:N=1,C=8,H=4,W=4,K=16777217,R=1,S=1")),
            nullptr);
  const Workload widest = *Workload::Parse("gemm:M=1,N=16776960,K=8");  // 65535 x 256
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, widest);
  ASSERT_NE(tpl, nullptr);
  EXPECT_TRUE(tpl->space(widest, target).IsValid(tpl->default_config(widest, target)));
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
    std::vector<const KernelTemplate*> list = Catalog::BuiltIn().TemplatesFor(w, target);
    ASSERT_FALSE(list.empty()) << text;
    EXPECT_EQ(list.front()->name, "gemm.gpu.tiled") << text;
    EXPECT_TRUE(TemplateBuildsFor(*list.front(), target.kind)) << text;
  }
}

}  // namespace
}  // namespace tune