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
    case NodeKind::kIntImm:
      return a.As<IntImm>()->value == b.As<IntImm>()->value;
    case NodeKind::kFloatImm:
      return a.As<FloatImm>()->value == b.As<FloatImm>()->value;
    case NodeKind::kVar:
      return false;  // distinct nodes are distinct variables
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
    case NodeKind::kOr: {
      const auto* x = static_cast<const BinaryExprNode*>(a.get());
      const auto* y = static_cast<const BinaryExprNode*>(b.get());
      return StructurallyEqual(x->a, y->a) && StructurallyEqual(x->b, y->b);
    }
    case NodeKind::kNot:
      return StructurallyEqual(a.As<Not>()->a, b.As<Not>()->a);
    case NodeKind::kSelect: {
      const auto* x = a.As<Select>();
      const auto* y = b.As<Select>();
      return StructurallyEqual(x->condition, y->condition) &&
             StructurallyEqual(x->true_value, y->true_value) &&
             StructurallyEqual(x->false_value, y->false_value);
    }
    case NodeKind::kCast:
      return StructurallyEqual(a.As<Cast>()->value, b.As<Cast>()->value);
    case NodeKind::kBroadcast:
      return StructurallyEqual(a.As<Broadcast>()->value, b.As<Broadcast>()->value);
    case NodeKind::kRamp: {
      const auto* x = a.As<Ramp>();
      const auto* y = b.As<Ramp>();
      return StructurallyEqual(x->base, y->base) && StructurallyEqual(x->stride, y->stride);
    }
    case NodeKind::kLoad: {
      const auto* x = a.As<Load>();
      const auto* y = b.As<Load>();
      return x->buffer.same_as(y->buffer) && StructurallyEqual(x->index, y->index);
    }
    case NodeKind::kFma: {
      const auto* x = a.As<Fma>();
      const auto* y = b.As<Fma>();
      return StructurallyEqual(x->a, y->a) && StructurallyEqual(x->b, y->b) &&
             StructurallyEqual(x->c, y->c);
    }
    case NodeKind::kCallExtern:
      return false;  // calls may have side effects: never merge two of them
    case NodeKind::kAddressOf: {
      const auto* x = a.As<AddressOf>();
      const auto* y = b.As<AddressOf>();
      return x->buffer.same_as(y->buffer) && StructurallyEqual(x->index, y->index);
    }
    case NodeKind::kStore:
    case NodeKind::kFor:
    case NodeKind::kBlock:
    case NodeKind::kIfThenElse:
    case NodeKind::kLetStmt:
    case NodeKind::kAllocate:
    case NodeKind::kEvaluate:
    case NodeKind::kBarrier:
      return false;
  }
  return false;
}

}  // namespace tune::ir
