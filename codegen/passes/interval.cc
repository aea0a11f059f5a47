#include "codegen/passes/interval.h"

#include <algorithm>
#include <initializer_list>

namespace tune::ir {
namespace {

std::optional<Interval> Hull(std::initializer_list<std::optional<int64_t>> values) {
  Interval r{INT64_MAX, INT64_MIN};
  for (const std::optional<int64_t>& v : values) {
    if (!v) {
      return std::nullopt;
    }
    r.lo = std::min(r.lo, *v);
    r.hi = std::max(r.hi, *v);
  }
  return r;
}

std::optional<int64_t> AddChecked(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}
std::optional<int64_t> SubChecked(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}
std::optional<int64_t> MulChecked(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}

}  // namespace

std::optional<Interval> IntervalScope::Of(const Expr& e) const {
  if (!e.defined() || !e.type().is_int() || !e.type().is_scalar()) {
    return std::nullopt;
  }
  if (const auto* imm = e.As<IntImm>()) {
    return Interval{imm->value, imm->value};
  }
  if (const auto* var = e.As<Variable>()) {
    auto it = ranges_.find(var);
    return it == ranges_.end() ? std::nullopt : std::optional<Interval>(it->second);
  }
  if (const auto* sel = e.As<Select>()) {
    std::optional<Interval> t = Of(sel->true_value);
    std::optional<Interval> f = Of(sel->false_value);
    if (!t || !f) {
      return std::nullopt;
    }
    return Interval{std::min(t->lo, f->lo), std::max(t->hi, f->hi)};
  }
  const auto* bin = dynamic_cast<const BinaryExprNode*>(e.get());
  if (bin == nullptr) {
    return std::nullopt;
  }
  std::optional<Interval> a = Of(bin->a);
  std::optional<Interval> b = Of(bin->b);
  if (!a || !b) {
    return std::nullopt;
  }
  switch (e.kind()) {
    case ExprKind::kAdd:
      return Hull({AddChecked(a->lo, b->lo), AddChecked(a->hi, b->hi)});
    case ExprKind::kSub:
      return Hull({SubChecked(a->lo, b->hi), SubChecked(a->hi, b->lo)});
    case ExprKind::kMul:
      return Hull({MulChecked(a->lo, b->lo), MulChecked(a->lo, b->hi), MulChecked(a->hi, b->lo),
                   MulChecked(a->hi, b->hi)});
    case ExprKind::kMin:
      return Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    case ExprKind::kMax:
      return Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    case ExprKind::kDiv: {
      if (!b->IsPoint() || b->lo == 0 || (b->lo == -1 && a->lo == INT64_MIN)) {
        return std::nullopt;
      }
      return Hull({FloorDiv(a->lo, b->lo), FloorDiv(a->hi, b->lo)});
    }
    case ExprKind::kMod: {
      if (!b->IsPoint() || b->lo == 0) {
        return std::nullopt;
      }
      int64_t c = b->lo;
      if (c > 0 && FloorDiv(a->lo, c) == FloorDiv(a->hi, c)) {
        return Interval{FloorMod(a->lo, c), FloorMod(a->hi, c)};
      }
      return c > 0 ? Interval{0, c - 1} : Interval{c + 1, 0};
    }
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar:
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE:
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kNot:
    case ExprKind::kSelect:
    case ExprKind::kCast:
    case ExprKind::kReinterpret:
    case ExprKind::kBroadcast:
    case ExprKind::kRamp:
    case ExprKind::kShuffle:
    case ExprKind::kLoad:
    case ExprKind::kFma:
    case ExprKind::kDotAccumulate:
    case ExprKind::kCallExtern:
    case ExprKind::kAddressOf:
      break;
  }
  return std::nullopt;
}

Expr IntervalScope::Fold(const Expr& e) const {
  if (!e.defined() || !e.type().is_scalar() || e.As<IntImm>() != nullptr) {
    return e;
  }
  const auto* bin = dynamic_cast<const BinaryExprNode*>(e.get());
  if (e.type().is_int()) {
    std::optional<Interval> r = Of(e);
    if (r && r->IsPoint()) {
      return IntImm::Make(r->lo, e.type());
    }
    if (bin == nullptr) {
      return e;
    }
    std::optional<Interval> a = Of(bin->a);
    std::optional<Interval> b = Of(bin->b);
    if (!a || !b) {
      return e;
    }
    ExprKind k = e.kind();
    if (k == ExprKind::kMod && b->IsPoint() && b->lo > 0 &&
        FloorDiv(a->lo, b->lo) == FloorDiv(a->hi, b->lo)) {
      int64_t offset = FloorDiv(a->lo, b->lo) * b->lo;
      return offset == 0 ? bin->a : Sub::Make(bin->a, IntImm::Make(offset, e.type()));
    }
    if (k == ExprKind::kMin || k == ExprKind::kMax) {
      bool a_first = a->hi <= b->lo;
      bool b_first = b->hi <= a->lo;
      if (a_first || b_first) {
        return (k == ExprKind::kMin) == a_first ? bin->a : bin->b;
      }
    }
    return e;
  }
  if (!e.type().is_bool() || bin == nullptr) {
    return e;
  }
  std::optional<Interval> a = Of(bin->a);
  std::optional<Interval> b = Of(bin->b);
  if (!a || !b) {
    return e;
  }
  std::optional<bool> decided;
  ExprKind k = e.kind();
  if (k == ExprKind::kLT || k == ExprKind::kGE) {
    if (a->hi < b->lo) {
      decided = k == ExprKind::kLT;
    } else if (a->lo >= b->hi) {
      decided = k == ExprKind::kGE;
    }
  } else if (k == ExprKind::kLE || k == ExprKind::kGT) {
    if (a->hi <= b->lo) {
      decided = k == ExprKind::kLE;
    } else if (a->lo > b->hi) {
      decided = k == ExprKind::kGT;
    }
  } else if (k == ExprKind::kEQ || k == ExprKind::kNE) {
    bool disjoint = a->hi < b->lo || b->hi < a->lo;
    bool same_point = a->IsPoint() && b->IsPoint() && a->lo == b->lo;
    if (disjoint || same_point) {
      decided = (k == ExprKind::kEQ) == same_point;
    }
  }
  return decided ? IntImm::Make(*decided ? 1 : 0, Type::Bool()) : e;
}

}  // namespace tune::ir
