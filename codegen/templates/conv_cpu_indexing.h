// Where the CPU convolution templates of the matrix instructions (conv2d.cpu.dot, conv2d.cpu.amx)
// find an element of the input, the weights and the output in the workload's layout, and how
// they pack the weights into VNNI panels.
#pragma once

#include <cstdint>

#include "codegen/ir/ir.h"
#include "codegen/templates/cpu_matrix_gemm.h"
#include "common/workload.h"

namespace tune {

/// Element indices of a convolution's tensors in its layout (NCHW, NCHW<b>c or NHWC with KRSC
/// weights), over spatial extents that may differ from the shape's: a 1x1, stride-1, unpadded
/// layer may be seen as one row of H*W pixels (h = 1, w = H*W, and the same for p, q).
class ConvCpuIndexing {
 public:
  /// The shape's own extents.
  explicit ConvCpuIndexing(const Conv2dShape& s);
  ConvCpuIndexing(const Conv2dShape& s, int64_t h, int64_t w, int64_t p, int64_t q);

  /// Input element (image n, channel c, row h, column w).
  ir::Expr Input(const ir::Expr& n, const ir::Expr& c, const ir::Expr& h, const ir::Expr& w) const;
  /// Weight (output channel k, input channel c, tap r, t).
  ir::Expr Weight(const ir::Expr& k, const ir::Expr& c, const ir::Expr& r, const ir::Expr& t) const;
  /// Output element (image n, channel k, row p, column q).
  ir::Expr Output(const ir::Expr& n, const ir::Expr& k, const ir::Expr& p, const ir::Expr& q) const;
  /// Whether 16 output channels from a multiple of 16 lie together in the output (NHWC and
  /// NCHW16c): one vector store.
  bool ContiguousOutputChannels() const { return s_.nhwc || s_.block == 16; }

 private:
  Conv2dShape s_;
  int64_t h_, w_, p_, q_;
};

/// The weights into VNNI panels of `panels.width` output channels, the reduction in the order
/// (channel block cb, tap r, tap s, channel ci of the block), blocks of `cblk` of the `cp` channels
/// (C padded with zeros to a multiple of cblk, itself a multiple of the group):
///   (k, kk) at (k / width) * kp * width + ((kk / G) * width + k % width) * G + kk % G
///   with kk = ((cb * R + r) * S + s) * cblk + ci; zero past K and C.
ir::Stmt PackConvPanels(const Conv2dShape& s, const VnniPanels& panels, const CpuMatrixTypes& types,
                        int64_t cp, int64_t cblk, const ir::Buffer& weights,
                        const ir::Buffer& packed);

}  // namespace tune
