#include "codegen/templates/conv_window.h"

#include <algorithm>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/wgmma_kernel.h"
#include "common/element_type.h"

namespace tune {
namespace {

// The widest of 16, 8 and 4 bytes that divides `bytes`; else one element.
int64_t WidestCopy(int64_t bytes, int64_t element) {
  for (int64_t c : {16, 8, 4}) {
    if (bytes % c == 0) {
      return c;
    }
  }
  return element;
}

}  // namespace

std::optional<ConvWindow> ConvWindow::Of(const ImplicitGemm& g) {
  const Workload& w = g.workload;
  if (w.op() != OpKind::kConv2d || g.CopyWidths().front() >= 4) {
    return std::nullopt;
  }
  const Conv2dShape& s = w.conv2d();
  const int64_t bytes = ElementBytes(w.input_type());
  const int64_t per16 = 16 / bytes;
  ConvWindow win;
  // The last pixel a window reads: of the last output column, its last tap.
  const int64_t last_x = (s.q() - 1) * s.stride - s.pad + (s.s - 1) * s.dilation;
  const int64_t pad_hi = std::max<int64_t>(0, last_x - (s.w - 1));
  win.pad_lo = s.pad;
  while (win.pad_lo * s.c % per16 != 0) {
    ++win.pad_lo;
  }
  win.row_len = GpuCeilDiv((win.pad_lo + s.w + pad_hi) * s.c, per16) * per16;
  win.rows = s.r;
  win.copy_bytes = WidestCopy(s.w * s.c * bytes, bytes);
  win.b_copy_bytes = WidestCopy(g.n * g.k * bytes, bytes);
  const int64_t row_elements = kWgmmaRowBytes / bytes;
  const int64_t staged_rows = win.rows * win.row_len;
  const int64_t steps = WgmmaKSteps(g);
  const int64_t weights = (g.n - 1) * g.k + steps * row_elements;
  if (steps > kConvWindowMaxSteps || staged_rows * bytes > kConvWindowMaxBytes ||
      g.n * g.k * bytes > kConvWindowMaxBytes) {
    return std::nullopt;
  }
  win.elements = GpuCeilDiv(std::max(staged_rows, weights), per16) * per16;
  return win;
}

}  // namespace tune
