// Whole-function checks that node construction cannot make.
#pragma once

#include "absl/status/status.h"
#include "codegen/ir/ir.h"

namespace tune::ir {

/// Checks a function: a C identifier as name, distinct global float32 parameters, every
/// variable used in the scope of its binding and bound once along a path, loads, stores and
/// addresses only of parameters or enclosing Allocates, integer indices, constant positive
/// extents for vectorized and unrolled loops, no parallel loop inside another, GPU loops with
/// thread axes 0..2, barriers and gpu_shared/gpu_local buffers only inside GPU loops, Evaluate
/// of calls only. Returns InvalidArgument naming the offending node (in text form) and the
/// rule; OK otherwise.
absl::Status Verify(const LoweredFunc& func);

}  // namespace tune::ir
