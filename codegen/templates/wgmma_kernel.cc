#include "codegen/templates/wgmma_kernel.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/templates/split_reduction.h"
#include "codegen/templates/stream_k.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tma_pipeline.h"

namespace tune {

bool WgmmaPromotes(Dtype dtype) { return IsFp8Dtype(dtype); }

WgmmaCostShape::WgmmaCostShape(const ImplicitGemm& g)
    : dtype(g.workload.dtype()),
      out_bytes(ElementBytes(g.workload.out_type())),
      k_steps((g.k * ElementBytes(g.workload.input_type()) + kWgmmaRowBytes - 1) / kWgmmaRowBytes) {
}

WgmmaKnobs WgmmaKnobsOf(const Config& c, const WgmmaCostShape& shape) {
  return {KnobValue(c, "bm"),      KnobValue(c, "bn"),
          KnobValue(c, "wg_m"),    KnobValue(c, "wg_n"),
          KnobValue(c, "wg_k"),    KnobValue(c, "stages"),
          KnobValue(c, "copy"),    KnobValue(c, "raster"),
          KnobValue(c, "gridk"),   KnobValue(c, "stage_c"),
          KnobValue(c, "tma"),     KnobValue(c, "streamk"),
          KnobValue(c, "cluster"), WgmmaPromotes(shape.dtype),
          shape.out_bytes,         shape.k_steps};
}

namespace {

using ir::Block;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::LetStmt;
using ir::LoopKind;
using ir::Stmt;
using ir::Store;
using ir::Var;

constexpr int64_t kRowBytes = kWgmmaRowBytes;
constexpr int kKSteps = 4;  // wgmma steps of 32 bytes of K per staged row

int64_t InputBytes(const Workload& w) { return ElementBytes(w.input_type()); }

// The partition of a stream-K config's iterations over its persistent grid (none for
// streamk = 0).
std::optional<StreamKPartition> StreamKOf(const ImplicitGemm& g, const WgmmaKnobs& k) {
  if (k.streamk == 0) {
    return std::nullopt;
  }
  return StreamKPartition(GpuCeilDiv(g.m, k.bm) * GpuCeilDiv(g.n, k.bn), k.k_steps,
                          k.StreamKBlocks());
}

// a ^ b for a, b in [0, 8), from the IR's integer arithmetic (it has no bitwise operators): the
// sum of each bit's (a_i + b_i) % 2.
Expr Xor3(const Expr& a, const Expr& b) {
  Expr out = (a + b) % 2;
  out = out + (a / 2 + b / 2) % 2 * 2;
  return out + (a / 4 + b / 4) % 2 * 4;
}

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
        sk_(StreamKOf(g, k)),
        split_(g, k.bm, k.bn, sk_ ? sk_->MaxParts() : k.gridk,
               ir::Type::Of(AccumulatorType(w_.dtype()))) {}

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = p_.InOrder();
    func.body = Body();
    func.cluster = {k_.cluster, 1, 1};
    return func;
  }

 private:
  int64_t TilesM() const { return GpuCeilDiv(g_.m, k_.bm); }
  int64_t TilesN() const { return GpuCeilDiv(g_.n, k_.bn); }
  int64_t Steps() const { return GpuCeilDiv(g_.k, row_); }
  int64_t StepsPerSplit() const { return GpuCeilDiv(Steps(), k_.gridk); }
  int64_t AStage() const { return k_.bm * row_; }  // elements per stage
  int64_t BStage() const { return k_.bn * row_; }
  int64_t Ahead() const { return k_.stages - 2; }
  // Bytes between B's 64-column atoms when it is stored N-major (layout=NN); 0 for NT.
  int64_t BAtomStride() const { return nt_ ? 0 : row_ * kRowBytes; }

