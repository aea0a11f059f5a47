#include "codegen/templates/gemm_cpu_dot.h"

#include <random>
#include <string>
#include <vector>

#include "codegen/templates/gemm_cpu_amx.h"
#include "common/host_cpu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"

namespace tune {
namespace {

using testing::CheckKernels;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::KernelCase;
using ::testing::Not;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

TEST(GemmCpuDot, RandomConfigsComputeTheReferenceInEveryDtypeLayoutAndOutput) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  // Odd sizes: row, column and reduction tails in every tile, K not a multiple of the group.
  const std::vector<KernelCase> cases = testing::RandomCases(
      kGemmCpuDot, target,
      {"gemm:M=7,N=37,K=29,dtype=bf16", "gemm:M=19,N=50,K=70,dtype=bf16,layout=NT",
       "gemm:M=9,N=33,K=131,dtype=bf16,out=f32", "gemm:M=13,N=40,K=66,dtype=i8",
       "gemm:M=5,N=17,K=250,dtype=i8,layout=NT,out=f32", "gemm:M=21,N=64,K=37,dtype=u8i8",
       "gemm:M=3,N=100,K=96,dtype=u8i8,layout=NT,out=f32"},
      6, 7);
  EXPECT_THAT(CheckKernels(target, kGemmCpuDot, cases), IsEmpty());
}

// f16 is run on CPUs with AVX512-FP16 only (codegen/dtype_support.h): its kernels convert pairs to
// f32 and fused multiply-add them, 16 lanes at a time.
TEST(GemmCpuDot, F16KernelsConvertPairsToF32AndFuseMultiplyAdds) {
  const Workload w = ParseWorkload("gemm:M=16,N=64,K=64,layout=NT,dtype=f16");
  const Target spr = ParseTarget("llvm -mcpu=sapphirerapids -threads=1");
  for (const Config& c : {kGemmCpuDot.default_config(w, spr), [&] {
                            Config packed = kGemmCpuDot.default_config(w, spr);
                            packed["b_in_place"] = 0;
                            return packed;
                          }()}) {
    absl::StatusOr<std::string> assembly = testing::AssemblyOf(kGemmCpuDot, w, spr, c);
    ASSERT_TRUE(assembly.ok()) << assembly.status();
    EXPECT_THAT(*assembly, ::testing::ContainsRegex("vcvtph2psx?\\s+.*%zmm"));
    EXPECT_THAT(*assembly, ::testing::ContainsRegex("vfmadd...ps\\s+.*%zmm"));
  }
}

TEST(GemmCpuDot, F16ComputesTheReferenceInEveryLayoutOutputAndWeightForm) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  if (!GetHostCpu().HasFeature("avx512fp16")) {
    GTEST_SKIP() << "the host has no AVX512-FP16, which f16 needs (the kernels are inspected "
                    "above)";
  }
  std::vector<KernelCase> cases = testing::RandomCases(
      kGemmCpuDot, target,
      {"gemm:M=7,N=37,K=29,dtype=f16", "gemm:M=19,N=50,K=70,dtype=f16,layout=NT",
       "gemm:M=9,N=33,K=131,dtype=f16,out=f32", "gemm:M=3,N=40,K=64,dtype=f16,layout=NT",
       "gemm:M=20,N=48,K=96,dtype=f16,weights=prepared"},
      5, 13);
  const Workload few_rows = ParseWorkload("gemm:M=3,N=40,K=64,dtype=f16,layout=NT");
  cases.push_back({few_rows, kGemmCpuDot.default_config(few_rows, target)});  // B in place
  EXPECT_THAT(CheckKernels(target, kGemmCpuDot, cases), IsEmpty());
}

TEST(GemmCpuDot, F16KernelsForAnAvx512Fp16CpuGoOnlyToWorkersThatReportIt) {
  const Workload w = ParseWorkload("gemm:M=16,N=64,K=64,dtype=f16");
  EXPECT_THAT(kGemmCpuDot.worker_features(w, ParseTarget("llvm -mcpu=sapphirerapids")),
              ::testing::ElementsAre("avx512fp16"));
  const Workload bf16 = ParseWorkload("gemm:M=16,N=64,K=64,dtype=bf16");
  EXPECT_THAT(kGemmCpuDot.worker_features(bf16, ParseTarget("llvm -mcpu=sapphirerapids")),
              ::testing::ElementsAre("avx512bf16"));
  EXPECT_THAT(kGemmCpuDot.worker_features(bf16, ParseTarget("llvm -mcpu=haswell")), IsEmpty());
  EXPECT_FALSE(TemplateBuildsForm(kGemmCpuAmx, w)) << "AMX-FP16 is not targeted";
}

