// The loop nest of conv2d.cpu.blocked (conv2d_cpu_blocked.h): the plan a workload, a target and
// a config give, and the builder of its IR.
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "common/workload.h"

namespace tune {

struct BlockedConvPlan {
  Conv2dShape s;
  int64_t p = 1, q = 1;     // output height and width
  int64_t b = 1;            // channels per block
  int64_t cb = 1, kbs = 1;  // input and output channel blocks
  int64_t vw = 1, vpb = 1;  // vector width, vectors per block
  int64_t kb = 1, qt = 1;   // register tile: output blocks x positions along the width
  int64_t pt = 1;           // output rows of the register tile
  int64_t kt = 1;           // register tiles of output blocks (groups of kb) per parallel iteration
  int tile_order = 0;  // in an iteration: 0 groups outer, tiles along the width inner; 1 reverse
  int64_t cbc = 1;     // input-channel blocks per reduction chunk (cb: one chunk)
  bool chunk_outer = false;  // the chunk loop outside the parallel loop (else inside it)
  int unroll_rs = 0;         // 0 no filter loop unrolled, 1 both, 2 only s
  int64_t unroll_ci = 0;     // loop over a block's channels: 0 serial, 1 unrolled, f > 1 by f
  int loop_order = 0;        // parallel loop: 0 group outer, row block inner; 1 the reverse
  bool parallel = false;
  Epilogue epilogue = Epilogue::kNone;
};

/// The positions [left, right) of an output row of `s` that tiles of qt positions starting
/// inside the input cover: the loop of interior tiles and its remainder. The positions before
/// and after are border tiles, which start at constant positions and leave out the taps that
/// fall on the padding (their s loop unrolled whatever unroll_rs says). left == right when every
/// tile is a border tile.
struct InteriorTiles {
  int64_t left = 0, right = 0;
};
InteriorTiles InteriorTilesOf(const Conv2dShape& s, int64_t qt);

/// The kernel of `plan` named `func_name` (the workload's blocked layout). The plan must come
/// from a config of the template's space (not checked here).
ir::LoweredFunc BuildBlockedConvNest(const BlockedConvPlan& plan, std::string_view func_name);

}  // namespace tune
