// The loop nest of gemm.cpu.dot (gemm_cpu_dot.h) where B is packed (b_in_place 0): the plan a
// workload, a target and a config give, and the builders of its IR (the kernel, and the
// preparation of its weights). The in-place form (layout NT, B read as it is) is
// gemm_cpu_dot_rows.h.
//
//
//   B packed into VNNI panels of nr = nv vectors' columns (cpu_matrix_gemm.h), once per call,
//     or once before the calls (weights=prepared)
//   for ib: row blocks of mc (parallel with -threads > 1)
//     for jb: column blocks of nc
//       for pb: reduction blocks of kc
//         [pack A's mc x kc block into mr-row panels of groups (pack_a; i8: shifted to u8)]
//         for jr: panels of the column block; for ir: mr-row tiles of the row block
//           acc[mr][nv] = 0 (first pb) or the block's partial sums
//           for each group of G reduction elements:
//             nv vector loads of B, then per row one broadcast group of A and nv dot products
//           the partial sums kept (acc_block), or C written with the epilogue (last pb)
//
// With pack_b = 1 (canonical weights, more than one column block) B is packed a column block at
// a time where it is used, and the column blocks are the outer loop:
//
//   for jb: column blocks of nc
//     pack the block's panels (nc columns, all of K: a buffer that stays in cache)
//     for ib: row blocks of mc (parallel with -threads > 1)
//       for pb: ... as above
//
// so that B is read once from memory and its packed copy never goes there: packing all of a
// large B (a 4096 x 4096 projection's 32 MB) writes it out and reads it back.
//
// With layout NT, b_in_place = 1 builds gemm_cpu_dot_rows.h's form instead: B's rows read in
// place, no packing (what few rows against canonical weights need).
//
// i8 x i8 has no VNNI instruction: B is packed as it is (s8, vpdpbusd's signed operand), A read
// (or packed) as a + 128 (u8, the unsigned one), and each column's accumulator starts at the
// compensation -128 x its sum of B, written after its panel when B is packed
// (cpu_matrix_gemm.h): sum (a + 128) b - 128 sum b = sum a b. The compensation is the weights'
// alone, so prepared weights carry it, and A is read in place as for u8i8. (The first form
// shifted B and subtracted A's row sums, taken while packing A for every column block: s8 x s8
// then ran at 0.71-0.90 of u8i8 on a Zen 5 core.)
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "codegen/templates/cpu_matrix_gemm.h"
#include "codegen/templates/template.h"
#include "codegen/templates/template_util.h"
#include "common/workload.h"

namespace tune {

/// The f32 / i32 lanes of a 512-bit vector.
inline constexpr int64_t kGemmDotLanes = 16;

/// The elements of one dot product group: 2 (bf16, f16 pairs) or 4 (8-bit quads).
inline int GemmDotGroupOf(const Workload& workload) { return CpuMatrixTypesOf(workload).group; }
/// K padded to a whole number of groups.
inline int64_t GemmDotPaddedK(const Workload& workload) {
  const int64_t g = GemmDotGroupOf(workload);
  return CeilDiv(workload.gemm().k, g) * g;
}

struct GemmDotPlan {
  GemmShape shape;
  GemmLayout layout = GemmLayout::kNN;
  CpuMatrixTypes types;
  Epilogue epilogue = Epilogue::kNone;
  int64_t mr = 8, nv = 2, kc = 512, mc = 96, nc = 768;
  bool pack_a = true;
  bool pack_b = false;  // B packed a column block at a time, the column blocks outermost
  bool prepared = false;
  bool parallel = false;
  bool i8 = false;  // s8 x s8 through vpdpbusd: A shifted to u8, B's compensation added
  VnniPanels panels;
};

/// The plan of one config of the packed form (knobs mr, nv, kc, mc, nc, pack_a, pack_b).
GemmDotPlan GemmDotPlanOf(const Workload& workload, const Target& target, const Config& config);

/// The kernel of `plan` for `workload` named `func_name`, parameters in Workload::Arguments()
/// order (the prepared weights in the weights' place with weights=prepared).
ir::LoweredFunc BuildGemmDotNest(const Workload& workload, const GemmDotPlan& plan,
                                 std::string_view func_name);
/// The function (weight, prepared) that packs B as the kernel of `plan` reads it.
PreparedWeights BuildGemmDotPreparation(const Workload& workload, const GemmDotPlan& plan,
                                        std::string_view func_name);

}  // namespace tune
