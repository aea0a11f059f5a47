// The loop nest of conv2d.cpu.dot (conv2d_cpu_dot.h): the plan a workload, a target and a
// config give, and the builders of its IR (the kernel, and the preparation of its weights).
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "codegen/templates/cpu_matrix_gemm.h"
#include "codegen/templates/template.h"
#include "common/workload.h"

namespace tune {

/// The f32 / i32 lanes of a 512-bit vector: the output channels of one vector of the tile.
inline constexpr int64_t kConvDotLanes = 16;

/// The spatial extents the loop nest sees: a 1x1 convolution of stride 1 without padding as one
/// row of H*W pixels per image (its tiles run across the image's rows), others as they are.
struct ConvDotExtents {
  int64_t h = 1, w = 1, p = 1, q = 1;
};
ConvDotExtents ConvDotExtentsOf(const Conv2dShape& s);

struct ConvDotPlan {
  Conv2dShape s;
  ConvDotExtents e;
  CpuMatrixTypes types;
  int64_t g = 2;     // the group
  int64_t cp = 0;    // channels padded to a multiple of g
  int64_t cblk = 0;  // channels of one block of the reduction: the layout's block, or cp
  int64_t hp = 0, wp = 0, pad = 0;  // the padded input's extents and border (e's, 0: in place)
  // The input read as it is: NHWC, or NCHW<b>c with whole groups in a block, neither with a border,
  // channel padding or the shift.
  bool in_place = false;
  bool shift = false;  // i8: the padded input holds a + 128 as u8
  int64_t mr = 8, nv = 3, pr = 4, qc = 0;
  bool panels_outer = false;
  bool prepared = false;
  bool parallel = false;
  VnniPanels panels;
};

/// The plan of one config: register tile `mr` pixels x `nv` vectors of output channels, blocks
/// of `pr` output rows x `qc` pixels, the panels' loop outside the blocks' (`panels_outer`).
ConvDotPlan ConvDotPlanOf(const Workload& workload, const Target& target, int64_t mr, int64_t nv,
                          int64_t pr, int64_t qc, bool panels_outer);

/// The kernel of `plan` for `workload` named `func_name`, parameters in Workload::Arguments()
/// order (the prepared weights in the weights' place with weights=prepared).
ir::LoweredFunc BuildConvDotNest(const Workload& workload, const ConvDotPlan& plan,
                                 std::string_view func_name);
/// The function (weight, prepared) that packs the weights as the kernel of `plan` reads them.
PreparedWeights BuildConvDotPreparation(const Workload& workload, const ConvDotPlan& plan,
                                        std::string_view func_name);

}  // namespace tune
