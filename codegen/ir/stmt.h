// The IR's statement nodes and LoweredFunc, a kernel entry point (see codegen/ir/ir.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
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
///
/// A global `buffer` is a GPU kernel's workspace: module memory outside the gpu_block loops,
/// zero when the module loads, that keeps what a launch leaves for the next launch (a kernel
/// that needs it zeroed returns it to zero). Launches of one kernel that use it must not
/// overlap (one stream at a time). NVPTX/AMDGPU: a zero-initialised addrspace(1) global.
struct Allocate final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  Allocate() : StmtNode(kKind) {}
  Buffer buffer;
  int64_t size = 0;
  Stmt body;
  /// size >= 1.
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
/// With `cluster`, until every thread of every block of the thread-block cluster reaches it
/// (LoweredFunc::cluster; NVPTX barrier.cluster.arrive.release + barrier.cluster.wait.acquire):
/// what a block wrote to its or a peer's shared memory, and its mbarrier initialisations and
/// arrivals, are then visible to the whole cluster. A cluster barrier neither commits nor waits
/// for cp.async groups.
///
/// Before that, with `commit_async`, the thread closes the asynchronous copies it issued since
/// the last commit into one group; with `wait_async` >= 0 it waits until at most that many of
/// its most recent groups are still in flight (NVPTX cp.async.commit_group / wait_group). A
/// group's copies are visible to every thread after the first barrier that waits for it in
/// every thread.
///
/// A named barrier (`threads` > 0; NVPTX bar.sync id, threads) waits until `threads` threads of
/// the block, whole warps, have reached a barrier of its `id`: what those threads wrote to
/// gpu_shared before it is visible to them after it, and the block's other threads are not
/// involved (they may wait elsewhere, e.g. at an mbarrier, or have finished). So the consumer
/// warpgroups of a warp-specialised kernel synchronise among themselves while the producer
/// warpgroup does not stop. Barrier 0 is the whole block's, so ids are 1 to 15; every thread
/// that reaches a barrier of one id passes the same `threads`. A named barrier is neither a
/// cluster barrier nor commits or waits for cp.async groups.
struct Barrier final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBarrier;
  Barrier() : StmtNode(kKind) {}
  bool commit_async = false;
  int wait_async = -1;
  bool cluster = false;
  int id = 0;           // the hardware barrier: 0 for the whole block, 1 to 15 for named ones
  int64_t threads = 0;  // 0: every thread of the block; > 0: a named barrier's participants
  bool named() const { return threads > 0; }
  static Stmt Make();
  static Stmt MakeCluster();
  /// `wait_pending` >= -1 (-1: no wait).
  static Stmt MakeAfterAsyncCopies(bool commit, int wait_pending);
  /// `id` in [1, 15], `threads` a positive multiple of 32 (the warp size).
  static Stmt MakeNamed(int id, int64_t threads);
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
  /// C = sum_s A_s x B_s^T instead of C += (the first instruction's scale-d 0): the
  /// accumulators' values before the statement are never read, so they need no zeroing.
  bool overwrite = false;
  /// Checks everything above but alignment and warpgroup uniformity: WarpGroupMmaTakesN,
  /// k_steps in [1, 4], pending in [0, 7], an N-major B of a 16-bit dtype, n a multiple of 64.
  static Stmt Make(Dtype dtype, Buffer a, Expr a_index, Buffer b, Expr b_index, int n, int k_steps,
                   Buffer acc, int64_t acc_offset, int pending, int64_t b_mn_atom_stride = 0,
                   bool overwrite = false);
};

