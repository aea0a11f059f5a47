// The GPU IR simulator (codegen/sim/gpu_sim.h): hand-written GPU kernels checked against plain
// CPU loops, and the faults it reports (out-of-bounds accesses, divergent barriers, shared
// memory races and uninitialised reads).
#include "codegen/sim/gpu_sim.h"

#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/ir/ir.h"
#include "codegen/ir/printer.h"
#include "codegen/lower.h"
#include "codegen/templates/conv2d_cpu_direct.h"
#include "codegen/templates/gemm_cpu_blocked.h"
#include "common/reference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Barrier;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::Fma;
using ir::For;
using ir::IfThenElse;
using ir::LoopKind;
using ir::LoweredFunc;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;
using ::testing::HasSubstr;

std::vector<float> Random(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  FillRandom(v.data(), n, seed);
  return v;
}

// out[i] = a[i] + b[i] for i < n, on blocks of 64 threads.
LoweredFunc VectorAdd(int64_t n) {
  Buffer a("a"), b("b"), out("out");
  Var bx("bx"), tx("tx");
  Expr i = bx * 64 + tx;
  Stmt body = For::Make(bx, 0, (n + 63) / 64, LoopKind::kGpuBlock,
                        For::Make(tx, 0, 64, LoopKind::kGpuThread,
                                  IfThenElse::Make(i < n, Store::Make(out, i, a(i) + b(i)))));
  return LoweredFunc{"vector_add", {a, b, out}, body};
}

// C = A * B (row-major M x K times K x N) with 16 x 16 tiles in shared memory, one output
// element per thread, 256 threads per block. `second_barrier` false leaves out the barrier
// that keeps the next tile's loads from overwriting the tile other threads still read.
LoweredFunc TiledGemm(int64_t m, int64_t n, int64_t k, bool second_barrier = true) {
  Buffer a("A"), b("B"), c("C");
  Buffer as("As", MemoryScope::kGpuShared), bs("Bs", MemoryScope::kGpuShared);
  Buffer acc("acc", MemoryScope::kGpuLocal);
  Var bx("bx"), by("by"), tx("tx"), ty("ty"), kt("kt"), kk("kk");
  Expr row = by * 16 + ty, col = bx * 16 + tx;
  Stmt step = Block::Make({
      Store::Make(as, ty * 16 + tx, a(row * k + kt * 16 + tx)),
      Store::Make(bs, ty * 16 + tx, b((kt * 16 + ty) * n + col)),
      Barrier::Make(),
      For::Make(kk, 0, 16, LoopKind::kUnrolled,
                Store::Make(acc, 0, Fma::Make(as(ty * 16 + kk), bs(kk * 16 + tx), acc(0)))),
      second_barrier ? Barrier::Make() : Stmt(),
  });
  Stmt thread = Allocate::Make(acc, 1,
                               Block::Make({
                                   Store::Make(acc, 0, 0.0f),
                                   For::Make(kt, 0, k / 16, LoopKind::kSerial, step),
                                   Store::Make(c, row * n + col, acc(0)),
                               }));
  Stmt body = For::Make(
      by, 0, m / 16, LoopKind::kGpuBlock,
      For::Make(
          bx, 0, n / 16, LoopKind::kGpuBlock,
          Allocate::Make(
              as, 256,
              Allocate::Make(bs, 256,
                             For::Make(ty, 0, 16, LoopKind::kGpuThread,
                                       For::Make(tx, 0, 16, LoopKind::kGpuThread, thread, 0), 1))),
          0),
      1);
  return LoweredFunc{"tiled_gemm", {a, b, c}, body};
}

