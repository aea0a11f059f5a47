// What the nodes' Make functions share (internal to codegen/ir): identifier checks, the
// operand coercion rules of codegen/ir/ir.h, and the wrapping of a made statement node.
#pragma once

#include <memory>
#include <string>

#include "codegen/ir/node.h"

namespace tune::ir {

/// True for a non-empty [A-Za-z_][A-Za-z0-9_]*.
bool IsIdentifier(const std::string& name);

/// An immediate converted to the scalar type `to`, or an undefined Expr when that is not a
/// lossless immediate conversion.
Expr ConvertImmediate(const Expr& e, Type to);

/// Applies the operand coercion rules to `*e` so that its element type becomes `elem` and its
/// lanes `lanes`, where possible (an immediate converted, a scalar broadcast).
void CoerceTo(Expr* e, Type elem, int lanes);

/// A statement node, made by its Make function, as a Stmt.
template <typename T>
Stmt WrapStmt(std::shared_ptr<T> node) {
  return Stmt(std::shared_ptr<const StmtNode>(std::move(node)));
}

}  // namespace tune::ir
