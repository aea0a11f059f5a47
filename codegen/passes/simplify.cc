#include "codegen/passes/simplify.h"

#include <cmath>
#include <limits>
#include <optional>

#include "codegen/ir/equality.h"
#include "codegen/ir/substitute.h"
#include "codegen/ir/visitor.h"
#include "codegen/passes/interval.h"

namespace tune::ir {
namespace {

// --- constants ------------------------------------------------------------------------------

std::optional<int64_t> IntConst(const Expr& e) {
  const auto* imm = e.As<IntImm>();
  if (imm == nullptr || imm->type.is_bool()) {
    return std::nullopt;
  }
  return imm->value;
}

std::optional<float> FloatConst(const Expr& e) {
  const auto* imm = e.As<FloatImm>();
  return imm == nullptr ? std::nullopt : std::optional<float>(static_cast<float>(imm->value));
}

std::optional<bool> BoolConst(const Expr& e) {
  if (const auto* b = e.As<Broadcast>()) {
    return BoolConst(b->value);
  }
  const auto* imm = e.As<IntImm>();
  if (imm == nullptr || !imm->type.is_bool()) {
    return std::nullopt;
  }
  return imm->value != 0;
}

bool IsScalarConst(const Expr& e) { return IntConst(e) || FloatConst(e); }

// An int immediate of type `t`, or undefined when `v` does not fit.
Expr IntOf(std::optional<int64_t> v, Type t) {
  if (!v) {
    return Expr();
  }
  if (t == Type::Int32() &&
      (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max())) {
    return Expr();
  }
  return IntImm::Make(*v, t);
}

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}
std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}
std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}

Expr BoolOf(bool v, int lanes) { return BroadcastTo(IntImm::Make(v ? 1 : 0, Type::Bool()), lanes); }

Expr Zero(Type t) {
  Expr z = t.is_float() ? FloatImm::Make(0.0) : IntImm::Make(0, t.Element());
  return BroadcastTo(z, t.lanes());
}

// --- folding builders: operands already simplified, result simplified ------------------------

Expr SAdd(Expr a, Expr b);
Expr SSub(Expr a, Expr b);
Expr SMul(Expr a, Expr b);

Expr SRamp(Expr base, Expr stride, int lanes) {
  if (IsConst(stride, 0)) {
    return Broadcast::Make(std::move(base), lanes);
  }
  return Ramp::Make(std::move(base), std::move(stride), lanes);
}

Expr SAdd(Expr a, Expr b) {
  Type t = a.type();
  if (auto x = IntConst(a), y = IntConst(b); x && y) {
    if (Expr r = IntOf(CheckedAdd(*x, *y), t); r.defined()) {
      return r;
    }
  }
  if (auto x = FloatConst(a), y = FloatConst(b); x && y) {
    return FloatImm::Make(*x + *y);
  }
  if (IsScalarConst(a) && !IsScalarConst(b)) {
    std::swap(a, b);
  }
  if (IsConst(b, 0)) {
    return a;
  }
  if (IsConst(a, 0)) {
    return b;
  }
  const auto* ba = a.As<Broadcast>();
  const auto* bb = b.As<Broadcast>();
  const auto* ra = a.As<Ramp>();
  const auto* rb = b.As<Ramp>();
  if (ba && bb) {
    return Broadcast::Make(SAdd(ba->value, bb->value), ba->lanes);
  }
  if (ra && bb) {
    return SRamp(SAdd(ra->base, bb->value), ra->stride, ra->lanes);
  }
  if (ba && rb) {
    return SRamp(SAdd(ba->value, rb->base), rb->stride, rb->lanes);
  }
  if (ra && rb) {
    return SRamp(SAdd(ra->base, rb->base), SAdd(ra->stride, rb->stride), ra->lanes);
  }
  if (const auto* add = b.As<Add>(); add != nullptr && t.is_int() && IntConst(add->b)) {
    return SAdd(SAdd(a, add->a), add->b);  // a + (y + c) -> (a + y) + c
  }
  if (auto c2 = IntConst(b)) {
    if (const auto* add = a.As<Add>()) {
      if (auto c1 = IntConst(add->b)) {
        if (Expr c = IntOf(CheckedAdd(*c1, *c2), t); c.defined()) {
          return SAdd(add->a, c);
        }
      }
    }
    if (const auto* sub = a.As<Sub>()) {
      if (auto c1 = IntConst(sub->b)) {
        if (Expr c = IntOf(CheckedSub(*c2, *c1), t); c.defined()) {
          return SAdd(sub->a, c);
        }
      }
    }
  }
  return Add::Make(std::move(a), std::move(b));
}

