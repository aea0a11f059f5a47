// gemm.cuda.wgmma's kernel builder (BuildWgmmaKernel, wgmma_kernel.h), internal to the
// templates: class WgmmaKernel, whose members are defined by what they build in three files:
// wgmma_kernel.cc (the block: threads, warpgroups and their lets, the cp.async main loop, the
// wgmma steps, grid splits and stream-K segments), wgmma_kernel_tma.cc (the warp-specialised
// TMA pipeline) and wgmma_kernel_tiles.cc (A's and B's tiles copied into swizzled stages, and
// the accumulators out through the epilogue or into a split's workspace) and
// wgmma_kernel_resident.cc (the resident pipeline: B kept in shared memory by persistent
// blocks, A copied direct or built from staged input rows, conv_window.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/templates/conv_window.h"
#include "codegen/templates/split_reduction.h"
#include "codegen/templates/stream_k.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "codegen/templates/tma_pipeline.h"
#include "codegen/templates/wgmma_kernel.h"

namespace tune::wgmma_detail {

using ir::Block;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::LetStmt;
using ir::LoopKind;
using ir::Stmt;
using ir::Store;
using ir::Var;

inline constexpr int64_t kRowBytes = kWgmmaRowBytes;
inline constexpr int kKSteps = 4;  // wgmma steps of 32 bytes of K per staged row

inline int64_t InputBytes(const Workload& w) { return ElementBytes(w.input_type()); }

/// The partition of a stream-K config's iterations over its persistent grid (none for
/// streamk = 0).
std::optional<StreamKPartition> StreamKOf(const ImplicitGemm& g, const WgmmaKnobs& k);

/// a ^ b for a, b in [0, 8), from the IR's integer arithmetic (it has no bitwise operators).
Expr Xor3(const Expr& a, const Expr& b);

// The kernel, knob by knob; the comments of gemm_cuda_wgmma.h describe its shape.
class WgmmaKernel {
 public:
  WgmmaKernel(const ImplicitGemm& g, const WgmmaKnobs& k)
      : w_(g.workload),
        g_(g),
        k_(k),
        nt_(g.b_k_major),
        bytes_(InputBytes(w_)),
        row_(kRowBytes / bytes_),
        p_(w_),
        as_("As", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.input_type())),
        bs_("Bs", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.weight_type())),
        acc_("acc", ir::MemoryScope::kGpuLocal, ir::Type::Of(AccumulatorType(w_.dtype()))),
        part_("part", ir::MemoryScope::kGpuLocal, ir::Type::Of(AccumulatorType(w_.dtype()))),
        partial_("partial", ir::MemoryScope::kGpuShared, ir::Type::Of(AccumulatorType(w_.dtype()))),
        cs_("Cs", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.out_type())),
        bars_("bars", ir::MemoryScope::kGpuShared, ir::Type::Int64()),
        staging_("staging", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.input_type())),
        win_(k.resident == 1 && !k.double_a ? ConvWindow::Of(g) : std::nullopt),
        sk_(StreamKOf(g, k)),
        split_(g, k.bm, k.bn, sk_ ? sk_->MaxParts() : k.gridk,
               ir::Type::Of(AccumulatorType(w_.dtype()))) {}

  ir::LoweredFunc Build(std::string_view name) const;

 private:
  // The resident pipeline's tiles hold every output channel (bn >= N); with staged input rows
  // (win_) they are runs of bm pixels of one output row (WindowTilesQ a row).
  int64_t TilesM() const {
    return win_ ? w_.conv2d().n * w_.conv2d().p() * WindowTilesQ() : GpuCeilDiv(g_.m, k_.bm);
  }
  int64_t TilesN() const { return GpuCeilDiv(g_.n, k_.bn); }
  int64_t Steps() const { return GpuCeilDiv(g_.k, row_); }
  int64_t StepsPerSplit() const { return GpuCeilDiv(Steps(), k_.gridk); }
  // A grid split whose tile's blocks form one cluster and share the finish (split_cluster).
  bool SplitInCluster() const { return k_.split_cluster == 1 && k_.gridk > 1 && !sk_; }
  int64_t AStage() const { return k_.bm * row_; }  // elements per stage
  int64_t BStage() const { return k_.bn * row_; }
  int64_t Ahead() const { return k_.stages - 2; }
  // Bytes between B's 64-column atoms when it is stored N-major (layout=NN); 0 for NT.
  int64_t BAtomStride() const { return nt_ ? 0 : row_ * kRowBytes; }

  Stmt Body() const;

  // The warp-specialised TMA pipeline of this block (tma = 1): the tiles of A and B as the
  // copy engine delivers them are the layouts the cp.async copies build (rows of 128 bytes of K
  // swizzled; for layout=NN, atoms of 64 columns by row_ rows of K).
  TmaPipeline Pipeline() const;

  // The rows of A's TMA box: a product of fewer rows than the tile copies only its own,
  // rounded up to a swizzle atom of 8, and each stage's rows past them are zeroed once
  // (ZeroPastABox). On the H200 (2026-12-04) boxes of 64 rows over an A of 1 or 16 rows, the
  // copy engine filling the rest, ran up to 3x slower than over an A of 64.
  int64_t ABoxRows() const { return std::min(k_.bm, GpuCeilDiv(g_.m, 8) * 8); }

  // Zeros in the rows of every A stage that A's TMA box leaves out (ABoxRows): cp.async copies
  // that read nothing (the copy engine's zero fill), issued by the block's threads and waited
  // for at a block barrier before the pipeline starts; the TMA copies never write those rows.
  Stmt ZeroPastABox() const;

  // tma = 1: thread 0 sets up the barriers and produces; warpgroups 1.. consume and store.
  // The accumulators live in the consumers' branch alone (zeroed, summed, stored there), so
  // that the producer's warpgroup, down to kProducerRegisters, holds none of them.
  std::vector<Stmt> TmaThreadStmts() const;

  // tma = 1 with stream-K: one ring of stages for all of the block's segments. Per segment, the
  // producer issues the segment's steps not yet issued and the next `stages` steps past its end
  // (the next segment's, streamed while the consumers finish this one: park, arrive, add), the
  // consumers multiply the segment's steps, release its last stage and store or park the tile,
  // and the whole block finishes it (split_.Finish: its barriers are the block's).
  std::vector<Stmt> TmaStreamKStmts() const;

  Stmt TmaStreamKSegment() const;

  // persistent = 1 (a TMA pipeline): block b of the PersistentBlocks() takes the tiles b,
  // b + grid, ... in raster order, all through one ring of stages; in clusters, cluster q of the
  // grid's Q takes the rectangles of tiles q, q + Q, ... (UnitsM() x UnitsN() in raster order),
  // each of its blocks the tile of its rank, so that its blocks share their tiles in lockstep. Its
  // producer streams the steps of all of them in one loop, so that the next tile's first stages
  // land while the consumers store the last; the consumers multiply each tile's steps, release its
  // last stage and store it (PersistentStore: the producer never joins them, so the register split
  // holds).
  std::vector<Stmt> TmaPersistentStmts() const;

  // A persistent grid's units of work: its tiles, or the rectangles of cluster x cluster_n
  // tiles that its clusters take in turn (tile rows and columns padded to whole rectangles).
  int64_t UnitsM() const { return GpuCeilDiv(TilesM(), k_.cluster); }
  int64_t UnitsN() const { return GpuCeilDiv(TilesN(), k_.cluster_n); }
  int64_t PersistentBlocks() const { return k_.PersistentBlocks(UnitsM() * UnitsN()); }

  // resident = 1: block b of the PersistentBlocks() fills every step's stage of B, then takes
  // the tiles b, b + grid, ...: it waits for the tile's A (its copies, or its staged input rows,
  // from which it builds A's stages), issues the next tile's copies, multiplies every step and
  // stores the tile. B's stages come from the weights direct (a dense A), or, with staged rows,
  // from a flat copy of the weights into the staging buffer, which is zeroed after them.
  std::vector<Stmt> ResidentStmts() const;
  // A dense A: the copies of every step of tile `tile`'s A into set `set` (0, 1) of A's stages,
  // and of every step of B.
  Stmt DenseCopyA(const Expr& tile, const Expr& set) const;
  Stmt DenseCopyB() const;
  int64_t WindowTilesQ() const;  // tiles per output row
  Stmt WindowCopyWeights() const;
  Stmt WindowBuildB() const;
  Stmt WindowZeroRows() const;
  // The row copies of tile `tile` (a block-uniform index of TilesM()).
  Stmt WindowCopyRows(const Expr& tile) const;
  Stmt WindowBuildA() const;
  // Every step's stage of `rows` rows into `dst` (stages of `stage_elements`), element k of row
  // `row` the scalar lane(base, k) (k < K; zeros past it), base the row's row_base(row).
  template <typename BaseFn, typename LaneFn>
  Stmt WindowBuildStages(const ir::Buffer& dst, int64_t stage_elements, int64_t rows,
                         BaseFn row_base, LaneFn lane) const;

  // The row of C that the tile's row `local` is, and whether it is one (tiles of staged input
  // rows are output rows' runs of pixels; other tiles bm consecutive rows of C).
  Expr OutRow(const Expr& local) const;
  Expr OutRowValid(const Expr& local) const;

  // Where step `step` of tile `tile` (in raster order) reads: its K coordinate, A's row and B's
  // column (a stream-K segment's producer walks tiles in turn).
  TmaPipeline::StepTiles StepOfTile(const Expr& tile, const Expr& step) const;

  // A stream-K segment's accumulators: the tile stored, where the block holds all of its steps,
  // else parked as the block's part.
  Stmt StoreOrParkStreamKTile() const;

  // `stmts` (a segment's steps and stores), then the whole block finishes the tile (the last of
  // its blocks adds the parts), with the tile's coordinates bound.
  Stmt FinishStreamKSegment(std::vector<Stmt> stmts) const;

  // gridk > 1: once every thread has parked its accumulators, the tile's last block stores C
  // (or, in a cluster, each of the tile's blocks its share of C). Run by every thread of the
  // block, or with `consumers_only` by the consumer warpgroups of a TMA pipeline alone (split_tx),
  // meeting at named barrier kConsumersBarrier; the producer's warpgroup then passes one cluster
  // barrier of its own for FinishInCluster's.
  Stmt FinishSplit(bool consumers_only = false) const;
  static constexpr int kConsumersBarrier = 1;  // a named barrier of the consumers (0: the block's)

  MmaEpilogue Epilogue() const;

  Stmt ZeroAccumulators() const;

  // The first step of K of this block's range: of its split, or of its stream-K segment.
  Expr FirstStep() const { return sk_ ? Expr(skv_.first_step) : bz_ * StepsPerSplit(); }

  Stmt ThreadBody() const;

  // One segment of a stream-K block (the steps of one tile that its range holds): a barrier,
  // as the previous segment's warpgroups may still read the buffers this one's first copies
  // fill; the steps; then the tile stored, where the block holds all of its steps, or parked,
  // the tile's last block to arrive adding the parts and storing it.
  Stmt StreamKSegment() const;

  // The cp.async pipeline over the steps of this warpgroup's K range, into its accumulators.
  std::vector<Stmt> MainLoop() const;

  // The thread's warpgroup coordinates around `stmts`, and its accumulators. Warpgroup g: K
  // range g / (wg_m wg_n), then rows and columns; with a TMA pipeline, warpgroup 0 is the
  // producer's and the others' are counted from 1.
  Stmt Lets(Stmt stmts) const;

  // The copies of reduction step `step` of this warpgroup's K range into its shared buffer
  // `stage`; zeros for a step past the block's.
  Stmt CopyStep(const Expr& step, const Expr& stage) const;

  // Copies B's [row_][bn] tile of a step (rows of K, stored N-major for layout=NN) into `dst` at
  // `base`: 64-column atoms of row_ rows of 128 bytes each, chunk c of row k at c ^ (k % 8).
  template <typename SourceFn>
  Stmt CopyTileNMajor(const ir::Buffer& dst, const Expr& base, SourceFn source) const;

  int64_t Lanes() const { return std::max<int64_t>(1, k_.copy / bytes_); }

  // Copies `rows` rows of 128 bytes of K into `dst` at `base`, `copy` bytes at a time spread
  // over the block's threads, each chunk to its swizzled place: 16-byte chunk c of row r at
  // c ^ (r % 8).
  template <typename SourceFn>
  Stmt CopyTile(const ir::Buffer& dst, const Expr& base, int64_t rows, SourceFn source) const;

  // This warpgroup's instructions on shared buffer `stage`: one statement per m64 step. Promoted
  // sums (fp8) go through `part`: overwritten by the step's instructions (waited for at once)
  // and added into `acc`; with promote_steps 2, an even step (`parity` 0) overwrites part and
  // leaves its instructions in flight, and the odd step after it adds to part, waits for both
  // and adds part into acc (as does an even step that is the last, pending 0).
  // `b_stage` (defined: the resident pipeline's) is B's stage where A's is another.
  Stmt Multiply(const Expr& local_stage, int pending, int parity = 0,
                const Expr& b_stage = Expr()) const;

  // Each thread's accumulators, two adjacent columns at a time, with the epilogue (or, for a
  // split reduction, into the block's partial tile): thread (warp w, lane l) of a warpgroup
  // holds, for j < n / 2 of m64 step mi, row 64 mi + 16 w + l / 4 + 8 ((j / 2) % 2) and column
  // 8 (j / 4) + 2 (l % 4) + j % 2.
  Stmt StoreAccumulators() const;

  // Each thread's accumulators (as StoreAccumulators describes) through the epilogue into C,
  // or, with `park_tile` defined, into partial tile `part` of tile `park_tile` of the split's
  // workspace.
  Stmt WriteAccumulators(const Expr& park_tile = Expr(), const Expr& part = Expr()) const;

  // stage_c = 1: the epilogue's values into the block's output tile in shared memory (rows of
  // StagedRow() elements; StageWrites), a barrier, then the tile out to C in 16-byte chunks,
  // consecutive threads along a row (C's rows are whole chunks: SixteenByteRows; StageCopyOut).
  Stmt StageWrites() const;

  // Every thread of the block (the producer's too) copies the staged tile out.
  Stmt StageCopyOut() const;
  // `barrier`, then threads [0, threads) (`thread` the copier's index among them) copy the
  // staged tile out.
  Stmt StageCopyOut(Stmt barrier, const Expr& thread, int64_t threads) const;

  // A persistent block's consumers' store of one tile (TmaPersistentStmts): each thread its
  // accumulators, or (stage_c) the tile staged and copied out by the consumers alone, between
  // named barriers of theirs (the producer is streaming the next tile meanwhile): one before
  // the staging, as the last tile's copy may still read the staged tile, and one after it.
  Stmt PersistentStore() const;

  const Workload& w_;
  const ImplicitGemm& g_;
  WgmmaKnobs k_;
  bool nt_;
  int64_t bytes_, row_;
  GemmParams p_;
  ir::Buffer as_, bs_, acc_, part_, partial_, cs_, bars_, staging_;
  std::optional<ConvWindow> win_;
  std::optional<StreamKPartition> sk_;
  SplitReduction split_;
  StreamKVars skv_;
  Var tx_{"tx"}, lane_{"lane"}, group_m_{"group_m"}, group_n_{"group_n"};
  Var group_k_{"group_k"}, split_tx_{"split_tx"};
  Var range_steps_{"range_steps"};
  GemmBlockVars v_;
  const Var &bz_ = v_.split, &tile_m_ = v_.tile_m, &tile_n_ = v_.tile_n, &step_count_ = v_.steps;
};

}  // namespace tune::wgmma_detail
