#include "codegen/ir/equality.h"

namespace tune::ir {

bool StructurallyEqual(const Expr& a, const Expr& b) {
  if (a.same_as(b)) {
    return true;
  }
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.type() != b.type()) {
    return false;
  }
  switch (a.kind()) {
    case ExprKind::kIntImm:
      return a.As<IntImm>()->value == b.As<IntImm>()->value;
    case ExprKind::kFloatImm:
      return a.As<FloatImm>()->value == b.As<FloatImm>()->value;
    case ExprKind::kVar:
      return false;  // distinct nodes are distinct variables
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kMin:
    case ExprKind::kMax:
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE:
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      const auto* x = static_cast<const BinaryExprNode*>(a.get());
      const auto* y = static_cast<const BinaryExprNode*>(b.get());
      return StructurallyEqual(x->a, y->a) && StructurallyEqual(x->b, y->b);
    }
    case ExprKind::kNot:
      return StructurallyEqual(a.As<Not>()->a, b.As<Not>()->a);
    case ExprKind::kSelect: {
      const auto* x = a.As<Select>();
      const auto* y = b.As<Select>();
      return StructurallyEqual(x->condition, y->condition) &&
             StructurallyEqual(x->true_value, y->true_value) &&
             StructurallyEqual(x->false_value, y->false_value);
    }
    case ExprKind::kCast:
      return StructurallyEqual(a.As<Cast>()->value, b.As<Cast>()->value);
    case ExprKind::kReinterpret:
      return StructurallyEqual(a.As<Reinterpret>()->value, b.As<Reinterpret>()->value);
    case ExprKind::kBroadcast:
      return StructurallyEqual(a.As<Broadcast>()->value, b.As<Broadcast>()->value);
    case ExprKind::kShuffle: {
      const auto* x = a.As<Shuffle>();
      const auto* y = b.As<Shuffle>();
      if (x->indices != y->indices || x->vectors.size() != y->vectors.size()) {
        return false;
      }
      for (size_t i = 0; i < x->vectors.size(); ++i) {
        if (!StructurallyEqual(x->vectors[i], y->vectors[i])) {
          return false;
        }
      }
      return true;
    }
    case ExprKind::kRamp: {
      const auto* x = a.As<Ramp>();
      const auto* y = b.As<Ramp>();
      return StructurallyEqual(x->base, y->base) && StructurallyEqual(x->stride, y->stride);
    }
    case ExprKind::kLoad: {
      const auto* x = a.As<Load>();
      const auto* y = b.As<Load>();
      return x->buffer.same_as(y->buffer) && StructurallyEqual(x->index, y->index);
    }
    case ExprKind::kFma: {
      const auto* x = a.As<Fma>();
      const auto* y = b.As<Fma>();
      return StructurallyEqual(x->a, y->a) && StructurallyEqual(x->b, y->b) &&
             StructurallyEqual(x->c, y->c);
    }
    case ExprKind::kDotAccumulate: {
      const auto* x = a.As<DotAccumulate>();
      const auto* y = b.As<DotAccumulate>();
      return x->kind == y->kind && StructurallyEqual(x->acc, y->acc) &&
             StructurallyEqual(x->a, y->a) && StructurallyEqual(x->b, y->b);
    }
    case ExprKind::kCallExtern:
      return false;  // calls may have side effects: never merge two of them
    case ExprKind::kAddressOf: {
      const auto* x = a.As<AddressOf>();
      const auto* y = b.As<AddressOf>();
      return x->buffer.same_as(y->buffer) && StructurallyEqual(x->index, y->index);
    }
  }
  return false;
}

}  // namespace tune::ir
