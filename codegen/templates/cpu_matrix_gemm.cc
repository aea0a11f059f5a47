#include "codegen/templates/cpu_matrix_gemm.h"

#include "codegen/templates/template_util.h"

namespace tune {

using ir::Expr;
using ir::For;
using ir::LoopKind;
using ir::Var;

CpuMatrixTypes CpuMatrixTypesOf(const Workload& workload) {
  CpuMatrixTypes t;
  t.dtype = workload.dtype();
  t.a = ir::Type::Of(ActivationType(t.dtype));
  t.b = ir::Type::Of(WeightType(t.dtype));
  t.acc = ir::Type::Of(AccumulatorType(t.dtype));
  t.out = ir::Type::Of(workload.out_type());
  t.group = t.dtype == Dtype::kBf16 ? 2 : 4;
  t.scales = workload.has_scales();
  return t;
}

ir::Stmt PackVnniPanels(const GemmShape& shape, GemmLayout layout, const VnniPanels& panels,
                        const ir::Buffer& b, const ir::Buffer& packed) {
  const int64_t g = panels.group;
  const int64_t w = panels.width;
  Var j("pj"), kg("pkg"), c("pc"), e("pe");
  const Expr n = j * w + c;
  const Expr k = kg * g + e;
  // The padding reads a clamped element (every read stays inside B) and stores zero.
  const Expr nn = ir::Min::Make(n, shape.n - 1);
  const Expr kk = ir::Min::Make(k, shape.k - 1);
  const Expr source = layout == GemmLayout::kNT ? b(nn * shape.k + kk) : b(kk * shape.n + nn);
  const ir::Type compute = b.element_type().ComputeType();  // float32, or int32
  const Expr zero = compute.is_float() ? Expr(0.0f) : Expr(int32_t{0});
  Expr value = ir::Select::Make(n < shape.n && k < shape.k, ir::Cast::Make(compute, source), zero);
  if (panels.shift_to_u8) {
    value = value + 128;
  }
  const Expr index = j * (panels.kp * w) + (kg * w + c) * g + e;
  ir::Stmt body = ir::Store::Make(packed, index, ir::Cast::Make(packed.element_type(), value));
  body = For::Make(e, 0, g, LoopKind::kUnrolled, body);
  body = For::Make(c, 0, w, LoopKind::kSerial, body);
  body = For::Make(kg, 0, panels.kp / g, LoopKind::kSerial, body);
  return For::Make(j, 0, panels.Panels(shape.n), LoopKind::kSerial, body);
}

Expr FinishOutput(const CpuMatrixTypes& types, Epilogue epilogue, Expr acc, const ir::Buffer& bias,
                  const Expr& col, const Expr& scale) {
  const int lanes = acc.type().lanes();
  const ir::Type out_compute = types.out.ComputeType().WithLanes(lanes);
  Expr value = acc;
  if (types.scales) {
    value = ir::Cast::Make(out_compute, value) * ir::BroadcastTo(scale, lanes);
  } else if (value.type() != out_compute) {
    value = ir::Cast::Make(out_compute, value);
  }
  Expr bias_value;
  if (EpilogueHasBias(epilogue)) {
    bias_value = ir::Cast::Make(out_compute, bias(col));
  }
  value = ApplyEpilogue(epilogue, value, bias_value);
  return value.type() == types.out.WithLanes(lanes)
             ? value
             : ir::Cast::Make(types.out.WithLanes(lanes), value);
}

}  // namespace tune