  Stmt Body() const {
    Stmt threads = For::Make(tx_, 0, k_.Threads(), LoopKind::kGpuThread, ThreadBody(), 0);
    if (k_.wg_k > 1) {
      threads = ir::Allocate::Make(partial_, (k_.wg_k - 1) * k_.Accumulators() * k_.SplitThreads(),
                                   threads);
    }
    if (k_.stage_c == 1) {
      threads = ir::Allocate::Make(cs_, k_.bm * k_.StagedRow(), threads);
    }
    if (k_.tma == 1) {
      threads = ir::Allocate::Make(bars_, 2 * k_.stages, threads);
    }
    threads = split_.AllocateShared(threads);
    Stmt body =
        ir::Allocate::Make(as_, k_.wg_k * k_.Buffers() * AStage(),
                           ir::Allocate::Make(bs_, k_.wg_k * k_.Buffers() * BStage(), threads));
    if (sk_) {  // the persistent grid; each thread walks its block's segments (StreamKSegment)
      return split_.AllocateWorkspace(
          For::Make(v_.bx, 0, sk_->blocks(), LoopKind::kGpuBlock, std::move(body), 0));
    }
    // The steps of each of the wg_k ranges (the last range's past the block's are zeros).
    body = LetStmt::Make(range_steps_, (step_count_ + (k_.wg_k - 1)) / k_.wg_k, body);
    return split_.AllocateWorkspace(RasterizedGemmBlocks(TilesM(), TilesN(), k_.raster, k_.gridk,
                                                         Steps(), v_, body, k_.cluster));
  }

  // The warp-specialised TMA pipeline of this block (tma = 1): the tiles of A and B as the
  // copy engine delivers them are the layouts the cp.async copies build (rows of 128 bytes of K
  // swizzled; for layout=NN, atoms of 64 columns by row_ rows of K).
  TmaPipeline Pipeline() const {
    TmaPipeline p;
    p.a_smem = as_;
    p.b_smem = bs_;
    p.barriers = bars_;
    p.a_map = ir::TensorMap{.buffer = p_.a,
                            .dims = {g_.k, g_.m},
                            .strides = {g_.k},
                            .box = {row_, ABoxRows()},
                            .swizzle_bytes = 128};
    if (nt_) {  // in a cluster, each block copies bn / cluster of the rows (TmaPipeline)
      p.b_map = ir::TensorMap{.buffer = p_.b,
                              .dims = {g_.k, g_.n},
                              .strides = {g_.k},
                              .box = {row_, k_.bn / k_.cluster},
                              .swizzle_bytes = 128};
      p.cluster = k_.cluster;
      p.rank = v_.bx % k_.cluster;
    } else {
      const int64_t atom_cols = kRowBytes / bytes_;
      p.b_map = ir::TensorMap{.buffer = p_.b,
                              .dims = {g_.n, g_.k},
                              .strides = {g_.n},
                              .box = {atom_cols, row_},
                              .swizzle_bytes = 128};
      p.b_boxes = k_.bn / atom_cols;
      p.b_box_stride = row_ * atom_cols;
    }
    p.stages = k_.stages;
    p.a_stage = AStage();
    p.b_stage = BStage();
    p.k_per_step = row_;
    p.consumer_threads = k_.SplitThreads();
    p.thread = tx_;
    p.b_k_major = nt_;
    p.a_row = tile_m_ * k_.bm;
    p.b_col = tile_n_ * k_.bn;
    p.first_step = FirstStep();
    p.steps = step_count_;
    return p;
  }

  // The rows of A's TMA box: a product of fewer rows than the tile copies only its own,
  // rounded up to a swizzle atom of 8, and each stage's rows past them are zeroed once
  // (ZeroPastABox). On the H200 (2026-12-04) boxes of 64 rows over an A of 1 or 16 rows, the
  // copy engine filling the rest, ran up to 3x slower than over an A of 64.
  int64_t ABoxRows() const { return std::min(k_.bm, GpuCeilDiv(g_.m, 8) * 8); }

