// The IR's statement nodes and LoweredFunc, a kernel entry point (see codegen/ir/ir.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/ir/node.h"

namespace tune::ir {

/// buffer[index] = value. Vector value with a vector index of equal lanes, or a vector value
/// with a scalar index (made dense: Ramp(index, 1, lanes)).
///
/// With `atomic_add`, buffer[index] += value instead, as one relaxed atomic read-modify-write
/// per lane (the lanes are independent atomics, in no particular order). Only into global
/// float32 buffers: the blocks of a GPU kernel that splits a reduction across the grid add
/// their partial sums into an output the caller has zeroed (GpuLaunch::zeroed_args).
///
/// With `async_copy`, a GPU copy from global to shared memory that completes asynchronously:
/// `buffer` is gpu_shared, the index dense (scalar or Ramp of stride 1, 1, 2 or 4 lanes) and
/// the value `Load(src, i)` of a global buffer, or `Select(valid, Load(src, i), 0)` (zeros
/// without reading where `valid` is false; passes may reduce it to zeros alone, a plain store
/// in effect). The copied values may be read only after a
/// Barrier that waits for the copy's group (Barrier::MakeAfterAsyncCopies). NVPTX emits
/// cp.async; elsewhere (AMDGPU, the simulator) it is a plain store.
struct Store final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  Store() : StmtNode(kKind) {}
  Buffer buffer;
  Expr index, value;
  bool atomic_add = false;
  bool async_copy = false;
  static Stmt Make(Buffer buffer, Expr index, Expr value);
  /// buffer[index] += value atomically; `buffer` global float32 (checked).
  static Stmt MakeAtomicAdd(Buffer buffer, Expr index, Expr value);
  /// An asynchronous copy of `lanes` (1, 2 or 4) consecutive elements src[src_index...] to
  /// dst[dst_index...], zeros where `valid` (a scalar bool; undefined: always) is false.
  static Stmt MakeAsyncCopy(Buffer dst, Expr dst_index, Buffer src, Expr src_index, int lanes,
                            Expr valid = Expr());
  /// A store of the same kind as `like` (plain, atomic add or async copy) with a new index and
  /// value: what passes use to rebuild a store.
  static Stmt MakeLike(const Store* like, Expr index, Expr value);
};

/// for var in [min, min + extent) with a loop kind. GPU kinds carry a thread axis 0..2 (x,y,z).
struct For final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  For() : StmtNode(kKind) {}
  Var var;
  Expr min, extent;
  LoopKind loop_kind = LoopKind::kSerial;
  int thread_axis = 0;
  Stmt body;
  /// `var` a scalar int64 variable; min/extent scalar integers (coerced to int64); thread_axis
  /// in 0..2 and 0 for non-GPU kinds.
  static Stmt Make(Var var, Expr min, Expr extent, LoopKind kind, Stmt body, int thread_axis = 0);
};

/// Statements in order. Make flattens nested blocks and drops undefined statements.
struct Block final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBlock;
  Block() : StmtNode(kKind) {}
  std::vector<Stmt> stmts;
  /// A block of zero statements is a no-op; a block of one statement is that statement.
  static Stmt Make(std::vector<Stmt> stmts);
};

struct IfThenElse final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  IfThenElse() : StmtNode(kKind) {}
  Expr condition;
  Stmt then_case, else_case;  // else_case may be undefined
  /// `condition` a scalar bool.
  static Stmt Make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
};

/// Binds `var` to `value` within `body`.
struct LetStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kLetStmt;
  LetStmt() : StmtNode(kKind) {}
  Var var;
  Expr value;
  Stmt body;
  /// `var` and `value` of one type.
  static Stmt Make(Var var, Expr value, Stmt body);
};

/// Allocates `size` elements of `buffer` (in its scope) for the duration of `body`. The
/// contents are undefined at the start.
struct Allocate final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  Allocate() : StmtNode(kKind) {}
  Buffer buffer;
  int64_t size = 0;
  Stmt body;
  /// `buffer` not global; size >= 1.
  static Stmt Make(Buffer buffer, int64_t size, Stmt body);
};

/// Evaluates an expression for its side effect (a CallExtern). With `return_on_error`, the
/// value is an int32 status (0: success) and a non-zero one is returned by the kernel at once,
/// so that a library's failure reaches the caller (and the measurement) as the kernel's result.
struct Evaluate final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  Evaluate() : StmtNode(kKind) {}
  Expr value;
  bool return_on_error = false;
  /// With `return_on_error`, `value` is int32 (checked).
  static Stmt Make(Expr value, bool return_on_error = false);
};

/// Waits until every thread of the GPU block reaches it (and makes gpu_shared writes visible).
///
/// Before that, with `commit_async`, the thread closes the asynchronous copies it issued since
/// the last commit into one group; with `wait_async` >= 0 it waits until at most that many of
/// its most recent groups are still in flight (NVPTX cp.async.commit_group / wait_group). A
/// group's copies are visible to every thread after the first barrier that waits for it in
/// every thread.
struct Barrier final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBarrier;
  Barrier() : StmtNode(kKind) {}
  bool commit_async = false;
  int wait_async = -1;
  static Stmt Make();
  /// `wait_pending` >= -1 (-1: no wait).
  static Stmt MakeAfterAsyncCopies(bool commit, int wait_pending);
};

// ---------------------------------------------------------------------------------------------
// A kernel entry point: C ABI `int32_t name(float* p0, float* p1, ...)` returning 0 on success.

struct LoweredFunc {
  std::string name;            // a C identifier
  std::vector<Buffer> params;  // global float32 buffers, in argument order
  Stmt body;
  // Libraries the body's CallExterns resolve against, by file name ("libfoo.so.1"): left
  // undefined at link time and loaded by whoever runs the kernel (a worker's --preload).
  std::vector<std::string> external_libs = {};
  // When defined (an int64 Var), the function takes one more parameter after the buffers: the
  // GPU stream of the host ABI of GPU library kernels, `int32_t f(float*..., void* stream)`. The
  // body sees the pointer as this integer (CallExtern passes it on as an int64, which the x86-64
  // calling convention passes like a void*).
  Var stream_param = {};
  // Elements of each buffer parameter, where the caller knows them (empty otherwise). Whoever
  // launches a kernel that accumulates into a parameter (codegen/ir/params.h) zeroes that many.
  std::vector<int64_t> param_elements = {};
};

}  // namespace tune::ir
