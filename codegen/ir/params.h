// Facts about a kernel's parameters that whoever launches it must know.
#pragma once

#include <vector>

#include "codegen/ir/ir.h"

namespace tune::ir {

/// The indexes (into func.params, ascending) of the parameters that some Store adds into
/// atomically: the kernel accumulates into them, so the caller fills them with zeros before
/// every launch.
std::vector<int> AtomicallyAccumulatedParams(const LoweredFunc& func);

}  // namespace tune::ir