/// A TMA tensor map: how a TensorCopy sees a global buffer parameter, as CUDA's CUtensorMap
/// describes it (cuTensorMapEncodeTiled). The launcher encodes one per distinct map of a kernel
/// (GpuLaunch::tensor_maps, in the order the body first uses them) and passes it by value.
/// `dims`, `strides` and `box` count elements, innermost dimension first: strides has one entry
/// per dimension after the first (the element distance between its consecutive indexes; in
/// bytes a multiple of 16), box the elements one copy moves per dimension (1..256). With
/// `swizzle_bytes` 128, box[0] spans exactly 128 bytes and a copied box lands in shared memory
/// as WarpGroupMma's operands lie: the 16-byte chunk c of row r at chunk c ^ (r % 8).
///
/// With `lower_corner` set the map is in im2col mode (cuTensorMapEncodeIm2col), over a
/// channels-last tensor of rank 3..5: dims are (C, W, N), (C, W, H, N) or (C, W, H, D, N). One
/// copy then moves a column of box[1] pixels of box[0] channels each (the other box entries are
/// 1), pixel i to row i of the destination: the pixels a convolution's consecutive output
/// positions read at one filter tap. `lower_corner` and `upper_corner` (rank - 2 entries, W
/// first) bound the window corners the column walks: along each spatial dimension d from
/// lower_corner[d] to dims[d + 1] - 1 + upper_corner[d] in steps of `element_strides[d + 1]`
/// (`element_strides`: rank entries, or empty for all 1), W fastest, then H, D and N; a
/// convolution of padding p, filter extent f, dilation l and stride s takes lower -p, upper
/// p - (f - 1) * l and steps s. Rank 4 bounds corners to -128..127, rank 5 to -16..15.
struct TensorMap {
  Buffer buffer;
  std::vector<int64_t> dims, strides, box;
  int swizzle_bytes = 128;  // 0 or 128
  std::vector<int64_t> lower_corner = {}, upper_corner = {}, element_strides = {};
  bool im2col() const { return !lower_corner.empty(); }
  /// The traversal step of dimension d (1 without element_strides).
  int64_t ElementStride(size_t d) const { return element_strides.empty() ? 1 : element_strides[d]; }
  /// Bytes one copy moves (the product of box, times the element size).
  int64_t BoxBytes() const;
  friend bool operator==(const TensorMap& a, const TensorMap& b) {
    return a.buffer.same_as(b.buffer) && a.dims == b.dims && a.strides == b.strides &&
           a.box == b.box && a.swizzle_bytes == b.swizzle_bytes &&
           a.lower_corner == b.lower_corner && a.upper_corner == b.upper_corner &&
           a.element_strides == b.element_strides;
  }
};

/// A TMA bulk tensor copy on Hopper (sm_90a): one box of `map` whose first element is at
/// element coordinates `coords` (scalar int32 or int64, innermost first, one per dimension;
/// the parts of the box outside the tensor read as zeros) into dst[dst_index...], a gpu_shared
/// array of the buffer's element type, in the box's row-major order (swizzled as the map
/// says; dst_index's byte offset a multiple of 1024 with the 128-byte swizzle, of 128
/// otherwise). The copy runs asynchronously and completes map.BoxBytes() transactions on the
/// mbarrier barrier[barrier_index] when it lands: read the box only after waiting for that
/// barrier's phase (MBarrierOp). Every thread that reaches the statement issues a copy, so it
/// sits under a condition that one thread meets. With `multicast` (a mask of the cluster's
/// block ranks, bit r for rank r; 0: none) the box lands at the same place of dst in every
/// block of the mask and completes its bytes on each one's barrier[barrier_index]. NVPTX:
/// cp.async.bulk.tensor.<rank>d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
/// (.multicast::cluster with a mask).
///
/// Through an im2col map, `coords` are the channel, the first pixel's window corner (W first,
/// inside the map's corner bounds) and its image, and `offsets` (rank - 2 scalar integers of
/// 0..65535, W first) the filter tap's place within the window: pixel i of the column reads
/// channels coords[0].. at its corner plus the offsets (zeros outside the tensor). NVPTX: the
/// same instruction with .im2col and the offsets as 16-bit operands.
struct TensorCopy final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kTensorCopy;
  TensorCopy() : StmtNode(kKind) {}
  TensorMap map;
  std::vector<Expr> coords;
  Buffer dst, barrier;
  Expr dst_index, barrier_index;
  int64_t multicast = 0;
  std::vector<Expr> offsets;  // im2col maps only
  /// Checks the map (a global buffer, rank 1..5, positive dims, strides and box within the
  /// rules above; for im2col, rank 3..5, the corners and element strides of 1..8), one
  /// coordinate per dimension (and rank - 2 offsets for an im2col map, none otherwise), dst
  /// gpu_shared of the buffer's element type and the barrier an mbarrier array (see MBarrierOp).
  /// `multicast`: 0, or a mask of 2 or more of the 16 ranks a cluster may have.
  static Stmt Make(TensorMap map, std::vector<Expr> coords, Buffer dst, Expr dst_index,
                   Buffer barrier, Expr barrier_index, int64_t multicast = 0,
                   std::vector<Expr> offsets = {});
};

