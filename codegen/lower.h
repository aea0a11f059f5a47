// The lowering pipeline: a straight line of passes from template IR to the IR that a backend
// translates.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "codegen/ir/ir.h"

namespace tune {

struct LowerOptions {
  /// Called with (stage name, IR text) after every stage when set (tune-compile
  /// --print-ir-after-all and the log level `trace` use it). Stage names: "input", "simplify",
  /// "unroll", "vectorize", "simplify-final".
  std::function<void(std::string_view stage, const std::string& text)> after_stage;
};

/// verify -> simplify -> unroll -> vectorize -> simplify -> verify. Bad input IR is
/// InvalidArgument (from Verify); IR that a pass broke is Internal.
absl::StatusOr<ir::LoweredFunc> Lower(ir::LoweredFunc func, const LowerOptions& options = {});

}  // namespace tune
