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
    case NodeKind::kAdd:
      return Hull({AddChecked(a->lo, b->lo), AddChecked(a->hi, b->hi)});
    case NodeKind::kSub:
      return Hull({SubChecked(a->lo, b->hi), SubChecked(a->hi, b->lo)});
    case NodeKind::kMul:
      return Hull({MulChecked(a->lo, b->lo), MulChecked(a->lo, b->hi), MulChecked(a->hi, b->lo),
                   MulChecked(a->hi, b->hi)});
    case NodeKind::kMin:
      return Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    case NodeKind::kMax:
      return Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    case NodeKind::kDiv: {
      if (!b->IsPoint() || b->lo == 0 || (b->lo == -1 && a->lo == INT64_MIN)) {
        return std::nullopt;
      }
      return Hull({FloorDiv(a->lo, b->lo), FloorDiv(a->hi, b->lo)});
    }
    case NodeKind::kMod: {
      if (!b->IsPoint() || b->lo == 0) {
        return std::nullopt;
      }
      int64_t c = b->lo;
      if (c > 0 && FloorDiv(a->lo, c) == FloorDiv(a->hi, c)) {
        return Interval{FloorMod(a->lo, c), FloorMod(a->hi, c)};
      }
      return c > 0 ? Interval{0, c - 1} : Interval{c + 1, 0};
    }
    case NodeKind::kIntImm:
    case NodeKind::kFloatImm:
    case NodeKind::kVar:
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
    NodeKind k = e.kind();
    if (k == NodeKind::kMod && b->IsPoint() && b->lo > 0 &&
        FloorDiv(a->lo, b->lo) == FloorDiv(a->hi, b->lo)) {
      int64_t offset = FloorDiv(a->lo, b->lo) * b->lo;
      return offset == 0 ? bin->a : Sub::Make(bin->a, IntImm::Make(offset, e.type()));
    }
    if (k == NodeKind::kMin || k == NodeKind::kMax) {
      bool a_first = a->hi <= b->lo;
      bool b_first = b->hi <= a->lo;
      if (a_first || b_first) {
        return (k == NodeKind::kMin) == a_first ? bin->a : bin->b;
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
  NodeKind k = e.kind();
  if (k == NodeKind::kLT || k == NodeKind::kGE) {
    if (a->hi < b->lo) {
      decided = k == NodeKind::kLT;
    } else if (a->lo >= b->hi) {
      decided = k == NodeKind::kGE;
    }
  } else if (k == NodeKind::kLE || k == NodeKind::kGT) {
    if (a->hi <= b->lo) {
      decided = k == NodeKind::kLE;
    } else if (a->lo > b->hi) {
      decided = k == NodeKind::kGT;
    }
  } else if (k == NodeKind::kEQ || k == NodeKind::kNE) {
    bool disjoint = a->hi < b->lo || b->hi < a->lo;
    bool same_point = a->IsPoint() && b->IsPoint() && a->lo == b->lo;
    if (disjoint || same_point) {
      decided = (k == NodeKind::kEQ) == same_point;
    }
  }
  return decided ? IntImm::Make(*decided ? 1 : 0, Type::Bool()) : e;
}

}  // namespace tune::ir
