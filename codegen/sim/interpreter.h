// The evaluator behind the GPU IR simulator (codegen/sim/gpu_sim.h): executes loop-IR
// statements and evaluates expressions for one thread of a simulated GPU block (or for the
// block-level code around the thread loops), over simulated memory with bounds checks and
// per-element tracking of gpu_shared accesses. What happens at the GPU loops and at Barrier is
// delegated to ExecHooks, which gpu_sim.cc implements with fibers.
//
// Statements run in interpreter.cc, expressions are evaluated in interpreter_eval.cc.
// Faults are thrown as SimError (caught by the simulator and turned into the returned status);
// nothing here is part of codegen's public interface.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "codegen/sim/gpu_sim.h"

namespace tune::sim {

/// One lane of a value: int32/int64/bool lanes use `i` (bool as 0/1), float32 lanes use `f`.
/// Lanes of a storage type hold the element's exact value: int8 and uint8 in `i`; float16,
/// bfloat16 and the 8-bit floats in `f` (every such value is a float32 too).
union Lane {
  int64_t i;
  float f;
};

/// A scalar (one lane) or vector value of an IR type.
struct Value {
  ir::Type type;
  absl::InlinedVector<Lane, 8> lanes;
};

/// A value of `type` with zeroed lanes.
inline Value MakeValue(ir::Type type) {
  Value v;
  v.type = type;
  if (type.lanes() == 1) {
    v.lanes.push_back(Lane{.i = 0});  // cheaper than the generic resize for scalars
  } else {
    v.lanes.resize(type.lanes());
  }
  return v;
}

/// A scalar integer value.
inline Value IntValue(ir::Type type, int64_t i) {
  Value v;
  v.type = type;
  v.lanes.push_back(Lane{.i = i});
  return v;
}

/// A fault of the simulated kernel, or IR the simulator cannot run.
struct SimError {
  absl::Status status;
};

/// Thrown at a Barrier of a fiber that the simulator abandons (another thread faulted), to
/// unwind the fiber's stack.
struct CancelFiber {};

/// The state of one simulated mbarrier (ir::MBarrierOp): a phase completes when its pending
/// arrivals reach 0 and no transaction bytes are outstanding (tx may dip below 0 when a copy
/// lands before its bytes are expected, as the hardware allows).
struct MBarrierState {
  int64_t count = 0;  // arrivals per phase; 0: not initialised
  int64_t pending = 0;
  int64_t tx = 0;
  int64_t phase = 0;
  /// Whether a wait for the phase of `parity` returns (the current phase's parity differs).
  bool Passes(int64_t parity) const { return phase % 2 != parity; }
};

/// Simulated memory of one buffer: a parameter (global), a gpu_shared array of one block, or a
/// gpu_local / stack array of one thread.
struct SimBuffer {
  /// write_epoch of an element no thread has written, and of one the copy engine wrote (a
  /// TensorCopy, ordered by an mbarrier rather than by barriers: exempt from the race checks).
  static constexpr int64_t kUnwritten = -1;
  static constexpr int64_t kAsyncWrite = -2;
  /// gpu_shared access tracking (epochs: BarrierEpochs). The threads that read the element since
  /// the latest whole-block barrier are kept as a range of thread ids that holds them all (-1,
  /// -1: none), with read_epoch the epoch of the latest read: a write is ordered after the reads
  /// when a barrier that every thread of the range and the writer passed was released after
  /// read_epoch (conservative where a named barrier ordered an earlier read on its own).
  struct Cell {
    int64_t write_epoch = -1;
    int64_t read_epoch = -1;
    int32_t writer = -1;
    int32_t first_reader = -1;
    int32_t last_reader = -1;
  };

  std::string name;
  ir::MemoryScope scope = ir::MemoryScope::kGlobal;
  int param_index = -1;  // global buffers: the parameter position
  ir::Type element = ir::Type::Float32();
  std::byte* data = nullptr;
  int64_t size = 0;               // in elements
  std::vector<uint64_t> storage;  // allocated buffers own their elements (8-byte aligned words)
  std::vector<Cell> cells;        // gpu_shared with checks on: one per element
  std::vector<MBarrierState> mbarriers;  // an mbarrier array: one per element, once initialised

