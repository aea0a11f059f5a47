#include "codegen/ir/printer.h"

#include <string_view>

#include "absl/strings/str_join.h"
#include "common/strings.h"

namespace tune::ir {
namespace {

std::string FloatText(double value) {
  std::string text = fmt::format("{}", static_cast<float>(value));
  if (text.find_first_of(".eni") == std::string::npos) {
    text += ".0";
  }
  return text + "f";
}

const char* AxisName(int axis) {
  switch (axis) {
    case 0:
      return "x";
    case 1:
      return "y";
    default:
      return "z";
  }
}

class Printer {
 public:
  std::string Print(const Expr& e) {
    if (!e.defined()) {
      return "<undefined>";
    }
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        const auto* op = e.As<IntImm>();
        if (op->type.is_bool()) {
          return op->value != 0 ? "true" : "false";
        }
        return op->type == Type::Int32() ? StrCat(op->value, "i32") : StrCat(op->value);
      }
      case ExprKind::kFloatImm:
        return FloatText(e.As<FloatImm>()->value);
      case ExprKind::kVar:
        return e.As<Variable>()->name;
      case ExprKind::kAdd:
        return Infix(e, "+");
      case ExprKind::kSub:
        return Infix(e, "-");
      case ExprKind::kMul:
        return Infix(e, "*");
      case ExprKind::kDiv:
        return Infix(e, "/");
      case ExprKind::kMod:
        return Infix(e, "%");
      case ExprKind::kMin:
        return Call(e, "min");
      case ExprKind::kMax:
        return Call(e, "max");
      case ExprKind::kEQ:
        return Infix(e, "==");
      case ExprKind::kNE:
        return Infix(e, "!=");
      case ExprKind::kLT:
        return Infix(e, "<");
      case ExprKind::kLE:
        return Infix(e, "<=");
      case ExprKind::kGT:
        return Infix(e, ">");
      case ExprKind::kGE:
        return Infix(e, ">=");
      case ExprKind::kAnd:
        return Infix(e, "&&");
      case ExprKind::kOr:
        return Infix(e, "||");
      case ExprKind::kNot:
        return StrCat("!", Print(e.As<Not>()->a));
      case ExprKind::kSelect: {
        const auto* op = e.As<Select>();
        return StrCat("select(", Print(op->condition), ", ", Print(op->true_value), ", ",
                      Print(op->false_value), ")");
      }
      case ExprKind::kCast: {
        const auto* op = e.As<Cast>();
        return StrCat(op->type.ToString(), "(", Print(op->value), ")");
      }
      case ExprKind::kReinterpret: {
        const auto* op = e.As<Reinterpret>();
        return StrCat("reinterpret<", op->type.ToString(), ">(", Print(op->value), ")");
      }
      case ExprKind::kBroadcast: {
        const auto* op = e.As<Broadcast>();
        return StrCat("broadcast(", Print(op->value), ", ", op->lanes, ")");
      }
      case ExprKind::kShuffle: {
        const auto* op = e.As<Shuffle>();
        std::string text = "shuffle(";
        for (const Expr& v : op->vectors) {
          StrAppend(&text, Print(v), ", ");
        }
        StrAppend(&text, "[", absl::StrJoin(op->indices, ", "), "])");
        return text;
      }
      case ExprKind::kRamp: {
        const auto* op = e.As<Ramp>();
        return StrCat("ramp(", Print(op->base), ", ", Print(op->stride), ", ", op->lanes, ")");
      }
      case ExprKind::kLoad: {
        const auto* op = e.As<Load>();
        return StrCat(op->buffer.name(), "[", Print(op->index), "]");
      }
      case ExprKind::kFma: {
        const auto* op = e.As<Fma>();
        return StrCat("fma(", Print(op->a), ", ", Print(op->b), ", ", Print(op->c), ")");
      }
      case ExprKind::kDotAccumulate: {
        const auto* op = e.As<DotAccumulate>();
        return StrCat(op->kind == DotKind::kBf16Pairs  ? "dot_bf16_pairs("
                      : op->kind == DotKind::kF16Pairs ? "dot_f16_pairs("
                                                       : "dot_u8s8_quads(",
                      Print(op->acc), ", ", Print(op->a), ", ", Print(op->b), ")");
      }
      case ExprKind::kCallExtern: {
        const auto* op = e.As<CallExtern>();
        std::vector<std::string> args;
        args.reserve(op->args.size());
        for (const Expr& arg : op->args) {
          args.push_back(Print(arg));
        }
        return StrCat("call_extern<", op->type.ToString(), "> ", op->symbol, "(", Join(args, ", "),
                      ")");
      }
      case ExprKind::kAddressOf: {
        const auto* op = e.As<AddressOf>();
        return StrCat("&", op->buffer.name(), "[", Print(op->index), "]");
      }
    }
    return StrCat("<", ExprKindName(e.kind()), ">");
  }

