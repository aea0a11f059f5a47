// UnrollLoops: unrolled loops become copies of their body.
#pragma once

#include <cstdint>

#include "codegen/ir/ir.h"

namespace tune::ir {

/// Unrolled loops with more iterations than this stay loops (serial).
inline constexpr int64_t kMaxUnrollExtent = 1024;

/// Replaces each kUnrolled loop whose extent is a constant (after folding) by `extent` copies of
/// its body with the loop variable replaced by `min + i`, innermost loops first. An unrolled
/// loop whose extent is not a constant or exceeds kMaxUnrollExtent becomes a serial loop.
Stmt UnrollLoops(const Stmt& s);

}  // namespace tune::ir