  /// Owns `size` elements of `element`, each NaN (floats) or 0x7f.. (integers): a read of an
  /// unwritten element poisons what it reaches.
  void Allocate(ir::Type element_type, int64_t elements);
  /// Element `k` as a lane (decoded exactly), and a lane stored as element `k` (a float lane
  /// of a narrow float type is exact in it already: a Cast rounded it).
  Lane Read(int64_t k) const;
  void Write(int64_t k, Lane lane);
  float* floats() const { return reinterpret_cast<float*>(data); }
};

/// The barrier generations of one block, which its threads share. Every release of one of its
/// barriers begins a new epoch; a gpu_shared access records the epoch it happens in
/// (SimBuffer::Cell), and accesses of two threads are ordered when a barrier that both passed
/// was released between them. A whole-block barrier orders every thread's earlier accesses; a
/// named barrier (ir::Barrier::MakeNamed) only those of its participants with one another, so
/// the race checks still see an access of a thread outside it as concurrent with the accesses
/// after its release.
struct BarrierEpochs {
  // The latest release of named barriers with one set of participants since block_epoch (only
  // the latest matters: it orders whatever an earlier one of the same threads did).
  struct NamedRelease {
    int64_t epoch = 0;
    std::vector<int32_t> below;  // below[t]: how many of threads [0, t) take part
    bool Covers(int32_t first, int32_t last) const {
      return below[static_cast<size_t>(last) + 1] - below[static_cast<size_t>(first)] ==
             last - first + 1;
    }
  };
  int64_t epoch = 0;
  int64_t block_epoch = 0;  // the epoch the latest whole-block release began
  std::vector<NamedRelease> named;

  /// Whether accesses of threads [first, last] in epoch `e` are ordered before an access of
  /// `thread` now.
  bool Ordered(int64_t e, int32_t first, int32_t last, int32_t thread) const {
    return e < block_epoch || OrderedByNamed(e, first, last, thread);
  }
  bool OrderedByNamed(int64_t e, int32_t first, int32_t last, int32_t thread) const;
};

class Interpreter;

/// What the simulator does at GPU loops and barriers.
class ExecHooks {
 public:
  virtual ~ExecHooks() = default;
  /// The outermost gpu_block loop reached by block-level code.
  virtual void RunBlockLoop(Interpreter& parent, const ir::For* op) = 0;
  /// A gpu_thread loop reached by block-level code: runs the block's threads over `op`.
  virtual void RunThreads(Interpreter& parent, const ir::For* op) = 0;
  /// A Barrier reached by a thread.
  virtual void Barrier(Interpreter& thread, const ir::Barrier* op) = 0;
  /// A thread reaches a warpgroup instruction, whose share the thread computes in `issue`: runs
  /// `issue` once every thread of the warpgroup has reached the instruction, and returns once
  /// every one has run its share, as the hardware issues it for the warpgroup as one.
  virtual void WarpGroupStep(Interpreter& thread, absl::FunctionRef<void()> issue) = 0;
  /// A thread waits until `barrier` passes `parity` (MBarrierState::Passes); `what` names the
  /// barrier for a deadlock report.
  virtual void WaitMBarrier(Interpreter& thread, const MBarrierState* barrier, int64_t parity,
                            std::string what) = 0;
  /// A thread lets the others run before it goes on (GpuSimOptions::schedule_seed).
  virtual void Yield(Interpreter& thread) = 0;
  /// The block-level interpreter of the block of rank `rank` in the thread's thread-block
  /// cluster, whose shared memory a multicast copy or a remote arrival reaches. Fails, naming
  /// `what`, where the kernel runs without clusters, the rank is not the cluster's, or that
  /// block's threads have all finished (its shared memory is gone).
  virtual Interpreter& ClusterPeer(Interpreter& thread, int64_t rank, const std::string& what) = 0;
};

class Interpreter {
 public:
  /// A block-level interpreter with no bindings.
  Interpreter(ExecHooks* hooks, const GpuSimOptions* options);
  /// Copies share the bindings' buffers (not their elements).
  Interpreter(const Interpreter&) = default;
  Interpreter& operator=(const Interpreter&) = delete;

  /// An interpreter for one thread of the block this (block-level) interpreter runs.
  Interpreter ForkThread(const std::array<int64_t, 3>& thread_index,
                         const std::array<int64_t, 3>& block_dims) const;
  /// A block-level interpreter for another worker: the same bindings, its own barrier epoch.
  Interpreter ForkBlockWorker() const;

  void SetHooks(ExecHooks* hooks) { hooks_ = hooks; }
  void BindBuffer(const ir::BufferNode* node, SimBuffer* buffer);
  void Exec(const ir::Stmt& s);
  Value Eval(const ir::Expr& e);

  /// Runs iteration `value` of the gpu_block loop `op` (its body with the variable bound).
  void RunBlockIteration(const ir::For* op, int64_t value);
  /// Marks the end of a barrier interval of the block (a barrier or the end of thread loops).
  void AdvanceEpoch();
  /// Marks the release of a named barrier whose participants are the threads t of the block
  /// (by linear index) with `participants[t]`.
  void AdvanceEpoch(const std::vector<bool>& participants);

  bool in_threads() const { return in_threads_; }
  /// "block (x, y, z), thread (x, y, z)".
  std::string Location() const;
  /// Throws SimError with `code` and "`message` at <location>".
  [[noreturn]] void Fail(absl::StatusCode code, const std::string& message) const;

