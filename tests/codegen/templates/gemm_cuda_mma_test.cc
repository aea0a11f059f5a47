// gemm.cuda.mma, the tensor-core GEMM: its kernels on the simulator against the typed reference
// (every dtype, both layouts, edges, the element-copy path and the grid split), the shapes and
// targets it refuses, its launch (whole warps, dynamic shared memory past 48 KiB) and its PTX
// (ldmatrix, mma.sync, cp.async; no spills) through ptxas when it is installed.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/dtype_support.h"
#include "codegen/ir/printer.h"
#include "codegen/llvm/gpu_backend.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/files.h"
#include "common/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"
#include "tests/codegen/templates/gpu_template_check.h"

namespace tune {
namespace {

using ::testing::ContainsRegex;
using testing::GpuTemplate;
using ::testing::HasSubstr;

const Target& Sm90() {
  static const Target target = *Target::Parse("cuda -arch=sm_90");
  return target;
}

const KernelTemplate* Mma(const Workload& w, const Target& target = Sm90()) {
  return GpuTemplate("gemm.cuda.mma", target, w);
}

absl::StatusOr<ir::LoweredFunc> BuildLowered(const Workload& w, const Config& c,
                                             const Target& target = Sm90()) {
  return testing::BuildLoweredGpu("gemm.cuda.mma", w, c, target);
}

// The default, `random` sampled configs and `extra` of gemm.cuda.mma on `text`, on the
// simulator against the reference.
void CheckOnSimulator(const std::string& text, int random, std::vector<Config> extra = {}) {
  testing::CheckTemplateOnSimulator("gemm.cuda.mma", Sm90(), text, random, std::move(extra));
}

Config Knobs(int64_t bm, int64_t bn, int64_t bk, int64_t warps_m, int64_t warps_n, int64_t stages,
             int64_t copy, int64_t raster = 1, int64_t gridk = 1) {
  return {{"bm", bm},           {"bn", bn},           {"bk", bk},
          {"warps_m", warps_m}, {"warps_n", warps_n}, {"stages", stages},
          {"copy", copy},       {"raster", raster},   {"gridk", gridk}};
}

TEST(GemmCudaMmaSim, Bf16AndF16GemmsMatchTheReferenceInBothLayouts) {
  CheckOnSimulator("gemm:M=64,N=64,K=64,layout=NT,dtype=bf16", 2,
                   {Knobs(32, 32, 32, 2, 2, 2, 16), Knobs(32, 64, 64, 1, 4, 3, 8, 4)});
  CheckOnSimulator("gemm:M=48,N=80,K=96,dtype=f16,epilogue=bias_relu", 2,
                   {Knobs(32, 32, 32, 1, 2, 4, 16, 4)});
  CheckOnSimulator("gemm:M=32,N=32,K=64,dtype=bf16,out=f32,epilogue=bias", 1);
}

TEST(GemmCudaMmaSim, EdgesThatAreNotMultiplesOfTheTileAreZeroFilledAndGuarded) {
  // K = 40: the last step is part zeros; M and N leave partial block tiles.
  CheckOnSimulator("gemm:M=33,N=72,K=40,layout=NT,dtype=bf16,epilogue=bias", 2,
                   {Knobs(32, 64, 32, 2, 2, 2, 16, 4)});
}

TEST(GemmCudaMmaSim, RowsOfAnOddLengthAreCopiedElementByElement) {
  // K = 17 and N = 65 bf16 elements: rows of 34 and 130 bytes, which no cp.async width divides.
  const Workload w = *Workload::Parse("gemm:M=20,N=65,K=17,dtype=bf16");
  const KernelTemplate* tpl = Mma(w);
  ASSERT_NE(tpl, nullptr);
  EXPECT_EQ(tpl->space(w, Sm90()).FindKnob("copy")->values, (std::vector<int64_t>{2}));
  CheckOnSimulator("gemm:M=20,N=65,K=17,dtype=bf16", 2);
}

TEST(GemmCudaMmaSim, Tf32AndFp8GemmsMatchTheReferenceWithTheirScales) {
  CheckOnSimulator("gemm:M=32,N=48,K=40,layout=NT,dtype=tf32,epilogue=bias", 2);
  CheckOnSimulator("gemm:M=32,N=32,K=128,layout=NT,dtype=fp8e4m3", 2);
  CheckOnSimulator("gemm:M=16,N=40,K=96,layout=NT,dtype=fp8e5m2,out=f32,epilogue=relu", 1);
}

TEST(GemmCudaMmaSim, IntegerGemmsMatchTheReferenceExactlyOrDequantised) {
  CheckOnSimulator("gemm:M=32,N=40,K=128,layout=NT,dtype=i8,epilogue=bias_relu", 2);
  CheckOnSimulator("gemm:M=33,N=32,K=96,layout=NT,dtype=u8i8,out=f32,epilogue=bias", 1);
}

TEST(GemmCudaMmaSim, AGridSplitsLastBlockAddsThePartialTilesAndRunsTheEpilogue) {
  // 1024 bf16 elements of K: 32 steps of the smallest bk (32), so every split up to 16.
  const Workload w = *Workload::Parse("gemm:M=16,N=32,K=1024,layout=NT,dtype=bf16");
  ASSERT_NE(Mma(w), nullptr);
  EXPECT_THAT(Mma(w)->space(w, Sm90()).FindKnob("gridk")->values,
              ::testing::ElementsAre(1, 2, 3, 4, 6, 8, 12, 16));
  CheckOnSimulator("gemm:M=16,N=32,K=1024,layout=NT,dtype=bf16,out=f32,epilogue=bias", 0,
                   {Knobs(16, 32, 32, 1, 2, 3, 16, 1, 4)});
  // 16-bit and integer outputs with the whole epilogue; odd columns one at a time.
  CheckOnSimulator("gemm:M=40,N=64,K=1024,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
                   {Knobs(32, 32, 32, 1, 2, 3, 16, 1, 3)});
  CheckOnSimulator("gemm:M=32,N=40,K=512,layout=NT,dtype=i8,epilogue=bias_relu", 0,
                   {Knobs(32, 32, 64, 2, 1, 3, 16, 1, 2)});
  CheckOnSimulator("gemm:M=24,N=33,K=512,dtype=f16", 0, {Knobs(16, 32, 32, 1, 2, 3, 2, 1, 2)});
}

TEST(GemmCudaMma, ATf32OrFp8GemmWithBStoredKByNIsRefusedNamingTheLayouts) {
  const Workload w = *Workload::Parse("gemm:M=64,N=64,K=64,dtype=tf32");
  EXPECT_EQ(Mma(w), nullptr);  // not offered
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate("gemm.cuda.mma");
  ASSERT_NE(tpl, nullptr);
  const absl::Status status = CheckTemplateShape(*tpl, w);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("layout=NT for every dtype"));
  EXPECT_THAT(status.message(), HasSubstr("dtype=tf32 with layout=NN"));
  EXPECT_TRUE(CheckTemplateShape(*tpl, *Workload::Parse("gemm:M=64,N=64,K=64,dtype=bf16")).ok());
}

TEST(GemmCudaMma, AppliesToTensorCoreDtypesOnCudaTargetsOnly) {
  EXPECT_EQ(Mma(*Workload::Parse("gemm:M=64,N=64,K=64")), nullptr);  // f32
  EXPECT_EQ(
      Mma(*Workload::Parse("gemm:M=64,N=64,K=64,dtype=bf16"), *Target::Parse("rocm -mcpu=gfx90a")),
      nullptr);
  EXPECT_NE(
      Mma(*Workload::Parse("gemm:M=64,N=64,K=64,dtype=bf16"), *Target::Parse("cuda -arch=sm_80")),
      nullptr);
}

TEST(GemmCudaMmaLaunch, SharedMemoryPastFortyEightKibIsAllocatedDynamically) {
  const Workload w = *Workload::Parse("gemm:M=1024,N=1024,K=1024,layout=NT,dtype=bf16");
  // 3 stages of 128 x 40 (A) and 256 x 40 (B) bf16: 92160 bytes.
  absl::StatusOr<ir::LoweredFunc> big = BuildLowered(w, Knobs(128, 256, 32, 2, 4, 3, 16, 8));
  ASSERT_TRUE(big.ok()) << big.status();
  absl::StatusOr<GpuArch> arch = GpuArchFor(Sm90());
  ASSERT_TRUE(arch.ok());
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*big, &*arch);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->dynamic_shared_bytes, 92160u);
  EXPECT_EQ(launch->static_shared_bytes, 0u);
  EXPECT_EQ(launch->ThreadsPerBlock(), 256u);
  // sm_86 opts in to 99 KiB only: the space refuses what does not fit.
  const Target sm86 = *Target::Parse("cuda -arch=sm_86");
  EXPECT_THAT(Mma(w, sm86)->space(w, sm86).Validate(Knobs(128, 256, 64, 2, 4, 4, 16)).message(),
              HasSubstr("max_dynamic_shared_bytes_per_block"));
  // Small tiles stay static.
  absl::StatusOr<ir::LoweredFunc> small = BuildLowered(w, Knobs(64, 64, 32, 2, 2, 2, 16));
  ASSERT_TRUE(small.ok());
  launch = GpuLaunchOf(*small, &*arch);
  ASSERT_TRUE(launch.ok());
  EXPECT_EQ(launch->dynamic_shared_bytes, 0u);
  EXPECT_GT(launch->static_shared_bytes, 0u);
}

