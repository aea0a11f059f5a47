#include "codegen/templates/wgmma_kernel.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/templates/conv_window.h"
#include "codegen/templates/wgmma_kernel_builder.h"

namespace tune {

bool WgmmaPromotes(Dtype dtype) { return IsFp8Dtype(dtype); }

WgmmaCostShape::WgmmaCostShape(const ImplicitGemm& g)
    : dtype(g.workload.dtype()),
      out_bytes(ElementBytes(g.workload.out_type())),
      k_steps(WgmmaKSteps(g)) {
  const std::optional<ConvWindow> window = ConvWindow::Of(g);
  staging_bytes = window ? window->elements * ElementBytes(g.workload.input_type()) : 0;
  dense_a = ResidentDenseA(g);
}

int64_t WgmmaKSteps(const ImplicitGemm& g) {
  return GpuCeilDiv(g.k * ElementBytes(g.workload.input_type()), kWgmmaRowBytes);
}

bool ResidentDenseA(const ImplicitGemm& g) {
  constexpr int64_t kMostSteps = 2;
  constexpr int64_t kMostColumns = 256;  // one wgmma n
  return g.workload.op() == OpKind::kConv2d && g.DenseA() && g.CopyWidths().front() >= 4 &&
         WgmmaKSteps(g) <= kMostSteps && g.n <= kMostColumns;
}

bool ResidentPipelineApplies(const ImplicitGemm& g) {
  return ConvWindow::Of(g).has_value() || ResidentDenseA(g);
}

namespace {

// Knob resident, offered only where the pipeline applies (0 elsewhere).
int64_t ResidentKnob(const Config& c) {
  const auto it = c.find("resident");
  return it == c.end() ? 0 : it->second;
}

}  // namespace

WgmmaKnobs WgmmaKnobsOf(const Config& c, const WgmmaCostShape& shape) {
  return {.bm = KnobValue(c, "bm"),
          .bn = KnobValue(c, "bn"),
          .wg_m = KnobValue(c, "wg_m"),
          .wg_n = KnobValue(c, "wg_n"),
          .wg_k = KnobValue(c, "wg_k"),
          .stages = KnobValue(c, "stages"),
          .copy = KnobValue(c, "copy"),
          .raster = KnobValue(c, "raster"),
          .gridk = KnobValue(c, "gridk"),
          .stage_c = KnobValue(c, "stage_c"),
          .tma = KnobValue(c, "tma"),
          .streamk = KnobValue(c, "streamk"),
          .cluster = KnobValue(c, "cluster"),
          .cluster_n = KnobValue(c, "cluster_n"),
          .blocks = KnobValue(c, "blocks"),
          .persistent = KnobValue(c, "persistent"),
          .promote_steps = KnobValue(c, "promote_steps"),
          .resident = ResidentKnob(c),
          .split_cluster = KnobValue(c, "split_cluster"),
          .promote = WgmmaPromotes(shape.dtype),
          .out_bytes = shape.out_bytes,
          .k_steps = shape.k_steps,
          .staging_bytes = ResidentKnob(c) == 1 ? shape.staging_bytes : 0,
          .double_a = ResidentKnob(c) == 1 && shape.dense_a};
}

namespace wgmma_detail {

std::optional<StreamKPartition> StreamKOf(const ImplicitGemm& g, const WgmmaKnobs& k) {
  if (k.streamk == 0) {
    return std::nullopt;
  }
  return StreamKPartition(GpuCeilDiv(g.m, k.bm) * GpuCeilDiv(g.n, k.bn), k.k_steps,
                          k.StreamKBlocks());
}

ir::LoweredFunc WgmmaKernel::Build(std::string_view name) const {
  ir::LoweredFunc func;
  func.name = std::string(name);
  func.params = p_.InOrder();
  func.body = Body();
  func.cluster = {SplitInCluster() ? k_.gridk : k_.ClusterBlocks(), 1, 1};
  func.min_blocks_per_multiprocessor = k_.blocks;
  return func;
}

Stmt WgmmaKernel::Body() const {
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
  if (win_) {
    threads = ir::Allocate::Make(staging_, win_->elements, threads);
  }
  threads = split_.AllocateShared(threads);
  Stmt body =
      ir::Allocate::Make(as_, k_.wg_k * k_.ABuffers() * AStage(),
                         ir::Allocate::Make(bs_, k_.wg_k * k_.Buffers() * BStage(), threads));
  if (sk_) {  // the persistent grid; each thread walks its block's segments (StreamKSegment)
    return split_.AllocateWorkspace(
        For::Make(v_.bx, 0, sk_->blocks(), LoopKind::kGpuBlock, std::move(body), 0));
  }
  if (k_.persistent == 1 || k_.resident == 1) {  // each block takes tiles bx, bx + grid, ...
    return For::Make(v_.bx, 0, PersistentBlocks(), LoopKind::kGpuBlock, std::move(body), 0);
  }
  // The steps of each of the wg_k ranges (the last range's past the block's are zeros).
  body = LetStmt::Make(range_steps_, (step_count_ + (k_.wg_k - 1)) / k_.wg_k, body);
  return split_.AllocateWorkspace(
      RasterizedGemmBlocks(TilesM(), TilesN(), k_.raster, k_.gridk, Steps(), v_, body,
                           {k_.cluster, k_.cluster_n}, SplitInCluster()));
}

Stmt WgmmaKernel::StoreOrParkStreamKTile() const {
  return IfThenElse::Make(skv_.parts == 1, WriteAccumulators(),
                          WriteAccumulators(skv_.tile, skv_.part));
}

Stmt WgmmaKernel::FinishStreamKSegment(std::vector<Stmt> stmts) const {
  stmts.push_back(
      split_.Finish(skv_.tile, skv_.parts, tile_m_, tile_n_, tx_, k_.Threads(), Epilogue()));
  return BindRasterTile(skv_.tile, TilesM(), TilesN(), k_.raster, tile_m_, tile_n_,
                        Block::Make(std::move(stmts)));
}

Stmt WgmmaKernel::FinishSplit(bool consumers_only) const {
  if (!split_.Active()) {
    return Stmt();
  }
  const Var& tx = consumers_only ? split_tx_ : tx_;
  const int64_t threads = consumers_only ? k_.SplitThreads() : k_.Threads();
  if (SplitInCluster()) {
    return split_.FinishInCluster(v_.bx, bz_, tile_m_, tile_n_, tx, threads, Epilogue());
  }
  return split_.Finish(v_.bx, tile_m_, tile_n_, tx, threads, Epilogue(),
                       consumers_only ? kConsumersBarrier : 0);
}

MmaEpilogue WgmmaKernel::Epilogue() const {
  return MmaEpilogue(w_, g_.n, p_.c, p_.bias, p_.scale_a, p_.scale_b);
}

Stmt WgmmaKernel::ZeroAccumulators() const {
  Var i("i");
  return For::Make(i, 0, k_.Accumulators(), LoopKind::kUnrolled,
                   Store::Make(acc_, i, ir::Cast::Make(acc_.element_type(), Expr(0))));
}

Stmt WgmmaKernel::ThreadBody() const {
  if (k_.tma == 1 && sk_) {
    return Lets(Block::Make(TmaStreamKStmts()));
  }
  if (k_.persistent == 1) {
    return Lets(Block::Make(TmaPersistentStmts()));
  }
  if (k_.resident == 1) {
    return Lets(Block::Make(ResidentStmts()));
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

Stmt WgmmaKernel::StreamKSegment() const {
  std::vector<Stmt> stmts = {ir::Barrier::Make()};
  for (Stmt& stmt : MainLoop()) {
    stmts.push_back(std::move(stmt));
  }
  stmts.push_back(StoreOrParkStreamKTile());
  Stmt segment = FinishStreamKSegment(std::move(stmts));
  return LetStmt::Make(step_count_, skv_.steps,
                       LetStmt::Make(range_steps_, skv_.steps, std::move(segment)));
}

std::vector<Stmt> WgmmaKernel::MainLoop() const {
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

Stmt WgmmaKernel::Lets(Stmt stmts) const {
  Expr consumer_tx = k_.tma == 1 ? tx_ - 128 : Expr(tx_);
  Expr group = consumer_tx / 128 % (k_.wg_m * k_.wg_n);
  Stmt body = LetStmt::Make(
      group_m_, group / k_.wg_n,
      LetStmt::Make(group_n_, group % k_.wg_n, LetStmt::Make(lane_, tx_ % 32, std::move(stmts))));
  body = LetStmt::Make(group_k_, consumer_tx / k_.SplitThreads(),
                       LetStmt::Make(split_tx_, consumer_tx % k_.SplitThreads(), std::move(body)));
  if (k_.promote) {
    body = ir::Allocate::Make(part_, k_.Accumulators(), std::move(body));
  }
  return ir::Allocate::Make(acc_, k_.Accumulators(), std::move(body));
}

Stmt WgmmaKernel::Multiply(const Expr& local_stage, int pending, int parity,
                           const Expr& b_stage) const {
  std::vector<Stmt> stmts;
  Expr stage = group_k_ * k_.Buffers() + local_stage;
  const int n = static_cast<int>(k_.GroupN());
  // With promote_steps 2, an even step starts part's sums and an odd one ends them.
  const bool starts = k_.promote_steps == 1 || parity == 0;
  const bool promotes = k_.promote_steps == 1 || parity == 1 || pending == 0;
  for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
    Expr a_index = stage * AStage() + (group_m_ * k_.GroupM() + 64 * mi) * row_;
    Expr b_index = (b_stage.defined() ? b_stage : stage) * BStage() + group_n_ * k_.GroupN() * row_;
    const int64_t first = mi * n / 2;
    if (!k_.promote) {
      stmts.push_back(ir::WarpGroupMma::Make(w_.dtype(), as_, a_index, bs_, b_index, n, kKSteps,
                                             acc_, first, pending, BAtomStride()));
      continue;
    }
    // The first step's sums replace part's (scale-d 0 on its first instruction): no zeroing.
    stmts.push_back(ir::WarpGroupMma::Make(w_.dtype(), as_, a_index, bs_, b_index, n, kKSteps,
                                           part_, first, promotes ? 0 : pending, BAtomStride(),
                                           /*overwrite=*/starts));
    if (promotes) {
      Var i("i");
      stmts.push_back(
          For::Make(i, first, n / 2, LoopKind::kUnrolled,
                    Store::Make(acc_, i, ir::Load::Make(acc_, i) + ir::Load::Make(part_, i))));
    }
  }
  return Block::Make(std::move(stmts));
}

}  // namespace wgmma_detail

ir::LoweredFunc BuildWgmmaKernel(const ImplicitGemm& g, const WgmmaKnobs& k,
                                 std::string_view func_name) {
  return wgmma_detail::WgmmaKernel(g, k).Build(func_name);
}

}  // namespace tune