/// What an MBarrierOp does.
enum class MBarrierOpKind : uint8_t {
  kInit,            // value: the arrivals that complete a phase (>= 1)
  kArrive,          // one arrival (value undefined)
  kArriveExpectTx,  // value: bytes of transactions (TensorCopy) the phase now also waits for; then
                    // one arrival
  kWait,            // value: a phase parity (0 or 1); waits until that phase has completed
};
std::string_view MBarrierOpKindName(MBarrierOpKind kind);

/// An operation on a shared-memory barrier (NVPTX mbarrier, sm_90 for transaction counts):
/// barrier[index], an element of a gpu_shared int64 array. A barrier counts phases from 0; a
/// phase completes when its arrivals reach the count given at kInit and the transaction bytes
/// it expects have all landed, and the next phase begins with the count again. kWait with
/// parity p returns once the current phase's parity differs from p, i.e. the last phase of
/// parity p is complete; so a producer may wait with parity 1 on a barrier in its first phase
/// and pass at once. kInit is done by one thread and published to the others by a Barrier.
/// Memory written before an arrival (or landed by a counted copy) is visible to the threads
/// that wait for the phase it completes. `value` is a scalar integer. A kArrive with `cta`
/// defined (a scalar integer: a block rank of the thread-block cluster) arrives at the barrier
/// at the same place in that block's shared memory (NVPTX mapa + mbarrier.arrive.shared::cluster),
/// releasing at block scope only: it orders the arriving thread's reads of its own shared memory
/// (the release of a stage its warpgroup has read), and publishes no memory to the peer's
/// threads (a cluster Barrier does that).
struct MBarrierOp final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kMBarrierOp;
  MBarrierOp() : StmtNode(kKind) {}
  MBarrierOpKind op = MBarrierOpKind::kArrive;
  Buffer barrier;
  Expr index, value;
  Expr cta;  // kArrive only: the cluster rank of the block whose barrier it is (undefined: own)
  static Stmt Make(MBarrierOpKind op, Buffer barrier, Expr index, Expr value = Expr(),
                   Expr cta = Expr());
};

/// result[result_index] = buffer[index]; buffer[index] += value, as one atomic read-modify-write
/// with acquire-release semantics at device scope: the global writes that the block's threads
/// made before a Barrier that precedes it are visible to a block whose FetchAdd reads its
/// result, once that block's threads pass a Barrier after it. So blocks hand results to one
/// another through global memory: write, Barrier, one thread's FetchAdd, Barrier, read (the
/// release and acquire of CUTLASS's semaphore). `buffer` is a global int32 buffer, `result` a
/// gpu_shared or gpu_local int32 one, `value` and both indexes scalars. NVPTX: fence.acq_rel.gpu,
/// atom.global.add.u32, fence.acq_rel.gpu; AMDGPU: agent-scope fences around global_atomic_add.
struct FetchAdd final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFetchAdd;
  FetchAdd() : StmtNode(kKind) {}
  Buffer buffer;
  Expr index, value;
  Buffer result;
  Expr result_index;
  static Stmt Make(Buffer buffer, Expr index, Expr value, Buffer result, Expr result_index);
};