 private:
  Value LookupVar(const ir::Variable* var) const;
  SimBuffer* LookupBuffer(const ir::BufferNode* node) const;
  int64_t CheckedIndex(const SimBuffer& buffer, int64_t index, const char* access) const;
  void TrackShared(SimBuffer& buffer, int64_t index, bool write) const;
  // Expressions (interpreter_eval.cc): one function per kind of node, out of line so that
  // Eval's frame (on a fiber stack) stays small. The binary ones take the operator lane-wise.
  template <typename FloatOp, typename IntOp>
  [[gnu::noinline]] Value EvalArith(const ir::BinaryExprNode* op, FloatOp float_op, IntOp int_op);
  template <typename Op>
  [[gnu::noinline]] Value EvalCompare(const ir::BinaryExprNode* op, Op compare);
  template <typename Op>
  [[gnu::noinline]] Value EvalLogic(const ir::BinaryExprNode* op, Op logic);
  [[gnu::noinline]] Value EvalNot(const ir::Not* op);
  [[gnu::noinline]] Value EvalSelect(const ir::Select* op);
  [[gnu::noinline]] Value EvalCast(const ir::Cast* op);
  [[gnu::noinline]] Value EvalReinterpret(const ir::Reinterpret* op);
  [[gnu::noinline]] Value EvalBroadcast(const ir::Broadcast* op);
  [[gnu::noinline]] Value EvalRamp(const ir::Ramp* op);
  [[gnu::noinline]] Value EvalShuffle(const ir::Shuffle* op);
  [[gnu::noinline]] Value EvalFma(const ir::Fma* op);
  [[gnu::noinline]] Value EvalDotAccumulate(const ir::DotAccumulate* op);
  [[gnu::noinline]] Value EvalLoad(const ir::Load* op);
  /// Floor division (`div`) or floor modulo of integers; division by zero is a fault.
  int64_t IntDivMod(int64_t x, int64_t y, bool div) const;
  // Statements (interpreter.cc).
  void ExecStore(const ir::Store* op);
  void ExecFetchAdd(const ir::FetchAdd* op);
  void ExecFor(const ir::For* op);
  void ExecAllocate(const ir::Allocate* op);
  // The warp's multiply-accumulate, this lane's share of it (interpreter_mma.cc).
  void ExecWarpMma(const ir::WarpMma* op);
  // The warpgroup's multiply-accumulate, this thread's share of it (interpreter_mma.cc).
  void ExecWarpGroupMma(const ir::WarpGroupMma* op);
  void IssueWarpGroupMma(const ir::WarpGroupMma* op);  // once its warpgroup has reached it
  void ExecWaveMma(const ir::WaveMma* op);             // interpreter_wave_mma.cc
  void ExecAmxTileOp(const ir::AmxTileOp* op);         // interpreter_amx.cc
  // The copy engine and the mbarriers (interpreter_tma.cc).
  void ExecTensorCopy(const ir::TensorCopy* op);
  // The buffer index each element of an im2col copy reads (-1: outside the tensor), in the
  // order they land.
  std::vector<int64_t> Im2colSources(const ir::TensorCopy* op, const std::vector<int64_t>& origin);
  void ExecMBarrierOp(const ir::MBarrierOp* op);
  MBarrierState& LookupMBarrier(const ir::Buffer& buffer, int64_t index, bool initialising);

  // The eight AMX tile registers of a CPU thread and their configured shapes (rows 0: not
  // configured); null before ldtilecfg and after tilerelease.
  struct AmxTiles {
    using Tile = std::array<uint8_t, 16 * 64>;
    std::array<ir::AmxTileShape, ir::kAmxTiles> shapes{};
    std::array<Tile, ir::kAmxTiles> tiles{};
  };

  ExecHooks* hooks_;
  const GpuSimOptions* options_;
  std::shared_ptr<AmxTiles> amx_;
  std::vector<std::pair<const ir::Variable*, Value>> vars_;
  std::vector<std::pair<const ir::BufferNode*, SimBuffer*>> buffers_;
  bool in_threads_ = false;
  bool in_block_loop_ = false;
  std::array<int64_t, 3> block_index_{0, 0, 0};
  std::array<int64_t, 3> thread_index_{0, 0, 0};
  int32_t thread_id_ = 0;
  int64_t block_threads_ = 1;
  // Expression nesting in thread code, bounded so that a fiber's stack cannot overflow.
  static constexpr int kMaxThreadExprDepth = 300;
  int depth_ = 0;                          // linear thread index in the block
  std::shared_ptr<BarrierEpochs> epochs_;  // the block's, shared by its threads
  // A thread's own copies of the gpu_local / stack arrays allocated around its thread loops.
  std::vector<std::shared_ptr<SimBuffer>> private_buffers_;
};

}  // namespace tune::sim
