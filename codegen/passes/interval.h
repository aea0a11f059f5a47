// Integer value ranges of expressions, from the ranges of the variables in scope.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "codegen/ir/ir.h"

namespace tune::ir {

/// A closed integer interval [lo, hi].
struct Interval {
  int64_t lo = 0;
  int64_t hi = 0;
  bool IsPoint() const { return lo == hi; }
};

/// The known ranges of variables (loop variables, lets) and the ranges of expressions built
/// from them with + - * / % min max select and immediates. Anything else is unknown.
class IntervalScope {
 public:
  /// Records the range of `var` (replacing an earlier one) until Erase.
  void Set(const Variable* var, Interval range) { ranges_[var] = range; }
  void Erase(const Variable* var) { ranges_.erase(var); }

  /// The range of a scalar integer expression, or nullopt when unknown (or on overflow).
  std::optional<Interval> Of(const Expr& e) const;

  /// `e` (already simplified) folded by ranges: a scalar integer expression with one possible
  /// value becomes that value, x % c within one period becomes x - k * c, min/max of ordered
  /// operands picks one, a comparison of disjoint or ordered ranges becomes true/false.
  /// Anything else is returned unchanged.
  Expr Fold(const Expr& e) const;

 private:
  std::map<const Variable*, Interval> ranges_;
};

}  // namespace tune::ir
