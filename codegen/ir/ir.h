// The loop-nest IR: immutable nodes held by shared handles (Expr, Stmt), in the style of Halide.
//
// Every node is a `final` struct with `static constexpr ExprKind kKind` (or StmtKind) and a
// validating `static Make(...)` that aborts (TUNE_CHECK) when its invariants do not hold: building
// bad IR is a bug in the code that builds it. Deeper properties (variables in scope, nested
// parallel loops, barriers outside GPU loops, ...) are checked by Verify() in
// codegen/ir/verifier.h.
//
// Semantics worth knowing:
//   - Integer arithmetic is signed; Div and Mod on integers are floor division and floor modulo
//     (the remainder has the sign of the divisor). Division by zero is undefined.
//   - Index expressions are int64. `Var x("x")` is an int64 variable and integer literals in
//     expressions are int64 immediates.
//   - Select evaluates both of its values; do not use it to guard an out-of-bounds load.
//   - Variables and buffers are identified by their node (pointer identity), not by name; two
//     `Var x("x")` are two different variables that print alike.
//   - A vector Load/Store takes a vector index (lanes = index lanes); a Ramp index of stride 1
//     is a dense vector access, any other vector index a gather/scatter.
//
// Binary Make()s and the operators coerce their operands before validating: an immediate takes
// the element type of the other operand (`x * 2` with float32 x makes 2 a float32), and a
// scalar operand is broadcast to the lanes of a vector operand. Anything else that mismatches
// aborts.
//
// The nodes live in codegen/ir/expr.h and codegen/ir/stmt.h, their kinds and the handles in
// codegen/ir/node.h; include this header. Companion headers: codegen/ir/visitor.h (IrVisitor,
// IrMutator), codegen/ir/substitute.h (Substitute), codegen/ir/printer.h (ToText),
// codegen/ir/verifier.h (Verify).
#pragma once

#include <optional>

#include "codegen/ir/expr.h"
#include "codegen/ir/node.h"
#include "codegen/ir/stmt.h"
#include "codegen/ir/type.h"

namespace tune::ir {

// ---------------------------------------------------------------------------------------------
// Builders and operators.

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // floor division for integers
Expr operator%(Expr a, Expr b);  // floor modulo
Expr operator-(Expr a);          // 0 - a
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

/// The value of an integer expression made only of integer immediates and arithmetic
/// (+ - * / % min max), or nullopt. Used for loop extents and Allocate sizes.
std::optional<int64_t> AsConstInt(const Expr& e);
/// Floor division and floor modulo of integers (the IR's Div and Mod); b != 0.
int64_t FloorDiv(int64_t a, int64_t b);
int64_t FloorMod(int64_t a, int64_t b);
/// True when `e` is an IntImm/FloatImm (or a Broadcast of one) equal to `value`.
bool IsConst(const Expr& e, double value);

/// `lanes` == 1: `e` itself; otherwise `e` broadcast (e scalar) or `e` unchanged (e already has
/// `lanes` lanes).
Expr BroadcastTo(Expr e, int lanes);

/// Load(buffer, index, lanes), or zeros where `valid` (a scalar bool; undefined: always valid)
/// is false: Select(valid, Load, 0). `index` must stay in range either way.
Expr LoadOrZero(Buffer buffer, Expr index, int lanes, Expr valid);
/// `lanes` elements of `buffer` from `index` read as its compute type (float32, or int32 for
/// int8 and uint8: a Cast from a storage type; the load itself for a compute one), zero where
/// `valid` (undefined: always valid) is false.
Expr LoadAsOrZero(Buffer buffer, Expr index, int lanes, Expr valid);

}  // namespace tune::ir

// ---------------------------------------------------------------------------------------------
// Template definitions.

namespace tune::ir {

template <std::integral T>
  requires(!std::same_as<T, bool>)
Expr::Expr(T value) : Expr(IntImm::Make(static_cast<int64_t>(value))) {}

template <typename T>
  requires std::same_as<T, bool>
Expr::Expr(T value) : Expr(IntImm::Make(value ? 1 : 0, Type::Bool())) {}

}  // namespace tune::ir

// IR-API-READY