Expr SSub(Expr a, Expr b) {
  Type t = a.type();
  if (auto x = IntConst(a), y = IntConst(b); x && y) {
    if (Expr r = IntOf(CheckedSub(*x, *y), t); r.defined()) {
      return r;
    }
  }
  if (auto x = FloatConst(a), y = FloatConst(b); x && y) {
    return FloatImm::Make(*x - *y);
  }
  if (IsConst(b, 0)) {
    return a;
  }
  if (t.is_int() && StructurallyEqual(a, b)) {
    return Zero(t);
  }
  const auto* ba = a.As<Broadcast>();
  const auto* bb = b.As<Broadcast>();
  const auto* ra = a.As<Ramp>();
  const auto* rb = b.As<Ramp>();
  if (ba && bb) {
    return Broadcast::Make(SSub(ba->value, bb->value), ba->lanes);
  }
  if (ra && bb) {
    return SRamp(SSub(ra->base, bb->value), ra->stride, ra->lanes);
  }
  if (ba && rb) {
    return SRamp(SSub(ba->value, rb->base), SSub(Zero(rb->stride.type()), rb->stride), rb->lanes);
  }
  if (ra && rb) {
    return SRamp(SSub(ra->base, rb->base), SSub(ra->stride, rb->stride), ra->lanes);
  }
  if (auto c2 = IntConst(b)) {
    if (const auto* add = a.As<Add>()) {
      if (auto c1 = IntConst(add->b)) {
        if (Expr c = IntOf(CheckedSub(*c1, *c2), t); c.defined()) {
          return SAdd(add->a, c);
        }
      }
    }
  }
  return Sub::Make(std::move(a), std::move(b));
}

Expr SMul(Expr a, Expr b) {
  Type t = a.type();
  if (auto x = IntConst(a), y = IntConst(b); x && y) {
    if (Expr r = IntOf(CheckedMul(*x, *y), t); r.defined()) {
      return r;
    }
  }
  if (auto x = FloatConst(a), y = FloatConst(b); x && y) {
    return FloatImm::Make(*x * *y);
  }
  if (IsScalarConst(a) && !IsScalarConst(b)) {
    std::swap(a, b);
  }
  if (IsConst(b, 1)) {
    return a;
  }
  if (IsConst(a, 1)) {
    return b;
  }
  if (t.is_int() && (IsConst(a, 0) || IsConst(b, 0))) {
    return Zero(t);
  }
  const auto* ba = a.As<Broadcast>();
  const auto* bb = b.As<Broadcast>();
  const auto* ra = a.As<Ramp>();
  const auto* rb = b.As<Ramp>();
  if (ba && bb) {
    return Broadcast::Make(SMul(ba->value, bb->value), ba->lanes);
  }
  if (ra && bb) {
    return SRamp(SMul(ra->base, bb->value), SMul(ra->stride, bb->value), ra->lanes);
  }
  if (ba && rb) {
    return SRamp(SMul(rb->base, ba->value), SMul(rb->stride, ba->value), rb->lanes);
  }
  if (auto c2 = IntConst(b)) {
    if (const auto* add = a.As<Add>()) {
      if (auto c1 = IntConst(add->b)) {
        if (Expr c = IntOf(CheckedMul(*c1, *c2), t); c.defined()) {
          return SAdd(SMul(add->a, b), c);  // (x + c1) * c2 -> x * c2 + c1 * c2
        }
      }
    }
    if (const auto* mul = a.As<Mul>()) {
      if (auto c1 = IntConst(mul->b)) {
        if (Expr c = IntOf(CheckedMul(*c1, *c2), t); c.defined()) {
          return SMul(mul->a, c);
        }
      }
    }
  }
  return Mul::Make(std::move(a), std::move(b));
}