/// Moves registers between the warpgroups of a block on Hopper (sm_90a): the 128 threads of the
/// warpgroup that executes it (together, like WarpGroupMma) set their register budget to
/// `registers`, a multiple of 8 in [24, 256], raising it (`increase`: waiting until other
/// warpgroups have given registers back) or lowering it. A warp-specialised kernel's producer
/// lowers its budget so that its consumers may raise theirs past what the block's threads would
/// get evenly. NVPTX setmaxnreg.{inc,dec}.sync.aligned.u32; the simulator does nothing.
struct SetMaxRegisters final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSetMaxRegisters;
  SetMaxRegisters() : StmtNode(kKind) {}
  int registers = 0;
  bool increase = false;
  static Stmt Make(int registers, bool increase);
};

/// The matrix instructions of AMD GPUs that WaveMma issues: CDNA's MFMA on a 64-lane wavefront
/// (gfx90a, gfx942) in its 32x32 and 16x16 single-block forms, and RDNA3's WMMA on a 32-lane
/// wavefront (gfx1100).
enum class WaveMmaShape : uint8_t { kMfma32x32, kMfma16x16, kWmma16x16 };

/// "mfma32x32", "mfma16x16", "wmma16x16".
std::string_view WaveMmaShapeName(WaveMmaShape shape);
/// Lanes of the wavefront that executes the shape: 64 (MFMA) or 32 (WMMA).
int WaveMmaLanes(WaveMmaShape shape);
/// Rows (= columns) of the shape's output tile: 32 or 16.
int WaveMmaTile(WaveMmaShape shape);
/// Accumulators each lane holds per output tile: 16 (32x32), 4 (MFMA 16x16), 8 (WMMA).
int WaveMmaAccumulators(WaveMmaShape shape);
/// Whether the shape has an instruction of reduction depth `k` for `dtype` on some AMD GPU:
///   mfma32x32: f16, bf16 k 8; i8 k 8 (gfx90a) or 16 (gfx942); the FNUZ fp8s k 16 (gfx942)
///   mfma16x16: f16, bf16 k 16; i8 k 16 (gfx90a) or 32 (gfx942); the FNUZ fp8s k 32 (gfx942)
///   wmma16x16: f16, bf16, i8, u8i8 k 16
/// Which GPU runs which is the backend's table (it refuses the others).
bool WaveMmaTakes(WaveMmaShape shape, Dtype dtype, int k);
/// Elements of K each lane holds of one row of A (and of one column of B): k / (64 / tile) for
/// MFMA (the wavefront's lanes split K into 64 / tile groups), all k for WMMA.
int WaveMmaKPerLane(WaveMmaShape shape, int k);

/// Where the operands and the accumulators of one instruction lie in the lanes, as AMD's ISA
/// documents them (CDNA3 ISA "Matrix fused-multiply-add"; RDNA3 ISA "Wave matrix multiply
/// accumulate"; the AMD Matrix Instruction Calculator prints the same tables). With T the tile,
/// L the lanes and p = WaveMmaKPerLane:
///  - A[i][k] (MFMA): lane i + T (k / p), element k % p of its operand registers; B[k][j] alike
///    with lane j + T (k / p). WMMA: lanes i and i + 16 both hold all of row i of A (element k),
///    lanes j and j + 16 all of column j of B.
///  - C[i][j] (MFMA): column j = lane % T; the rows go in groups of 4 over the lane groups:
///    accumulator r of lane l is row 4 (64 / T) (r / 4) + 4 (l / T) + r % 4. WMMA: accumulator r
///    of lane l is row 2 r + l / 16, column l % 16.
/// Templated so that kernels build the same formula as IR expressions (lane an ir::Expr) that
/// the simulator evaluates on integers.
template <typename L>
L WaveMmaAccRow(WaveMmaShape shape, const L& lane, int r) {
  if (shape == WaveMmaShape::kWmma16x16) {
    return lane / 16 + 2 * r;
  }
  const int t = WaveMmaTile(shape);
  return lane / t % (64 / t) * 4 + (4 * (64 / t) * (r / 4) + r % 4);
}
template <typename L>
L WaveMmaAccCol(WaveMmaShape shape, const L& lane) {
  return lane % WaveMmaTile(shape);
}
/// The first k of A's row (B's column) that `lane` holds: p (lane / T) for MFMA, 0 for WMMA.
template <typename L>
L WaveMmaOperandK(WaveMmaShape shape, int k, const L& lane) {
  if (shape == WaveMmaShape::kWmma16x16) {
    return lane * 0;
  }
  const int t = WaveMmaTile(shape);
  return lane / t % (64 / t) * WaveMmaKPerLane(shape, k);
}

