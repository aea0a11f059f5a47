// The loop nest of conv2d.cpu.direct (conv2d_cpu_direct.h): the plan a workload, a target and a
// config give, and the builder of its IR.
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "common/workload.h"

namespace tune {

struct DirectConvPlan {
  Conv2dShape s;
  int64_t p = 1, q = 1;  // output height and width
  int64_t lanes = 1;
  int64_t kv = 1, kblk = 1, kb = 1;  // vectors per channel block, channels per block, blocks
  int64_t qt = 1, pt = 1;            // register tile: output columns x output rows
  int64_t kt = 1;                    // channel blocks of one parallel iteration
  int tile_order = 0;  // in an iteration: 0 channel blocks outer, width tiles inner; 1 reverse
  int64_t cc = 1;      // input channels per reduction chunk (C: one chunk)
  bool chunk_outer = false;  // the chunk loop outside the parallel loop (else inside it)
  int64_t unroll_c = 1;      // unroll factor of the loop over input channels
  int unroll_rs = 0;         // 0 no filter loop unrolled, 1 both, 2 only s
  int loop_order = 0;        // parallel loop: 0 channel-block group outer, row block inner
  bool parallel = false;
  Epilogue epilogue = Epilogue::kNone;
  int64_t hp = 1, wp = 1;  // padded input height and width
};

/// The kernel of `plan` named `func_name` (canonical NCHW interface). The plan must come from a
/// config of the template's space (not checked here).
ir::LoweredFunc BuildDirectConvNest(const DirectConvPlan& plan, std::string_view func_name);

}  // namespace tune
