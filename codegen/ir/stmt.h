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
/// `buffer` is gpu_shared, the index dense (scalar or Ramp of stride 1, of 4, 8 or 16 bytes) and
/// the value `Load(src, i)` of a global buffer of the same element type; where `valid` (a
/// scalar bool; undefined: always) is false, zeros are stored without reading (the source
/// index must still be in range). The copied values may be read only after a Barrier that
/// waits for the copy's group (Barrier::MakeAfterAsyncCopies). NVPTX emits cp.async (a source
/// size of 0 where not valid); elsewhere (AMDGPU, the simulator) it is a plain store.
struct Store final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  Store() : StmtNode(kKind) {}
  Buffer buffer;
  Expr index, value;
  bool atomic_add = false;
  bool async_copy = false;
  Expr valid;  // async copies only
  static Stmt Make(Buffer buffer, Expr index, Expr value);
  /// buffer[index] += value atomically; `buffer` global float32 (checked).
  static Stmt MakeAtomicAdd(Buffer buffer, Expr index, Expr value);
  /// An asynchronous copy of `lanes` consecutive elements (4, 8 or 16 bytes) src[src_index...] to
  /// dst[dst_index...], zeros where `valid` (a scalar bool; undefined: always) is false.
  static Stmt MakeAsyncCopy(Buffer dst, Expr dst_index, Buffer src, Expr src_index, int lanes,
                            Expr valid = Expr());
  /// A store of the same kind as `like` (plain, atomic add or async copy) with a new index,
  /// value and (async copies) validity: what passes use to rebuild a store.
  static Stmt MakeLike(const Store* like, Expr index, Expr value, Expr valid);
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

/// A warp-level tensor-core multiply-accumulate: NVPTX `mma.sync.aligned.m16n8k<K>.row.col` on
/// fragments loaded by `ldmatrix`. All 32 lanes of a warp execute it together (warp w: the threads
/// whose linear index in the block lies in [32w, 32w + 32); the block's threads are a whole number
/// of warps, and no lane of a warp skips it) with the same buffers and indexes.
///
/// With K = WarpMmaK(dtype), for mi < m_tiles and ni < n_tiles, C(mi, ni) += A(mi) x B(ni):
///   A(mi)[r][k] = a[a_index + (16 mi + r) * a_stride + k]                  (16 x K, k innermost)
///   B(ni)[k][c] = b[b_index + (8 ni + c) * b_stride + k]         (b_k_contiguous: stored [n][k])
///               = b[b_index + k * b_stride + 8 ni + c]           (otherwise: stored [k][n])
/// `a` and `b` are gpu_shared buffers of the dtype's storage types (tf32: float32; u8i8: uint8 A,
/// int8 B). Every row the instruction reads is 16-byte aligned: indexes and strides are
/// multiples of 16 bytes' elements. B stored [k][n] is for 16-bit dtypes only (ldmatrix.trans).
/// C(mi, ni), 16 x 8, is spread over the warp: lane l holds, for j < 4, row l / 4 + 8 (j / 2),
/// column 2 (l % 4) + j % 2, in acc[acc_offset + 4 (mi * n_tiles + ni) + j], `acc` a gpu_local
/// float32 buffer (int32 for the integer dtypes, whose sums wrap). Products are exact; float sums
/// are float32 accurate, in an order the hardware chooses.
struct WarpMma final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kWarpMma;
  WarpMma() : StmtNode(kKind) {}
  Dtype dtype = Dtype::kF16;
  Buffer a, b, acc;
  Expr a_index, b_index;
  int64_t a_stride = 0, b_stride = 0;
  bool b_k_contiguous = true;
  int m_tiles = 1, n_tiles = 1;
  int64_t acc_offset = 0;
  /// Checks everything above but alignment and warp uniformity (the verifier and the simulator
  /// check alignment where the indexes are known).
  static Stmt Make(Dtype dtype, Buffer a, Expr a_index, int64_t a_stride, Buffer b, Expr b_index,
                   int64_t b_stride, bool b_k_contiguous, Buffer acc, int64_t acc_offset,
                   int m_tiles, int n_tiles);
};