TEST(GemmCpuDot, RequantisedI8OutputsComputeTheReferenceInEveryLayoutAndWeightForm) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases =
      testing::RandomCases(kGemmCpuDot, target,
                           {"gemm:M=13,N=40,K=66,dtype=i8,out=i8,epilogue=requant",
                            "gemm:M=21,N=37,K=250,dtype=u8i8,layout=NT,epilogue=requant",
                            "gemm:M=3,N=19,K=100,dtype=i8,layout=NT,epilogue=requant",
                            "gemm:M=17,N=48,K=64,dtype=u8i8,epilogue=requant,weights=prepared"},
                           6, 11);
  const Workload few_rows =
      ParseWorkload("gemm:M=3,N=19,K=100,dtype=i8,layout=NT,epilogue=requant");
  cases.push_back({few_rows, kGemmCpuDot.default_config(few_rows, target)});  // B in place
  EXPECT_THAT(CheckKernels(target, kGemmCpuDot, cases), IsEmpty());
  const Target four = ParseTarget("llvm -mcpu=native -threads=4");
  const Workload tall = ParseWorkload("gemm:M=300,N=64,K=96,dtype=u8i8,epilogue=requant");
  EXPECT_THAT(CheckKernels(four, kGemmCpuDot, {{tall, kGemmCpuDot.default_config(tall, four)}}),
              IsEmpty());
}

// The bound of one unit would hide a rounding toward zero; the code rounds to nearest even by
// adding 1.5 * 2^23 (0x4b400000) and then its negation (0xcb400000: LLVM writes the subtraction
// so), which nothing may fold away.
TEST(GemmCpuDot, RequantisationRoundsByTheMagicConstantNotByTruncation) {
  const Target target = ParseTarget("llvm -mcpu=znver4 -threads=1");
  const Workload w = ParseWorkload("gemm:M=16,N=64,K=64,dtype=u8i8,epilogue=requant");
  absl::StatusOr<std::string> assembly =
      testing::AssemblyOf(kGemmCpuDot, w, target, kGemmCpuDot.default_config(w, target));
  ASSERT_TRUE(assembly.ok()) << assembly.status();
  EXPECT_THAT(*assembly, HasSubstr("0x4b400000"));
  EXPECT_THAT(*assembly, HasSubstr("0xcb400000"));
}

TEST(GemmCpuDot, EveryValueOfEveryKnobComputesTheReference) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  for (const char* text : {"gemm:M=100,N=400,K=2100,dtype=bf16,epilogue=bias_relu",
                           "gemm:M=100,N=400,K=2100,dtype=i8,layout=NT"}) {
    const Workload w = ParseWorkload(text);
    std::mt19937_64 rng(3);
    std::vector<std::string> unreachable;
    std::vector<KernelCase> cases;
    for (const Config& c :
         testing::ConfigsCoveringEveryKnobValue(kGemmCpuDot, w, target, rng, &unreachable)) {
      cases.push_back({w, c});
    }
    EXPECT_THAT(unreachable, IsEmpty()) << text;
    EXPECT_THAT(CheckKernels(target, kGemmCpuDot, cases), IsEmpty()) << text;
  }
}

TEST(GemmCpuDot, PreparedWeightsAndSeveralThreadsComputeTheReference) {
  std::vector<KernelCase> cases;
  for (const char* text : {"gemm:M=33,N=70,K=90,dtype=bf16,weights=prepared",
                           "gemm:M=40,N=48,K=200,dtype=i8,layout=NT,weights=prepared",
                           "gemm:M=17,N=96,K=64,dtype=u8i8,weights=prepared,out=f32"}) {
    const Workload w = ParseWorkload(text);
    const Target one = ParseTarget("llvm -mcpu=native -threads=1");
    cases.push_back({w, kGemmCpuDot.default_config(w, one)});
    for (const Config& seed : kGemmCpuDot.seeds(w, one)) {
      if (cases.size() % 4 == 0) {
        cases.push_back({w, seed});
      }
    }
  }
  EXPECT_THAT(CheckKernels(ParseTarget("llvm -mcpu=native -threads=1"), kGemmCpuDot, cases),
              IsEmpty());
  const Target two = ParseTarget("llvm -mcpu=native -threads=2");
  const Workload w = ParseWorkload("gemm:M=200,N=64,K=64,dtype=bf16");
  Config c = kGemmCpuDot.default_config(w, two);
  c["mc"] = 48;
  EXPECT_THAT(CheckKernels(two, kGemmCpuDot, {{w, c}}), IsEmpty());
}