// C = A * B with a 16 x 64 block tile: each of the 16 x 16 threads computes 4 adjacent outputs
// with a vectorized loop and loads 4 elements of the B tile; the k loop is unrolled.
LoweredFunc VectorGemm(int64_t m, int64_t n, int64_t k) {
  Buffer a("A"), b("B"), c("C");
  Buffer as("As", MemoryScope::kGpuShared), bs("Bs", MemoryScope::kGpuShared);
  Buffer acc("acc", MemoryScope::kGpuLocal);
  Var bx("bx"), by("by"), tx("tx"), ty("ty"), kt("kt"), kk("kk"), v0("v0"), v1("v1"), v2("v2"),
      v3("v3");
  Expr row = by * 16 + ty;
  auto col = [&](const Var& v) { return bx * 64 + tx * 4 + v; };
  Stmt step = Block::Make({
      Store::Make(as, ty * 16 + tx, a(row * k + kt * 16 + tx)),
      For::Make(v1, 0, 4, LoopKind::kVectorized,
                Store::Make(bs, ty * 64 + tx * 4 + v1, b((kt * 16 + ty) * n + col(v1)))),
      Barrier::Make(),
      For::Make(
          kk, 0, 16, LoopKind::kUnrolled,
          For::Make(v2, 0, 4, LoopKind::kVectorized,
                    Store::Make(acc, v2,
                                Fma::Make(as(ty * 16 + kk), bs(kk * 64 + tx * 4 + v2), acc(v2))))),
      Barrier::Make(),
  });
  Stmt thread = Allocate::Make(
      acc, 4,
      Block::Make({
          For::Make(v0, 0, 4, LoopKind::kVectorized, Store::Make(acc, v0, 0.0f)),
          For::Make(kt, 0, k / 16, LoopKind::kSerial, step),
          For::Make(v3, 0, 4, LoopKind::kVectorized, Store::Make(c, row * n + col(v3), acc(v3))),
      }));
  Stmt body = For::Make(
      by, 0, m / 16, LoopKind::kGpuBlock,
      For::Make(
          bx, 0, n / 64, LoopKind::kGpuBlock,
          Allocate::Make(
              as, 16 * 16,
              Allocate::Make(bs, 16 * 64,
                             For::Make(ty, 0, 16, LoopKind::kGpuThread,
                                       For::Make(tx, 0, 16, LoopKind::kGpuThread, thread, 0), 1))),
          0),
      1);
  return LoweredFunc{"vector_gemm", {a, b, c}, body};
}

// The same products and sums, in the same order, as the kernels above (fma over k).
std::vector<float> CpuGemm(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                           int64_t n, int64_t k) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc = std::fma(a[i * k + p], b[p * n + j], acc);
      }
      c[i * n + j] = acc;
    }
  }
  return c;
}

TEST(GpuSimTest, VectorAddMatchesCpuLoop) {
  const int64_t n = 250;  // not a multiple of the block size: the guard matters
  std::vector<float> a = Random(n, 1), b = Random(n, 2), out(n, -7.0f);
  ASSERT_TRUE(RunGpuKernel(VectorAdd(n), {a, b, out}).ok());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(out[i], a[i] + b[i]) << "i = " << i;
  }
}

TEST(GpuSimTest, SharedMemoryTiledGemmWithBarriersMatchesCpuLoops) {
  const int64_t m = 64, n = 64, k = 64;
  std::vector<float> a = Random(m * k, 3), b = Random(k * n, 4), c(m * n, 0.0f);
  absl::Status status = RunGpuKernel(TiledGemm(m, n, k), {a, b, c});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(c, CpuGemm(a, b, m, n, k));
}

TEST(GpuSimTest, LoweredVectorizedGemmMatchesCpuLoops) {
  const int64_t m = 32, n = 128, k = 48;
  absl::StatusOr<LoweredFunc> lowered = Lower(VectorGemm(m, n, k));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(ir::ToText(lowered->body), HasSubstr("ramp(")) << "vector accesses after lowering";
  std::vector<float> a = Random(m * k, 5), b = Random(k * n, 6), c(m * n, 0.0f);
  std::vector<float> want = CpuGemm(a, b, m, n, k);
  absl::Status status = RunGpuKernel(*lowered, {a, b, c});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(c, want);

  // The IR before lowering computes the same.
  std::vector<float> c2(m * n, 0.0f);
  status = RunGpuKernel(VectorGemm(m, n, k), {a, b, c2});
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(c2, want);
}

TEST(GpuSimTest, BlockWorkersComputeTheSameResult) {
  const int64_t m = 64, n = 64, k = 32;
  std::vector<float> a = Random(m * k, 7), b = Random(k * n, 8), c(m * n, 0.0f);
  GpuSimOptions options;
  options.block_workers = 3;
  absl::Status status = RunGpuKernel(TiledGemm(m, n, k), {a, b, c}, options);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(c, CpuGemm(a, b, m, n, k));
}

