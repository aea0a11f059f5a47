#include "codegen/templates/cpu_matrix_gemm.h"

#include <utility>
#include <vector>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/template_util.h"
#include "common/strings.h"

namespace tune {

using ir::Expr;
using ir::For;
using ir::LoopKind;
using ir::Stmt;
using ir::Var;

CpuMatrixTypes CpuMatrixTypesOf(const Workload& workload) {
  CpuMatrixTypes t;
  t.dtype = workload.dtype();
  t.a = ir::Type::Of(ActivationType(t.dtype));
  t.b = ir::Type::Of(WeightType(t.dtype));
  t.acc = ir::Type::Of(AccumulatorType(t.dtype));
  t.out = ir::Type::Of(workload.out_type());
  t.group = IsIntegerDtype(t.dtype) ? 4 : 2;
  t.scales = workload.has_scales();
  t.requant = workload.requantizes();
  return t;
}

namespace {

constexpr int kUnits = 16;  // groups (4 bytes each) in a 512-bit vector

// Layout NT, a block of 16 groups of 16 columns (each column's 16 groups one 64-byte load) turned
// into 16 group rows of the panel (16 columns each) in registers: four rounds of two-vector
// shuffles, round s swapping bit s of the column with bit s of the group (a 16 x 16 transpose of
// 4-byte units, where copying unit by unit costs a load and an insert per unit). Columns from
// `col` (the panel's column q * 16 = col - j * w), groups from `kgs`.
ir::Stmt TransposedBlock(const GemmShape& shape, const VnniPanels& panels, const ir::Buffer& b,
                         const ir::Buffer& packed, const Expr& col, const Expr& dst, int64_t q,
                         const Expr& kgs) {
  const int g = panels.group;
  const int64_t w = panels.width;
  const int lanes = kUnits * g;
  const ir::Type type = packed.element_type().WithLanes(lanes);
  // The lanes of unit u of vector `which` (0: the first of a shuffle's two, 1: the second).
  auto unit = [&](std::vector<int>& indices, int which, int u) {
    for (int e = 0; e < g; ++e) {
      indices.push_back(which * lanes + u * g + e);
    }
  };
  std::vector<std::pair<Var, Expr>> lets;
  std::vector<Var> rows;
  for (int c = 0; c < kUnits; ++c) {
    Var v(StrCat("tc", c), type);
    lets.emplace_back(v, ir::Load::Make(b, (col + c) * shape.k + kgs * g, lanes));
    rows.push_back(v);
  }
  for (int s = 0; s < 4; ++s) {
    const int bit = 1 << s;
    std::vector<Var> next(kUnits);
    for (int c = 0; c < kUnits; ++c) {
      if ((c & bit) != 0) {
        continue;
      }
      std::vector<int> low, high;  // the new rows c and c + bit
      for (int u = 0; u < kUnits; ++u) {
        if ((u & bit) == 0) {
          unit(low, 0, u);
          unit(high, 0, u + bit);
        } else {
          unit(low, 1, u - bit);
          unit(high, 1, u);
        }
      }
      next[c] = Var(StrCat("t", s, "_", c), type);
      next[c + bit] = Var(StrCat("t", s, "_", c + bit), type);
      lets.emplace_back(next[c], ir::Shuffle::Make({rows[c], rows[c + bit]}, low));
      lets.emplace_back(next[c + bit], ir::Shuffle::Make({rows[c], rows[c + bit]}, high));
    }
    rows = std::move(next);
  }
  std::vector<Stmt> stores;
  for (int t = 0; t < kUnits; ++t) {
    stores.push_back(
        ir::Store::Make(packed, dst * (panels.kp * w) + ((kgs + t) * w + q * kUnits) * g, rows[t]));
  }
  Stmt body = ir::Block::Make(std::move(stores));
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
    body = ir::LetStmt::Make(it->first, it->second, body);
  }
  return body;
}

// Panel j's groups kg in [kg0, kg0 + groups) of `b`, stored as panel `dst` of `packed`: every
// element, its column c and group element e unrolled (straight-line copies of a w x g block).
// `guarded`: padding past N or K reads a clamped element (every read stays inside B) and stores
// zero. Layout NT copies whole blocks of 16 groups by TransposedBlock unless `tail_only`.
ir::Stmt PanelGroups(const GemmShape& shape, GemmLayout layout, const VnniPanels& panels,
                     const ir::Buffer& b, const ir::Buffer& packed, const Expr& j, const Expr& dst,
                     const Expr& kg0, const Expr& groups, bool guarded, bool tail_only = false) {
  const int64_t g = panels.group;
  const int64_t w = panels.width;
  Var kg("pkg"), c("pc"), e("pe");
  const Expr n = j * w + c;
  const Expr k = (kg0 + kg) * g + e;
  const Expr nn = guarded ? ir::Min::Make(n, shape.n - 1) : n;
  const Expr kk = guarded ? ir::Min::Make(k, shape.k - 1) : k;
  const Expr source_index = layout == GemmLayout::kNT ? nn * shape.k + kk : kk * shape.n + nn;
  if (!guarded && layout == GemmLayout::kNT && w % kUnits == 0 && !tail_only) {
    // Whole blocks of 16 groups transposed in registers, the rest group by group.
    Var kb("pkb");
    const Expr blocks = groups / kUnits;
    std::vector<Stmt> per_block;
    for (int64_t q = 0; q < w / kUnits; ++q) {
      per_block.push_back(
          TransposedBlock(shape, panels, b, packed, j * w + q * kUnits, dst, q, kg0 + kb * kUnits));
    }
    return ir::Block::Make(
        {For::Make(kb, 0, blocks, LoopKind::kSerial, ir::Block::Make(std::move(per_block))),
         PanelGroups(shape, layout, panels, b, packed, j, dst, kg0 + blocks * kUnits,
                     groups - blocks * kUnits, false, true)});
  }
  if (!guarded) {
    // A plain copy of the elements' bits, one vector store of the group row: NN interleaves
    // the G rows of K (w columns each), NT concatenates each column's G elements.
    std::vector<Expr> parts;
    if (layout == GemmLayout::kNT) {
      for (int64_t col = 0; col < w; ++col) {
        parts.push_back(
            ir::Load::Make(b, (j * w + col) * shape.k + (kg0 + kg) * g, static_cast<int>(g)));
      }
    } else {
      for (int64_t row = 0; row < g; ++row) {
        parts.push_back(
            ir::Load::Make(b, ((kg0 + kg) * g + row) * shape.n + j * w, static_cast<int>(w)));
      }
    }
    std::vector<int> order(static_cast<size_t>(w * g));
    for (size_t i = 0; i < order.size(); ++i) {
      order[i] = static_cast<int>(i);
    }
    const Expr row = layout == GemmLayout::kNT ? ir::Shuffle::Make(std::move(parts), order)
                                               : ir::Shuffle::Interleave(std::move(parts));
    return For::Make(kg, 0, groups, LoopKind::kSerial,
                     ir::Store::Make(packed, dst * (panels.kp * w) + (kg0 + kg) * w * g, row));
  }
  const Expr value =
      ir::LoadAsOrZero(b, source_index, 1, guarded ? n < shape.n && k < shape.k : Expr());
  const Expr index = dst * (panels.kp * w) + ((kg0 + kg) * w + c) * g + e;
  ir::Stmt body = ir::Store::Make(packed, index, ir::Cast::Make(packed.element_type(), value));
  body = For::Make(e, 0, g, LoopKind::kUnrolled, body);
  body = For::Make(c, 0, w, LoopKind::kUnrolled, body);
  return For::Make(kg, 0, groups, LoopKind::kSerial, body);
}

// i8: the compensations of panel `dst` of `packed`, just packed: -128 times each column's sum.
ir::Stmt PanelCompensation(const VnniPanels& panels, const ir::Buffer& packed, const Expr& dst) {
  return PanelColumnSums(panels, packed, dst, [&](int64_t v, const Expr& sums) {
    return ir::Store::Make(
        packed, panels.sums_at + (dst * panels.width + v * kUnits) * 4,
        ir::Reinterpret::Make(
            packed.element_type().WithLanes(kUnits * 4),
            sums * ir::BroadcastTo(ir::Cast::Make(ir::Type::Int32(), -128), kUnits)));
  });
}

// `pack`, panel `dst`'s packing, followed by its compensations where the panels have them.
ir::Stmt Compensated(const VnniPanels& panels, const ir::Buffer& packed, const Expr& dst,
                     ir::Stmt pack) {
  if (panels.sums_at < 0) {
    return pack;
  }
  return ir::Block::Make({std::move(pack), PanelCompensation(panels, packed, dst)});
}

// A whole panel j inside N (dst its place in `packed`): its whole groups unguarded, the groups
// of K's padding guarded.
ir::Stmt InsidePanel(const GemmShape& shape, GemmLayout layout, const VnniPanels& panels,
                     const ir::Buffer& b, const ir::Buffer& packed, const Expr& j,
                     const Expr& dst) {
  const int64_t full_groups = shape.k / panels.group;
  const int64_t groups = panels.kp / panels.group;
  std::vector<ir::Stmt> steps = {
      PanelGroups(shape, layout, panels, b, packed, j, dst, Expr(0), Expr(full_groups), false)};
  if (groups > full_groups) {
    steps.push_back(PanelGroups(shape, layout, panels, b, packed, j, dst, Expr(full_groups),
                                Expr(groups - full_groups), true));
  }
  return Compensated(panels, packed, dst, ir::Block::Make(std::move(steps)));
}

}  // namespace

