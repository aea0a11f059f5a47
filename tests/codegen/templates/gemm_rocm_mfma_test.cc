// gemm.rocm.mfma (gfx90a, gfx942) and gemm.rocm.wmma (gfx1100), the AMD matrix-engine GEMMs: the
// instruction layouts of ir::WaveMma, the kernels on the simulator against the typed reference
// (every dtype of each arch, both layouts, edges, element reads, single and double buffering,
// the grid split), the targets and blocks they refuse, and their HSA code objects inspected with
// llvm-objdump and llvm-readelf (the matrix instructions present, VGPR and AGPR counts, no
// scratch, occupancy). No AMD GPU has run these kernels.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "codegen/ir/printer.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"
#include "tests/codegen/templates/gpu_template_check.h"
#include "tests/codegen/templates/hsaco_inspect.h"

namespace tune {
namespace {

using testing::GpuTemplate;
using ::testing::HasSubstr;

Target Rocm(const std::string& arch) { return *Target::Parse("rocm -mcpu=" + arch); }

Config Knobs(int64_t bm, int64_t bn, int64_t bk, int64_t waves_m, int64_t waves_n, int64_t inst,
             int64_t stages, int64_t copy, int64_t raster = 1, int64_t gridk = 1) {
  return {{"bm", bm},           {"bn", bn},      {"bk", bk},         {"waves_m", waves_m},
          {"waves_n", waves_n}, {"inst", inst},  {"stages", stages}, {"copy", copy},
          {"raster", raster},   {"gridk", gridk}};
}

void CheckOnSimulator(const std::string& name, const std::string& arch, const std::string& text,
                      int random, std::vector<Config> extra = {}) {
  testing::CheckTemplateOnSimulator(name, Rocm(arch), text, random, std::move(extra));
}

// --- The instruction layouts -----------------------------------------------------------------

TEST(WaveMmaLayout, EveryAccumulatorOfATileBelongsToExactlyOneLaneAndRegister) {
  for (ir::WaveMmaShape shape :
       {ir::WaveMmaShape::kMfma32x32, ir::WaveMmaShape::kMfma16x16, ir::WaveMmaShape::kWmma16x16}) {
    const int tile = ir::WaveMmaTile(shape);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t lane = 0; lane < ir::WaveMmaLanes(shape); ++lane) {
      for (int r = 0; r < ir::WaveMmaAccumulators(shape); ++r) {
        const int64_t row = ir::WaveMmaAccRow<int64_t>(shape, lane, r);
        const int64_t col = ir::WaveMmaAccCol<int64_t>(shape, lane);
        EXPECT_TRUE(row >= 0 && row < tile && col >= 0 && col < tile);
        EXPECT_TRUE(seen.insert({row, col}).second)
            << ir::WaveMmaShapeName(shape) << " lane " << lane << " r " << r;
      }
    }
    EXPECT_EQ(seen.size(), size_t(tile) * tile) << ir::WaveMmaShapeName(shape);
  }
  // The documented corners: v_mfma 32x32 puts C[4][0] in lane 32, register 0, and C[8][0] in
  // lane 0, register 4; v_mfma 16x16 C[4][0] in lane 16; WMMA C[1][0] in lane 16, register 0.
  EXPECT_EQ(ir::WaveMmaAccRow<int64_t>(ir::WaveMmaShape::kMfma32x32, 32, 0), 4);
  EXPECT_EQ(ir::WaveMmaAccRow<int64_t>(ir::WaveMmaShape::kMfma32x32, 0, 4), 8);
  EXPECT_EQ(ir::WaveMmaAccRow<int64_t>(ir::WaveMmaShape::kMfma16x16, 16, 0), 4);
  EXPECT_EQ(ir::WaveMmaAccRow<int64_t>(ir::WaveMmaShape::kWmma16x16, 16, 0), 1);
}

TEST(WaveMmaLayout, TheLanesOfAnMfmaOperandHoldEveryKOfEveryRowOnce) {
  for (auto [shape, k] :
       {std::pair{ir::WaveMmaShape::kMfma32x32, 8}, std::pair{ir::WaveMmaShape::kMfma32x32, 16},
        std::pair{ir::WaveMmaShape::kMfma16x16, 16}, std::pair{ir::WaveMmaShape::kMfma16x16, 32}}) {
    const int tile = ir::WaveMmaTile(shape);
    const int run = ir::WaveMmaKPerLane(shape, k);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t lane = 0; lane < 64; ++lane) {
      for (int e = 0; e < run; ++e) {
        EXPECT_TRUE(
            seen.insert({lane % tile, ir::WaveMmaOperandK<int64_t>(shape, k, lane) + e}).second);
      }
    }
    EXPECT_EQ(seen.size(), size_t(tile) * k);
  }
  EXPECT_EQ(ir::WaveMmaKPerLane(ir::WaveMmaShape::kWmma16x16, 16), 16);
}