/// A wavefront-level matrix multiply-accumulate on AMD GPUs: `v_mfma_*` (CDNA) or `v_wmma_*`
/// (RDNA3), `shape` with reduction depth `k`, operands read from shared memory (LDS) into each
/// lane's registers as the instruction's layout assigns them (WaveMmaOperandK). All lanes of a
/// wavefront execute it together (wavefront w: the threads whose linear index in the block lies
/// in [L w, L w + L), L = WaveMmaLanes; the block is a whole number of wavefronts) with the same
/// buffers and indexes. It is a sibling of WarpMma rather than a form of it because nothing of
/// mma.sync's layout carries over: the wavefront is 64 lanes (32 for WMMA), each lane reads its
/// own operand elements rather than ldmatrix fragments, and the accumulators of a tile are
/// 16, 4 or 8 per lane in the column-per-lane order above.
///
/// With T = WaveMmaTile(shape), for mi < m_tiles and ni < n_tiles, C(mi, ni) += A(mi) x B(ni):
///   A(mi)[r][kk] = a[a_index + (T mi + r) * a_stride + kk]               (T x k, kk innermost)
///   B(ni)[kk][c] = b[b_index + (T ni + c) * b_stride + kk]    (b_k_contiguous: stored [n][k])
///                = b[b_index + kk * b_stride + T ni + c]      (otherwise: stored [k][n])
/// `a` and `b` are gpu_shared buffers of the dtype's storage types (u8i8: uint8 A, int8 B).
/// A lane's run of WaveMmaKPerLane elements is read as one vector where it is contiguous, so
/// a_index and a_stride (and b's, stored [n][k]) are multiples of that run. Accumulator r of
/// tile (mi, ni) is acc[acc_offset + A (mi * n_tiles + ni) + r], A = WaveMmaAccumulators, at
/// the row and column WaveMmaAccRow / WaveMmaAccCol give; `acc` is gpu_local float32 (int32 for
/// the integer dtypes, whose sums wrap). Products are exact; float sums are float32 accurate,
/// in an order the hardware chooses.
struct WaveMma final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kWaveMma;
  WaveMma() : StmtNode(kKind) {}
  Dtype dtype = Dtype::kF16;
  WaveMmaShape shape = WaveMmaShape::kMfma32x32;
  int k = 8;
  Buffer a, b, acc;
  Expr a_index, b_index;
  int64_t a_stride = 0, b_stride = 0;
  bool b_k_contiguous = true;
  int m_tiles = 1, n_tiles = 1;
  int64_t acc_offset = 0;
  /// Checks everything above but alignment and wavefront uniformity (the simulator checks
  /// alignment where the indexes are known).
  static Stmt Make(Dtype dtype, WaveMmaShape shape, int k, Buffer a, Expr a_index, int64_t a_stride,
                   Buffer b, Expr b_index, int64_t b_stride, bool b_k_contiguous, Buffer acc,
                   int64_t acc_offset, int m_tiles, int n_tiles);
};

