// What the tensor-core GEMM templates (gemm.cuda.mma, gemm.cuda.wgmma) share: their kernels'
// parameters, the clamped, validity-guarded reads of global tiles their copies issue and the
// copy of one chunk, the grid splits of the reduction they offer, the epilogue that stores an
// accumulator pair (fp8 scales, bias, ReLU, rounding to the output type, or an atomic add for a
// split reduction), and the bound their outputs are held to.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/ir.h"
#include "common/workload.h"
#include "search/config_space.h"

namespace tune {

/// Element (row, col) of a row-major [rows][cols] global operand, clamped in range so that a
/// copy of `lanes` elements from it stays inside, and whether those elements lie inside (cols is
/// a multiple of `lanes`).
struct GlobalTileSource {
  ir::Buffer buffer;
  ir::Expr index, valid;
};
GlobalTileSource ClampedSource(const ir::Buffer& buffer, const ir::Expr& row, int64_t rows,
                               const ir::Expr& col, int64_t cols, int64_t lanes);

/// dst[at] = the `lanes` elements of `src`, zeros where it is not valid: one cp.async of `lanes`
/// elements when `async` (4, 8 or 16 bytes), else one element through registers (lanes 1).
ir::Stmt CopyChunk(const ir::Buffer& dst, const ir::Expr& at, const GlobalTileSource& src,
                   int64_t lanes, bool async);

/// `copy`, chunk `chunk` = thread + c * threads of `chunks` (c the unrolled loop variable), for
/// every c that some thread needs: guarded where `chunks` is not a multiple of `threads`.
ir::Stmt SpreadOverThreads(const ir::Var& c, const ir::Expr& chunk, int64_t chunks, int64_t threads,
                           ir::Stmt copy);

/// The variables the block loops of a tiled GEMM kernel bind (RasterizedGemmBlocks).
struct GemmBlockVars {
  ir::Var bx{"bx"}, split{"bz"}, tile_m{"tile_m"}, tile_n{"tile_n"}, steps{"steps"};
};

/// `inner` under the block loops of a GEMM kernel of tiles_m x tiles_n output tiles: one
/// gpu_block loop (x) over the tiles in raster groups of `raster` tile rows, the tiles of a group
/// column by column so that neighbouring blocks share tiles of A and B in L2 (binding tile_m,
/// tile_n); with gridk > 1 a gpu_block loop (z) over the splits of the reduction (binding split;
/// else split = 0); and steps, the count of this split's steps of K: ceil(total_steps / gridk),
/// fewer for the last split.
ir::Stmt RasterizedGemmBlocks(int64_t tiles_m, int64_t tiles_n, int64_t raster, int64_t gridk,
                              int64_t total_steps, const GemmBlockVars& v, ir::Stmt inner);

/// The parameters of a GEMM kernel in Workload::Arguments() order: A, B, [bias], C, [scale_A,
/// scale_B], of the workload's element types.
struct GemmParams {
  explicit GemmParams(const Workload& workload);
  std::vector<ir::Buffer> InOrder() const;

  const Workload& workload;
  ir::Buffer a, b, bias, c, scale_a{"scale_A"}, scale_b{"scale_B"};
};

/// The values of knob gridk: 1, and for a float32 output without a ReLU the splits that leave
/// each block at least 256 of K (their sums are added atomically into a zeroed C).
std::vector<int64_t> FloatOutputGridSplits(const Workload& workload);

/// The tolerance (KernelTemplate::tolerance) of tensor-core kernels: 4 for the 8-bit floats,
/// whose products the tensor cores sum with fewer bits than float32 keeps (cuBLASLt's fp8 kernels
/// are held to the same: gemm.cuda.cublaslt), else 1.
double TensorCoreTolerance(const Workload& workload, const Config& config);

/// The epilogue of a GEMM kernel with parameters named as Workload::Arguments() does (A, B,
/// [bias], C, [scale_A, scale_B]).
class MmaEpilogue {
 public:
  /// `split` is the grid-z variable of a reduction split over `gridk` > 1 blocks (undefined for
  /// gridk 1): every split adds into C, and the bias is the first one's.
  MmaEpilogue(const Workload& workload, ir::Buffer c, ir::Buffer bias, ir::Buffer scale_a,
              ir::Buffer scale_b, ir::Var split, int64_t gridk);

  /// Stores `value` (`lanes` accumulators of row m, columns n .. n + lanes - 1) into C.
  ir::Stmt Store(const ir::Expr& m, const ir::Expr& n, ir::Expr value, int lanes) const;

 private:
  const Workload& w_;
  ir::Buffer c_, bias_, scale_a_, scale_b_;
  ir::Var split_;
  int64_t gridk_;
};

}  // namespace tune
