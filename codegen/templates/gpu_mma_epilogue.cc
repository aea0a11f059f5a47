#include "codegen/templates/gpu_mma_epilogue.h"

#include <utility>

#include "codegen/templates/template_util.h"

namespace tune {

using ir::Expr;

GlobalTileSource ClampedSource(const ir::Buffer& buffer, const Expr& row, int64_t rows,
                               const Expr& col, int64_t cols, int64_t lanes) {
  Expr r = ir::Min::Make(row, Expr(rows - 1));
  Expr c = ir::Min::Make(col, Expr(cols - lanes));
  return {buffer, r * cols + c, row < rows && col < cols};
}

MmaEpilogue::MmaEpilogue(const Workload& workload, ir::Buffer c, ir::Buffer bias,
                         ir::Buffer scale_a, ir::Buffer scale_b, ir::Var split, int64_t gridk)
    : w_(workload),
      c_(std::move(c)),
      bias_(std::move(bias)),
      scale_a_(std::move(scale_a)),
      scale_b_(std::move(scale_b)),
      split_(std::move(split)),
      gridk_(gridk) {}

ir::Stmt MmaEpilogue::Store(const Expr& m, const Expr& n, Expr value, int lanes) const {
  // Integer accumulators stay integers for an integer output (the raw sums, wrapping) and are
  // converted for a float one (dequantised by the scales).
  const bool integer_out = c_.element_type().is_int();
  if (value.type().is_int() && !integer_out) {
    value = ir::Cast::Make(ir::Type::Float32().WithLanes(lanes), value);
  }
  if (w_.has_scales()) {
    value = value * (ir::Load::Make(scale_a_, Expr(int64_t{0})) *
                     ir::Load::Make(scale_b_, Expr(int64_t{0})));
  }
  Expr bias;
  if (EpilogueHasBias(w_.epilogue())) {
    bias = ir::LoadAsOrZero(bias_, n, lanes, Expr());
    if (gridk_ > 1) {  // every split adds into C: the bias is the first split's
      bias = ir::Select::Make(split_ == 0, bias, ir::BroadcastTo(Expr(0.0f), lanes));
    }
  }
  value = ApplyEpilogue(w_.epilogue(), std::move(value), bias);
  Expr index = m * w_.gemm().n + n;
  if (gridk_ > 1) {
    return ir::Store::MakeAtomicAdd(c_, std::move(index), std::move(value));
  }
  const ir::Type out = c_.element_type();
  if (out != value.type().Element()) {
    value = ir::Cast::Make(out.WithLanes(lanes), std::move(value));
  }
  return ir::Store::Make(c_, std::move(index), std::move(value));
}

}  // namespace tune