// out[0] = the sum of a's blocks * 32 elements, in order: each block of 32 threads parks its
// elements in a workspace and arrives at a counter; the last block to arrive adds every
// block's elements and returns the counter to zero.
LoweredFunc LastBlockSum(int64_t blocks) {
  Buffer a("a"), out("out");
  Buffer parts("parts", MemoryScope::kGlobal),
      count("count", MemoryScope::kGlobal, ir::Type::Int32());
  Buffer arrived("arrived", MemoryScope::kGpuShared, ir::Type::Int32());
  Var bx("bx"), tx("tx"), i("i");
  const Expr zero(int64_t{0});
  Stmt last = IfThenElse::Make(
      tx == zero, Block::Make({Store::Make(out, zero, Expr(0.0f)),
                               For::Make(i, 0, blocks * 32, LoopKind::kSerial,
                                         Store::Make(out, zero, out(zero) + parts(i))),
                               Store::Make(count, zero, ir::IntImm::Make(0, ir::Type::Int32()))}));
  Stmt thread = Block::Make({
      Store::Make(parts, bx * 32 + tx, a(bx * 32 + tx)),
      Barrier::Make(),
      IfThenElse::Make(
          tx == zero,
          ir::FetchAdd::Make(count, zero, ir::IntImm::Make(1, ir::Type::Int32()), arrived, zero)),
      Barrier::Make(),
      IfThenElse::Make(ir::Cast::Make(ir::Type::Int64(), arrived(zero)) == blocks - 1, last),
  });
  Stmt body =
      For::Make(bx, 0, blocks, LoopKind::kGpuBlock,
                Allocate::Make(arrived, 1, For::Make(tx, 0, 32, LoopKind::kGpuThread, thread)));
  return LoweredFunc{"last_block_sum",
                     {a, out},
                     Allocate::Make(parts, blocks * 32, Allocate::Make(count, 1, body))};
}

TEST(GpuSimTest, TheLastBlockToArriveAtAWorkspaceCounterSeesEveryBlocksWrites) {
  const int64_t blocks = 16;
  std::vector<float> a = Random(blocks * 32, 9), out(1, -1.0f);
  float want = 0.0f;
  for (float v : a) {
    want += v;
  }
  const LoweredFunc f = LastBlockSum(blocks);
  EXPECT_THAT(ir::ToText(f.body), HasSubstr("arrived[0] = fetch_add(count[0], 1i32)"));
  for (int workers : {1, 3}) {
    GpuSimOptions options;
    options.block_workers = workers;
    absl::Status status = RunGpuKernel(f, {a, out}, options);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(out[0], want) << workers << " block workers";
  }
}

TEST(GpuSimTest, BarrierUnderThreadDependentConditionIsADivergentBarrier) {
  Buffer out("out"), s("s", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Stmt thread = Block::Make({
      Store::Make(s, tx, 1.0f),
      IfThenElse::Make(tx < 8, Barrier::Make()),
      Store::Make(out, bx * 32 + tx, s(tx)),
  });
  LoweredFunc f{
      "divergent",
      {out},
      For::Make(bx, 0, 2, LoopKind::kGpuBlock,
                Allocate::Make(s, 32, For::Make(tx, 0, 32, LoopKind::kGpuThread, thread)))};
  std::vector<float> data(64, 0.0f);
  absl::Status status = RunGpuKernel(f, {data});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("divergent barrier in block (0, 0, 0)"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("thread (8, 0, 0) finished while thread (0, 0, 0)"));
}

TEST(GpuSimTest, ThreadsAtDifferentBarriersAreADivergentBarrier) {
  Buffer out("out");
  Var tx("tx");
  Stmt thread = IfThenElse::Make(tx % 2 == 0, Barrier::Make(), Barrier::Make());
  LoweredFunc f{"two_barriers", {out}, For::Make(tx, 0, 4, LoopKind::kGpuThread, thread)};
  std::vector<float> data(4, 0.0f);
  absl::Status status = RunGpuKernel(f, {data});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("waits at a different barrier()"));
}

TEST(GpuSimTest, OutOfBoundsStoreNamesTheBufferIndexAndSize) {
  Buffer a("a"), b("b"), out("out");
  Var bx("bx"), tx("tx");
  Expr i = bx * 64 + tx;
  LoweredFunc f{
      "off_by_one",
      {a, b, out},
      For::Make(bx, 0, 4, LoopKind::kGpuBlock,
                For::Make(tx, 0, 64, LoopKind::kGpuThread, Store::Make(out, i + 1, a(i) + b(i))))};
  std::vector<float> a_data(256, 1.0f), b_data(256, 2.0f), out_data(256, 0.0f);
  absl::Status status = RunGpuKernel(f, {a_data, b_data, out_data});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("out-of-bounds store to buffer `out` (global, parameter 2): index 256 is "
                        "outside [0, 256) at block (3, 0, 0), thread (63, 0, 0)"));
  EXPECT_EQ(out_data[255], 3.0f) << "stores before the fault happened";
}

