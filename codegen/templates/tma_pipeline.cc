#include "codegen/templates/tma_pipeline.h"

#include <vector>

namespace tune {

using ir::Expr;
using ir::MBarrierOp;
using ir::MBarrierOpKind;
using ir::Stmt;
using ir::Var;

int64_t TmaPipeline::StageBytes() const {
  return cluster_n * a_map.BoxBytes() + cluster_m * b_boxes * b_map.BoxBytes();
}

namespace {

// A mask of the cluster's ranks: bit r for each rank r in [first, first + count * stride) by
// stride.
int64_t Ranks(int64_t first, int64_t count, int64_t stride) {
  int64_t mask = 0;
  for (int64_t i = 0; i < count; ++i) {
    mask |= int64_t{1} << (first + i * stride);
  }
  return mask;
}

}  // namespace

Stmt TmaPipeline::Init() const {
  std::vector<Stmt> stmts;
  for (int64_t s = 0; s < stages; ++s) {
    stmts.push_back(MBarrierOp::Make(MBarrierOpKind::kInit, barriers, Expr(s), Expr(1)));
    stmts.push_back(MBarrierOp::Make(MBarrierOpKind::kInit, barriers, Expr(stages + s),
                                     Expr(consumer_threads / 128 * Writers())));
  }
  return ir::Block::Make(std::move(stmts));
}

Stmt TmaPipeline::Producer() const {
  return ProducerRange(index_base, index_base + steps, [&](const Expr& g) {
    return StepTiles{(first_step + (g - index_base)) * k_per_step, a_row, b_col};
  });
}

Stmt TmaPipeline::ProducerRange(const Expr& from, const Expr& to,
                                const std::function<StepTiles(const Expr&)>& at) const {
  Var g("t_load");
  Expr s = g % stages;
  const StepTiles tiles = at(g);
  std::vector<Stmt> body = {
      MBarrierOp::Make(MBarrierOpKind::kWait, barriers, stages + s, (g / stages + 1) % 2),
      MBarrierOp::Make(MBarrierOpKind::kArriveExpectTx, barriers, s, Expr(StageBytes())),
  };
  // The block's row and column in the cluster; the copies of a shared tile go to every block of
  // that row (A) or column (B), whose mask is a constant per row or column.
  const Expr row_rank = rank % cluster_m, col_rank = rank / cluster_m;
  auto per_rank = [](int64_t ranks, const Expr& of, const std::function<Stmt(int64_t)>& copy) {
    if (ranks == 1) {
      return copy(0);
    }
    std::vector<Stmt> cases;
    for (int64_t r = 0; r < ranks; ++r) {
      cases.push_back(ir::IfThenElse::Make(of == r, copy(r)));
    }
    return ir::Block::Make(std::move(cases));
  };
  if (cluster_n > 1) {  // this block's share of A's rows, to every block of its row
    const int64_t rows = a_map.box[1];
    body.push_back(per_rank(cluster_m, row_rank, [&](int64_t r) {
      ABox a = a_at ? a_at(tiles.k, tiles.a_row + col_rank * rows)
                    : ABox{{tiles.k, tiles.a_row + col_rank * rows}, {}};
      return ir::TensorCopy::Make(a_map, std::move(a.coords), a_smem,
                                  s * a_stage + col_rank * rows * a_map.box[0], barriers, s,
                                  Ranks(r, cluster_n, cluster_m), std::move(a.offsets));
    }));
  } else {
    ABox a = a_at ? a_at(tiles.k, tiles.a_row) : ABox{{tiles.k, tiles.a_row}, {}};
    body.push_back(ir::TensorCopy::Make(a_map, std::move(a.coords), a_smem, s * a_stage, barriers,
                                        s, 0, std::move(a.offsets)));
  }
  if (cluster_m > 1) {  // this block's share of B's rows, to every block of its column
    const int64_t rows = b_map.box[1];
    body.push_back(per_rank(cluster_n, col_rank, [&](int64_t c) {
      return ir::TensorCopy::Make(b_map, {tiles.k, tiles.b_col + row_rank * rows}, b_smem,
                                  s * b_stage + row_rank * rows * b_map.box[0], barriers, s,
                                  Ranks(c * cluster_m, cluster_m, 1));
    }));
  }
  for (int64_t box = 0; box < b_boxes && cluster_m == 1; ++box) {
    // K-major B: [n rows][128 bytes of K] at (k, n); N-major: [K rows][64 columns] at (n, k).
    std::vector<Expr> coords = b_k_major
                                   ? std::vector<Expr>{tiles.k, tiles.b_col}
                                   : std::vector<Expr>{tiles.b_col + box * b_map.box[0], tiles.k};
    body.push_back(ir::TensorCopy::Make(b_map, std::move(coords), b_smem,
                                        s * b_stage + box * b_box_stride, barriers, s));
  }
  return ir::For::Make(g, from, to - from, ir::LoopKind::kSerial, ir::Block::Make(std::move(body)));
}

Stmt TmaPipeline::Release(const Expr& stage) const {
  if (ClusterBlocks() == 1) {
    return ir::IfThenElse::Make(
        thread % 128 == 0, MBarrierOp::Make(MBarrierOpKind::kArrive, barriers, stages + stage));
  }
  // The blocks of this one's row and column: itself, the rest of its row, the rest of its column.
  const Expr row_rank = rank % cluster_m, col_rank = rank / cluster_m;
  std::vector<Expr> peers = {rank};
  for (int64_t d = 1; d < cluster_n; ++d) {
    peers.push_back(row_rank + (col_rank + d) % cluster_n * cluster_m);
  }
  for (int64_t d = 1; d < cluster_m; ++d) {
    peers.push_back((row_rank + d) % cluster_m + col_rank * cluster_m);
  }
  // One arrival per thread, the threads spread over the warpgroup's warps.
  int64_t spacing = 128;
  while (spacing * static_cast<int64_t>(peers.size()) > 128) {
    spacing /= 2;
  }
  std::vector<Stmt> arrivals;
  for (size_t p = 0; p < peers.size(); ++p) {
    arrivals.push_back(ir::IfThenElse::Make(
        thread % 128 == static_cast<int64_t>(p) * spacing,
        MBarrierOp::Make(MBarrierOpKind::kArrive, barriers, stages + stage, Expr(), peers[p])));
  }
  return ir::Block::Make(std::move(arrivals));
}

Stmt TmaPipeline::Consumer(const std::function<Stmt(const Expr&, int, int)>& multiply) const {
  auto step = [&](const Expr& t, int pending, int parity) {
    Expr g = index_base + t;
    Expr s = g % stages;
    return ir::Block::Make({
        MBarrierOp::Make(MBarrierOpKind::kWait, barriers, s, g / stages % 2),
        multiply(s, pending, parity),
        // Step t - 1's instructions are complete: its stage may be refilled.
        ir::IfThenElse::Make(t > 0, Release((g + stages - 1) % stages)),
    });
  };
  std::vector<Stmt> stmts;
  if (!in_pairs) {
    Var t("t_mma");
    stmts.push_back(ir::For::Make(t, 0, steps - 1, ir::LoopKind::kSerial, step(t, 1, 0)));
    stmts.push_back(step(steps - 1, 0, 0));
  } else {
    // Steps 2p and 2p + 1 in one iteration, so that each step's parity is fixed in its code;
    // then the last step, after one more of parity 0 where the steps are even.
    Var p("p_mma");
    stmts.push_back(ir::For::Make(p, 0, (steps - 1) / 2, ir::LoopKind::kSerial,
                                  ir::Block::Make({step(p * 2, 1, 0), step(p * 2 + 1, 1, 1)})));
    stmts.push_back(ir::IfThenElse::Make(
        steps % 2 == 0, ir::Block::Make({step(steps - 2, 1, 0), step(steps - 1, 0, 1)}),
        step(steps - 1, 0, 0)));
  }
  if (release_last) {  // every instruction is complete (pending 0): the last stage too
    stmts.push_back(Release((index_base + steps - 1) % stages));
  }
  return ir::Block::Make(std::move(stmts));
}

}  // namespace tune
