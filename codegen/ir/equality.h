// Structural comparison of expressions.
#pragma once

#include "codegen/ir/ir.h"

namespace tune::ir {

/// True when `a` and `b` are the same tree: equal kinds, types, immediates, symbols, the same
/// variable and buffer nodes, and structurally equal children. Two undefined handles are equal.
bool StructurallyEqual(const Expr& a, const Expr& b);

}  // namespace tune::ir
