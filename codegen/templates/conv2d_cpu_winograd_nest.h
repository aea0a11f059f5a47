// The loop nest of conv2d.cpu.winograd (conv2d_cpu_winograd.h): the plan a workload, a target
// and a config give, and the builder of its IR (transforms, GEMMs, loop orders).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/templates/template.h"
#include "common/workload.h"

namespace tune {

struct WinogradPlan {
  Conv2dShape s;
  int64_t p = 1, q = 1;            // output height and width
  int64_t b = 1, cb = 1, kbs = 1;  // channels per block, input and output blocks
  bool plain = false;        // NCHW tensors (b: the channels of a group of vectors), else blocked
  int64_t vw = 1, vpb = 1;   // vector width, vectors per block
  int64_t kvecs = 1;         // vectors of output channels (K / vw)
  int64_t m = 2, alpha = 4;  // F(m, 3)
  int64_t th = 1, tw = 1;    // tiles along the height and the width
  int64_t tiles = 1;         // n * th * tw
  int64_t jt = 1, kv = 1,
          tr = 1;        // register tile (jt tiles x kv vectors), register tiles per block
  int64_t tb = 1;        // tiles per block (orders 1, 2: all tiles, rounded up to jt)
  int order = 0;         // 0: blocks of tiles outer; 1, 2: chunks of output channels outer
  int64_t cc = 1;        // input channels per chunk of the GEMMs' reduction (C: one)
  int gemm_order = 0;    // index into WinogradGemmOrders()
  int64_t unroll_c = 1;  // unroll factor of the GEMMs' loop over input channels
  int it_order = 0;      // input transform: 0 tiles outer, 1 channel vectors outer
  int ot_order = 0;      // output transform: 0 tiles outer, 1 channel vectors outer
  bool parallel = false;
  int64_t threads = 1;  // the target's threads (parallel loops split their work among them)
  Epilogue epilogue = Epilogue::kNone;
  bool prepared = false;  // the kernel takes the transformed filters (BuildWinogradPreparation)
};

/// The loops of the GEMM stage that gemm_order permutes, and its orders (outermost first);
/// order 0 is xi, kc, jr.
enum WinogradGemmLoop : int { kGemmPoints = 0, kGemmChannelChunks = 1, kGemmTileRows = 2 };
const std::vector<std::vector<int>>& WinogradGemmOrders();

/// The kernel of `plan` named `func_name` (in the workload's layout). The plan must come
/// from a config of the template's space (not checked here). With `prepared`, its second
/// parameter is what BuildWinogradPreparation's function wrote, and it transforms no filter.
ir::LoweredFunc BuildWinogradNest(const WinogradPlan& plan, std::string_view func_name);

/// For a plan with `prepared`: the function named `func_name` that transforms every filter
/// (weight -> prepared), and the size of what it writes.
PreparedWeights BuildWinogradPreparation(const WinogradPlan& plan, std::string_view func_name);

}  // namespace tune
