#include "codegen/templates/tma_pipeline.h"

#include <vector>

namespace tune {

using ir::Expr;
using ir::MBarrierOp;
using ir::MBarrierOpKind;
using ir::Stmt;
using ir::Var;

int64_t TmaPipeline::StageBytes() const { return a_map.BoxBytes() + b_boxes * b_map.BoxBytes(); }

Stmt TmaPipeline::Init() const {
  std::vector<Stmt> stmts;
  for (int64_t s = 0; s < stages; ++s) {
    stmts.push_back(MBarrierOp::Make(MBarrierOpKind::kInit, barriers, Expr(s), Expr(1)));
    stmts.push_back(MBarrierOp::Make(MBarrierOpKind::kInit, barriers, Expr(stages + s),
                                     Expr(consumer_threads)));
  }
  return ir::Block::Make(std::move(stmts));
}

Stmt TmaPipeline::Producer() const {
  Var t("t_load");
  Expr s = t % stages;
  Expr k = (first_step + t) * k_per_step;
  std::vector<Stmt> body = {
      MBarrierOp::Make(MBarrierOpKind::kWait, barriers, stages + s, (t / stages + 1) % 2),
      MBarrierOp::Make(MBarrierOpKind::kArriveExpectTx, barriers, s, Expr(StageBytes())),
      ir::TensorCopy::Make(a_map, {k, a_row}, a_smem, s * a_stage, barriers, s),
  };
  for (int64_t box = 0; box < b_boxes; ++box) {
    // K-major B: [n rows][128 bytes of K] at (k, n); N-major: [K rows][64 columns] at (n, k).
    std::vector<Expr> at =
        b_k_major ? std::vector<Expr>{k, b_col} : std::vector<Expr>{b_col + box * b_map.box[0], k};
    body.push_back(ir::TensorCopy::Make(b_map, std::move(at), b_smem,
                                        s * b_stage + box * b_box_stride, barriers, s));
  }
  return ir::For::Make(t, 0, steps, ir::LoopKind::kSerial, ir::Block::Make(std::move(body)));
}

Stmt TmaPipeline::Consumer(const std::function<Stmt(const Expr&, int)>& multiply) const {
  auto step = [&](const Expr& t, int pending) {
    Expr s = t % stages;
    return ir::Block::Make({
        MBarrierOp::Make(MBarrierOpKind::kWait, barriers, s, t / stages % 2),
        multiply(s, pending),
        // Step t - 1's instructions are complete: its stage may be refilled.
        ir::IfThenElse::Make(t > 0, MBarrierOp::Make(MBarrierOpKind::kArrive, barriers,
                                                     stages + (t + stages - 1) % stages)),
    });
  };
  Var t("t_mma");
  return ir::Block::Make({
      ir::For::Make(t, 0, steps - 1, ir::LoopKind::kSerial, step(t, 1)),
      step(steps - 1, 0),
  });
}

}  // namespace tune