ir::Stmt PackVnniPanels(const GemmShape& shape, GemmLayout layout, const VnniPanels& panels,
                        const ir::Buffer& b, const ir::Buffer& packed) {
  // Whole panels' whole groups need no guard; the last groups of K (padding) and the panels
  // that reach past N do.
  const int64_t full_panels = shape.n / panels.width;
  const int64_t groups = panels.kp / panels.group;
  Var j("pj");
  std::vector<ir::Stmt> steps;
  if (full_panels > 0) {
    steps.push_back(For::Make(j, 0, full_panels, LoopKind::kSerial,
                              InsidePanel(shape, layout, panels, b, packed, j, j)));
  }
  if (panels.Panels(shape.n) > full_panels) {
    Var t("pt");
    steps.push_back(For::Make(
        t, full_panels, panels.Panels(shape.n) - full_panels, LoopKind::kSerial,
        Compensated(
            panels, packed, t,
            PanelGroups(shape, layout, panels, b, packed, t, t, Expr(0), Expr(groups), true))));
  }
  return ir::Block::Make(std::move(steps));
}

ir::Stmt PackVnniPanelRange(const GemmShape& shape, GemmLayout layout, const VnniPanels& panels,
                            const ir::Buffer& b, const ir::Buffer& packed, const Expr& first,
                            const Expr& count, LoopKind kind) {
  const int64_t full_panels = shape.n / panels.width;
  const int64_t groups = panels.kp / panels.group;
  const Expr end = first + count;
  // The range's panels inside N end at `split`; those from it on reach past N.
  const Expr split = ir::Min::Make(end, ir::Max::Make(first, Expr(full_panels)));
  Var j("pj"), t("pt");
  const Stmt inside = For::Make(j, first, split - first, kind,
                                InsidePanel(shape, layout, panels, b, packed, j, j - first));
  const Stmt outside = For::Make(t, split, end - split, LoopKind::kSerial,
                                 Compensated(panels, packed, t - first,
                                             PanelGroups(shape, layout, panels, b, packed, t,
                                                         t - first, Expr(0), Expr(groups), true)));
  return ir::Block::Make({inside, outside});
}

