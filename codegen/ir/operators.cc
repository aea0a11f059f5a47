// Operators and small helpers over expressions.
#include <algorithm>

#include "codegen/ir/ir.h"  // IWYU pragma: associated
#include "common/status.h"

namespace tune::ir {

// --- operators and helpers ------------------------------------------------------------------

Expr operator+(Expr a, Expr b) { return Add::Make(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return Sub::Make(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return Mul::Make(std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return Div::Make(std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return Mod::Make(std::move(a), std::move(b)); }
Expr operator-(Expr a) {
  TUNE_CHECK(a.defined()) << "negation of an undefined expression";
  Expr zero = a.type().is_float() ? FloatImm::Make(0.0) : IntImm::Make(0, a.type().Element());
  Expr zeros = BroadcastTo(zero, a.type().lanes());
  return Sub::Make(std::move(zeros), std::move(a));
}
Expr operator==(Expr a, Expr b) { return EQ::Make(std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return NE::Make(std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return LT::Make(std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return LE::Make(std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return GT::Make(std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return GE::Make(std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return And::Make(std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return Or::Make(std::move(a), std::move(b)); }
Expr operator!(Expr a) { return Not::Make(std::move(a)); }

int64_t FloorDiv(int64_t a, int64_t b) {
  TUNE_CHECK(b != 0) << "FloorDiv by zero";
  int64_t q = a / b;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    --q;
  }
  return q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  TUNE_CHECK(b != 0) << "FloorMod by zero";
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    r += b;
  }
  return r;
}

std::optional<int64_t> AsConstInt(const Expr& e) {
  if (!e.defined() || !e.type().is_int() || !e.type().is_scalar()) {
    return std::nullopt;
  }
  if (const auto* imm = e.As<IntImm>()) {
    return imm->value;
  }
  const auto* bin = dynamic_cast<const BinaryExprNode*>(e.get());
  if (bin == nullptr) {
    return std::nullopt;
  }
  std::optional<int64_t> a = AsConstInt(bin->a);
  std::optional<int64_t> b = AsConstInt(bin->b);
  if (!a || !b) {
    return std::nullopt;
  }
  ExprKind k = e.kind();
  if (k == ExprKind::kAdd) {
    return *a + *b;
  }
  if (k == ExprKind::kSub) {
    return *a - *b;
  }
  if (k == ExprKind::kMul) {
    return *a * *b;
  }
  if (k == ExprKind::kDiv && *b != 0) {
    return FloorDiv(*a, *b);
  }
  if (k == ExprKind::kMod && *b != 0) {
    return FloorMod(*a, *b);
  }
  if (k == ExprKind::kMin) {
    return std::min(*a, *b);
  }
  if (k == ExprKind::kMax) {
    return std::max(*a, *b);
  }
  return std::nullopt;  // division by zero, comparisons and logic
}

bool IsConst(const Expr& e, double value) {
  if (!e.defined()) {
    return false;
  }
  if (const auto* b = e.As<Broadcast>()) {
    return IsConst(b->value, value);
  }
  if (const auto* i = e.As<IntImm>()) {
    return static_cast<double>(i->value) == value;
  }
  if (const auto* f = e.As<FloatImm>()) {
    return f->value == value;
  }
  return false;
}

Expr LoadOrZero(Buffer buffer, Expr index, int lanes, Expr valid) {
  TUNE_CHECK(buffer.element_type() == Type::Float32())
      << "LoadOrZero " << buffer.name() << ": a float32 buffer, not "
      << buffer.element_type().ToString() << " (LoadAsOrZero reads storage types)";
  Expr value = Load::Make(std::move(buffer), std::move(index), lanes);
  if (!valid.defined()) {
    return value;
  }
  return Select::Make(std::move(valid), value, BroadcastTo(FloatImm::Make(0.0), lanes));
}

Expr LoadAsOrZero(Buffer buffer, Expr index, int lanes, Expr valid) {
  const Type storage = buffer.element_type();
  Expr value = Load::Make(std::move(buffer), std::move(index), lanes);
  if (storage.is_storage_only()) {
    value = Cast::Make(storage.ComputeType().WithLanes(value.type().lanes()), value);
  }
  if (!valid.defined()) {
    return value;
  }
  Expr zero = storage.ComputeType().is_float() ? FloatImm::Make(0.0)
                                               : IntImm::Make(0, storage.ComputeType().Element());
  return Select::Make(std::move(valid), value, BroadcastTo(zero, value.type().lanes()));
}

Expr BroadcastTo(Expr e, int lanes) {
  if (lanes == 1 || e.type().lanes() == lanes) {
    return e;
  }
  TUNE_CHECK(e.type().is_scalar())
      << "BroadcastTo: cannot broadcast " << e.type().ToString() << " to " << lanes << " lanes";
  return Broadcast::Make(std::move(e), lanes);
}

}  // namespace tune::ir
