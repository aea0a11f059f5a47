// The kernel the TMA copy tests run: one block of 64 threads, in which thread 0 initialises an
// mbarrier, then (after a block barrier) expects `elements` float32 elements of transactions and
// issues the copy under test into a shared array; every thread waits for the phase and copies the
// shared array out, as it lies, to the second parameter.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "codegen/ir/ir.h"

namespace tune::testing {

/// `copy(smem, bars)` is the copy thread 0 issues, completing on bars[0] (a null Stmt: nothing
/// completes the phase, and the wait cannot pass). Parameters: `in` (which the copy reads), out.
inline ir::LoweredFunc OneCopyKernel(
    std::string name, const ir::Buffer& in, int64_t elements,
    const std::function<ir::Stmt(const ir::Buffer& smem, const ir::Buffer& bars)>& copy) {
  using ir::Expr;
  using ir::MBarrierOp;
  using ir::MBarrierOpKind;
  ir::Buffer out("out");
  ir::Buffer smem("smem", ir::MemoryScope::kGpuShared, ir::Type::Float32());
  ir::Buffer bars("bars", ir::MemoryScope::kGpuShared, ir::Type::Int64());
  ir::Var bx("bx"), tx("tx"), i("i");
  ir::Stmt threads = ir::For::Make(
      tx, 0, 64, ir::LoopKind::kGpuThread,
      ir::Block::Make({
          ir::IfThenElse::Make(tx == 0,
                               MBarrierOp::Make(MBarrierOpKind::kInit, bars, Expr(0), Expr(1))),
          ir::Barrier::Make(),
          ir::IfThenElse::Make(
              tx == 0, ir::Block::Make({MBarrierOp::Make(MBarrierOpKind::kArriveExpectTx, bars,
                                                         Expr(0), Expr(elements * 4)),
                                        copy(smem, bars)})),
          MBarrierOp::Make(MBarrierOpKind::kWait, bars, Expr(0), Expr(0)),
          ir::For::Make(i, 0, elements / 64, ir::LoopKind::kSerial,
                        ir::Store::Make(out, i * 64 + tx, ir::Load::Make(smem, i * 64 + tx))),
      }));
  ir::Stmt body =
      ir::For::Make(bx, 0, 1, ir::LoopKind::kGpuBlock,
                    ir::Allocate::Make(smem, elements, ir::Allocate::Make(bars, 1, threads)));
  return ir::LoweredFunc{std::move(name), {in, out}, body};
}

}  // namespace tune::testing