  // Zeros in the rows of every A stage that A's TMA box leaves out (ABoxRows): cp.async copies
  // that read nothing (the copy engine's zero fill), issued by the block's threads and waited
  // for at a block barrier before the pipeline starts; the TMA copies never write those rows.
  Stmt ZeroPastABox() const {
    const int64_t rows = ABoxRows();
    if (rows == k_.bm) {
      return Stmt();
    }
    const int64_t lanes = 16 / bytes_;
    const int64_t per_stage = (k_.bm - rows) * row_ / lanes;  // 16-byte chunks
    Var c("c_zero");
    Expr chunk = tx_ + c * k_.Threads();
    Expr at = chunk / per_stage * AStage() + rows * row_ + chunk % per_stage * lanes;
    const GlobalTileSource nothing{.buffer = p_.a, .index = Expr(int64_t{0}), .valid = Expr(false)};
    return Block::Make({
        SpreadOverThreads(c, chunk, k_.Buffers() * per_stage, k_.Threads(),
                          CopyChunk(as_, at, nothing, lanes, true), true),
        ir::Barrier::MakeAfterAsyncCopies(true, 0),
    });
  }

  // tma = 1: thread 0 sets up the barriers and produces; warpgroups 1.. consume and store.
  // The accumulators live in the consumers' branch alone (zeroed, summed, stored there), so
  // that the producer's warpgroup, down to kProducerRegisters, holds none of them.
  std::vector<Stmt> TmaThreadStmts() const {
    const TmaPipeline pipeline = Pipeline();
    Stmt consumer = Block::Make({
        ir::SetMaxRegisters::Make(k_.ConsumerRegisters(), true),
        ZeroAccumulators(),
        pipeline.Consumer(
            [this](const Expr& stage, int pending) { return Multiply(stage, pending); }),
        k_.stage_c == 1 ? StageWrites() : StoreAccumulators(),
    });
    // In a cluster, the peers' barriers are initialised before any copy or arrival reaches
    // them, and no block ends while a peer may still reach its shared memory (TmaPipeline).
    auto barrier = [&] {
      return k_.cluster > 1 ? ir::Barrier::MakeCluster() : ir::Barrier::Make();
    };
    std::vector<Stmt> stmts = {
        IfThenElse::Make(tx_ == 0, pipeline.Init()),
        ZeroPastABox(),
        barrier(),
        IfThenElse::Make(
            tx_ < 128,
            Block::Make({ir::SetMaxRegisters::Make(WgmmaKnobs::kProducerRegisters, false),
                         IfThenElse::Make(tx_ == 0, pipeline.Producer())}),
            std::move(consumer)),
    };
    if (k_.stage_c == 1) {
      stmts.push_back(StageCopyOut());
    }
    stmts.push_back(FinishSplit());
    if (k_.cluster > 1) {
      stmts.push_back(ir::Barrier::MakeCluster());
    }
    return stmts;
  }

  // tma = 1 with stream-K: one ring of stages for all of the block's segments. Per segment, the
  // producer issues the segment's steps not yet issued and the next `stages` steps past its end
  // (the next segment's, streamed while the consumers finish this one: park, arrive, add), the
  // consumers multiply the segment's steps, release its last stage and store or park the tile,
  // and the whole block finishes it (split_.Finish: its barriers are the block's).
  std::vector<Stmt> TmaStreamKStmts() const {
    // No register split (setmaxnreg): the producer's warpgroup runs the segments' finishes with
    // the consumers, which need more than kProducerRegisters (ptxas ignores the split then).
    const TmaPipeline ring = Pipeline();
    return {
        IfThenElse::Make(tx_ == 0, ring.Init()),
        ZeroPastABox(),
        ir::Barrier::Make(),
        sk_->Segments(v_.bx, skv_, TmaStreamKSegment()),
    };
  }