/// A warpgroup-level tensor-core step on Hopper (sm_90a): `k_steps` NVPTX
/// `wgmma.mma_async.sync.aligned.m64n<n>k<K>` instructions (K = WarpMmaK(dtype)) reading both
/// operands from shared memory through matrix descriptors, then a commit of them as one group and
/// a wait until at most `pending` groups of the warpgroup are still in flight. The 128 threads of
/// a warpgroup (those whose linear index in the block lies in [128g, 128g + 128); the block's
/// threads are a whole number of warpgroups) execute it together with the same indexes.
///
/// Both operands are stored K-major in the canonical 128-byte-swizzled layout: rows of 128 bytes
/// of K, in groups of 8 rows that occupy 1024 aligned bytes, the 16-byte chunk c of row r stored
/// at chunk position c ^ (r % 8). With bytes(i) = i * element bytes, and for s < k_steps:
///   A_s[r][k] = row r (< 64), byte 32 s + bytes(k) of the rows starting at a[a_index]
///   B_s[c][k] = row c (< n),  byte 32 s + bytes(k) of the rows starting at b[b_index]
/// where bytes(a_index) % 1024 (and b_index's) is the byte offset of K in the row: a multiple
/// of 32 with 32 k_steps more at most 128. With b_mn_atom_stride > 0 (16-bit dtypes only), B is
/// stored N-major instead, as layout=NN keeps it: rows of K, each 128 bytes of 64 columns
/// swizzled alike, 8-row groups 1024 bytes apart, and the next 64 columns b_mn_atom_stride bytes
/// further (a multiple of 1024); B_s[c][k] is then column c of row 16 s + k from b[b_index],
/// which lies on a 1024-byte boundary. C += sum_s A_s x B_s^T, C (64 x n) spread over the
/// warpgroup: thread t (t = linear index % 128, warp w = t / 32, lane l = t % 32) holds, for
/// j < n / 2, row 16 w + l / 4 + 8 ((j / 2) % 2), column 8 (j / 4) + 2 (l % 4) + j % 2 in
/// acc[acc_offset + j] (acc: gpu_local float32, int32 for the integer dtypes, as WarpMma's).
///
/// The instructions run asynchronously: until a later WarpGroupMma's wait leaves this group
/// complete (pending = 0, or `pending` newer groups committed after it), the shared operands
/// must not be overwritten. Programs that keep that rule see the product at the statement, as
/// the simulator computes it. Shared memory written by plain or cp.async stores is made visible
/// to the instructions by the barriers between the writes and the statement.
struct WarpGroupMma final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kWarpGroupMma;
  WarpGroupMma() : StmtNode(kKind) {}
  Dtype dtype = Dtype::kBf16;
  Buffer a, b, acc;
  Expr a_index, b_index;
  int n = 8;
  int k_steps = 1;
  int pending = 0;
  int64_t acc_offset = 0;
  int64_t b_mn_atom_stride = 0;  // 0: B K-major
  /// Checks everything above but alignment and warpgroup uniformity: WarpGroupMmaTakesN,
  /// k_steps in [1, 4], pending in [0, 7], an N-major B of a 16-bit dtype, n a multiple of 64.
  static Stmt Make(Dtype dtype, Buffer a, Expr a_index, Buffer b, Expr b_index, int n, int k_steps,
                   Buffer acc, int64_t acc_offset, int pending, int64_t b_mn_atom_stride = 0);
};

/// Whether wgmma has an m64n<n> shape for `dtype` (PTX ISA 8.0): n a multiple of 8 in
/// [8, 256]; for the integer dtypes above 32 a multiple of 16.
bool WarpGroupMmaTakesN(Dtype dtype, int n);

/// K of the tensor-core instruction WarpMma issues for `dtype`: 16 (f16, bf16), 8 (tf32), 32 (i8,
/// u8i8, the 8-bit floats); 0 for a dtype it does not take (f32, the FNUZ fp8 encodings).
int64_t WarpMmaK(Dtype dtype);

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