TEST(GpuSimTest, OutOfBoundsLoadFromSharedAndLocalMemoryIsReported) {
  Buffer out("out"), s("tile", MemoryScope::kGpuShared), r("regs", MemoryScope::kGpuLocal);
  Var tx("tx");
  LoweredFunc shared{
      "shared_oob",
      {out},
      Allocate::Make(s, 16,
                     For::Make(tx, 0, 16, LoopKind::kGpuThread,
                               Block::Make({Store::Make(s, tx, 1.0f), Barrier::Make(),
                                            Store::Make(out, tx, s(tx + 4))})))};
  std::vector<float> data(16, 0.0f);
  absl::Status status = RunGpuKernel(shared, {data});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("out-of-bounds load from buffer `tile` (gpu_shared): index 16 is outside "
                        "[0, 16) at block (0, 0, 0), thread (12, 0, 0)"));

  LoweredFunc local{
      "local_oob",
      {out},
      For::Make(tx, 0, 16, LoopKind::kGpuThread, Allocate::Make(r, 2, Store::Make(r, tx, 0.0f)))};
  status = RunGpuKernel(local, {data});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("out-of-bounds store to buffer `regs` (gpu_local): index 2 is outside "
                        "[0, 2) at block (0, 0, 0), thread (2, 0, 0)"));
}

TEST(GpuSimTest, MissingBarrierBeforeOverwritingSharedMemoryIsARace) {
  const int64_t m = 32, n = 32, k = 32;
  std::vector<float> a = Random(m * k, 9), b = Random(k * n, 10), c(m * n, 0.0f);
  absl::Status status = RunGpuKernel(TiledGemm(m, n, k, /*second_barrier=*/false), {a, b, c});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("data race on gpu_shared buffer `As`"));

  GpuSimOptions no_race_check;
  no_race_check.check_shared_races = false;
  EXPECT_TRUE(RunGpuKernel(TiledGemm(m, n, k, false), {a, b, c}, no_race_check).ok());
}

TEST(GpuSimTest, ReadingSharedMemoryWithoutABarrierIsARace) {
  Buffer out("out"), s("s", MemoryScope::kGpuShared);
  Var tx("tx");
  LoweredFunc f{
      "no_barrier",
      {out},
      Allocate::Make(
          s, 32,
          For::Make(tx, 0, 32, LoopKind::kGpuThread,
                    Block::Make({Store::Make(s, tx, 1.0f), Store::Make(out, tx, s(31 - tx))})))};
  std::vector<float> data(32, 0.0f);
  absl::Status status = RunGpuKernel(f, {data});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("read of uninitialised gpu_shared memory: element 31"));

  // With every element written first, the read is still a race.
  LoweredFunc g{
      "no_barrier",
      {out},
      Allocate::Make(s, 32,
                     For::Make(tx, 0, 32, LoopKind::kGpuThread,
                               Block::Make({Store::Make(s, tx, 1.0f),
                                            Store::Make(out, tx, s(ir::Max::Make(tx - 1, 0)))})))};
  status = RunGpuKernel(g, {data});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("data race on gpu_shared buffer `s`: element 0 is written by thread 0 and "
                        "read by thread 1"));
}

TEST(GpuSimTest, UnwrittenMemoryReadsAsNaNWhenTheCheckIsOff) {
  Buffer out("out"), s("s", MemoryScope::kGpuShared), r("r", MemoryScope::kGpuLocal);
  Var tx("tx");
  LoweredFunc f{
      "poison",
      {out},
      Allocate::Make(
          s, 8,
          For::Make(tx, 0, 4, LoopKind::kGpuThread,
                    Allocate::Make(r, 1,
                                   Block::Make({Store::Make(out, tx, s(tx + 4)),
                                                Store::Make(out, tx + 4, r(0) + 1.0f)}))))};
  std::vector<float> data(8, 0.0f);
  GpuSimOptions options;
  options.check_uninitialized_shared = false;
  ASSERT_TRUE(RunGpuKernel(f, {data}, options).ok());
  for (float x : data) {
    EXPECT_TRUE(std::isnan(x));
  }
}

