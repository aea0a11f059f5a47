// The loop nest of conv2d.cpu.amx (conv2d_cpu_amx.h): the plan a workload, a target and a config
// give, and the builders of its IR (the kernel, and the preparation of its weights).
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "codegen/templates/cpu_matrix_gemm.h"
#include "codegen/templates/template.h"
#include "common/workload.h"

namespace tune {

struct ConvAmxPlan {
  Conv2dShape s;
  CpuMatrixTypes types;
  int64_t step = 32;  // input channels of one tile step: 64 bytes (32 bf16, 64 8-bit)
  // The filter's columns folded into the channels (ConvAmxFolds): a copied pixel (row h, output
  // column q) holds the S x C inputs its row of taps reads, channel s C + c; the taps are then
  // R x 1 and the columns need no phases.
  bool fold = false;
  int64_t taps_s = 1;  // the taps per filter row the kernel loops over: S, or 1 folded
  int64_t cp = 0;      // channels (folded: S x C) padded to whole steps
  // The input read as it is: NHWC, 1x1, stride 1, unpadded, whole steps of channels, at least
  // one register block of pixels. Else the phased copy below.
  bool in_place = false;
  int64_t phase_h = 1, phase_w = 1;  // the copy's phases per dimension (the stride; 1 in place,
                                     // and folded columns)
  int64_t hs = 0, ws = 0;   // rows and columns of one phase of one image (in place: H, W; folded
                            // columns: Q)
  int64_t rows = 0;         // the GEMM's rows: every position of phase (0, 0), N hs ws
  int64_t buffer_rows = 0;  // the copy's pixels: every phase's, and the rows tiles read past
  int64_t tm = 2, tn = 2, mc = 96;
  bool panels_outer = false;
  bool prepared = false;
  bool parallel = false;
  VnniPanels panels;
};

/// The plan of one config: register blocks of tm x tn accumulator tiles, row blocks of `mc`,
/// the groups of panels outside the row blocks (`panels_outer`), the filter's columns folded
/// into the channels (`fold`, where ConvAmxFolds).
ConvAmxPlan ConvAmxPlanOf(const Workload& workload, const Target& target, int64_t tm, int64_t tn,
                          int64_t mc, bool panels_outer, bool fold = false);

/// Whether folding the filter's columns into the channels shortens the reduction: S x C channels
/// fill fewer tile steps than S taps of C channels each (a stem's 7 x 3 in one step of 32 bf16,
/// where 7 taps of 3 channels take 7).
bool ConvAmxFolds(const Workload& workload);
/// Whether the tiles of `tm` row tiles read the input in place (ConvAmxPlan::in_place).
bool ConvAmxReadsInPlace(const Workload& workload, int64_t tm);
/// The GEMM's rows the plan of `workload` computes unfolded (ConvAmxPlan::rows), for the
/// space's knobs.
int64_t ConvAmxRows(const Workload& workload);

/// The kernel of `plan` for `workload` named `func_name`, parameters in Workload::Arguments()
/// order (the prepared weights in the weights' place with weights=prepared).
ir::LoweredFunc BuildConvAmxNest(const Workload& workload, const ConvAmxPlan& plan,
                                 std::string_view func_name);
/// The function (weight, prepared) that packs the weights as the kernel of `plan` reads them.
PreparedWeights BuildConvAmxPreparation(const Workload& workload, const ConvAmxPlan& plan,
                                        std::string_view func_name);

}  // namespace tune
