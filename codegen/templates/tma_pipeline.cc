#include "codegen/templates/tma_pipeline.h"

#include <vector>

namespace tune {

using ir::Expr;
using ir::MBarrierOp;
using ir::MBarrierOpKind;
using ir::Stmt;
using ir::Var;

int64_t TmaPipeline::StageBytes() const {
  return a_map.BoxBytes() + cluster * b_boxes * b_map.BoxBytes();
}

Stmt TmaPipeline::Init() const {
  std::vector<Stmt> stmts;
  for (int64_t s = 0; s < stages; ++s) {
    stmts.push_back(MBarrierOp::Make(MBarrierOpKind::kInit, barriers, Expr(s), Expr(1)));
    stmts.push_back(MBarrierOp::Make(MBarrierOpKind::kInit, barriers, Expr(stages + s),
                                     Expr(consumer_threads / 128 * cluster)));
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
  ABox a = a_at ? a_at(tiles.k, tiles.a_row) : ABox{{tiles.k, tiles.a_row}, {}};
  body.push_back(ir::TensorCopy::Make(a_map, std::move(a.coords), a_smem, s * a_stage, barriers, s,
                                      0, std::move(a.offsets)));
  if (cluster > 1) {  // this block's share of B's rows, to every block of the cluster
    const int64_t rows = b_map.box[1];
    body.push_back(ir::TensorCopy::Make(b_map, {tiles.k, tiles.b_col + rank * rows}, b_smem,
                                        s * b_stage + rank * rows * b_map.box[0], barriers, s,
                                        (int64_t{1} << cluster) - 1));
  }
  for (int64_t box = 0; box < b_boxes && cluster == 1; ++box) {
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
  std::vector<Stmt> arrivals;  // at the stage's empty barrier in every block of the cluster
  const int64_t spacing = 128 / cluster;
  for (int64_t r = 0; r < cluster; ++r) {
    Stmt arrive = cluster == 1 ? MBarrierOp::Make(MBarrierOpKind::kArrive, barriers, stages + stage)
                               : MBarrierOp::Make(MBarrierOpKind::kArrive, barriers, stages + stage,
                                                  Expr(), Expr(r));
    arrivals.push_back(ir::IfThenElse::Make(thread % 128 == r * spacing, std::move(arrive)));
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
