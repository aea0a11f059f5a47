// Named barriers (ir::Barrier::MakeNamed, bar.sync id, threads): the consumer warpgroups of a
// warp-specialised block synchronise among themselves while its producer warpgroup goes its own
// way. On the simulator (its release, deadlocks, and the shared-memory race checks, which order
// the participants' accesses only), in the verifier and the launch (a named barrier may sit under
// a condition, and names no more threads than the block has), and in the PTX, which ptxas
// assembles when it is installed; AMDGPU refuses it.
#include <array>
#include <cstdint>
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

using ir::Barrier;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::Load;
using ir::LoopKind;
using ir::LoweredFunc;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;
using ::testing::HasSubstr;

constexpr int64_t kBlocks = 2;
constexpr int64_t kThreads = 384;    // a producer warpgroup and two consumer warpgroups
constexpr int64_t kProducers = 128;  // threads [0, 128)
constexpr int64_t kConsumers = 256;  // threads [128, 384)

// The block's threads over `thread` (one gpu_thread loop of kThreads over tx), with a gpu_shared
// array `slots` of kConsumers + 1 floats, in kBlocks blocks.
LoweredFunc Kernel(const std::string& name, const std::vector<Buffer>& params, const Var& bx,
                   const Var& tx, const Buffer& slots, Stmt thread) {
  Stmt body = For::Make(
      bx, 0, kBlocks, LoopKind::kGpuBlock,
      ir::Allocate::Make(slots, kConsumers + 1,
                         For::Make(tx, 0, kThreads, LoopKind::kGpuThread, std::move(thread))));
  return LoweredFunc{name, params, body};
}

// The producers write 2 in[t] to out[t] and finish. Consumer t writes in[t] to its slot, passes
// barrier id 1 with the other consumers, and writes the slot of the next consumer (cyclically)
// to out[t]: out[t] = in[128 + (t - 127) % 256]. Without `named_barrier`, nothing orders the
// consumers' writes before their reads.
LoweredFunc ConsumersExchange(bool named_barrier = true) {
  Buffer in("in"), out("out"), slots("slots", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Expr at = bx * kThreads + tx;
  Expr c = tx - kProducers;  // the consumer's index
  Stmt consumer = Block::Make({
      Store::Make(slots, c, in(at)),
      named_barrier ? Barrier::MakeNamed(1, kConsumers) : Stmt(),
      Store::Make(out, at, Load::Make(slots, (c + 1) % kConsumers)),
  });
  Stmt producer = Store::Make(out, at, in(at) * 2.0f);
  return Kernel("consumers_exchange", {in, out}, bx, tx, slots,
                IfThenElse::Make(tx < kProducers, producer, consumer));
}

std::vector<float> Inputs() {
  std::vector<float> in(kBlocks * kThreads);
  for (size_t i = 0; i < in.size(); ++i) {
    in[i] = static_cast<float>(i + 1);
  }
  return in;
}

float ExchangedOutput(const std::vector<float>& in, int64_t b, int64_t t) {
  const int64_t base = b * kThreads;
  if (t < kProducers) {
    return 2.0f * in[static_cast<size_t>(base + t)];
  }
  return in[static_cast<size_t>(base + kProducers + (t - kProducers + 1) % kConsumers)];
}

TEST(NamedBarrierSim, ConsumersExchangeSlotsWhileTheProducersFinishWithoutReachingIt) {
  const std::vector<float> in = Inputs();
  for (uint64_t seed : {0, 1, 7}) {
    std::vector<float> input = in, out(in.size(), -1.0f);
    absl::Status s =
        RunGpuKernel(ConsumersExchange(), {std::span<float>(input), std::span<float>(out)},
                     {.block_workers = 2, .schedule_seed = seed});
    ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s;
    for (int64_t b = 0; b < kBlocks; ++b) {
      for (int64_t t = 0; t < kThreads; ++t) {
        ASSERT_EQ(out[static_cast<size_t>(b * kThreads + t)], ExchangedOutput(in, b, t))
            << "block " << b << " thread " << t << " seed " << seed;
      }
    }
  }
}

TEST(NamedBarrierSim, WithoutTheNamedBarrierTheConsumersExchangeIsARace) {
  std::vector<float> in = Inputs(), out(in.size());
  // Thread 128 reads slot 1 before thread 129 writes it (an unwritten slot reads as NaN here).
  absl::Status s =
      RunGpuKernel(ConsumersExchange(false), {std::span<float>(in), std::span<float>(out)},
                   {.check_uninitialized_shared = false});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("data race on gpu_shared buffer `slots`: element 1 is read "
                                     "by thread 128 and written by thread 129"));
}

