// Replacing variables by expressions.
#pragma once

#include <map>

#include "codegen/ir/ir.h"

namespace tune::ir {

/// Replaces every use of `var` in `e` by `replacement` (which must have the variable's type).
/// Bindings of `var` inside (For, LetStmt) shadow it: uses below them are left alone.
Expr Substitute(const Expr& e, const Var& var, const Expr& replacement);
Stmt Substitute(const Stmt& s, const Var& var, const Expr& replacement);

/// Replaces several variables at once.
Expr Substitute(const Expr& e, const std::map<const Variable*, Expr>& replacements);
Stmt Substitute(const Stmt& s, const std::map<const Variable*, Expr>& replacements);

/// True when `e` (or `s`) uses `var`.
bool UsesVar(const Expr& e, const Var& var);
bool UsesVar(const Stmt& s, const Var& var);

}  // namespace tune::ir
