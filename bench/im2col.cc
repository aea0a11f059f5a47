#include "bench/im2col.h"

#include <algorithm>
#include <cstring>

namespace tune::bench {

// Why this im2col is a fair baseline: it is the copy a careful user of a BLAS writes (and what
// Caffe's and Darknet's im2col do at heart), and what tune's own im2col candidate is up against.
// Each (channel, tap, output row) is one contiguous segment of the matrix: an output row whose
// input row falls in the padding is zeroed whole; otherwise the columns whose input falls left or
// right of the image are zeroed and the interior between them is copied with no test per element
// (a memcpy at stride 1, a strided loop otherwise). The bounds are worked out once per segment,
// so the interior costs what the copy costs. A 1x1 layer at stride 1 without padding copies
// nothing: its image already is the matrix.

bool Im2colIsIdentity(const Conv2dShape& s) {
  return s.r == 1 && s.s == 1 && s.stride == 1 && s.pad == 0;
}

namespace {

// The output columns [lo, hi) whose tap at offset `offset` (t * dilation - pad) lands inside a
// row of `width` pixels: lo * stride + offset >= 0 and (hi - 1) * stride + offset < width.
std::pair<int64_t, int64_t> InteriorColumns(int64_t offset, int64_t stride, int64_t width,
                                            int64_t q_size) {
  const int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t last = width - 1 - offset;  // the largest q * stride that stays inside
  const int64_t hi = last < 0 ? 0 : std::min(q_size, last / stride + 1);
  return {std::min(lo, q_size), std::max(hi, std::min(lo, q_size))};
}

}  // namespace

void Im2col(const Conv2dShape& s, const float* in, float* columns) {
  const int64_t p_size = s.p(), q_size = s.q();
  float* out = columns;
  for (int64_t c = 0; c < s.c; ++c) {
    const float* channel = in + c * s.h * s.w;
    for (int64_t r = 0; r < s.r; ++r) {
      for (int64_t t = 0; t < s.s; ++t) {
        const int64_t w_offset = t * s.dilation - s.pad;
        const auto [lo, hi] = InteriorColumns(w_offset, s.stride, s.w, q_size);
        for (int64_t p = 0; p < p_size; ++p, out += q_size) {
          const int64_t h = p * s.stride - s.pad + r * s.dilation;
          if (h < 0 || h >= s.h) {
            std::fill(out, out + q_size, 0.0f);
            continue;
          }
          std::fill(out, out + lo, 0.0f);
          if (hi > lo) {
            const float* src = channel + h * s.w + lo * s.stride + w_offset;
            if (s.stride == 1) {
              std::memcpy(out + lo, src, (hi - lo) * sizeof(float));
            } else {
              for (int64_t q = lo; q < hi; ++q) {
                out[q] = src[(q - lo) * s.stride];
              }
            }
          }
          std::fill(out + hi, out + q_size, 0.0f);
        }
      }
    }
  }
}

}  // namespace tune::bench