  Stmt TmaStreamKSegment() const {
    const int64_t steps = Steps();
    const Expr& first = skv_.first_index;
    Expr total = skv_.end - skv_.begin;  // the block's steps
    TmaPipeline p = Pipeline();
    p.index_base = first;
    p.steps = skv_.steps;
    p.release_last = true;
    Expr from = ir::Select::Make(skv_.segment == 0, Expr(int64_t{0}),
                                 ir::Min::Make(total, first + k_.stages));
    Expr to = ir::Min::Make(total, first + skv_.steps + k_.stages);
    auto at = [&](const Expr& g) {
      Expr iteration = skv_.begin + g;
      Expr tile = iteration / steps;
      return TmaPipeline::StepTiles{
          iteration % steps * row_,
          RasterTileM(tile, TilesM(), TilesN(), k_.raster) * k_.bm,
          RasterTileN(tile, TilesM(), TilesN(), k_.raster) * k_.bn,
      };
    };
    Stmt consumer = Block::Make({
        ZeroAccumulators(),
        p.Consumer([this](const Expr& stage, int pending) { return Multiply(stage, pending); }),
        StoreOrParkStreamKTile(),
    });
    return FinishStreamKSegment({
        IfThenElse::Make(tx_ < 128, IfThenElse::Make(tx_ == 0, p.ProducerRange(from, to, at)),
                         std::move(consumer)),
    });
  }

  // A stream-K segment's accumulators: the tile stored, where the block holds all of its steps,
  // else parked as the block's part.
  Stmt StoreOrParkStreamKTile() const {
    return IfThenElse::Make(skv_.parts == 1, WriteAccumulators(),
                            WriteAccumulators(skv_.tile, skv_.part));
  }

  // `stmts` (a segment's steps and stores), then the whole block finishes the tile (the last of
  // its blocks adds the parts), with the tile's coordinates bound.
  Stmt FinishStreamKSegment(std::vector<Stmt> stmts) const {
    stmts.push_back(
        split_.Finish(skv_.tile, skv_.parts, tile_m_, tile_n_, tx_, k_.Threads(), Epilogue()));
    return BindRasterTile(skv_.tile, TilesM(), TilesN(), k_.raster, tile_m_, tile_n_,
                          Block::Make(std::move(stmts)));
  }

  // gridk > 1: once every thread has parked its accumulators, the tile's last block stores C.
  Stmt FinishSplit() const {
    if (!split_.Active()) {
      return Stmt();
    }
    return split_.Finish(v_.bx, tile_m_, tile_n_, tx_, k_.Threads(), Epilogue());
  }

  MmaEpilogue Epilogue() const {
    return MmaEpilogue(w_, g_.n, p_.c, p_.bias, p_.scale_a, p_.scale_b);
  }

  Stmt ZeroAccumulators() const {
    Var i("i");
    return For::Make(i, 0, k_.Accumulators(), LoopKind::kUnrolled,
                     Store::Make(acc_, i, ir::Cast::Make(acc_.element_type(), Expr(0))));
  }

  // The first step of K of this block's range: of its split, or of its stream-K segment.
  Expr FirstStep() const { return sk_ ? Expr(skv_.first_step) : bz_ * StepsPerSplit(); }

  Stmt ThreadBody() const {
    if (k_.tma == 1 && sk_) {
      return Lets(Block::Make(TmaStreamKStmts()));
    }
    if (k_.tma == 1) {
      return Lets(Block::Make(TmaThreadStmts()));
    }
    if (sk_) {
      return Lets(sk_->Segments(v_.bx, skv_, StreamKSegment()));
    }
    std::vector<Stmt> stmts = MainLoop();
    if (k_.wg_k > 1) {
      // Ranges 1 .. wg_k - 1 leave their sums in shared memory; range 0 adds them and stores.
      const int64_t accs = k_.Accumulators(), threads = k_.SplitThreads();
      Var j("j");
      Expr slot = ((group_k_ - 1) * accs + j) * threads + split_tx_;
      stmts.push_back(IfThenElse::Make(
          group_k_ > 0, For::Make(j, 0, accs, LoopKind::kUnrolled,
                                  Store::Make(partial_, slot, ir::Load::Make(acc_, j)))));
      stmts.push_back(ir::Barrier::Make());
      std::vector<Stmt> first;
      for (int64_t r = 1; r < k_.wg_k; ++r) {
        Var i("i");
        Expr from = ((r - 1) * accs + i) * threads + split_tx_;
        first.push_back(For::Make(
            i, 0, accs, LoopKind::kUnrolled,
            Store::Make(acc_, i, ir::Load::Make(acc_, i) + ir::Load::Make(partial_, from))));
      }
      first.push_back(StoreAccumulators());
      stmts.push_back(IfThenElse::Make(group_k_ == 0, Block::Make(std::move(first))));
    } else {
      stmts.push_back(StoreAccumulators());
    }
    stmts.push_back(FinishSplit());
    return Lets(Block::Make(std::move(stmts)));
  }