// The dot-product instructions appear where the CPU has them, and plain vector code computes the
// same sums elsewhere (the reference tests above run whichever the host has).
TEST(GemmCpuDot, UsesVdpbf16psAndVpdpbusdWhereTheCpuHasThem) {
  struct Case {
    const char* workload;
    const char* instruction;
  };
  for (const Case& c : {Case{"gemm:M=16,N=64,K=64,dtype=bf16", "vdpbf16ps"},
                        Case{"gemm:M=16,N=64,K=64,dtype=u8i8", "vpdpbusd"},
                        Case{"gemm:M=16,N=64,K=64,dtype=i8", "vpdpbusd"}}) {
    const Workload w = ParseWorkload(c.workload);
    for (const char* cpu : {"znver4", "skylake-avx512"}) {
      const Target target = *Target::Parse(std::string("llvm -mcpu=") + cpu + " -threads=1");
      absl::StatusOr<std::string> assembly =
          testing::AssemblyOf(kGemmCpuDot, w, target, kGemmCpuDot.default_config(w, target));
      ASSERT_TRUE(assembly.ok()) << assembly.status();
      if (std::string(cpu) == "znver4") {
        EXPECT_THAT(*assembly, HasSubstr(c.instruction)) << c.workload;
      } else {
        EXPECT_THAT(*assembly, Not(HasSubstr(c.instruction))) << c.workload << " on " << cpu;
      }
    }
  }
}

// On an AVX2 target the same kernels compute the dot products in plain vector code.
TEST(GemmCpuDot, ComputesTheReferenceWithoutTheDotInstructions) {
  const Target target = ParseTarget("llvm -mcpu=haswell -threads=1");
  if (!testing::HostRuns(target)) {
    GTEST_SKIP() << "the host cannot run AVX2 code";
  }
  const std::vector<KernelCase> cases = testing::RandomCases(
      kGemmCpuDot, target,
      {"gemm:M=9,N=40,K=30,dtype=bf16", "gemm:M=11,N=21,K=70,dtype=i8,layout=NT",
       "gemm:M=6,N=50,K=64,dtype=u8i8,out=f32"},
      2, 11);
  EXPECT_THAT(CheckKernels(target, kGemmCpuDot, cases), IsEmpty());
}

// s8 x s8: A read as a + 128 (u8) and each column's sum started at -128 x its sum of B. A read
// in place and packed (K = 66 leaves half a group: packed), a last panel short of N, all of B
// packed, a column block at a time, and prepared (the compensations travel with the panels),
// with every epilogue.
TEST(GemmCpuDot, I8ColumnCompensationsCancelTheShiftOfA) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases;
  for (const char* text :
       {"gemm:M=13,N=40,K=64,dtype=i8,epilogue=relu", "gemm:M=13,N=40,K=66,dtype=i8",
        "gemm:M=9,N=70,K=128,dtype=i8,layout=NT,epilogue=bias_relu",
        "gemm:M=11,N=400,K=96,dtype=i8,layout=NT,out=f32",
        "gemm:M=14,N=50,K=132,dtype=i8,weights=prepared",
        "gemm:M=6,N=33,K=72,dtype=i8,layout=NT,weights=prepared,out=f32"}) {
    const Workload w = ParseWorkload(text);
    for (int64_t pack_a : {0, 1}) {
      for (int64_t pack_b : {0, 1}) {
        const ConfigSpace space = kGemmCpuDot.space(w, target);
        Config c = {
            {"b_in_place", 0},  {"cols", 1},        {"kc", 64},
            {"mc", w.gemm().m}, {"mr", 6},          {"nc", space.FindKnob("nc")->values.front()},
            {"nv", 2},          {"pack_a", pack_a}, {"pack_b", pack_b}};
        if (space.ConstraintsHold(c)) {
          cases.push_back({w, c});
        }
      }
    }
  }
  EXPECT_EQ(cases.size(), 13u);  // K = 66 packs A; pack_b needs N = 400
  EXPECT_THAT(CheckKernels(target, kGemmCpuDot, cases), IsEmpty());
}

