#include "codegen/templates/tensor_core_gemm.h"

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

ir::Stmt CopyChunk(const ir::Buffer& dst, const Expr& at, const GlobalTileSource& src,
                   int64_t lanes, bool async) {
  if (async) {
    return ir::Store::MakeAsyncCopy(dst, at, src.buffer, src.index, static_cast<int>(lanes),
                                    src.valid);
  }
  return ir::Store::Make(
      dst, at,
      ir::Cast::Make(dst.element_type(), ir::LoadAsOrZero(src.buffer, src.index, 1, src.valid)));
}

ir::Stmt SpreadOverThreads(const ir::Var& c, const Expr& chunk, int64_t chunks, int64_t threads,
                           ir::Stmt copy) {
  if (chunks % threads != 0) {
    copy = ir::IfThenElse::Make(chunk < chunks, std::move(copy));
  }
  return ir::For::Make(c, 0, (chunks + threads - 1) / threads, ir::LoopKind::kUnrolled,
                       std::move(copy));
}

ir::Stmt RasterizedGemmBlocks(int64_t tiles_m, int64_t tiles_n, int64_t raster, int64_t gridk,
                              int64_t total_steps, const GemmBlockVars& v, ir::Stmt inner) {
  const int64_t group = raster * tiles_n;
  Expr first_m = v.bx / group * raster;
  Expr rows = ir::Min::Make(tiles_m - first_m, Expr(raster));
  Expr local = v.bx % group;
  const int64_t per_split = (total_steps + gridk - 1) / gridk;
  ir::Stmt body = ir::LetStmt::Make(
      v.steps, ir::Min::Make(Expr(per_split), Expr(total_steps) - v.split * per_split),
      std::move(inner));
  body = ir::LetStmt::Make(v.tile_n, local / rows, std::move(body));
  body = ir::LetStmt::Make(v.tile_m, first_m + local % rows, std::move(body));
  if (gridk > 1) {
    body = ir::For::Make(v.split, 0, gridk, ir::LoopKind::kGpuBlock, std::move(body), 2);
  } else {
    body = ir::LetStmt::Make(v.split, Expr(int64_t{0}), std::move(body));
  }
  return ir::For::Make(v.bx, 0, tiles_m * tiles_n, ir::LoopKind::kGpuBlock, std::move(body), 0);
}

GemmParams::GemmParams(const Workload& w)
    : workload(w),
      a("A", ir::MemoryScope::kGlobal, ir::Type::Of(w.input_type())),
      b("B", ir::MemoryScope::kGlobal, ir::Type::Of(w.weight_type())),
      bias("bias", ir::MemoryScope::kGlobal, ir::Type::Of(w.out_type())),
      c("C", ir::MemoryScope::kGlobal, ir::Type::Of(w.out_type())) {}

std::vector<ir::Buffer> GemmParams::InOrder() const {
  std::vector<ir::Buffer> params = {a, b};
  if (EpilogueHasBias(workload.epilogue())) {
    params.push_back(bias);
  }
  params.push_back(c);
  if (workload.has_scales()) {
    params.push_back(scale_a);
    params.push_back(scale_b);
  }
  return params;
}

std::vector<int64_t> FloatOutputGridSplits(const Workload& workload) {
  std::vector<int64_t> gridks = {1};
  if (!EpilogueHasRelu(workload.epilogue()) && workload.out_type() == ElementType::kF32) {
    for (int64_t v : {2, 3, 4, 6, 8, 12, 16}) {
      if (v <= workload.gemm().k / 256) {
        gridks.push_back(v);
      }
    }
  }
  return gridks;
}

double TensorCoreTolerance(const Workload& workload, const Config&) {
  return IsFp8Dtype(workload.dtype()) ? 4 : 1;
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
