#include "codegen/lower.h"

#include "codegen/ir/printer.h"
#include "codegen/ir/verifier.h"
#include "codegen/passes/simplify.h"
#include "codegen/passes/unroll_loops.h"
#include "codegen/passes/vectorize_loops.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {

absl::StatusOr<ir::LoweredFunc> Lower(ir::LoweredFunc func, const LowerOptions& options) {
  std::shared_ptr<spdlog::logger> log = Logger("codegen");
  auto after = [&](std::string_view stage) {
    if (options.after_stage) {
      options.after_stage(stage, ir::ToText(func));
    } else if (log->should_log(spdlog::level::trace)) {
      log->trace("IR of {} after {}:\n{}", func.name, stage, ir::ToText(func));
    }
  };
  after("input");
  RETURN_IF_ERROR(ir::Verify(func));
  func.body = ir::Simplify(func.body);
  after("simplify");
  func.body = ir::UnrollLoops(func.body);
  after("unroll");
  func.body = ir::VectorizeLoops(func.body);
  after("vectorize");
  func.body = ir::Simplify(func.body);
  after("simplify-final");
  if (absl::Status status = ir::Verify(func); !status.ok()) {
    return absl::InternalError(
        StrCat("lowering ", func.name, " produced invalid IR: ", std::string(status.message())));
  }
  return func;
}

}  // namespace tune
