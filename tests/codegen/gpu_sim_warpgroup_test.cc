// The GPU IR simulator's warpgroup-level tensor-core steps (ir::WarpGroupMma): a warpgroup
// issues one as a whole, and an overwriting step replaces the accumulators.
#include <string>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/sim/gpu_sim.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Barrier;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::LoopKind;
using ir::LoweredFunc;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;
using ::testing::HasSubstr;

TEST(GpuSimTest, AWarpgroupStepThatPartOfTheWarpgroupSkipsIsDivergent) {
  // A warpgroup issues its wgmma as one: threads 64-127 of the warpgroup never reach it.
  Buffer a("a", MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  Buffer b("b", MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  Buffer acc("acc", MemoryScope::kGpuLocal, ir::Type::Float32());
  Buffer out("out");
  Var tx("tx");
  Stmt mma = ir::WarpGroupMma::Make(Dtype::kBf16, a, Expr(int64_t{0}), b, Expr(int64_t{0}), 8, 1,
                                    acc, 0, 0);
  Stmt thread = Allocate::Make(acc, 4, IfThenElse::Make(tx < 64, mma));
  LoweredFunc f{
      "half_warpgroup",
      {out},
      Allocate::Make(a, 4096,
                     Allocate::Make(b, 512, For::Make(tx, 0, 128, LoopKind::kGpuThread, thread)))};
  std::vector<float> data(1, 0.0f);
  absl::Status status = RunGpuKernel(f, {data});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("divergent warpgroup_mma"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("all 128 threads of a warpgroup"));
}

// Thread t's acc[0] after a warpgroup step of ones x ones (m64n8k16, bf16) onto accumulators of
// 100: 116 where the step adds, 16 where it overwrites.
std::vector<float> WarpgroupStepOntoHundreds(bool overwrite) {
  Buffer a("a", MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  Buffer b("b", MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  Buffer acc("acc", MemoryScope::kGpuLocal, ir::Type::Float32());
  Buffer out("out");
  Var tx("tx"), j("j");
  Expr one = ir::Cast::Make(a.element_type(), Expr(1.0f));
  Stmt thread = Block::Make({
      For::Make(j, 0, 32, LoopKind::kSerial, Store::Make(a, tx * 32 + j, one)),
      For::Make(j, 0, 4, LoopKind::kSerial, Store::Make(b, tx * 4 + j, one)),
      For::Make(j, 0, 4, LoopKind::kSerial, Store::Make(acc, j, Expr(100.0f))),
      Barrier::Make(),
      ir::WarpGroupMma::Make(Dtype::kBf16, a, Expr(int64_t{0}), b, Expr(int64_t{0}), 8, 1, acc, 0,
                             0, 0, overwrite),
      Store::Make(out, tx, ir::Load::Make(acc, Expr(int64_t{0}))),
  });
  LoweredFunc f{"onto_hundreds",
                {out},
                Allocate::Make(a, 4096,
                               Allocate::Make(b, 512,
                                              For::Make(tx, 0, 128, LoopKind::kGpuThread,
                                                        Allocate::Make(acc, 4, thread))))};
  std::vector<float> data(128, 0.0f);
  absl::Status status = RunGpuKernel(f, {data});
  EXPECT_TRUE(status.ok()) << status;
  return data;
}

TEST(GpuSimTest, AnOverwritingWarpgroupStepReplacesTheAccumulatorsInsteadOfAddingToThem) {
  EXPECT_THAT(WarpgroupStepOntoHundreds(false), ::testing::Each(116.0f));
  EXPECT_THAT(WarpgroupStepOntoHundreds(true), ::testing::Each(16.0f));
}

}  // namespace
}  // namespace tune