  void Print(const Stmt& s, int indent) {
    if (!s.defined()) {
      return;
    }
    switch (s.kind()) {
      case StmtKind::kStore: {
        const auto* op = s.As<Store>();
        Line(indent,
             StrCat(op->buffer.name(), "[", Print(op->index), "]",
                    op->atomic_add   ? " atomic+= "
                    : op->async_copy ? " async= "
                                     : " = ",
                    Print(op->value), op->valid.defined() ? StrCat(" if ", Print(op->valid)) : ""));
        return;
      }
      case StmtKind::kFor: {
        const auto* op = s.As<For>();
        std::string kind(LoopKindName(op->loop_kind));
        if (IsGpuLoop(op->loop_kind)) {
          StrAppend(&kind, ".", AxisName(op->thread_axis));
        }
        Line(indent, StrCat("for.", kind, " (", op->var.name(), ", ", Print(op->min), ", ",
                            Print(op->extent), ") {"));
        Print(op->body, indent + 1);
        Line(indent, "}");
        return;
      }
      case StmtKind::kBlock: {
        const auto* op = s.As<Block>();
        if (op->stmts.empty()) {
          Line(indent, "nop");
        }
        for (const Stmt& child : op->stmts) {
          Print(child, indent);
        }
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* op = s.As<IfThenElse>();
        Line(indent, StrCat("if (", Print(op->condition), ") {"));
        Print(op->then_case, indent + 1);
        if (op->else_case.defined()) {
          Line(indent, "} else {");
          Print(op->else_case, indent + 1);
        }
        Line(indent, "}");
        return;
      }
      case StmtKind::kLetStmt: {
        const auto* op = s.As<LetStmt>();
        std::string type =
            op->var.type() == Type::Int64() ? "" : StrCat(": ", op->var.type().ToString());
        Line(indent, StrCat("let ", op->var.name(), type, " = ", Print(op->value)));
        Print(op->body, indent);
        return;
      }
      case StmtKind::kAllocate: {
        const auto* op = s.As<Allocate>();
        Line(indent,
             StrCat("allocate ", op->buffer.name(), ": ", op->buffer.element_type().ToString(), "[",
                    op->size, "] ", MemoryScopeName(op->buffer.scope()), " {"));
        Print(op->body, indent + 1);
        Line(indent, "}");
        return;
      }
      case StmtKind::kEvaluate: {
        const auto* op = s.As<Evaluate>();
        Line(indent, op->return_on_error ? StrCat("return_if_nonzero(", Print(op->value), ")")
                                         : Print(op->value));
        return;
      }
      case StmtKind::kBarrier: {
        const auto* op = s.As<Barrier>();
        std::string args;
        if (op->commit_async) {
          args = "commit_async";
        }
        if (op->wait_async >= 0) {
          args += StrCat(args.empty() ? "" : ", ", "wait_async=", op->wait_async);
        }
        if (op->named()) {
          args = StrCat("id ", op->id, ", ", op->threads, " threads");
        }
        Line(indent, StrCat(op->cluster ? "cluster_barrier(" : "barrier(", args, ")"));
        return;
      }
      case StmtKind::kWarpMma: {
        const auto* op = s.As<WarpMma>();
        Line(indent, StrCat("warp_mma.", DtypeName(op->dtype), "(", op->acc.name(), "[",
                            op->acc_offset, "], ", op->m_tiles, "x", op->n_tiles, " tiles, ",
                            op->a.name(), "[", Print(op->a_index), "] stride ", op->a_stride, ", ",
                            op->b.name(), "[", Print(op->b_index), "] stride ", op->b_stride,
                            op->b_k_contiguous ? " [n][k]" : " [k][n]", ")"));
        return;
      }
      case StmtKind::kWaveMma: {
        const auto* op = s.As<WaveMma>();
        Line(indent,
             StrCat("wave_mma.", DtypeName(op->dtype), ".", WaveMmaShapeName(op->shape), "x", op->k,
                    "(", op->acc.name(), "[", op->acc_offset, "], ", op->m_tiles, "x", op->n_tiles,
                    " tiles, ", op->a.name(), "[", Print(op->a_index), "] stride ", op->a_stride,
                    ", ", op->b.name(), "[", Print(op->b_index), "] stride ", op->b_stride,
                    op->b_k_contiguous ? " [n][k]" : " [k][n]", ")"));
        return;
      }
      case StmtKind::kWarpGroupMma: {
        const auto* op = s.As<WarpGroupMma>();
        Line(indent,
             StrCat("warpgroup_mma.", DtypeName(op->dtype), "(", op->acc.name(), "[",
                    op->acc_offset, "], m64n", op->n, " x", op->k_steps, ", ", op->a.name(), "[",
                    Print(op->a_index), "], ", op->b.name(), "[", Print(op->b_index), "]",
                    op->b_mn_atom_stride > 0
                        ? StrCat(" N-major (atoms ", op->b_mn_atom_stride, " B apart)")
                        : std::string(),
                    ", swizzle 128B, pending ", op->pending, op->overwrite ? ", overwrite" : "",
                    ")"));
        return;
      }
      case StmtKind::kTensorCopy: {
        const auto* op = s.As<TensorCopy>();
        std::vector<std::string> coords;
        for (const Expr& c : op->coords) {
          coords.push_back(Print(c));
        }
        const TensorMap& map = op->map;
        std::string im2col;
        if (map.im2col()) {
          std::vector<std::string> offsets;
          for (const Expr& o : op->offsets) {
            offsets.push_back(Print(o));
          }
          im2col = StrCat(" im2col corners [", absl::StrJoin(map.lower_corner, ", "), "] [",
                          absl::StrJoin(map.upper_corner, ", "), "] offsets (",
                          absl::StrJoin(offsets, ", "), ")");
        }
        if (!map.element_strides.empty()) {
          StrAppend(&im2col, " element strides [", absl::StrJoin(map.element_strides, ", "), "]");
        }
        Line(indent,
             StrCat(
                 "tensor_copy(", op->dst.name(), "[", Print(op->dst_index), "] <- ",
                 map.buffer.name(), " dims [", absl::StrJoin(map.dims, ", "), "] strides [",
                 absl::StrJoin(map.strides, ", "), "] box [", absl::StrJoin(map.box, ", "),
                 "] swizzle ", map.swizzle_bytes, "B", im2col, " at (", absl::StrJoin(coords, ", "),
                 "), completes on ", op->barrier.name(), "[", Print(op->barrier_index), "]",
                 op->multicast != 0 ? StrCat(", multicast ", op->multicast) : std::string(), ")"));
        return;
      }
      case StmtKind::kFetchAdd: {
        const auto* op = s.As<FetchAdd>();
        Line(indent,
             StrCat(op->result.name(), "[", Print(op->result_index), "] = fetch_add(",
                    op->buffer.name(), "[", Print(op->index), "], ", Print(op->value), ")"));
        return;
      }
      case StmtKind::kAmxTileOp: {
        Line(indent, PrintTileOp(s.As<AmxTileOp>()));
        return;
      }
      case StmtKind::kSetMaxRegisters: {
        const auto* op = s.As<SetMaxRegisters>();
        Line(indent,
             StrCat("set_max_registers(", op->increase ? "inc " : "dec ", op->registers, ")"));
        return;
      }
      case StmtKind::kMBarrierOp: {
        const auto* op = s.As<MBarrierOp>();
        Line(indent,
             StrCat("mbarrier_", MBarrierOpKindName(op->op), "(", op->barrier.name(), "[",
                    Print(op->index), "]",
                    op->value.defined() ? StrCat(", ", Print(op->value)) : std::string(),
                    op->cta.defined() ? StrCat(", cta ", Print(op->cta)) : std::string(), ")"));
        return;
      }
    }
    Line(indent, StrCat("<", StmtKindName(s.kind()), ">"));
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string PrintTileOp(const AmxTileOp* op) {
    switch (op->op) {
      case AmxTileOpKind::kConfigure: {
        std::vector<std::string> shapes;
        for (const AmxTileShape& shape : op->shapes) {
          shapes.push_back(StrCat(shape.rows, "x", shape.colsb, "B"));
        }
        return StrCat("amx_configure(", Join(shapes, ", "), ")");
      }
      case AmxTileOpKind::kZero:
        return StrCat("amx_zero(t", op->tile, ")");
      case AmxTileOpKind::kLoad:
        return StrCat("amx_load(t", op->tile, ", ", op->buffer.name(), "[", Print(op->index),
                      "], stride ", op->stride, ")");
      case AmxTileOpKind::kStore:
        return StrCat("amx_store(t", op->tile, ", ", op->buffer.name(), "[", Print(op->index),
                      "], stride ", op->stride, ")");
      case AmxTileOpKind::kDot:
        return StrCat("amx_dot_", DtypeName(op->dtype), "(t", op->tile, " += t", op->a_tile, " x t",
                      op->b_tile, ")");
      case AmxTileOpKind::kRelease:
        return "amx_release()";
    }
    return "amx_?";
  }

  std::string Infix(const Expr& e, std::string_view op) {
    const auto* bin = static_cast<const BinaryExprNode*>(e.get());
    return StrCat("(", Print(bin->a), " ", op, " ", Print(bin->b), ")");
  }

  std::string Call(const Expr& e, std::string_view name) {
    const auto* bin = static_cast<const BinaryExprNode*>(e.get());
    return StrCat(name, "(", Print(bin->a), ", ", Print(bin->b), ")");
  }

  void Line(int indent, std::string_view text) {
    out_.append(static_cast<size_t>(indent) * 2, ' ');
    out_ += text;
    out_ += '\n';
  }

  std::string out_;
};

}  // namespace

std::string ToText(const Expr& e) { return Printer().Print(e); }

std::string ToText(const Stmt& s) {
  Printer printer;
  printer.Print(s, 0);
  return printer.Take();
}

std::string ToText(const LoweredFunc& f) {
  std::vector<std::string> params;
  params.reserve(f.params.size());
  for (const Buffer& b : f.params) {
    params.push_back(b.defined() ? StrCat(b.name(), ": ", b.element_type().ToString(), "*")
                                 : std::string("<undefined>"));
  }
  if (f.stream_param.defined()) {
    params.push_back(StrCat(f.stream_param.name(), ": stream"));
  }
  Printer printer;
  printer.Print(f.body, 1);
  return StrCat("func ", f.name, "(", Join(params, ", "), ") {\n", printer.Take(), "}\n");
}

}  // namespace tune::ir