TEST(GpuSimTest, LocalArraysAroundTheThreadLoopsArePrivateToEachThread) {
  Buffer out("out"), r("r", MemoryScope::kGpuLocal);
  Var bx("bx"), tx("tx");
  Stmt thread = Block::Make({Store::Make(r, 0, ir::Cast::Make(ir::Type::Float32(), tx)),
                             Barrier::Make(), Store::Make(out, bx * 32 + tx, r(0))});
  LoweredFunc f{
      "private_local",
      {out},
      For::Make(bx, 0, 2, LoopKind::kGpuBlock,
                Allocate::Make(r, 1, For::Make(tx, 0, 32, LoopKind::kGpuThread, thread)))};
  std::vector<float> data(64, -1.0f);
  ASSERT_TRUE(RunGpuKernel(f, {data}).ok());
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(data[i], static_cast<float>(i % 32));
  }
}

// out[tx] = tx + 1 + 1 + ... (`depth` additions nested in one expression), after a barrier.
LoweredFunc DeepExpression(int depth) {
  Buffer out("out");
  Var tx("tx");
  Expr e = ir::Cast::Make(ir::Type::Float32(), tx);
  for (int i = 0; i < depth; ++i) {
    e = e + 1.0f;
  }
  return LoweredFunc{"deep",
                     {out},
                     For::Make(tx, 0, 64, LoopKind::kGpuThread,
                               Block::Make({Barrier::Make(), Store::Make(out, tx, e)}))};
}

TEST(GpuSimTest, DeepExpressionsInThreadCodeRunOrAreRefusedWithoutCrashing) {
  std::vector<float> data(64, 0.0f);
  ASSERT_TRUE(RunGpuKernel(DeepExpression(250), {data}).ok());
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(data[i], static_cast<float>(i + 250));
  }

  absl::Status status = RunGpuKernel(DeepExpression(5000), {data});
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("expression nested deeper than"));
}

TEST(GpuSimTest, CpuIrWithoutGpuLoopsRunsAsOneThread) {
  // out[i] = (sum over j of x[i * 4 + j]) with a stack accumulator, and integer floor
  // division/modulo of negative numbers.
  Buffer x("x"), out("out"), sums("sums"), acc("acc", MemoryScope::kStack);
  Var i("i"), j("j");
  Stmt sum = Allocate::Make(acc, 1,
                            Block::Make({Store::Make(acc, 0, 0.0f),
                                         For::Make(j, 0, 4, LoopKind::kSerial,
                                                   Store::Make(acc, 0, acc(0) + x(i * 4 + j))),
                                         Store::Make(sums, i, acc(0))}));
  Stmt ints =
      Store::Make(out, i, ir::Cast::Make(ir::Type::Float32(), (i - 5) / 3 * 10 + (i - 5) % 3));
  LoweredFunc f{
      "cpu", {x, sums, out}, For::Make(i, 0, 8, LoopKind::kParallel, Block::Make({sum, ints}))};
  std::vector<float> x_data = Random(32, 11), sums_data(8), out_data(8);
  ASSERT_TRUE(RunGpuKernel(f, {x_data, sums_data, out_data}).ok());
  for (int64_t r = 0; r < 8; ++r) {
    float want = 0;
    for (int64_t c = 0; c < 4; ++c) {
      want += x_data[r * 4 + c];
    }
    EXPECT_EQ(sums_data[r], want);
    EXPECT_EQ(out_data[r],
              static_cast<float>(ir::FloorDiv(r - 5, 3) * 10 + ir::FloorMod(r - 5, 3)));
  }
}

