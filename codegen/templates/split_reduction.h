// A tensor-core GEMM's reduction split across the blocks of grid z (knob gridk), for every output
// type and epilogue: each block parks its partial output tile in a workspace, and the last of a
// tile's gridk blocks to arrive adds the tile's partial tiles in split order (so that the result
// does not depend on which block finishes last), runs the epilogue and stores C.
//
// The workspace is module memory (ir::Allocate of global buffers: zero when the module loads) of
// gridk partial tiles per output tile (for stream-K, the most blocks that share a tile), in the
// accumulators' type (float32, or int32 for the integer dtypes), and one arrival counter per tile.
// A block writes its partial tile, then arrives (a Barrier, one thread's FetchAdd, whose release
// and acquire fences publish the block's writes and see the others', a second Barrier: CUTLASS's
// semaphore); the block that counts gridk - 1 arrivals before its own reads the partial tiles and
// returns the counter to zero, so that the next launch finds it zeroed. Launches of one such kernel
// therefore must not overlap (one stream at a time), as the C header says.
//
// In a cluster (FinishInCluster), a tile's gridk blocks form one thread-block cluster, which runs
// all of them at once: after a cluster barrier, whose release and acquire publish every block's
// partial tile to the others, each block adds its own share of the tile's rows of chunks (the
// parts again in split order) and stores it, so that the partial tiles are read by gridk blocks
// at once instead of all by the last; no counter.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "search/config_space.h"

namespace tune {

/// Most bytes a split reduction's workspace may take (a config past it is refused by the
/// space's constraint): module memory stays allocated while the module is loaded.
inline constexpr int64_t kSplitWorkspaceLimitBytes = int64_t{64} << 20;

/// Bytes of the workspace of `tiles` output tiles of bm x bn split gridk ways (4-byte
/// accumulators and counters).
int64_t SplitWorkspaceBytes(int64_t tiles, int64_t bm, int64_t bn, int64_t gridk);

/// The values of knob gridk of a tensor-core template: 1, and the splits that leave each block
/// at least two of the reduction's `k_steps` steps.
std::vector<int64_t> GridSplits(int64_t k_steps);

/// Adds to `space` (knobs bm, bn, gridk) the constraint that a split's workspace for `g` fits in
/// kSplitWorkspaceLimitBytes.
void AddSplitWorkspaceConstraint(ConfigSpace& space, const ImplicitGemm& g);

class SplitReduction {
 public:
  /// The reduction of `g`'s tiles of bm x bn (tiles of them in all) split over up to `slots`
  /// blocks per tile (gridk; for stream-K, StreamKPartition::MaxParts; 1: not split, and every
  /// member but Active does nothing), with accumulators of type `acc`.
  SplitReduction(const ImplicitGemm& g, int64_t bm, int64_t bn, int64_t slots, ir::Type acc);

  bool Active() const { return slots_ > 1; }

  /// `kernel` (the block loops) inside the workspace's allocations.
  ir::Stmt AllocateWorkspace(ir::Stmt kernel) const;
  /// `threads` (the gpu_thread loop) inside the block's shared arrival slot.
  ir::Stmt AllocateShared(ir::Stmt threads) const;

  /// Stores `lanes` accumulators (`value`) of row `row` and columns col .. col + lanes - 1 of
  /// the block's tile (tile-local coordinates) into partial tile `split` of tile `tile`.
  ir::Stmt Park(const ir::Expr& tile, const ir::Expr& split, const ir::Expr& row,
                const ir::Expr& col, ir::Expr value, int lanes) const;

  /// Run by `threads` threads of the block (thread `tx`) after each parked its part of the
  /// tile: the block arrives at tile `tile`'s counter, and the last block adds the gridk partial
  /// tiles in order and stores rows tile_m * bm .. and columns tile_n * bn .. of C through
  /// `epilogue` (built for an unsplit reduction), in runs of 4, 2 or 1 columns as C's rows allow.
  /// The threads meet at the block's barrier() where `named_barrier` is 0 (then `threads` is
  /// the block's), else at named barrier `named_barrier` of `threads` threads (the consumer
  /// warpgroups of a warp-specialised block, which keep their setmaxnreg budget).
  ir::Stmt Finish(const ir::Expr& tile, const ir::Expr& tile_m, const ir::Expr& tile_n,
                  const ir::Var& tx, int64_t threads, const MmaEpilogue& epilogue,
                  int named_barrier = 0) const;
  /// Finish for a tile shared by `parts` (block-uniform, 1 .. slots) blocks, whose partial tiles
  /// are 0 .. parts - 1 (stream-K, where the count differs from tile to tile); for parts 1 (the
  /// block stored the tile itself) only its barriers.
  ir::Stmt Finish(const ir::Expr& tile, const ir::Expr& parts, const ir::Expr& tile_m,
                  const ir::Expr& tile_n, const ir::Var& tx, int64_t threads,
                  const MmaEpilogue& epilogue, int named_barrier = 0) const;
  /// Finish for a tile whose gridk blocks are one thread-block cluster (the block of split
  /// `split`): a cluster barrier, then the block's 1 / gridk of the tile's chunks, each the sum
  /// of the gridk partial tiles in split order, stored through `epilogue` by `threads` threads
  /// (thread `tx`). Every other thread of the cluster must pass one cluster barrier too.
  ir::Stmt FinishInCluster(const ir::Expr& tile, const ir::Expr& split, const ir::Expr& tile_m,
                           const ir::Expr& tile_n, const ir::Var& tx, int64_t threads,
                           const MmaEpilogue& epilogue) const;

 private:
  /// The stores of chunks `first` .. first + count - 1 of tile `tile` (runs of `Lanes()`
  /// columns, row by row), each the sum of partial tiles 0 .. parts - 1 in split order,
  /// spread over `threads` threads (thread `tx`).
  ir::Stmt SumChunks(const ir::Expr& tile, const ir::Expr& parts, const ir::Expr& tile_m,
                     const ir::Expr& tile_n, const ir::Var& tx, int64_t threads,
                     const MmaEpilogue& epilogue, const ir::Expr& first, int64_t count) const;
  /// Columns per chunk: 4, 2 or 1, as C's rows and the tile allow.
  int Lanes() const;
  int64_t Chunks() const { return bm_ * bn_ / Lanes(); }
  ir::Expr PartialIndex(const ir::Expr& tile, const ir::Expr& split, const ir::Expr& row,
                        const ir::Expr& col) const;

  const ImplicitGemm& g_;
  int64_t bm_, bn_, slots_, tiles_;
  ir::Buffer partials_, arrivals_, arrived_;
};

}  // namespace tune