// --- The kernels on the simulator ------------------------------------------------------------

TEST(GemmRocmMfmaSim, F16AndBf16GemmsMatchTheReferenceInBothLayoutsOnGfx942) {
  CheckOnSimulator("gemm.rocm.mfma", "gfx942", "gemm:M=64,N=64,K=64,layout=NT,dtype=bf16", 2,
                   {Knobs(64, 64, 32, 2, 1, 32, 2, 16), Knobs(64, 32, 64, 2, 2, 16, 1, 8, 4)});
  CheckOnSimulator("gemm.rocm.mfma", "gfx942", "gemm:M=48,N=80,K=96,dtype=f16,epilogue=bias_relu",
                   2, {Knobs(64, 64, 32, 1, 2, 32, 2, 16, 4), Knobs(32, 32, 32, 2, 2, 16, 2, 4)});
}

TEST(GemmRocmMfmaSim, F16AndBf16GemmsMatchTheReferenceOnGfx90a) {
  CheckOnSimulator("gemm.rocm.mfma", "gfx90a", "gemm:M=32,N=96,K=64,dtype=bf16,out=f32", 2,
                   {Knobs(32, 64, 32, 1, 2, 32, 2, 16)});
  CheckOnSimulator("gemm.rocm.mfma", "gfx90a", "gemm:M=64,N=32,K=32,layout=NT,dtype=f16", 1);
}

TEST(GemmRocmMfmaSim, EdgesThatAreNotMultiplesOfTheTileAreZeroFilledAndGuarded) {
  // K = 40: the last step is part zeros; M and N leave partial block tiles.
  CheckOnSimulator("gemm.rocm.mfma", "gfx942",
                   "gemm:M=33,N=72,K=40,layout=NT,dtype=bf16,epilogue=bias", 2,
                   {Knobs(64, 64, 32, 2, 2, 16, 2, 16, 4), Knobs(32, 64, 32, 1, 2, 32, 1, 8)});
}

TEST(GemmRocmMfmaSim, RowsOfAnOddLengthAreReadElementByElement) {
  const Workload w = *Workload::Parse("gemm:M=20,N=65,K=17,dtype=bf16");
  const KernelTemplate* tpl = GpuTemplate("gemm.rocm.mfma", Rocm("gfx942"), w);
  ASSERT_NE(tpl, nullptr);
  EXPECT_EQ(tpl->space(w, Rocm("gfx942")).FindKnob("copy")->values, (std::vector<int64_t>{2}));
  CheckOnSimulator("gemm.rocm.mfma", "gfx942", "gemm:M=20,N=65,K=17,dtype=bf16", 2);
}

TEST(GemmRocmMfmaSim, I8GemmsMatchTheReferenceOnTheIntegerInstructionsOfEachArch) {
  // gfx90a: mfma.i32.32x32x8i8 / 16x16x16i8; gfx942: mfma.i32.32x32x16.i8 / 16x16x32.i8.
  for (const char* arch : {"gfx90a", "gfx942"}) {
    CheckOnSimulator("gemm.rocm.mfma", arch,
                     "gemm:M=32,N=40,K=128,layout=NT,dtype=i8,epilogue=bias_relu", 2,
                     {Knobs(32, 64, 64, 1, 2, 32, 2, 16), Knobs(32, 32, 128, 2, 2, 16, 1, 16)});
    CheckOnSimulator("gemm.rocm.mfma", arch, "gemm:M=33,N=32,K=96,dtype=i8,out=f32,epilogue=bias",
                     1);
  }
}

TEST(GemmRocmMfmaSim, FnuzFp8GemmsMatchTheReferenceWithTheirScalesOnGfx942) {
  CheckOnSimulator("gemm.rocm.mfma", "gfx942", "gemm:M=32,N=32,K=128,layout=NT,dtype=fp8e4m3fnuz",
                   2, {Knobs(32, 32, 64, 1, 1, 32, 2, 16), Knobs(32, 32, 128, 2, 2, 16, 1, 8)});
  CheckOnSimulator("gemm.rocm.mfma", "gfx942",
                   "gemm:M=16,N=40,K=96,dtype=fp8e5m2fnuz,out=f32,epilogue=relu", 1);
}

