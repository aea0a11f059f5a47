#include "codegen/templates/gemm_cpu_amx.h"

#include <random>
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"

namespace tune {
namespace {

using testing::CheckKernels;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::KernelCase;

Target ParseTarget(const std::string& text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

// Layout NT against canonical weights reads B's rows in place by default (swap), all of K in one
// block; u8i8 (tdpbusd's row operand is the unsigned one), prepared weights and NN cannot.
TEST(GemmCpuAmx, NtDefaultsAgainstCanonicalWeightsReadBInPlace) {
  const Target spr = ParseTarget("llvm -mcpu=sapphirerapids -threads=1");
  for (const char* text : {"gemm:M=16,N=4096,K=4096,layout=NT,dtype=bf16",
                           "gemm:M=256,N=768,K=768,layout=NT,dtype=i8"}) {
    const Config c = kGemmCpuAmx.default_config(ParseWorkload(text), spr);
    EXPECT_EQ(c.at("swap"), 1) << text;
    EXPECT_EQ(c.at("pack_a"), 0) << text;
    EXPECT_EQ(c.at("kc"), ParseWorkload(text).gemm().k) << text;
  }
  for (const char* text : {"gemm:M=16,N=4096,K=4096,layout=NT,dtype=u8i8",
                           "gemm:M=16,N=4096,K=4096,layout=NT,dtype=bf16,weights=prepared",
                           "gemm:M=256,N=768,K=768,dtype=bf16"}) {
    EXPECT_EQ(kGemmCpuAmx.default_config(ParseWorkload(text), spr).at("swap"), 0) << text;
  }
}

TEST(GemmCpuAmx, AppliesOnlyToCpusWithAmxAndComesBeforeTheDotProducts) {
  const Workload w = ParseWorkload("gemm:M=64,N=64,K=64,dtype=bf16");
  const Target spr = ParseTarget("llvm -mcpu=sapphirerapids -threads=1");
  const Target zen = ParseTarget("llvm -mcpu=znver4 -threads=1");
  std::vector<std::string> names;
  for (const KernelTemplate* t : Catalog::BuiltIn().TemplatesFor(w, spr)) {
    names.emplace_back(t->name);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("gemm.cpu.amx", "gemm.cpu.dot"));
  names.clear();
  for (const KernelTemplate* t : Catalog::BuiltIn().TemplatesFor(w, zen)) {
    names.emplace_back(t->name);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("gemm.cpu.dot"));
  absl::StatusOr<ir::LoweredFunc> refused =
      kGemmCpuAmx.build(w, zen, kGemmCpuAmx.default_config(w, zen), "k");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("needs AMX (amx-tile and amx-bf16)"));
}

// Every dtype's tile product, and the first call's request for the tiles' state.
TEST(GemmCpuAmx, EmitsTheTileProductOfEachDtypeAndAsksLinuxForTheTiles) {
  const Target spr = ParseTarget("llvm -mcpu=sapphirerapids -threads=1");
  for (const auto& [text, instruction] : std::vector<std::pair<std::string, std::string>>{
           {"gemm:M=40,N=50,K=70,dtype=bf16", "tdpbf16ps"},
           {"gemm:M=40,N=50,K=70,dtype=i8,layout=NT", "tdpbssd"},
           {"gemm:M=40,N=50,K=70,dtype=u8i8,out=f32", "tdpbusd"},
           {"gemm:M=40,N=50,K=70,dtype=u8i8,epilogue=requant", "tdpbusd"}}) {
    const Workload w = ParseWorkload(text);
    absl::StatusOr<std::string> assembly =
        testing::AssemblyOf(kGemmCpuAmx, w, spr, kGemmCpuAmx.default_config(w, spr));
    ASSERT_TRUE(assembly.ok()) << assembly.status();
    for (const std::string& want :
         {instruction, std::string("ldtilecfg"), std::string("tileloadd"),
          std::string("tilestored"), std::string("tilerelease"), std::string("syscall")}) {
      EXPECT_THAT(*assembly, HasSubstr(want)) << text;
    }
    // The denied path returns the documented code.
    EXPECT_THAT(*assembly, HasSubstr("$-20")) << text;
  }
  // With several threads each row block configures its tiles in the parallel body, which
  // captures the buffers that only tile loads and stores use (the packed B, the partial sums).
  const Target four = ParseTarget("llvm -mcpu=sapphirerapids -threads=4");
  const Workload w = ParseWorkload("gemm:M=400,N=64,K=2100,dtype=bf16");
  Config c = kGemmCpuAmx.default_config(w, four);
  c["kc"] = 1024;
  absl::StatusOr<std::string> assembly = testing::AssemblyOf(kGemmCpuAmx, w, four, c);
  ASSERT_TRUE(assembly.ok()) << assembly.status();
  EXPECT_THAT(*assembly, HasSubstr("GOMP_parallel"));
}

TEST(GemmCpuAmx, RandomConfigsComputeTheReferenceInEveryDtypeLayoutAndOutput) {
  if (!testing::HostRunsAmx()) {
    GTEST_SKIP() << "the host has no AMX; the kernels are built and inspected above";
  }
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  const std::vector<KernelCase> cases = testing::RandomCases(
      kGemmCpuAmx, target,
      {"gemm:M=7,N=37,K=29,dtype=bf16", "gemm:M=50,N=70,K=100,dtype=bf16,layout=NT",
       "gemm:M=33,N=40,K=131,dtype=bf16,out=f32", "gemm:M=64,N=64,K=128,dtype=i8",
       "gemm:M=17,N=90,K=250,dtype=i8,layout=NT,out=f32", "gemm:M=96,N=48,K=64,dtype=u8i8",
       "gemm:M=3,N=100,K=96,dtype=u8i8,layout=NT,out=f32",
       "gemm:M=40,N=37,K=130,dtype=i8,epilogue=requant",
       "gemm:M=19,N=64,K=64,dtype=u8i8,layout=NT,epilogue=requant"},
      6, 7);
  EXPECT_THAT(CheckKernels(target, kGemmCpuAmx, cases), IsEmpty());
}

TEST(GemmCpuAmx, EveryValueOfEveryKnobComputesTheReference) {
  if (!testing::HostRunsAmx()) {
    GTEST_SKIP() << "the host has no AMX";
  }
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  for (const char* text : {"gemm:M=192,N=400,K=2100,dtype=bf16,epilogue=bias_relu",
                           "gemm:M=192,N=400,K=2112,dtype=i8,layout=NT"}) {
    const Workload w = ParseWorkload(text);
    std::mt19937_64 rng(3);
    std::vector<std::string> unreachable;
    std::vector<KernelCase> cases;
    for (const Config& c :
         testing::ConfigsCoveringEveryKnobValue(kGemmCpuAmx, w, target, rng, &unreachable)) {
      cases.push_back({w, c});
    }
    EXPECT_THAT(CheckKernels(target, kGemmCpuAmx, cases), IsEmpty()) << text;
  }
}

TEST(GemmCpuAmx, PreparedWeightsAndSeveralThreadsComputeTheReference) {
  if (!testing::HostRunsAmx()) {
    GTEST_SKIP() << "the host has no AMX";
  }
  const Target one = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases;
  for (const char* text : {"gemm:M=33,N=70,K=90,dtype=bf16,weights=prepared",
                           "gemm:M=40,N=48,K=200,dtype=i8,layout=NT,weights=prepared",
                           "gemm:M=17,N=96,K=64,dtype=u8i8,weights=prepared,out=f32",
                           "gemm:M=20,N=40,K=128,dtype=i8,weights=prepared,epilogue=requant"}) {
    const Workload w = ParseWorkload(text);
    cases.push_back({w, kGemmCpuAmx.default_config(w, one)});
    const std::vector<Config> seeds = kGemmCpuAmx.seeds(w, one);
    for (size_t i = 0; i < seeds.size(); i += 5) {
      cases.push_back({w, seeds[i]});
    }
  }
  EXPECT_THAT(CheckKernels(one, kGemmCpuAmx, cases), IsEmpty());
  const Target four = ParseTarget("llvm -mcpu=native -threads=4");
  const Workload w = ParseWorkload("gemm:M=400,N=64,K=64,dtype=bf16");
  Config c = kGemmCpuAmx.default_config(w, four);
  c["mc"] = 96;
  EXPECT_THAT(CheckKernels(four, kGemmCpuAmx, {{w, c}}), IsEmpty());
}

}  // namespace
}  // namespace tune
