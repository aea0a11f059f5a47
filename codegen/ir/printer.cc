#include "codegen/ir/printer.h"

#include <string_view>

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
      case NodeKind::kIntImm: {
        const auto* op = e.As<IntImm>();
        if (op->type.is_bool()) {
          return op->value != 0 ? "true" : "false";
        }
        return op->type == Type::Int32() ? StrCat(op->value, "i32") : StrCat(op->value);
      }
      case NodeKind::kFloatImm:
        return FloatText(e.As<FloatImm>()->value);
      case NodeKind::kVar:
        return e.As<Variable>()->name;
      case NodeKind::kAdd:
        return Infix(e, "+");
      case NodeKind::kSub:
        return Infix(e, "-");
      case NodeKind::kMul:
        return Infix(e, "*");
      case NodeKind::kDiv:
        return Infix(e, "/");
      case NodeKind::kMod:
        return Infix(e, "%");
      case NodeKind::kMin:
        return Call(e, "min");
      case NodeKind::kMax:
        return Call(e, "max");
      case NodeKind::kEQ:
        return Infix(e, "==");
      case NodeKind::kNE:
        return Infix(e, "!=");
      case NodeKind::kLT:
        return Infix(e, "<");
      case NodeKind::kLE:
        return Infix(e, "<=");
      case NodeKind::kGT:
        return Infix(e, ">");
      case NodeKind::kGE:
        return Infix(e, ">=");
      case NodeKind::kAnd:
        return Infix(e, "&&");
      case NodeKind::kOr:
        return Infix(e, "||");
      case NodeKind::kNot:
        return StrCat("!", Print(e.As<Not>()->a));
      case NodeKind::kSelect: {
        const auto* op = e.As<Select>();
        return StrCat("select(", Print(op->condition), ", ", Print(op->true_value), ", ",
                      Print(op->false_value), ")");
      }
      case NodeKind::kCast: {
        const auto* op = e.As<Cast>();
        return StrCat(op->type.ToString(), "(", Print(op->value), ")");
      }
      case NodeKind::kBroadcast: {
        const auto* op = e.As<Broadcast>();
        return StrCat("broadcast(", Print(op->value), ", ", op->lanes, ")");
      }
      case NodeKind::kRamp: {
        const auto* op = e.As<Ramp>();
        return StrCat("ramp(", Print(op->base), ", ", Print(op->stride), ", ", op->lanes, ")");
      }
      case NodeKind::kLoad: {
        const auto* op = e.As<Load>();
        return StrCat(op->buffer.name(), "[", Print(op->index), "]");
      }
      case NodeKind::kFma: {
        const auto* op = e.As<Fma>();
        return StrCat("fma(", Print(op->a), ", ", Print(op->b), ", ", Print(op->c), ")");
      }
      case NodeKind::kCallExtern: {
        const auto* op = e.As<CallExtern>();
        std::vector<std::string> args;
        args.reserve(op->args.size());
        for (const Expr& arg : op->args) {
          args.push_back(Print(arg));
        }
        return StrCat("call_extern<", op->type.ToString(), "> ", op->symbol, "(", Join(args, ", "),
                      ")");
      }
      case NodeKind::kAddressOf: {
        const auto* op = e.As<AddressOf>();
        return StrCat("&", op->buffer.name(), "[", Print(op->index), "]");
      }
      case NodeKind::kStore:
      case NodeKind::kFor:
      case NodeKind::kBlock:
      case NodeKind::kIfThenElse:
      case NodeKind::kLetStmt:
      case NodeKind::kAllocate:
      case NodeKind::kEvaluate:
      case NodeKind::kBarrier:
        break;
    }
    return StrCat("<", NodeKindName(e.kind()), ">");
  }

  void Print(const Stmt& s, int indent) {
    if (!s.defined()) {
      return;
    }
    switch (s.kind()) {
      case NodeKind::kStore: {
        const auto* op = s.As<Store>();
        Line(indent, StrCat(op->buffer.name(), "[", Print(op->index), "]",
                            op->atomic_add   ? " atomic+= "
                            : op->async_copy ? " async= "
                                             : " = ",
                            Print(op->value)));
        return;
      }
      case NodeKind::kFor: {
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
      case NodeKind::kBlock: {
        const auto* op = s.As<Block>();
        if (op->stmts.empty()) {
          Line(indent, "nop");
        }
        for (const Stmt& child : op->stmts) {
          Print(child, indent);
        }
        return;
      }
      case NodeKind::kIfThenElse: {
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
      case NodeKind::kLetStmt: {
        const auto* op = s.As<LetStmt>();
        std::string type =
            op->var.type() == Type::Int64() ? "" : StrCat(": ", op->var.type().ToString());
        Line(indent, StrCat("let ", op->var.name(), type, " = ", Print(op->value)));
        Print(op->body, indent);
        return;
      }
      case NodeKind::kAllocate: {
        const auto* op = s.As<Allocate>();
        Line(indent,
             StrCat("allocate ", op->buffer.name(), ": ", op->buffer.element_type().ToString(), "[",
                    op->size, "] ", MemoryScopeName(op->buffer.scope()), " {"));
        Print(op->body, indent + 1);
        Line(indent, "}");
        return;
      }
      case NodeKind::kEvaluate: {
        const auto* op = s.As<Evaluate>();
        Line(indent, op->return_on_error ? StrCat("return_if_nonzero(", Print(op->value), ")")
                                         : Print(op->value));
        return;
      }
      case NodeKind::kBarrier: {
        const auto* op = s.As<Barrier>();
        std::string args;
        if (op->commit_async) {
          args = "commit_async";
        }
        if (op->wait_async >= 0) {
          args += StrCat(args.empty() ? "" : ", ", "wait_async=", op->wait_async);
        }
        Line(indent, StrCat("barrier(", args, ")"));
        return;
      }
      case NodeKind::kIntImm:
      case NodeKind::kFloatImm:
      case NodeKind::kVar:
      case NodeKind::kAdd:
      case NodeKind::kSub:
      case NodeKind::kMul:
      case NodeKind::kDiv:
      case NodeKind::kMod:
      case NodeKind::kMin:
      case NodeKind::kMax:
      case NodeKind::kEQ:
      case NodeKind::kNE:
      case NodeKind::kLT:
      case NodeKind::kLE:
      case NodeKind::kGT:
      case NodeKind::kGE:
      case NodeKind::kAnd:
      case NodeKind::kOr:
      case NodeKind::kNot:
      case NodeKind::kSelect:
      case NodeKind::kCast:
      case NodeKind::kBroadcast:
      case NodeKind::kRamp:
      case NodeKind::kLoad:
      case NodeKind::kFma:
      case NodeKind::kCallExtern:
      case NodeKind::kAddressOf:
        break;
    }
    Line(indent, StrCat("<", NodeKindName(s.kind()), ">"));
  }

  std::string Take() { return std::move(out_); }

 private:
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