Expr ShiftedToU8(Expr s8) {
  const int lanes = s8.type().lanes();
  return ir::Cast::Make(ir::Type::UInt8(lanes),
                        ir::Cast::Make(ir::Type::Int32(lanes), std::move(s8)) +
                            ir::BroadcastTo(ir::Cast::Make(ir::Type::Int32(), 128), lanes));
}

ir::Stmt PanelColumnSums(const VnniPanels& panels, const ir::Buffer& packed, const Expr& panel,
                         const std::function<ir::Stmt(int64_t, Expr)>& store) {
  const int64_t w = panels.width;
  const int lanes = kUnits;
  ir::Buffer sums("column_sums", ir::MemoryScope::kStack, ir::Type::Int32());
  const Expr ones =
      ir::BroadcastTo(ir::Cast::Make(ir::Type::UInt8(), ir::Cast::Make(ir::Type::Int32(), 1)), 4);
  Var kg("ckg");
  std::vector<Stmt> zero, step, stores;
  for (int64_t v = 0; v < w / kUnits; ++v) {
    const Expr at(v * kUnits);
    zero.push_back(ir::Store::Make(
        sums, at, ir::BroadcastTo(ir::Cast::Make(ir::Type::Int32(), int64_t{0}), lanes)));
    const Expr quads =
        ir::Load::Make(packed, panel * (panels.kp * w) + (kg * w + v * kUnits) * 4, lanes * 4);
    step.push_back(
        ir::Store::Make(sums, at,
                        ir::DotAccumulate::Make(ir::DotKind::kU8S8Quads,
                                                ir::Load::Make(sums, at, lanes), ones, quads)));
    stores.push_back(store(v, ir::Load::Make(sums, at, lanes)));
  }
  return ir::Allocate::Make(sums, w,
                            ir::Block::Make({ir::Block::Make(std::move(zero)),
                                             For::Make(kg, 0, panels.kp / 4, LoopKind::kSerial,
                                                       ir::Block::Make(std::move(step))),
                                             ir::Block::Make(std::move(stores))}));
}

