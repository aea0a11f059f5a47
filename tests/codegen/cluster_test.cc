// Thread-block clusters in the IR (LoweredFunc::cluster): a box multicast by TMA into the shared
// memory of both blocks of a cluster, arrivals at a peer block's mbarrier and cluster barriers,
// on the simulator (which runs a cluster's blocks together), in the verifier and the launch
// (the cluster divides the grid), and in the PTX (multicast::cluster, mapa, barrier.cluster),
// which ptxas assembles when it is installed.
#include <span>
#include <string>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/ir/verifier.h"
#include "codegen/llvm/gpu_backend.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/sim/gpu_sim.h"
#include "common/gpu_arch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/ptxas.h"

namespace tune {
namespace {

using ir::Expr;
using ir::LoopKind;
using ir::MBarrierOp;
using ir::MBarrierOpKind;
using ir::Stmt;
using ::testing::HasSubstr;

constexpr int64_t kRows = 20, kCols = 40;  // the tensor: float32 [20][40]
constexpr int64_t kHalfRows = 8, kBoxCols = 32;
constexpr int64_t kTile = 2 * kHalfRows * kBoxCols;  // floats each block receives
constexpr int64_t kBlocks = 4, kThreads = 64;

// Four blocks of 64 threads in clusters of two. Cluster c's tile is rows [16 c, 16 c + 16) and
// columns [0, 32) of `in`; its block of rank r copies the tile's rows [8 r, 8 r + 8) with one
// TMA copy multicast to both blocks, so that each block's shared tile is whole once its full
// barrier's phase completes. Every thread then writes its block's tile to out[bx][...], arrives
// at the `done` barrier of both blocks (one arrival local, one at the peer), waits for its own
// (128 arrivals: both blocks' threads), and passes a cluster barrier, so that no block ends
// while its peer may still reach its shared memory.
ir::LoweredFunc ClusterCopy(bool final_cluster_barrier = true) {
  ir::Buffer in("in"), out("out");
  ir::Buffer smem("smem", ir::MemoryScope::kGpuShared, ir::Type::Float32());
  ir::Buffer bars("bars", ir::MemoryScope::kGpuShared, ir::Type::Int64());  // full, done
  ir::TensorMap map{.buffer = in,
                    .dims = {kCols, kRows},
                    .strides = {kCols},
                    .box = {kBoxCols, kHalfRows},
                    .swizzle_bytes = 0};
  ir::Var bx("bx"), tx("tx"), i("i");
  Expr rank = bx % 2;
  Expr row = bx / 2 * (2 * kHalfRows) + rank * kHalfRows;
  std::vector<Stmt> threads = {
      ir::IfThenElse::Make(
          tx == 0, ir::Block::Make({MBarrierOp::Make(MBarrierOpKind::kInit, bars, Expr(0), Expr(1)),
                                    MBarrierOp::Make(MBarrierOpKind::kInit, bars, Expr(1),
                                                     Expr(2 * kThreads))})),
      ir::Barrier::MakeCluster(),  // the peer's barriers are initialised
      ir::IfThenElse::Make(
          tx == 0,
          ir::Block::Make({
              MBarrierOp::Make(MBarrierOpKind::kArriveExpectTx, bars, Expr(0), Expr(kTile * 4)),
              ir::TensorCopy::Make(map, {Expr(0), row}, smem, rank * (kHalfRows * kBoxCols), bars,
                                   Expr(0), /*multicast=*/0b11),
          })),
      MBarrierOp::Make(MBarrierOpKind::kWait, bars, Expr(0), Expr(0)),
      ir::For::Make(i, 0, kTile / kThreads, LoopKind::kSerial,
                    ir::Store::Make(out, bx * kTile + i * kThreads + tx,
                                    ir::Load::Make(smem, i * kThreads + tx))),
      MBarrierOp::Make(MBarrierOpKind::kArrive, bars, Expr(1), Expr(), rank),
      MBarrierOp::Make(MBarrierOpKind::kArrive, bars, Expr(1), Expr(), 1 - rank),
      MBarrierOp::Make(MBarrierOpKind::kWait, bars, Expr(1), Expr(0)),
  };
  if (final_cluster_barrier) {
    threads.push_back(ir::Barrier::MakeCluster());
  }
  Stmt body = ir::For::Make(
      bx, 0, kBlocks, LoopKind::kGpuBlock,
      ir::Allocate::Make(smem, kTile,
                         ir::Allocate::Make(bars, 2,
                                            ir::For::Make(tx, 0, kThreads, LoopKind::kGpuThread,
                                                          ir::Block::Make(std::move(threads))))));
  ir::LoweredFunc f{"cluster_copy", {in, out}, body};
  f.cluster = {2, 1, 1};
  return f;
}

std::vector<float> Tensor() {
  std::vector<float> t(kRows * kCols);
  for (size_t e = 0; e < t.size(); ++e) {
    t[e] = static_cast<float>(e + 1);
  }
  return t;
}

TEST(ClusterSim, AMulticastBoxLandsInEveryBlockOfTheClusterAndPeersArriveAtEachOthersBarriers) {
  const std::vector<float> t = Tensor();
  ir::LoweredFunc f = ClusterCopy();
  ASSERT_TRUE(ir::Verify(f).ok()) << ir::Verify(f);
  for (int workers : {1, 2}) {
    std::vector<float> in = t, out(kBlocks * kTile, -1.0f);
    absl::Status s =
        RunGpuKernel(f, {std::span<float>(in), std::span<float>(out)}, {.block_workers = workers});
    ASSERT_TRUE(s.ok()) << s;
    for (int64_t b = 0; b < kBlocks; ++b) {
      for (int64_t r = 0; r < 2 * kHalfRows; ++r) {
        for (int64_t c = 0; c < kBoxCols; ++c) {
          const int64_t row = b / 2 * 2 * kHalfRows + r;  // the cluster's tile, in both blocks
          const float want = row < kRows ? t[row * kCols + c] : 0.0f;
          ASSERT_EQ(out[b * kTile + r * kBoxCols + c], want)
              << "block " << b << " row " << r << " col " << c << " workers " << workers;
        }
      }
    }
  }
}

TEST(ClusterSim, AnArrivalAtABlockWhoseThreadsHaveFinishedIsAFault) {
  // Rank 0's threads do nothing; rank 1's arrive at rank 0's barrier after they have ended.
  ir::Buffer in("in"), out("out");
  ir::Buffer bars("bars", ir::MemoryScope::kGpuShared, ir::Type::Int64());
  ir::Var bx("bx"), tx("tx");
  Stmt threads = ir::IfThenElse::Make(
      bx % 2 == 1, MBarrierOp::Make(MBarrierOpKind::kArrive, bars, Expr(0), Expr(), Expr(0)));
  ir::LoweredFunc f{
      "late_arrival",
      {in, out},
      ir::For::Make(
          bx, 0, 2, LoopKind::kGpuBlock,
          ir::Allocate::Make(bars, 1, ir::For::Make(tx, 0, 32, LoopKind::kGpuThread, threads)))};
  f.cluster = {2, 1, 1};
  std::vector<float> a(1), b(1);
  absl::Status s = RunGpuKernel(f, {std::span<float>(a), std::span<float>(b)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("the threads of that block have finished"));
  EXPECT_THAT(s.message(), HasSubstr("bars[0] of cluster rank 0"));
}

TEST(Cluster, StatementsThatReachPeerBlocksNeedAClusterAndTheClusterMustDivideTheGrid) {
  ir::LoweredFunc f = ClusterCopy();
  f.cluster = {1, 1, 1};
  const absl::Status s = ir::Verify(f);
  EXPECT_THAT(s.message(), HasSubstr("cluster_barrier()` reaches other blocks of a thread-block "
                                     "cluster, but the function has none"));
  f.cluster = {3, 1, 1};
  absl::StatusOr<GpuArch> sm90 = GpuArchFor(*Target::Parse("cuda -arch=sm_90a"));
  ASSERT_TRUE(sm90.ok());
  EXPECT_THAT(GpuLaunchOf(f, &*sm90).status().message(),
              HasSubstr("a cluster of 3 blocks along grid axis x, whose 4 blocks it must divide"));
  f.cluster = {2, 1, 1};
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(f, &*sm90);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->cluster, (std::array<uint32_t, 3>{2, 1, 1}));
  f.cluster = {16, 1, 1};
  EXPECT_THAT(ir::Verify(f).message(), HasSubstr("must have 1 to 8 blocks per axis"));
}

// Two blocks of 64 threads in one cluster; warp 0 of each passes a cluster barrier in a branch
// of its own (`warp0_passes` of them), the others write their block's half of `out`, pass one
// cluster barrier and then add their peer's half (ordered by the barrier) into `sums`.
ir::LoweredFunc WarpSpecialisedClusterBarrier(Stmt warp0_passes) {
  ir::Buffer out("out"), sums("sums");
  ir::Var bx("bx"), tx("tx");
  Expr j = tx - 32;
  Stmt others = ir::Block::Make({
      ir::Store::Make(out, bx * 32 + j, ir::Cast::Make(ir::Type::Float32(), bx * 100 + j)),
      ir::Barrier::MakeCluster(),
      ir::Store::Make(sums, bx * 32 + j,
                      ir::Load::Make(out, bx * 32 + j) + ir::Load::Make(out, (1 - bx) * 32 + j)),
  });
  Stmt body = ir::For::Make(
      bx, 0, 2, LoopKind::kGpuBlock,
      ir::For::Make(tx, 0, 64, LoopKind::kGpuThread,
                    ir::IfThenElse::Make(tx < 32, std::move(warp0_passes), std::move(others))));
  ir::LoweredFunc f{"warp_specialised", {out, sums}, body};
  f.cluster = {2, 1, 1};
  return f;
}

TEST(Cluster, AClusterBarrierUnderAnIfIsOneWhereEveryBranchPassesAsManyOutsideLoops) {
  absl::StatusOr<GpuArch> sm90 = GpuArchFor(*Target::Parse("cuda -arch=sm_90a"));
  ASSERT_TRUE(sm90.ok());
  // Balanced: warp 0 passes its one cluster barrier; the simulator runs it to the sums.
  ir::LoweredFunc f = WarpSpecialisedClusterBarrier(ir::Barrier::MakeCluster());
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(f, &*sm90);
  ASSERT_TRUE(launch.ok()) << launch.status();
  std::vector<float> out(64, -1.0f), sums(64, -1.0f);
  absl::Status run = RunGpuKernel(f, {std::span<float>(out), std::span<float>(sums)});
  ASSERT_TRUE(run.ok()) << run;
  for (int64_t j = 0; j < 32; ++j) {
    EXPECT_EQ(sums[j], static_cast<float>(j + 100 + j)) << j;
    EXPECT_EQ(sums[32 + j], static_cast<float>(j + 100 + j)) << j;
  }
  // Warp 0 passes none, or its barrier sits in a loop: refused, naming the rule.
  for (Stmt warp0 :
       {Stmt(ir::Evaluate::Make(Expr(0))),
        ir::For::Make(ir::Var("i"), 0, 1, LoopKind::kSerial, ir::Barrier::MakeCluster())}) {
    absl::StatusOr<GpuLaunch> refused = GpuLaunchOf(WarpSpecialisedClusterBarrier(warp0), &*sm90);
    ASSERT_FALSE(refused.ok());
    EXPECT_THAT(refused.status().message(),
                HasSubstr("cluster barrier under an if whose branches pass different numbers of "
                          "cluster barriers"));
  }
}

TEST(ClusterPtx, MulticastCopiesPeerArrivalsAndClusterBarriersAssemble) {
  const Target target = *Target::Parse("cuda -arch=sm_90a");
  absl::StatusOr<GpuModule> module = EmitGpuModule({ClusterCopy()}, {.target = target});
  ASSERT_TRUE(module.ok()) << module.status();
  const std::string& ptx = module->code;
  EXPECT_THAT(ptx, HasSubstr("mbarrier::complete_tx::bytes.multicast::cluster"));
  EXPECT_THAT(ptx, HasSubstr("mapa.shared::cluster.u32"));
  EXPECT_THAT(ptx, HasSubstr("mbarrier.arrive.shared::cluster.b64"));
  EXPECT_THAT(ptx, HasSubstr("barrier.cluster.arrive.release.aligned"));
  EXPECT_THAT(ptx, HasSubstr("barrier.cluster.wait.acquire.aligned"));
  if (!testing::PtxasInstalled()) {
    GTEST_SKIP() << testing::kPtxas << " is not installed";
  }
  const testing::PtxasResult assembled = testing::RunPtxas(ptx, "sm_90a");
  EXPECT_EQ(assembled.exit_code, 0) << assembled.report;
}

}  // namespace
}  // namespace tune
