// The simulator's scheduler of GPU threads (internal to tune_gpu_sim; gpu_sim.h describes the
// execution model): the threads of one block, or of a thread-block cluster's blocks, run as
// cooperative fibers (ucontext) on the calling thread. A fiber runs until it must wait (at a
// barrier, an mbarrier phase, a warpgroup instruction its warpgroup has not all reached) and
// parks there; the scheduler resumes it once what it waits for has happened, and reports a
// deadlock or a divergent barrier when nothing can. The simulator's hooks (sim::ExecHooks) park
// the calling fiber through the functions below.
#pragma once

#include <ucontext.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "codegen/ir/ir.h"

namespace tune::sim {

class Interpreter;
struct MBarrierState;

/// The stack of one fiber: reserved address space (pages are committed when touched) with a
/// guard page below it. Throws SimError (ResourceExhausted) where it cannot be mapped.
class FiberStack {
 public:
  FiberStack();
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  char* bottom() const { return base_ + page_; }
  size_t size() const { return bytes_ - page_; }

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0;
  size_t page_ = 0;
};

/// Prepares `context` to run `entry` on `stack`, returning to `link` at its end.
void MakeFiberContext(ucontext_t* context, const FiberStack& stack, ucontext_t* link,
                      void (*entry)());

// The threads of one block in one run of fibers: the block-level interpreter that reached its
// thread loops, the loop nest and each thread's index.
struct ThreadGroup {
  Interpreter* parent = nullptr;
  ir::Stmt nest;
  std::vector<std::array<int64_t, 3>> indices;
  std::array<int64_t, 3> dims{1, 1, 1};
  bool finished = false;  // every thread has run to its end
};

/// Runs sets of thread groups as fibers, keeping their stacks from one run to the next.
class ThreadFibers {
 public:
  /// `schedule_seed`: GpuSimOptions::schedule_seed (0: each pass resumes the threads in order).
  explicit ThreadFibers(uint64_t schedule_seed) : schedule_seed_(schedule_seed) {}

  /// Runs the threads of `groups` (one block, or a cluster's blocks) as fibers until every one
  /// has finished. A barrier() releases the threads of its block once all of them wait at it; a
  /// named barrier, those of its block that wait at one of its id once as many do as it names; a
  /// cluster barrier, those of every group once all of them do; a warpgroup step is issued once
  /// its warpgroup's 128 threads have reached it. Throws SimError for a thread's fault, a
  /// divergent barrier, cluster barrier or warpgroup step, and a deadlock; the other fibers are
  /// unwound first.
  void Run(const std::vector<ThreadGroup*>& groups);

 private:
  uint64_t schedule_seed_;
  std::vector<std::unique_ptr<FiberStack>> stacks_;
};

// The calling thread's hooks. Each returns false, having done nothing, where the caller runs
// outside ThreadFibers::Run (threads without barriers run one after the other, not as fibers).

/// Parks the calling fiber at `barrier` until its block (or cluster, or the threads of a named
/// barrier) is released.
bool ParkAtBarrier(const ir::Barrier* barrier);
/// Parks the calling fiber at a warpgroup step until the warpgroup's 128 threads have reached
/// it, runs `issue` (its share of the step), and parks again until every share is done.
bool ParkAtWarpGroupStep(absl::FunctionRef<void()> issue);
/// Parks the calling fiber until the scheduler's next pass.
bool YieldThreadFiber();
/// Parks the calling fiber until `barrier` passes `parity`; `what` names the wait in a
/// deadlock's report.
bool ParkAtMBarrier(const MBarrierState* barrier, int64_t parity, std::string what);

}  // namespace tune::sim
