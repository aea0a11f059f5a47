// What the tensor-core templates (gemm.cuda.mma, gemm.cuda.wgmma and the convolutions built on
// their kernels, conv2d_cuda_tensor_core.h) share: the matrix product a kernel computes and where
// its operands lie (ImplicitGemm: a GEMM's, or an NHWC convolution's as an implicit GEMM), their
// kernels' parameters, the padded stage buffers of gemm.cuda.mma's (and gemm.rocm.mfma's) tiles,
// the clamped, validity-guarded reads of global tiles their copies issue and the copy of one
// chunk, the grid splits of the reduction they offer, the epilogue that stores an accumulator
// pair (fp8 scales, bias, ReLU, rounding to the output type; a split reduction parks its partial
// tiles through split_reduction.h instead), and the bound their outputs are held to.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/templates/tma_pipeline.h"
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

/// `copy`, chunk `chunk` = thread + c * threads of `chunks`, for every c that some thread needs:
/// guarded where `chunks` is not a multiple of `threads`. The loop over c is unrolled for
/// `async` copies (cp.async: CopyChunk); element copies through registers run 8 at a time in a
/// serial loop, which bounds the registers their addresses hold.
ir::Stmt SpreadOverThreads(const ir::Var& c, const ir::Expr& chunk, int64_t chunks, int64_t threads,
                           ir::Stmt copy, bool async);

/// The variables the block loops of a tiled GEMM kernel bind (RasterizedGemmBlocks).
struct GemmBlockVars {
  ir::Var bx{"bx"}, split{"bz"}, tile_m{"tile_m"}, tile_n{"tile_n"}, steps{"steps"};
};

/// The blocks of a thread-block cluster of tiles: m x n neighbouring tiles (m rows of tiles by n
/// columns), cluster rank r holding row r % m, column r / m.
struct TileCluster {
  int64_t m = 1, n = 1;

  int64_t Blocks() const { return m * n; }
  /// The tile row and column that cluster rank `rank` holds in the rectangle of tiles at
  /// rectangle row `row` and column `col`.
  ir::Expr TileM(const ir::Expr& row, const ir::Expr& rank) const;
  ir::Expr TileN(const ir::Expr& col, const ir::Expr& rank) const;
};

/// `inner` under the block loops of a GEMM kernel of tiles_m x tiles_n output tiles: one
/// gpu_block loop (x) over the tiles in raster groups of `raster` tile rows, the tiles of a group
/// column by column so that neighbouring blocks share tiles of A and B in L2 (binding tile_m,
/// tile_n); with gridk > 1 a gpu_block loop (z) over the splits of the reduction (binding split;
/// else split = 0); and steps, the count of this split's steps of K: ceil(total_steps / gridk),
/// fewer for the last split. With a `cluster` of more than one block (gridk 1), the raster runs
/// over clusters of cluster.m x cluster.n consecutive blocks, each a rectangle of as many tiles
/// (block bx holding row bx % cluster.m and column bx / cluster.m % cluster.n of its cluster's):
/// tiles_m and tiles_n are padded to multiples of the cluster's, and the padding's tiles lie
/// past M or N. With `split_cluster` (gridk > 1) the splits are not a grid axis of their own:
/// one gpu_block loop (x) runs gridk consecutive blocks per tile (split = block % gridk, bx =
/// block / gridk), so that each tile's splits can form one thread-block cluster along x.
ir::Stmt RasterizedGemmBlocks(int64_t tiles_m, int64_t tiles_n, int64_t raster, int64_t gridk,
                              int64_t total_steps, const GemmBlockVars& v, ir::Stmt inner,
                              TileCluster cluster = {}, bool split_cluster = false);

/// The row and column of tile `tile` (0 .. tiles_m tiles_n - 1) in RasterizedGemmBlocks' order.
ir::Expr RasterTileM(const ir::Expr& tile, int64_t tiles_m, int64_t tiles_n, int64_t raster);
ir::Expr RasterTileN(const ir::Expr& tile, int64_t tiles_m, int64_t tiles_n, int64_t raster);

/// `inner` with tile_m and tile_n bound to RasterTileM and RasterTileN of `tile`.
ir::Stmt BindRasterTile(const ir::Expr& tile, int64_t tiles_m, int64_t tiles_n, int64_t raster,
                        const ir::Var& tile_m, const ir::Var& tile_n, ir::Stmt inner);

/// The stage buffers of a kernel that stages A [bm][bk] and B ([bn][bk] when B is k-major, else
/// [bk][bn]) of `bytes`-byte elements, in elements: rows padded by 16 bytes, which keeps ldmatrix
/// free of bank conflicts (gemm.cuda.mma) and every lane's run of K aligned to its own size
/// (gemm.rocm.mfma's vector reads of 8 or 16 bytes).
struct PaddedTileLayout {
  PaddedTileLayout(int64_t bm, int64_t bn, int64_t bk, int64_t bytes, bool b_k_major);
  /// Bytes of `stages` buffers of both tiles, each tile's buffer rounded up to 16 bytes.
  int64_t Bytes(int64_t stages, int64_t bytes) const;