  // One segment of a stream-K block (the steps of one tile that its range holds): a barrier,
  // as the previous segment's warpgroups may still read the buffers this one's first copies
  // fill; the steps; then the tile stored, where the block holds all of its steps, or parked,
  // the tile's last block to arrive adding the parts and storing it.
  Stmt StreamKSegment() const {
    std::vector<Stmt> stmts = {ir::Barrier::Make()};
    for (Stmt& stmt : MainLoop()) {
      stmts.push_back(std::move(stmt));
    }
    stmts.push_back(StoreOrParkStreamKTile());
    Stmt segment = FinishStreamKSegment(std::move(stmts));
    return LetStmt::Make(step_count_, skv_.steps,
                         LetStmt::Make(range_steps_, skv_.steps, std::move(segment)));
  }

  // The cp.async pipeline over the steps of this warpgroup's K range, into its accumulators.
  std::vector<Stmt> MainLoop() const {
    std::vector<Stmt> stmts = {ZeroAccumulators()};
    // Prologue: steps 0 .. stages - 3, each its own group (the last is committed in the loop).
    for (int64_t s = 0; s < Ahead(); ++s) {
      stmts.push_back(IfThenElse::Make(Expr(s) < range_steps_, CopyStep(Expr(s), Expr(s))));
      if (s + 1 < Ahead()) {
        stmts.push_back(ir::Barrier::MakeAfterAsyncCopies(true, -1));
      }
    }
    // Step t: close the group of step t + stages - 3, wait for step t's, fill the buffer that
    // step t - 2 read (complete in every warpgroup: each waited for it in step t - 1, before
    // this barrier), and issue step t's instructions, leaving them in flight (pending 1) but for
    // the last step.
    auto step = [&](const Expr& t, int pending) {
      Expr ahead = t + Ahead();
      return Block::Make({
          ir::Barrier::MakeAfterAsyncCopies(true, static_cast<int>(Ahead() - 1)),
          IfThenElse::Make(ahead < range_steps_, CopyStep(ahead, ahead % k_.stages)),
          Multiply(t % k_.stages, pending),
      });
    };
    Var t("t");
    stmts.push_back(For::Make(t, 0, range_steps_ - 1, LoopKind::kSerial, step(t, 1)));
    stmts.push_back(step(range_steps_ - 1, 0));
    return stmts;
  }

  // The thread's warpgroup coordinates around `stmts`, and its accumulators. Warpgroup g: K
  // range g / (wg_m wg_n), then rows and columns; with a TMA pipeline, warpgroup 0 is the
  // producer's and the others' are counted from 1.
  Stmt Lets(Stmt stmts) const {
    Expr consumer_tx = k_.tma == 1 ? tx_ - 128 : Expr(tx_);
    Expr group = consumer_tx / 128 % (k_.wg_m * k_.wg_n);
    Stmt body = LetStmt::Make(
        group_m_, group / k_.wg_n,
        LetStmt::Make(group_n_, group % k_.wg_n, LetStmt::Make(lane_, tx_ % 32, std::move(stmts))));
    body =
        LetStmt::Make(group_k_, consumer_tx / k_.SplitThreads(),
                      LetStmt::Make(split_tx_, consumer_tx % k_.SplitThreads(), std::move(body)));
    if (k_.promote) {
      body = ir::Allocate::Make(part_, k_.Accumulators(), std::move(body));
    }
    return ir::Allocate::Make(acc_, k_.Accumulators(), std::move(body));
  }

