// The AMX templates' kernels on the simulator (codegen/sim), which runs their tile instructions
// with bounds checks on every row: their answers and their memory accesses are checked on any
// machine, not only where the CPU has AMX (codegen_template_sweep_test runs them natively there).
#include <random>
#include <string>
#include <vector>

#include "codegen/ir/printer.h"
#include "codegen/lower.h"
#include "codegen/sim/gpu_sim.h"
#include "codegen/templates/conv2d_cpu_amx.h"
#include "codegen/templates/conv2d_cpu_amx_nest.h"
#include "codegen/templates/gemm_cpu_amx.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"

namespace tune {
namespace {

Target Spr() { return *Target::Parse("llvm -mcpu=sapphirerapids -threads=1"); }

// The default and `random` sampled configs of `tpl` on each workload, each run once on the
// simulator against the reference.
void CheckOnSimulator(const KernelTemplate& tpl, const std::vector<std::string>& workloads,
                      int random, uint64_t seed) {
  for (const testing::KernelCase& c : testing::RandomCases(tpl, Spr(), workloads, random, seed)) {
    const std::string what = c.workload.ToString() + " " + ConfigToString(c.config);
    absl::StatusOr<ir::LoweredFunc> built =
        tpl.build(c.workload, Spr(), c.config, DefaultFunctionName(c.workload));
    ASSERT_TRUE(built.ok()) << what << ": " << built.status();
    const absl::Status status = SimulateAgainstReference(c.workload, *built, 11);
    EXPECT_TRUE(status.ok()) << what << ": " << status;
  }
}

TEST(AmxTemplatesOnTheSimulator, GemmTilesComputeTheReferenceInEveryDtypeLayoutAndOutput) {
  CheckOnSimulator(
      kGemmCpuAmx,
      {"gemm:M=20,N=37,K=70,dtype=bf16", "gemm:M=33,N=40,K=64,dtype=bf16,layout=NT",
       "gemm:M=17,N=20,K=130,dtype=i8,out=f32", "gemm:M=48,N=32,K=64,dtype=u8i8,layout=NT",
       "gemm:M=19,N=33,K=100,dtype=u8i8,epilogue=requant"},
      3, 5);
}

// Where C holds the sums as they are (bf16 with out=f32, i8 and u8i8 with their i32 output, no
// epilogue) the register blocks inside M and N store their tiles straight into C; the blocks at
// the edges, and every block of a kernel whose C needs its sums converted, scaled or biased, go
// through the staging tiles. Both kinds compute the reference.
TEST(AmxTemplatesOnTheSimulator, TilesStoredStraightIntoCComputeTheReferenceInsideAndAtTheEdges) {
  struct Case {
    const char* workload;
    bool direct;
  };
  for (const Case& c :
       std::vector<Case>{{"gemm:M=40,N=48,K=64,dtype=bf16,out=f32", true},
                         {"gemm:M=64,N=64,K=128,dtype=i8", true},
                         {"gemm:M=40,N=48,K=64,dtype=u8i8", true},
                         {"gemm:M=40,N=48,K=64,dtype=bf16", false},
                         {"gemm:M=40,N=48,K=64,dtype=bf16,out=f32,epilogue=bias_relu", false},
                         {"gemm:M=40,N=48,K=64,dtype=i8,out=f32", false}}) {
    const Workload w = *Workload::Parse(c.workload);
    const Config config = kGemmCpuAmx.default_config(w, Spr());
    absl::StatusOr<ir::LoweredFunc> built =
        kGemmCpuAmx.build(w, Spr(), config, DefaultFunctionName(w));
    ASSERT_TRUE(built.ok()) << c.workload << ": " << built.status();
    EXPECT_EQ(ir::ToText(*built).find("amx_store(t0, C[") != std::string::npos, c.direct)
        << c.workload << " " << ConfigToString(config);
    const absl::Status status = SimulateAgainstReference(w, *built, 11);
    EXPECT_TRUE(status.ok()) << c.workload << ": " << status;
  }
}

// Few rows against canonical NT weights: B's rows read in place as the row tiles, A packed
// into panels, C written through each tile's transpose (the seeds that swap the operands).
TEST(AmxTemplatesOnTheSimulator, GemmsThatSwapTheOperandsComputeTheReference) {
  for (const char* text : {"gemm:M=5,N=96,K=128,dtype=bf16,layout=NT,epilogue=bias_relu",
                           "gemm:M=20,N=64,K=192,dtype=i8,layout=NT,out=f32",
                           "gemm:M=16,N=48,K=64,dtype=i8,layout=NT,epilogue=requant"}) {
    const Workload w = *Workload::Parse(text);
    int swapped = 0;
    for (const Config& c : kGemmCpuAmx.seeds(w, Spr())) {
      if (c.at("swap") == 0) {
        continue;
      }
      ++swapped;
      absl::StatusOr<ir::LoweredFunc> built =
          kGemmCpuAmx.build(w, Spr(), c, DefaultFunctionName(w));
      ASSERT_TRUE(built.ok()) << text << " " << ConfigToString(c) << ": " << built.status();
      const absl::Status status = SimulateAgainstReference(w, *built, 13);
      EXPECT_TRUE(status.ok()) << text << " " << ConfigToString(c) << ": " << status;
    }
    EXPECT_GE(swapped, 2) << text;
  }
  // Prepared weights are packed already: nothing to swap; nor does u8i8 (tdpbusd's unsigned
  // operand is the row tiles', which would be the weights).
  const Workload prepared =
      *Workload::Parse("gemm:M=5,N=96,K=128,dtype=bf16,layout=NT,weights=prepared");
  EXPECT_THAT(kGemmCpuAmx.space(prepared, Spr()).FindKnob("swap")->values,
              ::testing::ElementsAre(0));
  const Workload u8i8 = *Workload::Parse("gemm:M=5,N=96,K=128,dtype=u8i8,layout=NT");
  EXPECT_THAT(kGemmCpuAmx.space(u8i8, Spr()).FindKnob("swap")->values, ::testing::ElementsAre(0));
}

TEST(AmxTemplatesOnTheSimulator, ConvolutionTilesComputeTheReferenceInEveryLayoutAndDtype) {
  CheckOnSimulator(kConv2dCpuAmx,
                   {"conv2d:N=2,C=5,H=6,W=7,K=20,R=3,S=3,pad=1,layout=NHWC,dtype=bf16",
                    "conv2d:N=1,C=16,H=7,W=6,K=32,R=3,S=3,stride=2,pad=1,layout=NCHW16c,dtype=bf16",
                    "conv2d:N=1,C=6,H=7,W=6,K=17,R=3,S=2,dilation=2,pad=2,dtype=bf16,out=f32",
                    "conv2d:N=1,C=40,H=5,W=6,K=24,R=3,S=3,pad=1,layout=NHWC,dtype=i8",
                    "conv2d:N=1,C=3,H=9,W=9,K=16,R=5,S=5,stride=2,pad=2,layout=NHWC,dtype=u8i8,"
                    "epilogue=requant"},
                   2, 7);
}

// A stem's filter columns folded into the channels (7 x 3 inputs in one tile step): windows
// inside the row copied together, those in the padding input by input, NCHW and dilated ones
// input by input; folded and not, against the reference.
TEST(AmxTemplatesOnTheSimulator, FoldedFilterColumnsComputeTheReference) {
  for (const char* text :
       {"conv2d:N=1,C=3,H=12,W=19,K=16,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16",
        "conv2d:N=2,C=3,H=9,W=11,K=20,R=5,S=5,stride=1,pad=2,dtype=i8,epilogue=bias_relu",
        "conv2d:N=1,C=4,H=9,W=13,K=16,R=3,S=3,stride=1,pad=2,dilation=2,layout=NHWC,"
        "dtype=u8i8"}) {
    const Workload w = *Workload::Parse(text);
    ASSERT_TRUE(ConvAmxFolds(w)) << text;
    for (int64_t fold : {1, 0}) {
      Config c = kConv2dCpuAmx.default_config(w, Spr());
      EXPECT_EQ(c.at("fold"), 1) << text;
      c["fold"] = fold;
      absl::StatusOr<ir::LoweredFunc> built =
          kConv2dCpuAmx.build(w, Spr(), c, DefaultFunctionName(w));
      ASSERT_TRUE(built.ok()) << text << ": " << built.status();
      const absl::Status status = SimulateAgainstReference(w, *built, 13);
      EXPECT_TRUE(status.ok()) << text << " fold=" << fold << ": " << status;
    }
  }
  // 64 channels fill two whole steps per tap: nothing to fold.
  EXPECT_FALSE(ConvAmxFolds(
      *Workload::Parse("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,layout=NHWC,dtype=bf16")));
}

// Pointwise NHWC layers of whole tile steps read the input in place, the last register block
// moved back to end at the last pixel; strided ones go through the phased copy.
TEST(AmxTemplatesOnTheSimulator, PointwiseConvolutionsComputeTheReferenceInPlaceAndStrided) {
  CheckOnSimulator(
      kConv2dCpuAmx,
      {"conv2d:N=1,C=64,H=7,W=5,K=32,R=1,S=1,layout=NHWC,dtype=bf16,epilogue=bias_relu",
       "conv2d:N=2,C=64,H=3,W=9,K=16,R=1,S=1,layout=NHWC,dtype=i8",
       "conv2d:N=1,C=32,H=8,W=8,K=16,R=1,S=1,stride=2,layout=NHWC,dtype=bf16"},
      3, 9);
}

}  // namespace
}  // namespace tune