TEST(GemmRocmMfmaSim, AGridSplitsLastBlockAddsThePartialTilesForEveryOutputType) {
  // The workspace split of split_reduction.h: a float32 output, bf16 with a bias and ReLU (the
  // last split's steps part zeros, partial tiles at the edges), i8's exact i32 sums, and WMMA.
  CheckOnSimulator("gemm.rocm.mfma", "gfx942",
                   "gemm:M=32,N=32,K=1024,layout=NT,dtype=bf16,out=f32,epilogue=bias", 0,
                   {Knobs(32, 32, 32, 1, 1, 32, 2, 16, 1, 4)});
  CheckOnSimulator("gemm.rocm.mfma", "gfx90a",
                   "gemm:M=40,N=36,K=1000,dtype=bf16,epilogue=bias_relu", 0,
                   {Knobs(32, 32, 32, 1, 1, 16, 2, 4, 1, 3)});
  CheckOnSimulator("gemm.rocm.mfma", "gfx942", "gemm:M=32,N=64,K=768,layout=NT,dtype=i8", 0,
                   {Knobs(32, 64, 64, 1, 2, 16, 2, 16, 1, 2)});
  CheckOnSimulator("gemm.rocm.wmma", "gfx1100", "gemm:M=32,N=32,K=512,dtype=f16", 0,
                   {Knobs(32, 32, 32, 2, 2, 16, 2, 16, 1, 4)});
}

TEST(GemmRocmWmmaSim, Gfx1100GemmsOfEveryDtypeMatchTheReference) {
  CheckOnSimulator("gemm.rocm.wmma", "gfx1100", "gemm:M=64,N=48,K=64,layout=NT,dtype=f16", 2,
                   {Knobs(32, 32, 32, 2, 2, 16, 2, 16), Knobs(64, 32, 32, 2, 1, 16, 1, 8, 4)});
  CheckOnSimulator("gemm.rocm.wmma", "gfx1100", "gemm:M=33,N=40,K=40,dtype=bf16,epilogue=bias", 2);
  CheckOnSimulator("gemm.rocm.wmma", "gfx1100", "gemm:M=32,N=32,K=128,layout=NT,dtype=i8", 1);
  CheckOnSimulator("gemm.rocm.wmma", "gfx1100",
                   "gemm:M=32,N=32,K=64,layout=NT,dtype=u8i8,out=f32,epilogue=bias", 1);
}

// --- What the templates refuse ---------------------------------------------------------------

TEST(GemmRocmMfma, AppliesToTheMatrixDtypesOfItsArchsOnly) {
  const Workload bf16 = *Workload::Parse("gemm:M=64,N=64,K=64,dtype=bf16");
  EXPECT_NE(GpuTemplate("gemm.rocm.mfma", Rocm("gfx90a"), bf16), nullptr);
  EXPECT_NE(GpuTemplate("gemm.rocm.mfma", Rocm("gfx942"), bf16), nullptr);
  EXPECT_EQ(GpuTemplate("gemm.rocm.mfma", Rocm("gfx1100"), bf16), nullptr);
  EXPECT_NE(GpuTemplate("gemm.rocm.wmma", Rocm("gfx1100"), bf16), nullptr);
  EXPECT_EQ(GpuTemplate("gemm.rocm.wmma", Rocm("gfx942"), bf16), nullptr);
  EXPECT_EQ(GpuTemplate("gemm.rocm.mfma", *Target::Parse("cuda -arch=sm_90"), bf16), nullptr);
  EXPECT_EQ(GpuTemplate("gemm.rocm.mfma", Rocm("gfx942"), *Workload::Parse("gemm:M=64,N=64,K=64")),
            nullptr);  // f32: the FP32 units' gemm.gpu.tiled
}

TEST(GemmRocmMfma, ABuildForAnotherArchIsRefusedNamingTheTargetsItBuildsFor) {
  const Workload w = *Workload::Parse("gemm:M=64,N=64,K=64,dtype=bf16");
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate("gemm.rocm.mfma");
  ASSERT_NE(tpl, nullptr);
  absl::StatusOr<ir::LoweredFunc> built =
      tpl->build(w, Rocm("gfx1100"), Knobs(64, 64, 32, 2, 2, 16, 2, 16), "k");
  ASSERT_FALSE(built.ok());
  EXPECT_THAT(built.status().message(), HasSubstr("rocm -mcpu=gfx90a|gfx942"));
  EXPECT_THAT(built.status().message(), HasSubstr("gfx1100"));
}