TEST(GemmCudaMmaLaunch, AWarpMmaInABlockOfPartWarpsIsRefused) {
  ir::Buffer a("a", ir::MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  ir::Buffer b("b", ir::MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  ir::Buffer acc("acc", ir::MemoryScope::kGpuLocal, ir::Type::Float32());
  ir::Var tx("tx"), bx("bx");
  ir::Stmt mma = ir::WarpMma::Make(Dtype::kBf16, a, ir::Expr(int64_t{0}), 16, b,
                                   ir::Expr(int64_t{0}), 16, true, acc, 0, 1, 1);
  ir::LoweredFunc func;
  func.name = "part_warps";
  func.body = ir::For::Make(
      bx, 0, 1, ir::LoopKind::kGpuBlock,
      ir::Allocate::Make(a, 256,
                         ir::Allocate::Make(b, 128,
                                            ir::For::Make(tx, 0, 48, ir::LoopKind::kGpuThread,
                                                          ir::Allocate::Make(acc, 4, mma)))));
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(func);
  EXPECT_EQ(launch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(launch.status().message(), HasSubstr("48 threads (not a multiple of 32)"));
  EXPECT_THAT(ir::ToText(func.body), HasSubstr("warp_mma.bf16(acc[0], 1x1 tiles"));
}

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

TEST(GemmCudaMmaPtx, DefaultsUseLdmatrixMmaSyncAndCpAsyncAndAssembleWithoutSpills) {
  if (!std::filesystem::exists(kPtxas)) {
    GTEST_SKIP() << kPtxas << " is not installed";
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-mma-ptx-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  struct Case {
    const char* text;
    const char* mma;  // the instruction the PTX must hold
  };
  for (const char* arch : {"sm_80", "sm_90"}) {
    const Target target = *Target::Parse(std::string("cuda -arch=") + arch);
    for (const Case& c : {
             Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                  "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"},
             Case{"gemm:M=64,N=4096,K=4096,dtype=f16,epilogue=bias",
                  "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"},
             Case{"gemm:M=1024,N=1024,K=1024,layout=NT,dtype=tf32",
                  "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"},
             Case{"gemm:M=2048,N=2048,K=2048,layout=NT,dtype=fp8e4m3",
                  "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"},
         }) {
      const Workload w = *Workload::Parse(c.text);
      if (!TargetDtypes(target).Has(w.dtype())) {
        continue;  // fp8 before sm_89
      }
      const KernelTemplate* tpl = Mma(w, target);
      ASSERT_NE(tpl, nullptr) << c.text;
      absl::StatusOr<ir::LoweredFunc> lowered =
          BuildLowered(w, tpl->default_config(w, target), target);
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = target});
      ASSERT_TRUE(module.ok()) << module.status();
      EXPECT_THAT(module->code, HasSubstr(c.mma)) << c.text << " " << arch;
      EXPECT_THAT(module->code, ContainsRegex("ldmatrix\\.sync\\.aligned\\.m8n8\\.x4"));
      EXPECT_THAT(module->code, HasSubstr("cp.async.cg.shared.global"));
      const std::string ptx = dir->File(lowered->name + arch + ".ptx");
      const std::string log = ptx + ".log";
      std::ofstream(ptx) << module->code;
      const std::string cmd = std::string(kPtxas) + " -arch=" + arch + " -v -o /dev/null " + ptx +
                              " > " + log + " 2>&1";
      const int rc = std::system(cmd.c_str());
      std::stringstream report;
      report << std::ifstream(log).rdbuf();
      ASSERT_EQ(rc, 0) << c.text << " " << arch << "\n" << report.str();
      EXPECT_THAT(report.str(), HasSubstr("0 bytes spill stores")) << c.text << " " << arch << "\n"
                                                                   << report.str();
    }
  }
}

}  // namespace
}  // namespace tune
