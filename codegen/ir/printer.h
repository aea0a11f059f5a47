// Deterministic text form of the IR, for logs, `--print-ir-after-all` and golden files.
//
//   func axpy(x: float32*, y: float32*) {
//     for.parallel (i, 0, 64) {
//       y[ramp((i * 16), 1, 16)] = fma(broadcast(2.0f, 16), x[ramp((i * 16), 1, 16)], ...)
//     }
//   }
//
// Loops print as `for.<kind> (var, min, extent) {` (GPU kinds add the axis: `for.gpu_thread.x`),
// `let v = value` binds v for the statements after it at the same indentation, and
// `allocate buf: float32[256] stack {` opens an allocation's scope.
#pragma once

#include <string>

#include "codegen/ir/ir.h"

namespace tune::ir {

/// The expression on one line. Binary operators are fully parenthesised; immediates print as
/// `3` (int64), `3i32`, `true`, `2.5f`.
std::string ToText(const Expr& e);
/// The statement, two spaces of indentation per level, one statement per line, ending with a
/// newline.
std::string ToText(const Stmt& s);
/// The function signature and its body.
std::string ToText(const LoweredFunc& f);

}  // namespace tune::ir
