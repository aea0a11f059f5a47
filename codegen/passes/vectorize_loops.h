// VectorizeLoops: vectorized loops become vector operations.
#pragma once

#include "codegen/ir/ir.h"

namespace tune::ir {

/// Vectorized loops with more lanes than this stay loops (serial).
inline constexpr int64_t kMaxVectorLanes = 256;

/// Replaces each kVectorized loop of constant extent n (2..kMaxVectorLanes) by its body
/// evaluated on n lanes at once: the loop variable becomes ramp(min, 1, n), expressions that
/// depend on it become vector expressions (invariants are broadcast, Fma stays Fma), loads and
/// stores through a ramp of stride 1 become dense vector accesses, other vector indices
/// gathers/scatters. The body is then simplified.
///
/// A loop is vectorized only when that cannot change its meaning; otherwise it becomes a serial
/// loop (never a miscompile). It stays serial when its extent is not a constant, its body
/// already holds vectors, or holds allocations, Evaluate, barriers, parallel or GPU loops,
/// calls or addresses, conditions or inner loop bounds that depend on the variable, stores
/// whose index does not depend on it, or accesses of a stored buffer that two lanes could
/// share (each access of a buffer the body stores must use the same ramp stride s != 0 and the
/// same loop-invariant base offset, plus inner loop variables scaled by multiples of n * s).
/// Each fallback is logged at debug level on the `codegen` logger with its reason.
Stmt VectorizeLoops(const Stmt& s);

}  // namespace tune::ir