Expr SDiv(Expr a, Expr b) {
  Type t = a.type();
  if (auto x = IntConst(a), y = IntConst(b); x && y && *y != 0) {
    if (!(*x == std::numeric_limits<int64_t>::min() && *y == -1)) {
      return IntOf(FloorDiv(*x, *y), t);
    }
  }
  if (auto x = FloatConst(a), y = FloatConst(b); x && y && *y != 0.0f) {
    return FloatImm::Make(*x / *y);
  }
  if (IsConst(b, 1)) {
    return a;
  }
  const auto* ba = a.As<Broadcast>();
  const auto* bb = b.As<Broadcast>();
  if (ba && bb) {
    return Broadcast::Make(SDiv(ba->value, bb->value), ba->lanes);
  }
  return Div::Make(std::move(a), std::move(b));
}

Expr SMod(Expr a, Expr b) {
  Type t = a.type();
  if (auto x = IntConst(a), y = IntConst(b); x && y && *y != 0) {
    return IntOf(*y == -1 ? 0 : FloorMod(*x, *y), t);
  }
  if (IsConst(b, 1)) {
    return Zero(t);
  }
  const auto* ba = a.As<Broadcast>();
  const auto* bb = b.As<Broadcast>();
  if (ba && bb) {
    return Broadcast::Make(SMod(ba->value, bb->value), ba->lanes);
  }
  return Mod::Make(std::move(a), std::move(b));
}

Expr SMinMax(Expr a, Expr b, bool is_min) {
  if (auto x = IntConst(a), y = IntConst(b); x && y) {
    return IntImm::Make(is_min ? std::min(*x, *y) : std::max(*x, *y), a.type());
  }
  if (auto x = FloatConst(a), y = FloatConst(b); x && y) {
    return FloatImm::Make(is_min ? std::fmin(*x, *y) : std::fmax(*x, *y));
  }
  if (StructurallyEqual(a, b)) {
    return a;
  }
  if (IsScalarConst(a) && !IsScalarConst(b)) {
    std::swap(a, b);
  }
  const auto* ba = a.As<Broadcast>();
  const auto* bb = b.As<Broadcast>();
  if (ba && bb) {
    return Broadcast::Make(SMinMax(ba->value, bb->value, is_min), ba->lanes);
  }
  return is_min ? Min::Make(std::move(a), std::move(b)) : Max::Make(std::move(a), std::move(b));
}

template <typename T>
Expr SCompare(Expr a, Expr b) {
  int lanes = a.type().lanes();
  auto decide = [](auto x, auto y) {
    if constexpr (T::kKind == ExprKind::kEQ) {
      return x == y;
    } else if constexpr (T::kKind == ExprKind::kNE) {
      return x != y;
    } else if constexpr (T::kKind == ExprKind::kLT) {
      return x < y;
    } else if constexpr (T::kKind == ExprKind::kLE) {
      return x <= y;
    } else if constexpr (T::kKind == ExprKind::kGT) {
      return x > y;
    } else {
      static_assert(T::kKind == ExprKind::kGE);
      return x >= y;
    }
  };
  if (auto x = IntConst(a), y = IntConst(b); x && y) {
    return BoolOf(decide(*x, *y), lanes);
  }
  if (auto x = FloatConst(a), y = FloatConst(b); x && y) {
    return BoolOf(decide(*x, *y), lanes);
  }
  if (a.type().is_int() && StructurallyEqual(a, b)) {
    return BoolOf(decide(0, 0), lanes);
  }
  const auto* ba = a.As<Broadcast>();
  const auto* bb = b.As<Broadcast>();
  if (ba && bb) {
    return Broadcast::Make(SCompare<T>(ba->value, bb->value), ba->lanes);
  }
  return T::Make(std::move(a), std::move(b));
}

