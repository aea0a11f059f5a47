// WgmmaKernel's warp-specialised TMA pipeline (tma = 1; wgmma_kernel_builder.h).
#include <algorithm>
#include <vector>

#include "codegen/templates/wgmma_kernel_builder.h"

namespace tune::wgmma_detail {

TmaPipeline WgmmaKernel::Pipeline() const {
  TmaPipeline p;
  p.a_smem = as_;
  p.b_smem = bs_;
  p.barriers = bars_;
  // A, or a convolution's windows through an im2col map; in a cluster, each block copies
  // 1 / cluster_n of A's rows and 1 / cluster_m of B's (TmaPipeline).
  p.a_map = g_.AMap(p_.a, ABoxRows() / k_.cluster_n);
  p.a_at = [g = &g_](const Expr& k, const Expr& row) { return g->ABoxAt(k, row); };
  p.cluster_m = k_.cluster;
  p.cluster_n = k_.cluster_n;
  p.rank = v_.bx % k_.ClusterBlocks();
  if (nt_) {
    p.b_map = ir::TensorMap{.buffer = p_.b,
                            .dims = {g_.k, g_.n},
                            .strides = {g_.k},
                            .box = {row_, k_.bn / k_.cluster},
                            .swizzle_bytes = 128};
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
  p.in_pairs = k_.promote_steps == 2;  // Multiply promotes after odd steps
  return p;
}

Stmt WgmmaKernel::ZeroPastABox() const {
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

std::vector<Stmt> WgmmaKernel::TmaThreadStmts() const {
  const TmaPipeline pipeline = Pipeline();
  // The register split (setmaxnreg) gives the consumers what the producer does not need. A grid
  // split's finish runs in the consumers' branch too, so that ptxas allocates it within their
  // budget (after the branches join it allocated within the producer's: 256 x 128 tiles split
  // three ways spilled 1.3 KB); the producer's warpgroup passes the one cluster barrier of a
  // finish in a cluster in its own branch.
  Stmt consumer = Block::Make({
      ir::SetMaxRegisters::Make(k_.ConsumerRegisters(), true),
      ZeroAccumulators(),
      pipeline.Consumer([this](const Expr& stage, int pending, int parity) {
        return Multiply(stage, pending, parity);
      }),
      k_.stage_c == 1 ? StageWrites() : StoreAccumulators(),
      FinishSplit(/*consumers_only=*/true),
  });
  Stmt producer = Block::Make({
      ir::SetMaxRegisters::Make(WgmmaKnobs::kProducerRegisters, false),
      IfThenElse::Make(tx_ == 0, pipeline.Producer()),
      SplitInCluster() ? ir::Barrier::MakeCluster() : Stmt(),
  });
  // In a cluster, the peers' barriers are initialised before any copy or arrival reaches
  // them, and no block ends while a peer may still reach its shared memory (TmaPipeline).
  auto barrier = [&] {
    return k_.ClusterBlocks() > 1 ? ir::Barrier::MakeCluster() : ir::Barrier::Make();
  };
  std::vector<Stmt> stmts = {
      IfThenElse::Make(tx_ == 0, pipeline.Init()),
      ZeroPastABox(),
      barrier(),
      IfThenElse::Make(tx_ < 128, std::move(producer), std::move(consumer)),
  };
  if (k_.stage_c == 1) {
    stmts.push_back(StageCopyOut());
  }
  if (k_.ClusterBlocks() > 1) {
    stmts.push_back(ir::Barrier::MakeCluster());
  }
  return stmts;
}

TmaPipeline::StepTiles WgmmaKernel::StepOfTile(const Expr& tile, const Expr& step) const {
  return {step * row_, RasterTileM(tile, TilesM(), TilesN(), k_.raster) * k_.bm,
          RasterTileN(tile, TilesM(), TilesN(), k_.raster) * k_.bn};
}

std::vector<Stmt> WgmmaKernel::TmaPersistentStmts() const {
  const int64_t c = k_.ClusterBlocks(), units = UnitsM() * UnitsN(), steps = Steps();
  const int64_t clusters = PersistentBlocks() / c;
  // The block's units: q + i clusters for i < count, q its cluster; its tile in each is the one
  // of its rank.
  const TileCluster cluster{k_.cluster, k_.cluster_n};
  Expr q = c == 1 ? Expr(v_.bx) : v_.bx / c, rank = v_.bx % c;
  Expr count = (Expr(units) - q + (clusters - 1)) / clusters;
  auto unit_of = [&](const Expr& i) { return q + i * clusters; };
  auto tile_m = [&](const Expr& unit) {
    return cluster.TileM(RasterTileM(unit, UnitsM(), UnitsN(), k_.raster), rank);
  };
  auto tile_n = [&](const Expr& unit) {
    return cluster.TileN(RasterTileN(unit, UnitsM(), UnitsN(), k_.raster), rank);
  };
  TmaPipeline p = Pipeline();
  p.first_step = Expr(int64_t{0});
  p.steps = Expr(steps);
  auto at = [&](const Expr& g) {
    Expr unit = unit_of(g / steps);
    return TmaPipeline::StepTiles{g % steps * row_, tile_m(unit) * k_.bm, tile_n(unit) * k_.bn};
  };
  Stmt producer = p.ProducerRange(Expr(int64_t{0}), count * steps, at);
  Var i("tile_i");
  TmaPipeline ring = p;
  ring.index_base = i * steps;
  ring.release_last = true;
  Stmt tile = LetStmt::Make(
      tile_m_, tile_m(unit_of(i)),
      LetStmt::Make(tile_n_, tile_n(unit_of(i)),
                    Block::Make({
                        ZeroAccumulators(),
                        ring.Consumer([this](const Expr& stage, int pending, int parity) {
                          return Multiply(stage, pending, parity);
                        }),
                        PersistentStore(),
                    })));
  Stmt consumer = Block::Make({
      ir::SetMaxRegisters::Make(k_.ConsumerRegisters(), true),
      For::Make(i, 0, count, LoopKind::kSerial, std::move(tile)),
  });
  // In a cluster, the peers' barriers are initialised before any copy or arrival reaches
  // them, and no block ends while a peer may still reach its shared memory (TmaPipeline).
  auto barrier = [&] { return c > 1 ? ir::Barrier::MakeCluster() : ir::Barrier::Make(); };
  std::vector<Stmt> stmts = {
      IfThenElse::Make(tx_ == 0, p.Init()),
      ZeroPastABox(),
      barrier(),
      IfThenElse::Make(
          tx_ < 128,
          Block::Make({ir::SetMaxRegisters::Make(WgmmaKnobs::kProducerRegisters, false),
                       IfThenElse::Make(tx_ == 0, std::move(producer))}),
          std::move(consumer)),
  };
  if (c > 1) {
    stmts.push_back(ir::Barrier::MakeCluster());
  }
  return stmts;
}

Stmt WgmmaKernel::PersistentStore() const {
  if (k_.stage_c == 0) {
    return WriteAccumulators();
  }
  auto consumers = [&] { return ir::Barrier::MakeNamed(kConsumersBarrier, k_.SplitThreads()); };
  return Block::Make(
      {consumers(), StageWrites(), StageCopyOut(consumers(), split_tx_, k_.SplitThreads())});
}

std::vector<Stmt> WgmmaKernel::TmaStreamKStmts() const {
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

Stmt WgmmaKernel::TmaStreamKSegment() const {
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
    return StepOfTile(iteration / steps, iteration % steps);
  };
  Stmt consumer = Block::Make({
      ZeroAccumulators(),
      p.Consumer([this](const Expr& stage, int pending, int parity) {
        return Multiply(stage, pending, parity);
      }),
      StoreOrParkStreamKTile(),
  });
  return FinishStreamKSegment({
      IfThenElse::Make(tx_ < 128, IfThenElse::Make(tx_ == 0, p.ProducerRange(from, to, at)),
                       std::move(consumer)),
  });
}

}  // namespace tune::wgmma_detail