TEST(GemmRocmMfmaLaunch, AWaveMmaInABlockOfPartWavefrontsIsRefused) {
  ir::Buffer a("a", ir::MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  ir::Buffer b("b", ir::MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  ir::Buffer acc("acc", ir::MemoryScope::kGpuLocal, ir::Type::Float32());
  ir::Var tx("tx"), bx("bx");
  ir::Stmt mma =
      ir::WaveMma::Make(Dtype::kBf16, ir::WaveMmaShape::kMfma32x32, 8, a, ir::Expr(int64_t{0}), 16,
                        b, ir::Expr(int64_t{0}), 16, true, acc, 0, 1, 1);
  ir::LoweredFunc func;
  func.name = "part_waves";
  func.body = ir::For::Make(
      bx, 0, 1, ir::LoopKind::kGpuBlock,
      ir::Allocate::Make(a, 512,
                         ir::Allocate::Make(b, 512,
                                            ir::For::Make(tx, 0, 96, ir::LoopKind::kGpuThread,
                                                          ir::Allocate::Make(acc, 16, mma)))));
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(func);
  EXPECT_EQ(launch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(launch.status().message(), HasSubstr("96 threads (not a multiple of 64)"));
  EXPECT_THAT(ir::ToText(func.body), HasSubstr("wave_mma.bf16.mfma32x32x8(acc[0], 1x1 tiles"));
}

// --- The code objects, inspected -------------------------------------------------------------

TEST(GemmRocmMfmaCodeObject, PresetsHoldTheMatrixInstructionsAndNeedNoScratch) {
  if (!testing::HaveLlvmObjectTools()) {
    GTEST_SKIP() << "llvm-readelf-19 / llvm-objdump-19 are not installed";
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-mfma-hsaco-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  struct Preset {
    const char* tpl;
    const char* arch;
    const char* workload;
    const char* instruction;  // what the disassembly must hold
  };
  for (const Preset& p : {
           Preset{"gemm.rocm.mfma", "gfx90a", "gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                  "v_mfma_f32_32x32x8bf16_1k"},
           Preset{"gemm.rocm.mfma", "gfx90a", "gemm:M=4096,N=4096,K=4096,dtype=f16",
                  "v_mfma_f32_32x32x8f16"},
           Preset{"gemm.rocm.mfma", "gfx90a", "gemm:M=64,N=4096,K=4096,dtype=f16,epilogue=bias",
                  "v_mfma_f32_32x32x8f16"},
           Preset{"gemm.rocm.mfma", "gfx90a", "gemm:M=2048,N=2048,K=2048,layout=NT,dtype=i8",
                  "v_mfma_i32_32x32x8i8"},
           Preset{"gemm.rocm.mfma", "gfx942", "gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                  "v_mfma_f32_32x32x8_bf16"},
           Preset{"gemm.rocm.mfma", "gfx942", "gemm:M=4096,N=4096,K=4096,dtype=f16",
                  "v_mfma_f32_32x32x8_f16"},
           Preset{"gemm.rocm.mfma", "gfx942", "gemm:M=16,N=4096,K=4096,layout=NT,dtype=bf16",
                  "v_mfma_f32_16x16x16_bf16"},
           Preset{"gemm.rocm.mfma", "gfx942", "gemm:M=2048,N=2048,K=2048,layout=NT,dtype=i8",
                  "v_mfma_i32_32x32x16_i8"},
           Preset{"gemm.rocm.mfma", "gfx942",
                  "gemm:M=2048,N=2048,K=2048,layout=NT,dtype=fp8e4m3fnuz",
                  "v_mfma_f32_32x32x16_fp8_fp8"},
           Preset{"gemm.rocm.wmma", "gfx1100", "gemm:M=4096,N=4096,K=4096,layout=NT,dtype=f16",
                  "v_wmma_f32_16x16x16_f16"},
           Preset{"gemm.rocm.wmma", "gfx1100", "gemm:M=2048,N=2048,K=2048,layout=NT,dtype=i8",
                  "v_wmma_i32_16x16x16_iu8"},
       }) {
    testing::ExpectMatrixKernelWithoutScratch(*dir, p.tpl, p.arch, p.workload, p.instruction);
  }
}

}  // namespace
}  // namespace tune