// The CPU templates' lowered kernels (parallel, vectorized and unrolled loops, stack buffers,
// Select, Min/Max, ...) run in the simulator and compute the reference.
TEST(GpuSimTest, LoweredCpuTemplatesComputeTheReference) {
  Target target = *Target::Parse("llvm -mcpu=haswell -threads=2");
  std::mt19937_64 rng(12);
  struct Case {
    const KernelTemplate* tpl;
    const char* workload;
  };
  for (const Case& c : {Case{&kGemmCpuBlocked, "gemm:M=19,N=37,K=23,epilogue=bias_relu"},
                        Case{&kConv2dCpuDirect,
                             "conv2d:N=1,C=3,H=9,W=10,K=5,R=3,S=3,stride=1,pad=1,epilogue=bias"}}) {
    Workload w = *Workload::Parse(c.workload);
    std::vector<Config> configs = testing::SampleConfigs(*c.tpl, w, target, 3, rng);
    configs.push_back(c.tpl->default_config(w, target));
    for (const Config& config : configs) {
      SCOPED_TRACE(absl::StrCat(c.workload, " ", ConfigToString(config)));
      absl::StatusOr<LoweredFunc> func = c.tpl->build(w, target, config, "kernel");
      ASSERT_TRUE(func.ok()) << func.status();
      absl::StatusOr<LoweredFunc> lowered = Lower(*func);
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      absl::Status status = SimulateAgainstReference(w, *lowered, 13);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

TEST(GpuSimTest, SimulateAgainstReferenceReportsAWrongKernel) {
  Workload w = *Workload::Parse("gemm:M=32,N=48,K=64");
  absl::Status status = SimulateAgainstReference(w, TiledGemm(32, 48, 64));
  EXPECT_TRUE(status.ok()) << status;

  // K = 48 instead of 64: the last tile of the reduction is missing.
  status = SimulateAgainstReference(w, TiledGemm(32, 48, 48));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("kernel `tiled_gemm` on gemm:M=32,N=48,K=64: "));
}

TEST(GpuSimTest, RejectsWrongArgumentsAndIrOutsideTheConvention) {
  LoweredFunc add = VectorAdd(64);
  std::vector<float> buf(64);
  absl::Status status = RunGpuKernel(add, {buf, buf});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("has 3 parameters but 2 buffers"));

  Buffer out("out");
  Var tx("tx"), ty("ty");
  LoweredFunc big{
      "big",
      {out},
      For::Make(ty, 0, 64, LoopKind::kGpuThread,
                For::Make(tx, 0, 32, LoopKind::kGpuThread, Store::Make(out, 0, 1.0f)), 1)};
  status = RunGpuKernel(big, {buf});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("32 x 64 x 1 = 2048 threads, more than 1024"));

  LoweredFunc external{
      "external",
      {out},
      ir::Evaluate::Make(ir::CallExtern::Make(ir::Type::Int32(), "some_library_call", {}))};
  status = RunGpuKernel(external, {buf});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.message()), HasSubstr("`some_library_call`"));
}

// A reinterpretation lays the lanes' bytes end to end, little-endian (what the CPU's bitcast
// does): the int8 quads of B's compensations read as int32, negative words included, and float32
// bits.
TEST(GpuSimTest, ReinterpretReadsLanesBytesLittleEndian) {
  Buffer bytes("bytes", MemoryScope::kGlobal, ir::Type::Int8());
  Buffer words("words", MemoryScope::kGlobal, ir::Type::Int32());
  Buffer floats("floats");
  const Expr zero(int64_t{0});
  LoweredFunc f{
      "reinterpret",
      {bytes, words, floats},
      Block::Make(
          {ir::Store::Make(
               words, zero,
               ir::Reinterpret::Make(ir::Type::Int32(2), ir::Load::Make(bytes, zero, 8))),
           ir::Store::Make(floats, zero,
                           ir::Reinterpret::Make(ir::Type::Float32(),
                                                 ir::Load::Make(bytes, Expr(int64_t{8}), 4))),
           ir::Store::Make(bytes, Expr(int64_t{12}),
                           ir::Reinterpret::Make(ir::Type::Int8(4),
                                                 ir::Load::Make(words, Expr(int64_t{1}), 1)))})};
  std::vector<int8_t> byte_data = {1, 2, 3, 4, -128, -1, -1, -1, 0, 0, -128, 63, 0, 0, 0, 0};
  std::vector<int32_t> word_data(2);
  std::vector<float> float_data(1);
  const std::vector<std::span<std::byte>> args = {std::as_writable_bytes(std::span(byte_data)),
                                                  std::as_writable_bytes(std::span(word_data)),
                                                  std::as_writable_bytes(std::span(float_data))};
  ASSERT_TRUE(RunGpuKernel(f, args).ok()) << RunGpuKernel(f, args);
  EXPECT_THAT(word_data, ::testing::ElementsAre(0x04030201, -128));
  EXPECT_EQ(float_data[0], 1.0f);
  EXPECT_THAT(std::vector<int8_t>(byte_data.begin() + 12, byte_data.end()),
              ::testing::ElementsAre(-128, -1, -1, -1));
}

}  // namespace
}  // namespace tune