// The default reads s8 A in place, as it does u8 A: no row sums need A packed.
TEST(GemmCpuDot, I8DefaultsReadAInPlace) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  for (const char* text :
       {"gemm:M=256,N=768,K=768,dtype=i8,layout=NT", "gemm:M=1024,N=1024,K=1024,dtype=i8"}) {
    EXPECT_EQ(kGemmCpuDot.default_config(ParseWorkload(text), target).at("pack_a"), 0) << text;
  }
}

// A large canonical B is packed a column block at a time: on a Zen 4 core in blocks of 192
// columns over pieces of 2048 of K, elsewhere in blocks of 384 (what each was measured fastest
// with).
TEST(GemmCpuDot, LargeCanonicalWeightsArePackedInBlocksFittedToTheCpu) {
  const Workload w = ParseWorkload("gemm:M=64,N=4096,K=4096,dtype=bf16,layout=NT");
  const Config zen4 = kGemmCpuDot.default_config(w, ParseTarget("llvm -mcpu=znver4 -threads=1"));
  EXPECT_EQ(zen4.at("pack_b"), 1);
  EXPECT_EQ(zen4.at("nc"), 192);
  EXPECT_EQ(zen4.at("kc"), 2048);
  for (const char* cpu : {"znver5", "sapphirerapids"}) {
    const Config other = kGemmCpuDot.default_config(
        w, ParseTarget((std::string("llvm -mcpu=") + cpu + " -threads=1").c_str()));
    EXPECT_EQ(other.at("pack_b"), 1) << cpu;
    EXPECT_EQ(other.at("nc"), 384) << cpu;
    EXPECT_EQ(other.at("kc"), 512) << cpu;
  }
}

// Where B is packed by default, a short search (the default and 11 seeds) tries the packed
// form's block sizes before the in-place tiles, which few rows need; where the in-place form is
// the default, its tiles come first.
TEST(GemmCpuDot, SeedsTryTheDefaultFormsVariantsFirst) {
  const Target target = ParseTarget("llvm -mcpu=znver5 -threads=1");
  const Workload packed = ParseWorkload("gemm:M=64,N=4096,K=4096,dtype=bf16,layout=NT");
  const std::vector<Config> seeds = kGemmCpuDot.seeds(packed, target);
  ASSERT_GE(seeds.size(), 11u);
  int in_place = 0;
  bool narrow_blocks = false;
  for (size_t i = 0; i < 11; ++i) {
    in_place += static_cast<int>(seeds[i].at("b_in_place"));
    narrow_blocks |= seeds[i].at("pack_b") == 1 && seeds[i].at("nc") == 192;
  }
  EXPECT_EQ(in_place, 0);
  EXPECT_TRUE(narrow_blocks);
  const Workload few = ParseWorkload("gemm:M=16,N=4096,K=4096,dtype=bf16,layout=NT");
  ASSERT_EQ(kGemmCpuDot.default_config(few, target).at("b_in_place"), 1);
  const std::vector<Config> few_seeds = kGemmCpuDot.seeds(few, target);
  ASSERT_GE(few_seeds.size(), 3u);
  EXPECT_EQ(few_seeds[1].at("b_in_place"), 1);
  EXPECT_EQ(few_seeds[2].at("b_in_place"), 1);
}

