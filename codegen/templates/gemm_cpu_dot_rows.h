// gemm.cpu.dot's form for B read in place (layout NT, knob b_in_place = 1): B's rows are
// already K-contiguous, so each C element is a dot product of an A row and a B row along K,
// computed 16 groups at a time (vdpbf16ps / vpdpbusd over whole vectors of both) and summed
// across the lanes at the end. Nothing is packed: what few-row GEMMs against canonical weights
// (a decoder's projections) need, where packing B would cost more than the product.
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "common/workload.h"

namespace tune {

/// The kernel of a layout=NT GEMM with a register tile of `rows` rows of A x `cols` rows of B
/// (each accumulator a vector over K), parameters in Workload::Arguments() order (B as given:
/// prepared weights are a copy of it). K runs in blocks of `kc` elements (0, or kc >= K: all of
/// K at once), each column tile's accumulators parked per row of C between blocks (M x cols
/// vectors on the stack). `parallel`: the column tiles are split among threads.
ir::LoweredFunc BuildDotRowsGemm(const Workload& workload, int64_t rows, int64_t cols, int64_t kc,
                                 bool parallel, std::string_view func_name);

}  // namespace tune