TEST(NamedBarrierSim, ABarrierThatHalfItsThreadsReachIsADeadlockNamingTheIdAndTheCount) {
  // Only the first consumer warpgroup, threads [128, 256), reaches barrier id 1 of 256 threads.
  Buffer in("in"), out("out"), slots("slots", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Stmt thread = Block::Make({
      IfThenElse::Make(tx >= kProducers && tx < kProducers + 128,
                       Barrier::MakeNamed(1, kConsumers)),
      Store::Make(out, bx * kThreads + tx, 1.0f),
  });
  std::vector<float> a(kBlocks * kThreads), b(kBlocks * kThreads);
  absl::Status s = RunGpuKernel(Kernel("half_reach", {in, out}, bx, tx, slots, thread),
                                {std::span<float>(a), std::span<float>(b)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("deadlock in block (0, 0, 0): thread (128, 0, 0) waits at "
                                     "barrier id 1 with 128 of 256 threads arrived, which the "
                                     "others cannot reach"));
}

TEST(NamedBarrierSim, MoreThreadsAtOneIdThanItNamesAreAnError) {
  // Every thread of the block, 384, waits at barrier id 2 of 256 threads.
  Buffer in("in"), out("out"), slots("slots", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Stmt thread =
      Block::Make({Barrier::MakeNamed(2, kConsumers), Store::Make(out, bx * kThreads + tx, 1.0f)});
  std::vector<float> a(kBlocks * kThreads), b(kBlocks * kThreads);
  absl::Status s = RunGpuKernel(Kernel("too_many", {in, out}, bx, tx, slots, thread),
                                {std::span<float>(a), std::span<float>(b)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("384 threads wait at barrier id 2 at once, more than its 256"));
}

TEST(NamedBarrierSim, PartOfAWarpAtANamedBarrierIsDivergent) {
  // Threads [112, 368) are 256, as the barrier names, but they split warps 3 and 11.
  Buffer in("in"), out("out"), slots("slots", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Stmt thread = Block::Make({
      IfThenElse::Make(tx >= 112 && tx < 368, Barrier::MakeNamed(1, kConsumers)),
      Store::Make(out, bx * kThreads + tx, 1.0f),
  });
  std::vector<float> a(kBlocks * kThreads), b(kBlocks * kThreads);
  absl::Status s = RunGpuKernel(Kernel("split_warps", {in, out}, bx, tx, slots, thread),
                                {std::span<float>(a), std::span<float>(b)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("thread (112, 0, 0) passes barrier id 1 but thread (96, 0, "
                        "0) of its warp does not (whole warps reach a named barrier)"));
}

// Three phases of the exchange in a serial loop, each through barrier id 1 twice: after the
// writes (so that the reads see them) and after the reads (so that the next phase's writes do
// not overwrite a slot another consumer still reads). out[p][t] = in[next consumer] + p for the
// consumers; the producers write out[p][t] = p and finish.
LoweredFunc PhasedExchange(bool second_barrier = true) {
  Buffer in("in"), out("out"), slots("slots", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx"), p("p");
  Expr c = tx - kProducers;
  Expr at = (bx * 3 + p) * kThreads + tx;
  Stmt consumer = For::Make(
      p, 0, 3, LoopKind::kSerial,
      Block::Make({
          Store::Make(slots, c, in(bx * kThreads + tx) + ir::Cast::Make(ir::Type::Float32(), p)),
          Barrier::MakeNamed(1, kConsumers),
          Store::Make(out, at, Load::Make(slots, (c + 1) % kConsumers)),
          second_barrier ? Barrier::MakeNamed(1, kConsumers) : Stmt(),
      }));
  Stmt producer = For::Make(p, 0, 3, LoopKind::kSerial,
                            Store::Make(out, at, ir::Cast::Make(ir::Type::Float32(), p)));
  return Kernel("phased_exchange", {in, out}, bx, tx, slots,
                IfThenElse::Make(tx < kProducers, producer, consumer));
}

TEST(NamedBarrierSim, OneNamedBarrierSynchronisesTheSameThreadsPhaseAfterPhase) {
  const std::vector<float> in = Inputs();
  for (uint64_t seed : {0, 3}) {
    std::vector<float> input = in, out(kBlocks * 3 * kThreads, -1.0f);
    absl::Status s =
        RunGpuKernel(PhasedExchange(), {std::span<float>(input), std::span<float>(out)},
                     {.schedule_seed = seed});
    ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s;
    for (int64_t b = 0; b < kBlocks; ++b) {
      for (int64_t p = 0; p < 3; ++p) {
        for (int64_t t = 0; t < kThreads; ++t) {
          const float want = t < kProducers ? static_cast<float>(p)
                                            : ExchangedOutput(in, b, t) + static_cast<float>(p);
          ASSERT_EQ(out[static_cast<size_t>((b * 3 + p) * kThreads + t)], want)
              << "block " << b << " phase " << p << " thread " << t << " seed " << seed;
        }
      }
    }
  }
}

TEST(NamedBarrierSim, OverwritingASlotBeforeItsReaderPassesTheBarrierAgainIsARace) {
  std::vector<float> in = Inputs(), out(kBlocks * 3 * kThreads);
  absl::Status s = RunGpuKernel(PhasedExchange(/*second_barrier=*/false),
                                {std::span<float>(in), std::span<float>(out)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("data race on gpu_shared buffer `slots`"));
  EXPECT_THAT(s.message(), HasSubstr("read by thread"));
}

TEST(NamedBarrierSim, ANamedBarrierDoesNotOrderTheAccessesOfThreadsOutsideIt) {
  // Producer thread 0 writes the last slot and finishes; the consumers pass barrier id 1 and
  // then read it. Nothing orders thread 0's write before their reads: a race, whichever runs
  // first on the hardware.
  Buffer in("in"), out("out"), slots("slots", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Stmt consumer = Block::Make({
      Barrier::MakeNamed(1, kConsumers),
      Store::Make(out, bx * kThreads + tx, Load::Make(slots, Expr(kConsumers))),
  });
  Stmt producer = IfThenElse::Make(tx == 0, Store::Make(slots, Expr(kConsumers), 5.0f));
  std::vector<float> a(kBlocks * kThreads), b(kBlocks * kThreads);
  absl::Status s = RunGpuKernel(Kernel("outsider", {in, out}, bx, tx, slots,
                                       IfThenElse::Make(tx < kProducers, producer, consumer)),
                                {std::span<float>(a), std::span<float>(b)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("element 256 is written by thread 0 and read by thread"));
}

TEST(NamedBarrierSim, ProducersWaitingAtTheBlockBarrierAreNotDivergentFromANamedOne) {
  // The producers go straight to the block's barrier() while the consumers exchange through
  // barrier id 1 and then reach it too; after it, producer t reads consumer t's slot.
  Buffer in("in"), out("out"), slots("slots", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Expr at = bx * kThreads + tx;
  Expr c = tx - kProducers;
  Stmt thread = Block::Make({
      IfThenElse::Make(tx >= kProducers,
                       Block::Make({
                           Store::Make(slots, c, in(at)),
                           Barrier::MakeNamed(1, kConsumers),
                           Store::Make(out, at, Load::Make(slots, (c + 1) % kConsumers)),
                       })),
      Barrier::Make(),
      IfThenElse::Make(tx < kProducers, Store::Make(out, at, Load::Make(slots, tx))),
  });
  const std::vector<float> values = Inputs();
  std::vector<float> input = values, result(values.size(), -1.0f);
  absl::Status s = RunGpuKernel(Kernel("then_block", {in, out}, bx, tx, slots, thread),
                                {std::span<float>(input), std::span<float>(result)});
  ASSERT_TRUE(s.ok()) << s;
  for (int64_t b = 0; b < kBlocks; ++b) {
    for (int64_t t = 0; t < kThreads; ++t) {
      const float want = t < kProducers ? values[static_cast<size_t>(b * kThreads + 128 + t)]
                                        : ExchangedOutput(values, b, t);
      ASSERT_EQ(result[static_cast<size_t>(b * kThreads + t)], want)
          << "block " << b << " thread " << t;
    }
  }
}

TEST(NamedBarrier, TheVerifierAndTheLaunchPlaceItAndBoundItsThreads) {
  absl::StatusOr<GpuArch> sm90 = GpuArchFor(*Target::Parse("cuda -arch=sm_90a"));
  ASSERT_TRUE(sm90.ok()) << sm90.status();
  // Under a condition, inside the thread loops: accepted.
  LoweredFunc f = ConsumersExchange();
  ASSERT_TRUE(ir::Verify(f).ok()) << ir::Verify(f);
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(f, &*sm90);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->block, (std::array<uint32_t, 3>{kThreads, 1, 1}));
  // More threads than the block has: refused.
  Buffer in("in"), out("out"), slots("slots", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  LoweredFunc too_many = Kernel("too_many", {in, out}, bx, tx, slots, Barrier::MakeNamed(3, 512));
  EXPECT_THAT(GpuLaunchOf(too_many, &*sm90).status().message(),
              HasSubstr("a named barrier waits for 512 threads, but the block has 384"));
  // Outside the thread loops: refused by both.
  LoweredFunc outside{
      "outside", {out}, For::Make(bx, 0, 1, LoopKind::kGpuBlock, Barrier::MakeNamed(1, 32))};
  EXPECT_THAT(ir::Verify(outside).message(),
              HasSubstr("`barrier(id 1, 32 threads)` is outside a gpu_thread loop"));
  EXPECT_THAT(GpuLaunchOf(outside, &*sm90).status().message(),
              HasSubstr("barrier(id 1, 32 threads) outside the gpu_thread loops"));
}

class NamedBarrierPtx : public ::testing::TestWithParam<std::string> {};

TEST_P(NamedBarrierPtx, IsBarSyncOfTheIdAndTheThreadsAndAssembles) {
  absl::StatusOr<GpuModule> module =
      EmitGpuModule({ConsumersExchange()}, {.target = *Target::Parse("cuda -arch=" + GetParam())});
  ASSERT_TRUE(module.ok()) << module.status();
  const std::string& ptx = module->code;
  EXPECT_THAT(ptx, HasSubstr("bar.sync 1, 256;"));
  EXPECT_THAT(module->llvm_ir, HasSubstr("convergent"));
  if (!testing::PtxasInstalled()) {
    GTEST_SKIP() << testing::kPtxas << " is not installed";
  }
  const testing::PtxasResult assembled = testing::RunPtxas(ptx, GetParam());
  EXPECT_EQ(assembled.exit_code, 0) << assembled.report;
}

INSTANTIATE_TEST_SUITE_P(Archs, NamedBarrierPtx, ::testing::Values("sm_80", "sm_90a"));

TEST(NamedBarrierAmdgpu, IsRefusedAsAnNvptxInstruction) {
  absl::StatusOr<GpuModule> module =
      EmitGpuModule({ConsumersExchange()}, {.target = *Target::Parse("rocm -mcpu=gfx942")});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kUnimplemented) << module.status();
  EXPECT_THAT(module.status().message(),
              HasSubstr("a named barrier (barrier(id 1, 256 threads)) is an NVPTX instruction"));
}

}  // namespace
}  // namespace tune