  // The copies of reduction step `step` of this warpgroup's K range into its shared buffer
  // `stage`; zeros for a step past the block's.
  Stmt CopyStep(const Expr& step, const Expr& stage) const {
    Expr block_step = group_k_ * range_steps_ + step;
    Expr k0 = (FirstStep() + block_step) * row_;
    Expr inside = block_step < step_count_;
    auto guarded = [&](GlobalTileSource src) {
      if (k_.wg_k > 1) {
        src.valid = src.valid && inside;
      }
      return src;
    };
    Expr range_stage = group_k_ * k_.Buffers() + stage;
    return Block::Make({
        CopyTile(as_, range_stage * AStage(), k_.bm,
                 [&](const Expr& r, const Expr& col) {
                   return guarded(g_.A(p_, tile_m_ * k_.bm + r, k0 + col, Lanes()));
                 }),
        nt_ ? CopyTile(bs_, range_stage * BStage(), k_.bn,
                       [&](const Expr& r, const Expr& col) {
                         return guarded(g_.B(p_, tile_n_ * k_.bn + r, k0 + col, Lanes()));
                       })
            : CopyTileNMajor(bs_, range_stage * BStage(),
                             [&](const Expr& k, const Expr& n) {
                               return guarded(g_.B(p_, k0 + k, tile_n_ * k_.bn + n, Lanes()));
                             }),
    });
  }

  // Copies B's [row_][bn] tile of a step (rows of K, stored N-major for layout=NN) into `dst` at
  // `base`: 64-column atoms of row_ rows of 128 bytes each, chunk c of row k at c ^ (k % 8).
  template <typename SourceFn>
  Stmt CopyTileNMajor(const ir::Buffer& dst, const Expr& base, SourceFn source) const {
    const int64_t lanes = Lanes();
    const int64_t per_row = k_.bn / lanes;
    const int64_t chunks = row_ * per_row;
    const int64_t threads = k_.SplitThreads();
    const int64_t per_chunk16 = 16 / bytes_;
    const int64_t atom_cols = kRowBytes / bytes_;  // 64 columns of 16-bit elements
    Var c("c");
    Expr chunk = split_tx_ + c * threads;
    Expr k = chunk / per_row;
    Expr n = chunk % per_row * lanes;
    Expr in_atom = n % atom_cols;
    Expr swizzled = Xor3(in_atom / per_chunk16, k % 8) * per_chunk16 + in_atom % per_chunk16;
    Expr at = base + n / atom_cols * (row_ * atom_cols) + k * atom_cols + swizzled;
    GlobalTileSource src = source(k, n);
    return SpreadOverThreads(c, chunk, chunks, threads,
                             CopyChunk(dst, at, src, lanes, k_.copy >= 4), k_.copy >= 4);
  }

  int64_t Lanes() const { return std::max<int64_t>(1, k_.copy / bytes_); }

  // Copies `rows` rows of 128 bytes of K into `dst` at `base`, `copy` bytes at a time spread
  // over the block's threads, each chunk to its swizzled place: 16-byte chunk c of row r at
  // c ^ (r % 8).
  template <typename SourceFn>
  Stmt CopyTile(const ir::Buffer& dst, const Expr& base, int64_t rows, SourceFn source) const {
    const int64_t lanes = Lanes();
    const int64_t per_row = row_ / lanes;
    const int64_t chunks = rows * per_row;
    const int64_t threads = k_.SplitThreads();  // the warpgroups of this K range
    const int64_t per_chunk16 = 16 / bytes_;    // elements per 16-byte chunk
    Var c("c");
    Expr chunk = split_tx_ + c * threads;
    Expr row = chunk / per_row;
    Expr col = chunk % per_row * lanes;  // element of K within the row
    Expr swizzled = Xor3(col / per_chunk16, row % 8) * per_chunk16 + col % per_chunk16;
    Expr at = base + row * row_ + swizzled;
    GlobalTileSource src = source(row, col);
    return SpreadOverThreads(c, chunk, chunks, threads,
                             CopyChunk(dst, at, src, lanes, k_.copy >= 4), k_.copy >= 4);
  }

