// The loop nest of gemm.cpu.blocked (gemm_cpu_blocked.h): the plan that a GEMM shape, an
// epilogue, a form, a target and a config give, and the builders of its IR.
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "codegen/templates/gemm_cpu_blocked.h"
#include "codegen/templates/template.h"
#include "common/workload.h"

namespace tune {

struct BlockedGemmPlan {
  int64_t m, n, k;
  int64_t mr, nr, kc, mc, nc;
  int64_t unroll_k;
  bool pack_a, pack_b;
  int order;
  int64_t lanes;
  bool parallel;
  Epilogue epilogue;
  GemmKernelForm form;
  // weights=prepared with pack_b: B comes packed (PreparedB), and the kernel packs none of it.
  bool prepacked_b = false;
};

/// The plan of `config` (a point of the template's space for a GEMM of `shape`) in `form`.
BlockedGemmPlan BlockedGemmPlanFor(const GemmShape& shape, Epilogue epilogue,
                                   const GemmKernelForm& form, const Target& target,
                                   const Config& config);

/// The kernel of `plan` named `func_name`: parameters (A, B, [bias], C), or (B, A, [bias], C)
/// with form.b_first; B is the prepared B with plan.prepacked_b.
ir::LoweredFunc BuildBlockedGemmNest(const BlockedGemmPlan& plan, std::string_view func_name);

/// For a plan with prepacked_b: the function named `func_name` that writes the prepared B (every
/// (columns, reduction) block packed as the kernel would pack it, in the order it reads them).
PreparedWeights BuildBlockedGemmPreparation(const BlockedGemmPlan& plan,
                                            std::string_view func_name);

}  // namespace tune