Expr LoadCompensation(const VnniPanels& panels, const ir::Buffer& packed, const Expr& col,
                      int lanes) {
  return ir::Reinterpret::Make(ir::Type::Int32(lanes),
                               ir::Load::Make(packed, panels.sums_at + col * 4, lanes * 4));
}

Expr MatrixDot(const CpuMatrixTypes& types, bool b_unsigned, Expr acc, Expr a, Expr b) {
  if (!IsIntegerDtype(types.dtype)) {
    return ir::DotAccumulate::Make(
        types.dtype == Dtype::kF16 ? ir::DotKind::kF16Pairs : ir::DotKind::kBf16Pairs,
        std::move(acc), std::move(a), std::move(b));
  }
  return b_unsigned ? ir::DotAccumulate::Make(ir::DotKind::kU8S8Quads, std::move(acc), std::move(b),
                                              std::move(a))
                    : ir::DotAccumulate::Make(ir::DotKind::kU8S8Quads, std::move(acc), std::move(a),
                                              std::move(b));
}

CpuMatrixOperands::CpuMatrixOperands(const Workload& workload)
    : columns_(workload.op() == OpKind::kGemm ? workload.gemm().n : workload.conv2d().k),
      types_(CpuMatrixTypesOf(workload)),
      epilogue_(workload.epilogue()),
      a_(workload.op() == OpKind::kGemm ? "A" : "input", ir::MemoryScope::kGlobal, types_.a),
      b_(workload.op() == OpKind::kGemm ? "B" : "weight", ir::MemoryScope::kGlobal, types_.b),
      bias_("bias", ir::MemoryScope::kGlobal, types_.out),
      c_(workload.op() == OpKind::kGemm ? "C" : "output", ir::MemoryScope::kGlobal, types_.out),
      scale_a_(workload.op() == OpKind::kGemm ? "scale_A" : "scale_input"),
      scale_b_(workload.op() == OpKind::kGemm ? "scale_B" : "scale_weight"),
      requant_scale_("scale"),
      zero_point_("zero_point", ir::MemoryScope::kGlobal, ir::Type::Int32()) {}

std::vector<ir::Buffer> CpuMatrixOperands::Params(const ir::Buffer& weights) const {
  std::vector<ir::Buffer> params = {a_, weights};
  if (EpilogueHasBias(epilogue_)) {
    params.push_back(bias_);
  }
  params.push_back(c_);
  if (types_.scales) {
    params.push_back(scale_a_);
    params.push_back(scale_b_);
  }
  if (types_.requant) {
    params.push_back(requant_scale_);
    params.push_back(zero_point_);
  }
  return params;
}