  int64_t lda = 0, ldb = 0;          // row strides of A [bm][lda] and B ([bn][ldb] or [bk][ldb])
  int64_t a_stage = 0, b_stage = 0;  // elements per stage
};

/// The parameters of a tensor-core kernel in Workload::Arguments() order and with its names: A, B,
/// [bias], C, [scale_A, scale_B] of a GEMM; input, weight, [bias], output, [scale_input,
/// scale_weight] of a convolution; of the workload's element types.
struct GemmParams {
  explicit GemmParams(const Workload& workload);
  std::vector<ir::Buffer> InOrder() const;

  const Workload& workload;
  ir::Buffer a, b, bias, c, scale_a, scale_b;
};

/// The matrix product C[m][n] = sum over k of A[m][k] B[k][n] that a tensor-core kernel computes,
/// and where the elements of its operands lie:
///  - a GEMM's: A [M][K], B [N][K] (layout=NT) or [K][N] (NN), C [M][N];
///  - a conv2d's in layout=NHWC, as an implicit GEMM: m = (image, p, q) of the N*P*Q output
///    pixels, n = the K output channels, k = (r, s, c) of the R*S*C filter taps. Row m of A is
///    the pixel's input window, gathered from the [N][H][W][C] input (zeros in the padding); B is
///    the KRSC weights as they lie, [K][R*S*C]; C [N*P*Q][K] is the NPQK output.
struct ImplicitGemm {
  explicit ImplicitGemm(const Workload& workload);

  /// Element (row, col) of A, for a copy of `lanes` elements along k (a multiple of lanes, which
  /// divides ContiguousK()).
  GlobalTileSource A(const GemmParams& p, const ir::Expr& row, const ir::Expr& col,
                     int64_t lanes) const;
  /// Element (row, col) of B as it is stored: (n, k) when B is k-major, else (k, n).
  GlobalTileSource B(const GemmParams& p, const ir::Expr& row, const ir::Expr& col,
                     int64_t lanes) const;

  /// The elements of k that lie next to each other in A and in B: K of a GEMM, C of a conv2d (one
  /// filter tap's channels). A copy never crosses a multiple of it.
  int64_t ContiguousK() const;

  /// Whether A is a plain row-major [M][K] matrix (a GEMM's, or a 1x1 convolution's of
  /// stride 1 without padding: the NHWC input as it lies), so that a TMA tensor map can
  /// describe it.
  bool DenseA() const;
  /// Whether A is a convolution's input windows that an im2col tensor map reads (Im2colMap):
  /// NHWC, a filter tap's channels whole rows of 128 bytes (C * element bytes a multiple of 128),
  /// stride 1..8 and the window's corners within the map's -128..127.
  bool Im2colA() const;
  /// Whether TMA copies can read A and B: DenseA or Im2colA, and every row of A and of B a
  /// multiple of 16 bytes long (the tensor maps' strides).
  bool TmaReadable() const;
  /// A's tensor map for boxes of `rows` rows of 128 bytes of K: [M][K] tiled, or for Im2colA the
  /// input's im2col map; and where a box at K coordinate k and first row `row` lies in it.
  ir::TensorMap AMap(const ir::Buffer& a, int64_t rows) const;
  TmaPipeline::ABox ABoxAt(const ir::Expr& k, const ir::Expr& row) const;

  /// The copy widths (bytes: 16, 8, 4) that keep every copy inside a contiguous run of A's K
  /// and a row of B, and aligned (B's rows are of K when it is k-major, of N for a GEMM of
  /// layout=NN); else one element at a time.
  std::vector<int64_t> CopyWidths() const;

  const Workload& workload;
  int64_t m = 0, n = 0, k = 0;
  bool b_k_major = true;  // B [N][K]; false: B [K][N] (a GEMM of layout=NN)
};

/// The tolerance (KernelTemplate::tolerance) of tensor-core kernels: 4 for the 8-bit floats,
/// whose products the tensor cores sum with fewer bits than float32 keeps (cuBLASLt's fp8 kernels
/// are held to the same: gemm.cuda.cublaslt), else 1.
double TensorCoreTolerance(const Workload& workload, const Config& config);

/// The epilogue of a GEMM kernel with parameters named as Workload::Arguments() does (A, B,
/// [bias], C, [scale_A, scale_B]).
class MmaEpilogue {
 public:
  /// C's rows hold `columns` elements.
  MmaEpilogue(const Workload& workload, int64_t columns, ir::Buffer c, ir::Buffer bias,
              ir::Buffer scale_a, ir::Buffer scale_b);

  /// Stores `value` (`lanes` accumulators of row m, columns n .. n + lanes - 1) into C.
  ir::Stmt Store(const ir::Expr& m, const ir::Expr& n, ir::Expr value, int lanes) const;
  /// What Store writes for columns n .. n + lanes - 1: `value` scaled, with the bias and ReLU,
  /// in C's element type.
  ir::Expr Value(const ir::Expr& n, ir::Expr value, int lanes) const;

 private:
  const Workload& w_;
  int64_t columns_;
  ir::Buffer c_, bias_, scale_a_, scale_b_;
};

}  // namespace tune