  // This warpgroup's instructions on shared buffer `stage`: one statement per m64 step. Promoted
  // sums (fp8) go through `part`: zeroed, summed into by the step's instructions (waited for at
  // once), added into `acc`.
  Stmt Multiply(const Expr& local_stage, int pending) const {
    std::vector<Stmt> stmts;
    Expr stage = group_k_ * k_.Buffers() + local_stage;
    const int n = static_cast<int>(k_.GroupN());
    for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
      Expr a_index = stage * AStage() + (group_m_ * k_.GroupM() + 64 * mi) * row_;
      Expr b_index = stage * BStage() + group_n_ * k_.GroupN() * row_;
      const int64_t first = mi * n / 2;
      if (!k_.promote) {
        stmts.push_back(ir::WarpGroupMma::Make(w_.dtype(), as_, a_index, bs_, b_index, n, kKSteps,
                                               acc_, first, pending, BAtomStride()));
        continue;
      }
      Var j("j");
      stmts.push_back(
          For::Make(j, first, n / 2, LoopKind::kUnrolled, Store::Make(part_, j, Expr(0.0f))));
      stmts.push_back(ir::WarpGroupMma::Make(w_.dtype(), as_, a_index, bs_, b_index, n, kKSteps,
                                             part_, first, 0, BAtomStride()));
      Var i("i");
      stmts.push_back(
          For::Make(i, first, n / 2, LoopKind::kUnrolled,
                    Store::Make(acc_, i, ir::Load::Make(acc_, i) + ir::Load::Make(part_, i))));
    }
    return Block::Make(std::move(stmts));
  }

  // Each thread's accumulators, two adjacent columns at a time, with the epilogue (or, for a
  // split reduction, into the block's partial tile): thread (warp w, lane l) of a warpgroup
  // holds, for j < n / 2 of m64 step mi, row 64 mi + 16 w + l / 4 + 8 ((j / 2) % 2) and column
  // 8 (j / 4) + 2 (l % 4) + j % 2.
  Stmt StoreAccumulators() const {
    if (k_.stage_c == 1) {
      return Block::Make({StageWrites(), StageCopyOut()});
    }
    return split_.Active() ? WriteAccumulators(v_.bx, bz_) : WriteAccumulators();
  }

  // Each thread's accumulators (as StoreAccumulators describes) through the epilogue into C,
  // or, with `park_tile` defined, into partial tile `part` of tile `park_tile` of the split's
  // workspace.
  Stmt WriteAccumulators(const Expr& park_tile = Expr(), const Expr& part = Expr()) const {
    const MmaEpilogue epilogue = Epilogue();
    Expr warp = tx_ % 128 / 32;
    Expr local_row0 = group_m_ * k_.GroupM() + warp * 16 + lane_ / 4;
    Expr local_col0 = group_n_ * k_.GroupN() + lane_ % 4 * 2;
    Expr row0 = tile_m_ * k_.bm + local_row0;
    Expr col0 = tile_n_ * k_.bn + local_col0;
    const bool pairs = g_.n % 2 == 0;
    const int64_t n = k_.GroupN();
    std::vector<Stmt> stmts;
    for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
      for (int64_t j = 0; j < n / 2; j += 2) {
        const int64_t slot = mi * n / 2 + j;
        const int64_t dm = 64 * mi + 8 * ((j / 2) % 2), dn = 8 * (j / 4);
        if (park_tile.defined()) {  // rows past C's (a skinny M's) are never read: not parked
          Stmt park = split_.Park(park_tile, part, local_row0 + dm, local_col0 + dn,
                                  ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2)), 2);
          stmts.push_back(g_.m % k_.bm == 0 ? park : IfThenElse::Make(row0 + dm < g_.m, park));
          continue;
        }
        Expr m = row0 + dm;
        Expr col = col0 + dn;
        if (pairs) {
          Expr value = ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2));
          stmts.push_back(
              IfThenElse::Make(m < g_.m && col < g_.n, epilogue.Store(m, col, value, 2)));
          continue;
        }
        for (int64_t e = 0; e < 2; ++e) {
          Expr value = ir::Load::Make(acc_, Expr(slot + e));
          stmts.push_back(
              IfThenElse::Make(m < g_.m && col + e < g_.n, epilogue.Store(m, col + e, value, 1)));
        }
      }
    }
    return Block::Make(std::move(stmts));
  }

  // stage_c = 1: the epilogue's values into the block's output tile in shared memory (rows of
  // StagedRow() elements; StageWrites), a barrier, then the tile out to C in 16-byte chunks,
  // consecutive threads along a row (C's rows are whole chunks: SixteenByteRows; StageCopyOut).
  Stmt StageWrites() const {
    const MmaEpilogue epilogue = Epilogue();
    Expr warp = tx_ % 128 / 32;
    Expr row0 = group_m_ * k_.GroupM() + warp * 16 + lane_ / 4;
    Expr col0 = group_n_ * k_.GroupN() + lane_ % 4 * 2;
    const int64_t n = k_.GroupN();
    // Columns past C's (whose values are never copied out) read the bias of its last pair.
    auto bias_col = [&](const Expr& col) {
      return ir::Min::Make(tile_n_ * k_.bn + col, Expr(g_.n - 2));
    };
    std::vector<Stmt> stmts;
    for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
      for (int64_t j = 0; j < n / 2; j += 2) {
        const int64_t slot = mi * n / 2 + j;
        Expr row = row0 + (64 * mi + 8 * ((j / 2) % 2));
        Expr col = col0 + 8 * (j / 4);
        Expr value = ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2));
        stmts.push_back(Store::Make(cs_, ir::Ramp::Make(row * k_.StagedRow() + col, 1, 2),
                                    epilogue.Value(bias_col(col), value, 2)));
      }
    }
    return Block::Make(std::move(stmts));
  }

  // Every thread of the block (the producer's too) copies the staged tile out.
  Stmt StageCopyOut() const {
    std::vector<Stmt> stmts = {ir::Barrier::Make()};
    const int64_t lanes = 16 / k_.out_bytes;
    const int64_t per_row = k_.bn / lanes;
    const int64_t chunks = k_.bm * per_row;
    Var c("c_out");
    Expr chunk = tx_ + c * k_.Threads();
    Expr r = chunk / per_row;
    Expr q = chunk % per_row * lanes;
    Expr m = tile_m_ * k_.bm + r;
    Expr col = tile_n_ * k_.bn + q;
    Stmt copy = IfThenElse::Make(
        m < g_.m && col < g_.n,
        Store::Make(p_.c, ir::Ramp::Make(m * g_.n + col, 1, static_cast<int>(lanes)),
                    ir::Load::Make(
                        cs_, ir::Ramp::Make(r * k_.StagedRow() + q, 1, static_cast<int>(lanes)))));
    stmts.push_back(SpreadOverThreads(c, chunk, chunks, k_.Threads(), std::move(copy), true));
    return Block::Make(std::move(stmts));
  }

  const Workload& w_;
  const ImplicitGemm& g_;
  WgmmaKnobs k_;
  bool nt_;
  int64_t bytes_, row_;
  GemmParams p_;
  ir::Buffer as_, bs_, acc_, part_, partial_, cs_, bars_;
  std::optional<StreamKPartition> sk_;
  SplitReduction split_;
  StreamKVars skv_;
  Var tx_{"tx"}, lane_{"lane"}, group_m_{"group_m"}, group_n_{"group_n"};
  Var group_k_{"group_k"}, split_tx_{"split_tx"};
  Var range_steps_{"range_steps"};
  GemmBlockVars v_;
  const Var &bz_ = v_.split, &tile_m_ = v_.tile_m, &tile_n_ = v_.tile_n, &step_count_ = v_.steps;
};

}  // namespace

ir::LoweredFunc BuildWgmmaKernel(const ImplicitGemm& g, const WgmmaKnobs& k,
                                 std::string_view func_name) {
  return WgmmaKernel(g, k).Build(func_name);
}

}  // namespace tune
