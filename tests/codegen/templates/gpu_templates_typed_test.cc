// gemm.gpu.tiled on typed workloads (bf16, f16, tf32, fp8; layouts NN and NT; narrow and f32
// outputs): the simulator against the typed reference, the knobs a typed space drops, and the
// PTX (16-bit loads and stores, no spills) through ptxas when it is installed.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/dtype_support.h"
#include "codegen/llvm/gpu_backend.h"
#include "codegen/lower.h"
#include "codegen/sim/gpu_sim.h"
#include "codegen/templates/template.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"

namespace tune {
namespace {

using testing::GpuTemplate;
using ::testing::HasSubstr;

const Target& Sm90() {
  static const Target target = *Target::Parse("cuda -arch=sm_90");
  return target;
}

// The default and `random` sampled configs of gemm.gpu.tiled on `text`, on the simulator.
void CheckTypedOnSimulator(const std::string& text, int random) {
  const Workload w = *Workload::Parse(text);
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", Sm90(), w);
  ASSERT_NE(tpl, nullptr) << text;
  std::vector<Config> configs = {tpl->default_config(w, Sm90())};
  const ConfigSpace space = tpl->space(w, Sm90());
  std::mt19937_64 rng(3);
  for (int i = 0; i < random; ++i) {
    std::optional<Config> c = space.Sample(rng);
    ASSERT_TRUE(c.has_value());
    configs.push_back(*c);
  }
  for (const Config& c : configs) {
    absl::StatusOr<ir::LoweredFunc> built = tpl->build(w, Sm90(), c, DefaultFunctionName(w));
    ASSERT_TRUE(built.ok()) << text << " " << ConfigToString(c) << ": " << built.status();
    absl::StatusOr<ir::LoweredFunc> lowered = Lower(*std::move(built));
    ASSERT_TRUE(lowered.ok()) << text << " " << ConfigToString(c) << ": " << lowered.status();
    GpuSimOptions options;
    options.block_workers = 2;
    EXPECT_TRUE(SimulateAgainstReference(w, *lowered, 11, options).ok())
        << text << " " << ConfigToString(c) << ": "
        << SimulateAgainstReference(w, *lowered, 11, options);
  }
}

TEST(GemmGpuTiledTypedSim, Bf16AndF16GemmsMatchTheReferenceInBothLayoutsAndOutputs) {
  for (const char* text : {
           "gemm:M=33,N=65,K=17,dtype=bf16",
           "gemm:M=33,N=64,K=20,layout=NT,dtype=bf16,epilogue=bias_relu",
           "gemm:M=5,N=24,K=300,layout=NT,dtype=f16,epilogue=bias",
           "gemm:M=64,N=64,K=64,dtype=f16,out=f32,epilogue=relu",
           "gemm:M=1,N=40,K=37,layout=NT,dtype=bf16,out=f32,epilogue=bias",
       }) {
    CheckTypedOnSimulator(text, 3);
  }
}

TEST(GemmGpuTiledTypedSim, Fp8GemmsApplyBothScalesInEachEncoding) {
  for (const char* text : {
           "gemm:M=16,N=48,K=64,layout=NT,dtype=fp8e4m3",
           "gemm:M=17,N=32,K=40,dtype=fp8e5m2,out=f32,epilogue=bias",
           "gemm:M=8,N=16,K=32,layout=NT,dtype=fp8e4m3fnuz",
           "gemm:M=8,N=16,K=32,dtype=fp8e5m2fnuz,epilogue=bias_relu",
       }) {
    CheckTypedOnSimulator(text, 2);
  }
}

TEST(GemmGpuTiledTypedSim, Tf32GemmIsTheF32KernelOnTf32ExactInputs) {
  CheckTypedOnSimulator("gemm:M=33,N=65,K=17,dtype=tf32,epilogue=bias", 2);
  CheckTypedOnSimulator("gemm:M=16,N=32,K=128,layout=NT,dtype=tf32", 2);
}

TEST(GemmGpuTiledTyped, ATypedSpaceHasNoAsynchronousCopiesAndANarrowOutputNoGridSplit) {
  const Workload narrow = *Workload::Parse("gemm:M=64,N=64,K=4096,dtype=bf16");
  const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", Sm90(), narrow);
  ASSERT_NE(tpl, nullptr);
  ConfigSpace space = tpl->space(narrow, Sm90());
  EXPECT_EQ(space.FindKnob("async")->values, (std::vector<int64_t>{0}));
  EXPECT_EQ(space.FindKnob("gridk")->values, (std::vector<int64_t>{1}));
  EXPECT_EQ(space.FindKnob("stages")->values, (std::vector<int64_t>{1, 2}));
  // An f32 output keeps the grid split (atomic adds are float32).
  space = tpl->space(narrow.WithTypes(Dtype::kBf16, ElementType::kF32), Sm90());
  EXPECT_GT(space.FindKnob("gridk")->values.size(), 1u);
  // The f32 space is as it was.
  space = tpl->space(narrow.WithTypes(Dtype::kF32), Sm90());
  EXPECT_EQ(space.FindKnob("async")->values, (std::vector<int64_t>{0, 1, 2}));
}

TEST(GemmGpuTiledTyped, AnIntegerDtypeIsNotBuiltByTheFloatTemplate) {
  const Workload i8 = *Workload::Parse("gemm:M=64,N=64,K=64,dtype=i8");
  EXPECT_EQ(GpuTemplate("gemm.gpu.tiled", Sm90(), i8), nullptr);
}

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

TEST(GemmGpuTiledTypedPtx, TypedDefaultsLoadSixteenBitElementsAndAssembleWithoutSpills) {
  if (!std::filesystem::exists(kPtxas)) {
    GTEST_SKIP() << kPtxas << " is not installed";
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-typed-ptx-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  for (const char* arch : {"sm_80", "sm_90"}) {
    const Target target = *Target::Parse(std::string("cuda -arch=") + arch);
    for (const char* text : {"gemm:M=1024,N=1024,K=1024,layout=NT,dtype=bf16",
                             "gemm:M=64,N=4096,K=4096,dtype=f16,epilogue=bias",
                             "gemm:M=333,N=4096,K=777,layout=NT,dtype=fp8e4m3"}) {
      const Workload w = *Workload::Parse(text);
      if (!TargetDtypes(target).Has(w.dtype())) {
        continue;  // fp8 before sm_89
      }
      const KernelTemplate* tpl = GpuTemplate("gemm.gpu.tiled", target, w);
      ASSERT_NE(tpl, nullptr) << text;
      absl::StatusOr<ir::LoweredFunc> built =
          tpl->build(w, target, tpl->default_config(w, target), DefaultFunctionName(w));
      ASSERT_TRUE(built.ok()) << built.status();
      absl::StatusOr<ir::LoweredFunc> lowered = Lower(*std::move(built));
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = target});
      ASSERT_TRUE(module.ok()) << module.status();
      // Narrow elements are loaded as such (ld.global of 8 or 16 bits, or vectors of them).
      EXPECT_THAT(module->code,
                  ::testing::ContainsRegex("ld\\.global[.a-z]*\\.(v[24]\\.)?[bu](8|16)"))
          << text;
      const std::string ptx = dir->File(lowered->name + std::string(arch) + ".ptx");
      const std::string log = ptx + ".log";
      std::ofstream(ptx) << module->code;
      const std::string cmd = std::string(kPtxas) + " -arch=" + arch + " -v -o /dev/null " + ptx +
                              " > " + log + " 2>&1";
      const int rc = std::system(cmd.c_str());
      std::stringstream report;
      report << std::ifstream(log).rdbuf();
      ASSERT_EQ(rc, 0) << text << " " << arch << "\n" << report.str();
      EXPECT_THAT(report.str(), HasSubstr("0 bytes spill stores")) << text << "\n" << report.str();
    }
  }
}

}  // namespace
}  // namespace tune
