// What the tensor-core GEMM templates (gemm.cuda.mma, gemm.cuda.wgmma) share around their
// accumulators: the clamped, validity-guarded reads of global tiles their copies issue, and the
// epilogue that stores an accumulator pair (fp8 scales, bias, ReLU, rounding to the output type,
// or an atomic add for a split reduction).
#pragma once

#include <cstdint>

#include "codegen/ir/ir.h"
#include "common/workload.h"

namespace tune {

/// Element (row, col) of a row-major [rows][cols] global operand, clamped in range so that a
/// copy of `lanes` elements from it stays inside, and whether those elements lie inside (cols is
/// a multiple of `lanes`).
struct GlobalTileSource {
  ir::Buffer buffer;
  ir::Expr index, valid;
};
GlobalTileSource ClampedSource(const ir::Buffer& buffer, const ir::Expr& row, int64_t rows,
                               const ir::Expr& col, int64_t cols, int64_t lanes);

/// The epilogue of a GEMM kernel with parameters named as Workload::Arguments() does (A, B,
/// [bias], C, [scale_A, scale_B]).
class MmaEpilogue {
 public:
  /// `split` is the grid-z variable of a reduction split over `gridk` > 1 blocks (undefined for
  /// gridk 1): every split adds into C, and the bias is the first one's.
  MmaEpilogue(const Workload& workload, ir::Buffer c, ir::Buffer bias, ir::Buffer scale_a,
              ir::Buffer scale_b, ir::Var split, int64_t gridk);

  /// Stores `value` (`lanes` accumulators of row m, columns n .. n + lanes - 1) into C.
  ir::Stmt Store(const ir::Expr& m, const ir::Expr& n, ir::Expr value, int lanes) const;

 private:
  const Workload& w_;
  ir::Buffer c_, bias_, scale_a_, scale_b_;
  ir::Var split_;
  int64_t gridk_;
};

}  // namespace tune