ir::Stmt CpuMatrixOperands::BindScale(ir::Stmt body) const {
  if (types_.requant) {
    return ir::LetStmt::Make(
        scale_, requant_scale_(0),
        ir::LetStmt::Make(zero_, ir::Cast::Make(ir::Type::Float32(), zero_point_(0)),
                          std::move(body)));
  }
  return types_.scales ? ir::LetStmt::Make(scale_, scale_a_(0) * scale_b_(0), std::move(body))
                       : body;
}

Expr CpuMatrixOperands::Finish(Expr acc, const Expr& col) const {
  if (types_.requant) {
    return Requantize(std::move(acc), scale_, zero_);
  }
  const int lanes = acc.type().lanes();
  const ir::Type out_compute = types_.out.ComputeType().WithLanes(lanes);
  Expr value = acc;
  if (types_.scales) {
    value = ir::Cast::Make(out_compute, value) * ir::BroadcastTo(scale_, lanes);
  } else if (value.type() != out_compute) {
    value = ir::Cast::Make(out_compute, value);
  }
  Expr bias_value;
  if (EpilogueHasBias(epilogue_)) {
    bias_value = ir::Cast::Make(out_compute, bias_(col));
  }
  value = ApplyEpilogue(epilogue_, value, bias_value);
  return value.type() == types_.out.WithLanes(lanes)
             ? value
             : ir::Cast::Make(types_.out.WithLanes(lanes), value);
}

ir::Stmt CpuMatrixOperands::StoreColumns(const Expr& row, const Expr& col0, int lanes, bool inside,
                                         const std::function<Expr(Expr, int)>& acc) const {
  return StoreColumnsAt([&](const Expr& col) { return row * columns_ + col; }, col0, lanes, inside,
                        /*contiguous=*/true, acc);
}

ir::Stmt CpuMatrixOperands::StoreColumnsAt(const std::function<Expr(Expr)>& index_of,
                                           const Expr& col0, int lanes, bool inside,
                                           bool contiguous,
                                           const std::function<Expr(Expr, int)>& acc) const {
  Var l("cl");
  const Expr col = col0 + l;
  // Column by column, each inside C's columns (all of them when `inside`).
  ir::Stmt store_one = ir::Store::Make(c_, index_of(col), Finish(acc(Expr(l), 1), col));
  ir::Stmt part = For::Make(l, 0, lanes, LoopKind::kSerial,
                            inside ? store_one : ir::IfThenElse::Make(col < columns_, store_one));
  if (!contiguous) {
    return part;
  }
  const Expr cols = ir::Ramp::Make(col0, 1, lanes);
  ir::Stmt whole =
      ir::Store::Make(c_, lanes == 1 ? index_of(col0) : ir::Ramp::Make(index_of(col0), 1, lanes),
                      Finish(acc(Expr(int64_t{0}), lanes), cols));
  return inside ? whole : ir::IfThenElse::Make(col0 + lanes <= columns_, whole, part);
}

std::vector<std::string> DotWorkerFeatures(const Workload& workload, const Target& target) {
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  if (workload.dtype() == Dtype::kBf16) {
    return cpu.avx512bf16 ? std::vector<std::string>{"avx512bf16"} : std::vector<std::string>{};
  }
  if (workload.dtype() == Dtype::kF16) {
    return cpu.avx512fp16 ? std::vector<std::string>{"avx512fp16"} : std::vector<std::string>{};
  }
  return cpu.avx512vnni ? std::vector<std::string>{"avx512vnni"} : std::vector<std::string>{};
}

std::vector<std::string> AmxWorkerFeatures(const Workload& workload, const Target&) {
  return {"amx-tile", workload.dtype() == Dtype::kBf16 ? "amx-bf16" : "amx-int8"};
}

bool HasAmxFor(const Workload& workload, const Target& target) {
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  return workload.dtype() == Dtype::kBf16 ? cpu.amx_bf16 : cpu.amx_int8;
}

absl::Status CheckAmx(std::string_view template_name, const Workload& workload,
                      const Target& target) {
  if (HasAmxFor(workload, target)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(StrCat(
      "template ", template_name, " needs AMX (amx-tile and ",
      workload.dtype() == Dtype::kBf16 ? "amx-bf16" : "amx-int8", "), which '", target.ToString(),
      "' does not have; CPUs with AMX: sapphirerapids, emeraldrapids, graniterapids"));
}

}  // namespace tune
