// Simplify: constant folding and algebraic identities.
#pragma once

#include "codegen/ir/ir.h"

namespace tune::ir {

/// Folds constant integer, float and bool arithmetic (integers with floor division/modulo,
/// never folding an overflow or a division by zero), applies identities (x + 0, x * 1, integer
/// x * 0, x / 1, min/max of constants or equal operands, selects and ifs with constant
/// conditions), keeps constants on the right of commutative operators, moves integer
/// constants outward (`(x + c1) + c2`, `x + (y + c)`, `(x + c1) * c2`), moves broadcasts and
/// ramps outward (`ramp(b, s) + broadcast(x)` becomes `ramp(b + x, s)`, `ramp(b, s) *
/// broadcast(c)` becomes `ramp(b * c, s * c)`), replaces CPU loops of extent 1 by their body
/// with the loop variable substituted, removes loops of constant extent <= 0, empty blocks and
/// allocations around nothing, and substitutes lets bound to constants or variables (or
/// unused). The result means the same as the input.
Stmt Simplify(const Stmt& s);
Expr Simplify(const Expr& e);

}  // namespace tune::ir