/// Whether wgmma has an m64n<n> shape for `dtype` (PTX ISA 8.0): n a multiple of 8 in
/// [8, 256]; for the integer dtypes above 32 a multiple of 16.
bool WarpGroupMmaTakesN(Dtype dtype, int n);

/// What an AmxTileOp does.
enum class AmxTileOpKind : uint8_t {
  kConfigure,  // ldtilecfg: palette 1 with `shapes` (every tile's contents become zero)
  kZero,       // tilezero `tile`
  kLoad,       // tileloadd `tile` from buffer rows
  kStore,      // tilestored `tile` to buffer rows
  kDot,        // tdpbf16ps / tdpbssd / tdpbusd: tile += a_tile x b_tile
  kRelease,    // tilerelease: the tiles back to their initial state
};

/// The shape of one AMX tile register: `rows` (1..16) of `colsb` bytes (4..64, a multiple of 4).
struct AmxTileShape {
  int rows = 0;
  int colsb = 0;
  bool operator==(const AmxTileShape&) const = default;
};

/// An instruction of x86's Advanced Matrix Extensions on the eight tile registers of the thread
/// that runs it (x86-64 CPU targets with amx-tile, and amx-bf16 / amx-int8 for kDot). Tiles are
/// machine state, not values: a kConfigure must run on the same thread before the other kinds
/// (a parallel loop's body configures its own), and a kDot reads what the statements before it
/// left in its tiles. With `shapes[t]` the configured shape of tile t:
///   kLoad:  row r of `tile` = shapes[tile].colsb bytes at &buffer[index + r * stride]
///   kStore: the same bytes written from the tile
///   kDot:   C = tile (rows M, 4-byte elements N = colsb / 4), A = a_tile (M rows), B = b_tile
///           (K / G rows, G = 2 for bf16, 4 for the 8-bit dtypes, each of N groups of G):
///             C[m][n] += sum_k A[m][k] * B[k / G][G n + k % G]
///           bf16: float32 sums (tdpbf16ps); i8: int8 x int8 (tdpbssd); u8i8: uint8 A x int8 B
///           (tdpbusd); the integer sums int32, wrapping.
/// `index` counts elements of `buffer` (any scope but GPU ones), `stride` elements too.
struct AmxTileOp final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAmxTileOp;
  AmxTileOp() : StmtNode(kKind) {}
  AmxTileOpKind op = AmxTileOpKind::kRelease;
  std::vector<AmxTileShape> shapes;  // kConfigure: tiles 0.. (at most 8)
  int tile = 0;                      // kZero, kLoad, kStore, kDot (the accumulator)
  int a_tile = 0, b_tile = 0;        // kDot
  Dtype dtype = Dtype::kBf16;        // kDot: bf16, i8 or u8i8
  Buffer buffer;                     // kLoad, kStore
  Expr index;
  int64_t stride = 0;

  static Stmt Configure(std::vector<AmxTileShape> shapes);
  static Stmt Zero(int tile);
  static Stmt Load(int tile, Buffer buffer, Expr index, int64_t stride);
  static Stmt Store(int tile, Buffer buffer, Expr index, int64_t stride);
  static Stmt Dot(Dtype dtype, int c_tile, int a_tile, int b_tile);
  static Stmt Release();
};

/// The AMX tile registers: eight.
inline constexpr int kAmxTiles = 8;

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
  // Blocks per thread-block cluster along each grid axis (CUDA sm_90; {1, 1, 1}: none). Each
  // divides the grid on its axis; the blocks of a cluster run at once and may reach one
  // another's shared memory (TensorCopy::multicast, MBarrierOp::cta, Barrier::cluster).
  std::array<int64_t, 3> cluster = {1, 1, 1};
  // Blocks of the kernel that must fit on one multiprocessor together (CUDA: .minnctapersm):
  // the register budget of each thread is the multiprocessor's share of that many blocks.
  int64_t min_blocks_per_multiprocessor = 1;
};

}  // namespace tune::ir
