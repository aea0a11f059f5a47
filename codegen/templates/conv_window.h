// The staging of conv2d.cuda.wgmma's resident pipeline (knob resident = 1, wgmma_kernel.h) for
// NHWC convolutions whose filter taps' channels are too narrow for a 4-byte copy (the 3-channel
// stem layer, whose taps are 6 bytes): a block stages the input rows its tile's windows read,
// whole rows by wide copies, and builds A's swizzled stages from them in shared memory, instead
// of gathering each element from global memory.
//
// A tile is one output row's run of bm pixels (image, p, q0 .. q0 + bm - 1), so that its windows
// read the R input rows p stride - pad + r dilation alone: each staged row holds its W pixels
// between pad_lo zero pixels before and pad_hi after, which stand for the padding, so an element
// of A is a load at a constant offset from its pixel's place (no test of the border). Rows that
// lie outside the image are zero-filled by the copies. B (the weights, all of them: bn >= K) is
// built once per block from a flat copy of the weights into the same buffer.
#pragma once

#include <cstdint>
#include <optional>

#include "codegen/templates/tensor_core_gemm.h"

namespace tune {

/// Most bytes the staged rows or the flat weights may take.
inline constexpr int64_t kConvWindowMaxBytes = int64_t{48} << 10;
/// Most steps of K (128 bytes each) a staged-rows reduction may have: every step's stage
/// of A and B stays in shared memory.
inline constexpr int64_t kConvWindowMaxSteps = 4;

struct ConvWindow {
  /// The staging of `g`, or nullopt where the window pipeline does not take it: not a
  /// convolution, taps' channels a multiple of 4 bytes (the copies are wide already), a
  /// reduction of more than kConvWindowMaxSteps steps, or rows or weights past
  /// kConvWindowMaxBytes.
  static std::optional<ConvWindow> Of(const ImplicitGemm& g);

  int64_t pad_lo = 0;        // zero pixels before each staged row's first (>= pad, 16 bytes whole)
  int64_t row_len = 0;       // elements per staged row: (pad_lo + W + pad_hi) C, whole 16 bytes
  int64_t rows = 0;          // staged rows: the filter's R
  int64_t copy_bytes = 0;    // bytes per copy of an input row: 16, 8, 4 (else one element)
  int64_t b_copy_bytes = 0;  // bytes per copy of the flat weights
  int64_t elements = 0;      // of the staging buffer: the rows, or the weights and what B's build
                             // reads past them (the last row's padding to whole steps)
};

}  // namespace tune