// pack_b = 1: B packed a column block at a time, the last block short of nc and of whole panels,
// K's groups in whole transposed blocks of 16 and a tail (layout NT), i8's compensations written
// after each block's panels; one thread and two.
TEST(GemmCpuDot, ColumnBlocksPackedWhereTheyAreUsedComputeTheReference) {
  std::vector<KernelCase> cases;
  const Target one = ParseTarget("llvm -mcpu=native -threads=1");
  for (const char* text :
       {"gemm:M=37,N=200,K=100,dtype=bf16,layout=NT", "gemm:M=20,N=400,K=66,dtype=bf16",
        "gemm:M=29,N=250,K=130,dtype=i8,layout=NT", "gemm:M=19,N=390,K=72,dtype=i8",
        "gemm:M=33,N=230,K=256,dtype=u8i8,layout=NT,epilogue=requant",
        "gemm:M=20,N=200,K=70,dtype=bf16,layout=NT,epilogue=bias_relu"}) {
    const Workload w = ParseWorkload(text);
    for (int64_t nv : {1, 3}) {
      Config c = kGemmCpuDot.default_config(w, one);
      c["b_in_place"] = 0;
      c["pack_b"] = 1;
      c["nc"] = 192;
      c["nv"] = nv;
      c["mr"] = 4;
      c["mc"] = 16;
      c["kc"] = 64;
      c["pack_a"] = 1;
      cases.push_back({w, c});
    }
  }
  EXPECT_THAT(CheckKernels(one, kGemmCpuDot, cases), IsEmpty());
  const Target two = ParseTarget("llvm -mcpu=native -threads=2");
  const Workload w = ParseWorkload("gemm:M=70,N=500,K=96,dtype=bf16,layout=NT");
  Config c = kGemmCpuDot.default_config(w, two);
  c["b_in_place"] = 0;
  c["pack_b"] = 1;
  c["nc"] = 192;
  c["mc"] = 16;
  EXPECT_THAT(CheckKernels(two, kGemmCpuDot, {{w, c}}), IsEmpty());
}

// B read in place (layout NT): every tile shape with row and column tails, every dtype.
TEST(GemmCpuDot, BInPlaceTilesComputeTheReference) {
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  std::vector<KernelCase> cases;
  for (const char* text : {"gemm:M=5,N=19,K=100,layout=NT,dtype=bf16",
                           "gemm:M=3,N=37,K=200,layout=NT,dtype=i8,epilogue=bias_relu",
                           "gemm:M=6,N=20,K=130,layout=NT,dtype=u8i8,out=f32",
                           "gemm:M=2,N=9,K=70,layout=NT,dtype=bf16,weights=prepared"}) {
    const Workload w = ParseWorkload(text);
    for (auto [mr, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 8}, {4, 4}, {3, 2}}) {
      Config c = kGemmCpuDot.default_config(w, target);
      c["b_in_place"] = 1;
      c["mr"] = std::min(mr, w.gemm().m);
      c["cols"] = cols;
      cases.push_back({w, c});
    }
  }
  EXPECT_THAT(CheckKernels(target, kGemmCpuDot, cases), IsEmpty());
  // Few rows against canonical NT weights start in place; prepared ones start packed.
  EXPECT_EQ(
      kGemmCpuDot
          .default_config(ParseWorkload("gemm:M=16,N=4096,K=4096,layout=NT,dtype=bf16"), target)
          .at("b_in_place"),
      1);
  EXPECT_EQ(kGemmCpuDot
                .default_config(
                    ParseWorkload("gemm:M=16,N=4096,K=4096,layout=NT,dtype=bf16,weights=prepared"),
                    target)
                .at("b_in_place"),
            0);
}