Expr SAndOr(Expr a, Expr b, bool is_and) {
  std::optional<bool> x = BoolConst(a);
  std::optional<bool> y = BoolConst(b);
  if (x) {
    return *x == is_and ? b : a;  // true && b == b; false || b == b; else the constant a
  }
  if (y) {
    return *y == is_and ? a : b;
  }
  return is_and ? And::Make(std::move(a), std::move(b)) : Or::Make(std::move(a), std::move(b));
}

Expr SCast(Type t, Expr v) {
  if (v.type() == t) {
    return v;
  }
  // A cast to or from a storage type is never folded: its rounding is done in one place, by
  // the backends and the simulator.
  const bool storage = t.is_storage_only() || v.type().is_storage_only();
  if (t.is_scalar() && !storage) {
    if (auto i = IntConst(v)) {
      if (t.is_float()) {
        return FloatImm::Make(static_cast<double>(*i));
      }
      if (t.is_bool()) {
        return IntImm::Make(*i != 0 ? 1 : 0, t);
      }
      if (Expr r = IntOf(*i, t); r.defined()) {
        return r;
      }
    }
    if (auto b = BoolConst(v); b && (t.is_int() || t.is_float())) {
      return t.is_float() ? FloatImm::Make(*b ? 1.0 : 0.0) : IntImm::Make(*b ? 1 : 0, t);
    }
  }
  if (const auto* b = v.As<Broadcast>()) {
    return Broadcast::Make(SCast(t.Element(), b->value), b->lanes);
  }
  return Cast::Make(t, std::move(v));
}

class CallFinder final : public IrVisitor {
 public:
  bool found = false;

 protected:
  void Visit(const CallExtern* op) override { found = true; }
};

bool HasCall(const Expr& e) {
  CallFinder finder;
  finder.VisitExpr(e);
  return finder.found;
}

bool IsNoOp(const Stmt& s) {
  const auto* block = s.As<Block>();
  return block != nullptr && block->stmts.empty();
}

Stmt NoOp() { return Block::Make({}); }

bool IsCpuLoop(LoopKind kind) { return !IsGpuLoop(kind); }

// --- the mutator ----------------------------------------------------------------------------

