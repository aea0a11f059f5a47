// The epilogue of a baseline whose library call computes the bare product (OpenBLAS's sgemm,
// oneDNN's dnnl_sgemm): bias and ReLU applied in one pass over the output afterwards, as a user
// of that call would.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/workload.h"

namespace tune::bench {

/// Applies `epilogue` to `out` (rows x cols, row-major); the bias is per row (conv2d: one per
/// output channel) or per column (GEMM: one per output column).
inline void ApplyEpilogue(Epilogue epilogue, const float* bias, float* out, int64_t rows,
                          int64_t cols, bool bias_per_row) {
  if (epilogue == Epilogue::kNone) {
    return;
  }
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      float v = out[i * cols + j];
      if (EpilogueHasBias(epilogue)) {
        v += bias_per_row ? bias[i] : bias[j];
      }
      if (EpilogueHasRelu(epilogue)) {
        v = std::max(v, 0.0f);
      }
      out[i * cols + j] = v;
    }
  }
}

}  // namespace tune::bench