// B read in place in blocks of K: the accumulators parked per row between blocks (a middle
// block loop, a last block of fewer steps, the scalar tail past the whole steps), i8's row sums
// of A too, with every output, prepared weights and two threads.
TEST(GemmCpuDot, BInPlaceBlocksOfKParkTheirAccumulatorsBetweenBlocks) {
  std::vector<KernelCase> cases;
  struct Case {
    const char* text;
    int64_t mr, cols, kc;
  };
  for (const Case& c :
       {Case{"gemm:M=7,N=37,K=300,layout=NT,dtype=bf16", 2, 8, 64},
        Case{"gemm:M=16,N=24,K=300,layout=NT,dtype=bf16,epilogue=bias", 4, 4, 128},
        Case{"gemm:M=5,N=19,K=520,layout=NT,dtype=i8,epilogue=bias_relu", 2, 8, 128},
        Case{"gemm:M=3,N=17,K=520,layout=NT,dtype=u8i8,out=f32", 3, 4, 64},
        Case{"gemm:M=4,N=20,K=264,layout=NT,dtype=u8i8,out=i8,epilogue=requant", 2, 4, 128},
        Case{"gemm:M=2,N=9,K=200,layout=NT,dtype=bf16,weights=prepared", 1, 8, 64}}) {
    const Workload w = ParseWorkload(c.text);
    const Target target = ParseTarget("llvm -mcpu=native -threads=1");
    Config config = kGemmCpuDot.default_config(w, target);
    config["b_in_place"] = 1;
    config["pack_b"] = 0;
    config["mr"] = c.mr;
    config["cols"] = c.cols;
    config["kc"] = c.kc;
    ASSERT_TRUE(kGemmCpuDot.space(w, target).ConstraintsHold(config)) << c.text;
    cases.push_back({w, config});
  }
  EXPECT_THAT(CheckKernels(ParseTarget("llvm -mcpu=native -threads=1"), kGemmCpuDot, cases),
              IsEmpty());
  EXPECT_THAT(CheckKernels(ParseTarget("llvm -mcpu=native -threads=2"), kGemmCpuDot, cases),
              IsEmpty());
  // The defaults: 2 x 8 tiles in blocks of 2048 for long rows, 4 x 4 over all of K otherwise.
  const Target target = ParseTarget("llvm -mcpu=native -threads=1");
  const Config long_rows = kGemmCpuDot.default_config(
      ParseWorkload("gemm:M=16,N=4096,K=11008,layout=NT,dtype=bf16"), target);
  EXPECT_EQ(long_rows.at("mr"), 2);
  EXPECT_EQ(long_rows.at("cols"), 8);
  EXPECT_EQ(long_rows.at("kc"), 2048);
  const Config short_rows = kGemmCpuDot.default_config(
      ParseWorkload("gemm:M=16,N=3072,K=768,layout=NT,dtype=bf16"), target);
  EXPECT_EQ(short_rows.at("mr"), 4);
  EXPECT_EQ(short_rows.at("cols"), 4);
  EXPECT_EQ(short_rows.at("kc"), 768);
  // s8 x s8 of more than 8 rows over short rows packs B, in 4 x 4 vector tiles over all of K:
  // in place each step would add a row sum of A and shift B. Fewer rows read B in place, and
  // so do 16 rows over a longer K.
  const Config short_i8 =
      kGemmCpuDot.default_config(ParseWorkload("gemm:M=16,N=768,K=768,layout=NT,dtype=i8"), target);
  EXPECT_EQ(short_i8.at("b_in_place"), 0);
  EXPECT_EQ(short_i8.at("mr"), 4);
  EXPECT_EQ(short_i8.at("nv"), 4);
  EXPECT_EQ(short_i8.at("kc"), 768);
  for (const char* text :
       {"gemm:M=1,N=768,K=768,layout=NT,dtype=i8", "gemm:M=1,N=3072,K=768,layout=NT,dtype=i8",
        "gemm:M=4,N=768,K=768,layout=NT,dtype=i8", "gemm:M=16,N=768,K=3072,layout=NT,dtype=i8"}) {
    EXPECT_EQ(kGemmCpuDot.default_config(ParseWorkload(text), target).at("b_in_place"), 1) << text;
  }
  // Many rows parked would not fit the stack: blocks of K in place need M x cols <= 512.
  const Workload tall = ParseWorkload("gemm:M=512,N=64,K=4096,layout=NT,dtype=bf16");
  Config too_many = kGemmCpuDot.default_config(tall, target);
  too_many["b_in_place"] = 1;
  too_many["pack_b"] = 0;
  too_many["mr"] = 2;
  too_many["cols"] = 4;
  too_many["kc"] = 1024;
  EXPECT_THAT(kGemmCpuDot.space(tall, target).Validate(too_many).message(),
              HasSubstr("accumulators parked between blocks of K"));
}

TEST(GemmCpuDot, BuildsOnlyTheMatrixDtypes) {
  absl::Status f32 = CheckTemplateForm(kGemmCpuDot, ParseWorkload("gemm:M=8,N=8,K=8"));
  EXPECT_THAT(f32.message(), HasSubstr("dtype=f16|bf16|i8|u8i8"));
  EXPECT_TRUE(CheckTemplateForm(kGemmCpuDot, ParseWorkload("gemm:M=8,N=8,K=8,dtype=i8")).ok());
}

}  // namespace
}  // namespace tune