class Simplifier final : public IrMutator {
 protected:
  Expr Visit(const Add* op) override { return ByRange(SAdd(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const Sub* op) override { return ByRange(SSub(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const Mul* op) override { return ByRange(SMul(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const Div* op) override { return ByRange(SDiv(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const Mod* op) override { return ByRange(SMod(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const Min* op) override {
    return ByRange(SMinMax(Mutate(op->a), Mutate(op->b), true));
  }
  Expr Visit(const Max* op) override {
    return ByRange(SMinMax(Mutate(op->a), Mutate(op->b), false));
  }
  Expr Visit(const EQ* op) override { return ByRange(SCompare<EQ>(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const NE* op) override { return ByRange(SCompare<NE>(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const LT* op) override { return ByRange(SCompare<LT>(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const LE* op) override { return ByRange(SCompare<LE>(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const GT* op) override { return ByRange(SCompare<GT>(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const GE* op) override { return ByRange(SCompare<GE>(Mutate(op->a), Mutate(op->b))); }
  Expr Visit(const And* op) override { return SAndOr(Mutate(op->a), Mutate(op->b), true); }
  Expr Visit(const Or* op) override { return SAndOr(Mutate(op->a), Mutate(op->b), false); }

  Expr Visit(const Not* op) override {
    Expr a = Mutate(op->a);
    if (auto b = BoolConst(a)) {
      return BoolOf(!*b, a.type().lanes());
    }
    if (const auto* inner = a.As<Not>()) {
      return inner->a;
    }
    return a.same_as(op->a) ? Expr(op) : Not::Make(std::move(a));
  }

  Expr Visit(const Select* op) override {
    Expr c = Mutate(op->condition);
    Expr t = Mutate(op->true_value);
    Expr f = Mutate(op->false_value);
    if (auto b = BoolConst(c)) {
      return *b ? t : f;
    }
    if (StructurallyEqual(t, f)) {
      return t;
    }
    return Select::Make(std::move(c), std::move(t), std::move(f));
  }

  Expr Visit(const Cast* op) override { return SCast(op->type, Mutate(op->value)); }

  Expr Visit(const Ramp* op) override {
    return SRamp(Mutate(op->base), Mutate(op->stride), op->lanes);
  }

  Expr Visit(const Fma* op) override {
    Expr a = Mutate(op->a);
    Expr b = Mutate(op->b);
    Expr c = Mutate(op->c);
    if (auto x = FloatConst(a), y = FloatConst(b), z = FloatConst(c); x && y && z) {
      return FloatImm::Make(std::fma(*x, *y, *z));
    }
    if (a.same_as(op->a) && b.same_as(op->b) && c.same_as(op->c)) {
      return Expr(op);
    }
    return Fma::Make(std::move(a), std::move(b), std::move(c));
  }

  Stmt Visit(const For* op) override {
    Expr min = Mutate(op->min);
    Expr extent = Mutate(op->extent);
    std::optional<int64_t> n = IntConst(extent);
    if (n && *n <= 0) {
      return NoOp();
    }
    if (n && *n == 1 && IsCpuLoop(op->loop_kind)) {
      return Mutate(Substitute(op->body, op->var, min));
    }
    std::optional<Interval> min_range = ranges_.Of(min);
    std::optional<Interval> extent_range = ranges_.Of(extent);
    if (min_range && extent_range && extent_range->hi >= 1 &&
        min_range->hi <= INT64_MAX - extent_range->hi) {
      ranges_.Set(op->var.get(), Interval{min_range->lo, min_range->hi + extent_range->hi - 1});
    }
    Stmt body = Mutate(op->body);
    ranges_.Erase(op->var.get());
    if (IsNoOp(body)) {
      return NoOp();
    }
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) {
      return Stmt(op);
    }
    return For::Make(op->var, std::move(min), std::move(extent), op->loop_kind, std::move(body),
                     op->thread_axis);
  }

  Stmt Visit(const IfThenElse* op) override {
    Expr c = Mutate(op->condition);
    if (auto b = BoolConst(c)) {
      return *b ? Mutate(op->then_case)
                : (op->else_case.defined() ? Mutate(op->else_case) : NoOp());
    }
    Stmt t = Mutate(op->then_case);
    Stmt e = Mutate(op->else_case);
    if (e.defined() && IsNoOp(e)) {
      e = Stmt();
    }
    if (IsNoOp(t)) {
      return e.defined() ? IfThenElse::Make(SNot(c), e) : NoOp();
    }
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) {
      return Stmt(op);
    }
    return IfThenElse::Make(std::move(c), std::move(t), std::move(e));
  }

  Stmt Visit(const LetStmt* op) override {
    Expr value = Mutate(op->value);
    bool unused = !UsesVar(op->body, op->var) && !HasCall(value);
    if (IsScalarConst(value) || BoolConst(value) || value.As<Variable>() != nullptr || unused) {
      return Mutate(Substitute(op->body, op->var, value));
    }
    if (std::optional<Interval> range = ranges_.Of(value)) {
      ranges_.Set(op->var.get(), *range);
    }
    Stmt body = Mutate(op->body);
    ranges_.Erase(op->var.get());
    if (IsNoOp(body)) {
      return NoOp();
    }
    if (value.same_as(op->value) && body.same_as(op->body)) {
      return Stmt(op);
    }
    return LetStmt::Make(op->var, std::move(value), std::move(body));
  }

  Stmt Visit(const Allocate* op) override {
    Stmt body = Mutate(op->body);
    if (IsNoOp(body)) {
      return NoOp();
    }
    return body.same_as(op->body) ? Stmt(op) : Allocate::Make(op->buffer, op->size, body);
  }

 private:
  Expr ByRange(const Expr& e) const { return ranges_.Fold(e); }

  static Expr SNot(const Expr& c) {
    if (const auto* inner = c.As<Not>()) {
      return inner->a;
    }
    return Not::Make(c);
  }

  IntervalScope ranges_;
};

}  // namespace

Stmt Simplify(const Stmt& s) { return Simplifier().Mutate(s); }
Expr Simplify(const Expr& e) { return Simplifier().Mutate(e); }

}  // namespace tune::ir
