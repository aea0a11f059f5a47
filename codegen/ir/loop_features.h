// Features of a loop nest for a cost model, read from the IR a template builds (before LLVM):
// the loops by kind and extent, the arithmetic and memory operations each executes, how each
// access strides along the innermost loop, and how many bytes each loop level of the heaviest
// nest touches. A fixed-width vector, the same for every kernel, so one model can learn from
// kernels of different shapes and configs (in the spirit of Ansor's per-store features, summed
// over the kernel).
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "codegen/ir/ir.h"

namespace tune::ir {

/// The number of features and their names, in order (counts and sizes are log2(1 + x); shares
/// and ratios are plain).
inline constexpr size_t kLoopFeatureCount = 34;
const std::array<std::string_view, kLoopFeatureCount>& LoopFeatureNames();

/// The features of `func`. Loop extents that depend on outer loops are taken at the first
/// iteration of those loops (a full tile, for the tiled nests templates build).
std::vector<float> LoopFeatures(const LoweredFunc& func);

}  // namespace tune::ir
