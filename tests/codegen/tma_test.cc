// The IR's Hopper copy engine and shared-memory barriers (ir::TensorCopy, ir::MBarrierOp): a
// box copied into shared memory by one thread and read by all once its mbarrier's phase
// completes, on the simulator (zeros outside the tensor, the 128-byte swizzle, a wait that can
// never pass reported as a deadlock), in the launch (the tensor maps the launcher encodes) and in
// the PTX (cp.async.bulk.tensor through a by-value grid_constant map, mbarrier waits), which
// ptxas assembles when it is installed.
#include <span>
#include <string>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/verifier.h"
#include "codegen/llvm/gpu_backend.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/sim/gpu_sim.h"
#include "common/gpu_arch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/ptxas.h"
#include "tests/codegen/tma_kernels.h"

namespace tune {
namespace {

using ir::Expr;
using ir::Stmt;
using ::testing::HasSubstr;

constexpr int64_t kRows = 20, kCols = 40;       // the tensor: float32 [20][40]
constexpr int64_t kBoxRows = 8, kBoxCols = 32;  // 128-byte rows

// One block of 64 threads: thread 0 initialises the barrier, then (after a block barrier)
// expects the box's bytes and copies the box at (col0, row0) of `in`; every thread waits for
// the phase and copies the shared box out to `out` ([kBoxRows * kBoxCols], as it lies in shared
// memory). Without `copy`, nothing completes the phase.
ir::LoweredFunc BoxCopy(int64_t col0, int64_t row0, int swizzle, bool copy = true) {
  ir::Buffer in("in");
  ir::TensorMap map{.buffer = in,
                    .dims = {kCols, kRows},
                    .strides = {kCols},
                    .box = {kBoxCols, kBoxRows},
                    .swizzle_bytes = swizzle};
  return testing::OneCopyKernel("box_copy", in, kBoxRows * kBoxCols,
                                [&](const ir::Buffer& smem, const ir::Buffer& bars) {
                                  return copy ? ir::TensorCopy::Make(map, {Expr(col0), Expr(row0)},
                                                                     smem, Expr(0), bars, Expr(0))
                                              : Stmt();
                                });
}

std::vector<float> Tensor() {
  std::vector<float> t(kRows * kCols);
  for (size_t e = 0; e < t.size(); ++e) {
    t[e] = static_cast<float>(e + 1);
  }
  return t;
}

// What the box holds at element (r, c): the tensor's element, 0 outside it.
float Expected(const std::vector<float>& t, int64_t col0, int64_t row0, int64_t r, int64_t c) {
  const int64_t row = row0 + r, col = col0 + c;
  return row >= 0 && row < kRows && col >= 0 && col < kCols ? t[row * kCols + col] : 0.0f;
}

TEST(TensorCopySim, ABoxLandsInRowMajorOrderWithZerosOutsideTheTensor) {
  std::vector<float> t = Tensor();
  std::vector<float> out(kBoxRows * kBoxCols, -1.0f);
  // Columns 16..47 and rows 16..23 of a 40 x 20 tensor: both edges reach outside.
  ir::LoweredFunc f = BoxCopy(16, 16, 0);
  ASSERT_TRUE(ir::Verify(f).ok()) << ir::Verify(f);
  absl::Status s = RunGpuKernel(f, {std::span<float>(t), std::span<float>(out)});
  ASSERT_TRUE(s.ok()) << s;
  for (int64_t r = 0; r < kBoxRows; ++r) {
    for (int64_t c = 0; c < kBoxCols; ++c) {
      EXPECT_EQ(out[r * kBoxCols + c], Expected(t, 16, 16, r, c)) << r << ", " << c;
    }
  }
}

TEST(TensorCopySim, TheSwizzleMovesEach16ByteChunkOfRowRToChunkCXorRMod8) {
  std::vector<float> t = Tensor();
  std::vector<float> out(kBoxRows * kBoxCols, -1.0f);
  ASSERT_TRUE(RunGpuKernel(BoxCopy(4, 2, 128), {std::span<float>(t), std::span<float>(out)}).ok());
  for (int64_t r = 0; r < kBoxRows; ++r) {
    for (int64_t c = 0; c < kBoxCols; ++c) {
      const int64_t chunk = c / 4, at = (chunk ^ (r % 8)) * 4 + c % 4;
      EXPECT_EQ(out[r * kBoxCols + at], Expected(t, 4, 2, r, c)) << r << ", " << c;
    }
  }
}

TEST(TensorCopySim, AWaitNoCopyCanCompleteIsADeadlockNamingTheBarrier) {
  std::vector<float> t = Tensor();
  std::vector<float> out(kBoxRows * kBoxCols);
  absl::Status s =
      RunGpuKernel(BoxCopy(0, 0, 0, /*copy=*/false), {std::span<float>(t), std::span<float>(out)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("deadlock"));
  EXPECT_THAT(s.message(), HasSubstr("mbarrier_wait(bars[0], parity 0)"));
  EXPECT_THAT(s.message(), HasSubstr("1024 transaction bytes outstanding"));
}

TEST(TensorCopy, MapsOfBuffersThatAreNotParametersAreRefusedByTheVerifier) {
  ir::LoweredFunc f = BoxCopy(0, 0, 0);
  f.params = {ir::Buffer("other"), f.params[1]};
  absl::Status s = ir::Verify(f);
  EXPECT_THAT(s.message(), HasSubstr("maps in, which is not a parameter"));
}

TEST(TensorCopy, MapsOutsideTheCopyEnginesRulesAreRefusedWhenBuilt) {
  ir::Buffer in("in");
  ir::Buffer smem("smem", ir::MemoryScope::kGpuShared, ir::Type::Float32());
  ir::Buffer bars("bars", ir::MemoryScope::kGpuShared, ir::Type::Int64());
  auto make = [&](ir::TensorMap map) {
    return ir::TensorCopy::Make(std::move(map), {Expr(0), Expr(0)}, smem, Expr(0), bars, Expr(0));
  };
  // A row of 10 floats (40 bytes) is not a multiple of 16 bytes: no TMA stride.
  EXPECT_DEATH(make({.buffer = in, .dims = {10, 4}, .strides = {10}, .box = {32, 4}}),
               "multiple of 16 bytes");
  EXPECT_DEATH(make({.buffer = in, .dims = {64, 4}, .strides = {64}, .box = {16, 4}}),
               "rows of exactly 128 bytes");
  EXPECT_DEATH(make({.buffer = in, .dims = {64, 512}, .strides = {64}, .box = {32, 300}}),
               "box entries 1..256");
}

TEST(TensorCopyLaunch, TheLaunchCarriesEachMapWithByteStridesAndRefusesArchsBeforeSm90) {
  ir::LoweredFunc f = BoxCopy(0, 0, 128);
  absl::StatusOr<GpuArch> sm90 = GpuArchFor(*Target::Parse("cuda -arch=sm_90"));
  ASSERT_TRUE(sm90.ok());
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(f, &*sm90);
  ASSERT_TRUE(launch.ok()) << launch.status();
  ASSERT_EQ(launch->tensor_maps.size(), 1u);
  const GpuTensorMap& map = launch->tensor_maps[0];
  EXPECT_EQ(map.arg, 0u);
  EXPECT_EQ(map.element_bytes, 4u);
  EXPECT_EQ(map.rank, 2u);
  EXPECT_EQ(map.dims[0], uint64_t{kCols});
  EXPECT_EQ(map.dims[1], uint64_t{kRows});
  EXPECT_EQ(map.strides[0], uint64_t{kCols * 4});
  EXPECT_EQ(map.box[0], uint32_t{kBoxCols});
  EXPECT_EQ(map.box[1], uint32_t{kBoxRows});
  EXPECT_EQ(map.swizzle_bytes, 128u);
  EXPECT_EQ(GpuSharedAlignment(f.body), 1024);
  absl::StatusOr<GpuArch> sm80 = GpuArchFor(*Target::Parse("cuda -arch=sm_80"));
  ASSERT_TRUE(sm80.ok());
  EXPECT_THAT(GpuLaunchOf(f, &*sm80).status().message(),
              HasSubstr("need cuda -arch=sm_90 or sm_90a, not sm_80"));
}

TEST(TensorCopyPtx, TheCopyReadsAByValueGridConstantMapAndWaitsInALoop) {
  const Target target = *Target::Parse("cuda -arch=sm_90a");
  absl::StatusOr<GpuModule> module = EmitGpuModule({BoxCopy(0, 0, 128)}, {.target = target});
  ASSERT_TRUE(module.ok()) << module.status();
  const std::string& ptx = module->code;
  EXPECT_THAT(ptx, HasSubstr(".param .align 64 .b8 box_copy_param_2[128]"));
  EXPECT_THAT(ptx, HasSubstr("cvta.param.u64"));
  EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
                             "complete_tx::bytes"));
  EXPECT_THAT(ptx, HasSubstr("mbarrier.init.shared::cta.b64"));
  EXPECT_THAT(ptx, HasSubstr("mbarrier.arrive.expect_tx.shared::cta.b64"));
  EXPECT_THAT(ptx, HasSubstr("mbarrier.try_wait.parity.shared::cta.b64"));
  // The AMDGPU backend refuses the kernel, naming what it lacks.
  absl::StatusOr<GpuModule> amd =
      EmitGpuModule({BoxCopy(0, 0, 128)}, {.target = *Target::Parse("rocm -mcpu=gfx942")});
  EXPECT_THAT(amd.status().message(), HasSubstr("need cuda -arch=sm_90 or sm_90a, not gfx942"));
  if (!testing::PtxasInstalled()) {
    GTEST_SKIP() << testing::kPtxas << " is not installed";
  }
  const testing::PtxasResult assembled = testing::RunPtxas(ptx, "sm_90a");
  EXPECT_EQ(assembled.exit_code, 0) << assembled.report;
}

}  // namespace
}  // namespace tune
