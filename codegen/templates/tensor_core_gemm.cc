#include "codegen/templates/tensor_core_gemm.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "codegen/templates/template_util.h"
#include "common/status.h"

namespace tune {

using ir::Expr;

GlobalTileSource ClampedSource(const ir::Buffer& buffer, const Expr& row, int64_t rows,
                               const Expr& col, int64_t cols, int64_t lanes) {
  Expr r = ir::Min::Make(row, Expr(rows - 1));
  Expr c = ir::Min::Make(col, Expr(cols - lanes));
  return {buffer, r * cols + c, row < rows && col < cols};
}

ir::Stmt CopyChunk(const ir::Buffer& dst, const Expr& at, const GlobalTileSource& src,
                   int64_t lanes, bool async) {
  if (async) {
    return ir::Store::MakeAsyncCopy(dst, at, src.buffer, src.index, static_cast<int>(lanes),
                                    src.valid);
  }
  return ir::Store::Make(
      dst, at,
      ir::Cast::Make(dst.element_type(), ir::LoadAsOrZero(src.buffer, src.index, 1, src.valid)));
}

ir::Stmt SpreadOverThreads(const ir::Var& c, const Expr& chunk, int64_t chunks, int64_t threads,
                           ir::Stmt copy, bool async) {
  // Element copies through registers, each with its own address arithmetic, 8 at a time: fully
  // unrolled, a 256 x 64 tile of 3-channel convolution windows held 80 per thread and spilled.
  constexpr int64_t kElementCopiesAtOnce = 8;
  const int64_t per_thread = (chunks + threads - 1) / threads;
  const int64_t unroll = async ? per_thread : std::min(per_thread, kElementCopiesAtOnce);
  if (chunks % threads != 0 || per_thread % unroll != 0) {
    copy = ir::IfThenElse::Make(chunk < chunks, std::move(copy));
  }
  if (unroll == per_thread) {
    return ir::For::Make(c, 0, per_thread, ir::LoopKind::kUnrolled, std::move(copy));
  }
  ir::Var outer(c.name() + "_outer"), inner(c.name() + "_inner");
  return ir::For::Make(
      outer, 0, (per_thread + unroll - 1) / unroll, ir::LoopKind::kSerial,
      ir::For::Make(inner, 0, unroll, ir::LoopKind::kUnrolled,
                    ir::LetStmt::Make(c, outer * unroll + inner, std::move(copy))));
}

Expr RasterTileM(const Expr& tile, int64_t tiles_m, int64_t tiles_n, int64_t raster) {
  const int64_t group = raster * tiles_n;
  Expr first_m = tile / group * raster;
  Expr rows = ir::Min::Make(tiles_m - first_m, Expr(raster));
  return first_m + tile % group % rows;
}

Expr RasterTileN(const Expr& tile, int64_t tiles_m, int64_t tiles_n, int64_t raster) {
  const int64_t group = raster * tiles_n;
  Expr first_m = tile / group * raster;
  Expr rows = ir::Min::Make(tiles_m - first_m, Expr(raster));
  return tile % group / rows;
}

ir::Stmt BindRasterTile(const Expr& tile, int64_t tiles_m, int64_t tiles_n, int64_t raster,
                        const ir::Var& tile_m, const ir::Var& tile_n, ir::Stmt inner) {
  ir::Stmt body =
      ir::LetStmt::Make(tile_n, RasterTileN(tile, tiles_m, tiles_n, raster), std::move(inner));
  return ir::LetStmt::Make(tile_m, RasterTileM(tile, tiles_m, tiles_n, raster), std::move(body));
}

Expr TileCluster::TileM(const Expr& row, const Expr& rank) const {
  return m == 1 ? row : row * m + rank % m;
}

Expr TileCluster::TileN(const Expr& col, const Expr& rank) const {
  return n == 1 ? col : col * n + rank / m;
}

ir::Stmt RasterizedGemmBlocks(int64_t tiles_m, int64_t tiles_n, int64_t raster, int64_t gridk,
                              int64_t total_steps, const GemmBlockVars& v, ir::Stmt inner,
                              TileCluster cluster, bool split_cluster) {
  const int64_t blocks = cluster.Blocks();
  TUNE_CHECK(blocks == 1 || gridk == 1) << "clusters of tiles with a grid split";
  const int64_t per_split = (total_steps + gridk - 1) / gridk;
  ir::Stmt body = ir::LetStmt::Make(
      v.steps, ir::Min::Make(Expr(per_split), Expr(total_steps) - v.split * per_split),
      std::move(inner));
  if (blocks > 1) {
    const int64_t clusters_m = (tiles_m + cluster.m - 1) / cluster.m;
    const int64_t clusters_n = (tiles_n + cluster.n - 1) / cluster.n;
    ir::Var cluster_row("cluster_row"), cluster_col("cluster_col");
    Expr rank = v.bx % blocks;
    body = ir::LetStmt::Make(
        v.tile_m, cluster.TileM(cluster_row, rank),
        ir::LetStmt::Make(v.tile_n, cluster.TileN(cluster_col, rank), std::move(body)));
    body = BindRasterTile(v.bx / blocks, clusters_m, clusters_n, raster, cluster_row, cluster_col,
                          std::move(body));
    body = ir::LetStmt::Make(v.split, Expr(int64_t{0}), std::move(body));
    return ir::For::Make(v.bx, 0, clusters_m * clusters_n * blocks, ir::LoopKind::kGpuBlock,
                         std::move(body), 0);
  }
  body = BindRasterTile(v.bx, tiles_m, tiles_n, raster, v.tile_m, v.tile_n, std::move(body));
  if (gridk > 1 && split_cluster) {
    ir::Var block("block");
    body = ir::LetStmt::Make(v.bx, block / gridk,
                             ir::LetStmt::Make(v.split, block % gridk, std::move(body)));
    return ir::For::Make(block, 0, tiles_m * tiles_n * gridk, ir::LoopKind::kGpuBlock,
                         std::move(body), 0);
  }
  if (gridk > 1) {
    body = ir::For::Make(v.split, 0, gridk, ir::LoopKind::kGpuBlock, std::move(body), 2);
  } else {
    body = ir::LetStmt::Make(v.split, Expr(int64_t{0}), std::move(body));
  }
  return ir::For::Make(v.bx, 0, tiles_m * tiles_n, ir::LoopKind::kGpuBlock, std::move(body), 0);
}

namespace {

// The name of `workload`'s argument of `role`, or `fallback` where it has none.
std::string ArgumentName(const Workload& workload, ArgRole role, int nth,
                         std::string_view fallback) {
  for (const TensorArg& arg : workload.Arguments()) {
    if (arg.role == role && nth-- == 0) {
      return arg.name;
    }
  }
  return std::string(fallback);
}

ir::Buffer Global(std::string name, ElementType type) {
  return ir::Buffer(std::move(name), ir::MemoryScope::kGlobal, ir::Type::Of(type));
}

}  // namespace

PaddedTileLayout::PaddedTileLayout(int64_t bm, int64_t bn, int64_t bk, int64_t bytes,
                                   bool b_k_major) {
  const int64_t pad = 16 / bytes;
  lda = bk + pad;
  a_stage = bm * lda;
  ldb = b_k_major ? bk + pad : bn + pad;
  b_stage = b_k_major ? bn * ldb : bk * ldb;
}

int64_t PaddedTileLayout::Bytes(int64_t stages, int64_t bytes) const {
  return stages * ((a_stage * bytes + 15) / 16 * 16 + (b_stage * bytes + 15) / 16 * 16);
}

GemmParams::GemmParams(const Workload& w)
    : workload(w),
      a(Global(ArgumentName(w, ArgRole::kInput, 0, "A"), w.input_type())),
      b(Global(ArgumentName(w, ArgRole::kWeight, 0, "B"), w.weight_type())),
      bias(Global("bias", w.out_type())),
      c(Global(ArgumentName(w, ArgRole::kOutput, 0, "C"), w.out_type())),
      scale_a(Global(ArgumentName(w, ArgRole::kScale, 0, "scale_A"), ElementType::kF32)),
      scale_b(Global(ArgumentName(w, ArgRole::kScale, 1, "scale_B"), ElementType::kF32)) {}

std::vector<ir::Buffer> GemmParams::InOrder() const {
  std::vector<ir::Buffer> params = {a, b};
  if (EpilogueHasBias(workload.epilogue())) {
    params.push_back(bias);
  }
  params.push_back(c);
  if (workload.has_scales()) {
    params.push_back(scale_a);
    params.push_back(scale_b);
  }
  return params;
}

ImplicitGemm::ImplicitGemm(const Workload& w) : workload(w) {
  if (w.op() == OpKind::kGemm) {
    const GemmShape& g = w.gemm();
    m = g.m;
    n = g.n;
    k = g.k;
    b_k_major = g.layout == GemmLayout::kNT;
    return;
  }
  const Conv2dShape& s = w.conv2d();
  m = s.n * s.p() * s.q();
  n = s.k;
  k = s.r * s.s * s.c;
}

bool ImplicitGemm::DenseA() const {
  if (workload.op() == OpKind::kGemm) {
    return true;
  }
  return workload.conv2d().pointwise();
}

namespace {

// The bytes of K in a row of a TMA box of A (the 128-byte swizzle's rows, wgmma's operands).
constexpr int64_t kTmaRowBytes = 128;

}  // namespace

bool ImplicitGemm::Im2colA() const {
  if (workload.op() != OpKind::kConv2d || DenseA()) {
    return false;
  }
  const Conv2dShape& s = workload.conv2d();
  const int64_t lowest = std::min(-s.pad, s.pad - (std::max(s.r, s.s) - 1) * s.dilation);
  return s.nhwc && s.c * ElementBytes(workload.input_type()) % kTmaRowBytes == 0 && s.stride <= 8 &&
         s.pad <= 127 && lowest >= -128;
}

bool ImplicitGemm::TmaReadable() const {
  const int64_t bytes = ElementBytes(workload.input_type());
  return (DenseA() || Im2colA()) && k * bytes % 16 == 0 && (b_k_major ? k : n) * bytes % 16 == 0;
}

ir::TensorMap ImplicitGemm::AMap(const ir::Buffer& a, int64_t rows) const {
  const int64_t row = kTmaRowBytes / ElementBytes(workload.input_type());
  if (!Im2colA()) {
    return ir::TensorMap{.buffer = a, .dims = {k, m}, .strides = {k}, .box = {row, rows}};
  }
  // The input [N][H][W][C]; a column of `rows` output pixels' window corners at one tap.
  const Conv2dShape& s = workload.conv2d();
  ir::TensorMap map{
      .buffer = a,
      .dims = {s.c, s.w, s.h, s.n},
      .strides = {s.c, s.w * s.c, s.h * s.w * s.c},
      .box = {row, rows, 1, 1},
      .lower_corner = {-s.pad, -s.pad},
      .upper_corner = {s.pad - (s.s - 1) * s.dilation, s.pad - (s.r - 1) * s.dilation}};
  if (s.stride > 1) {
    map.element_strides = {1, s.stride, s.stride, 1};
  }
  return map;
}

TmaPipeline::ABox ImplicitGemm::ABoxAt(const Expr& kk, const Expr& row) const {
  if (!Im2colA()) {
    return {{kk, row}, {}};
  }
  // Column kk is tap (r, s) of the window, channel c; row is output pixel (image, p, q), whose
  // window's corner is (p * stride - pad, q * stride - pad).
  const Conv2dShape& s = workload.conv2d();
  const int64_t pq = s.p() * s.q();
  Expr tap = kk / s.c;
  return {{kk % s.c, row % s.q() * s.stride - s.pad, row % pq / s.q() * s.stride - s.pad, row / pq},
          {tap % s.s * s.dilation, tap / s.s * s.dilation}};
}

int64_t ImplicitGemm::ContiguousK() const {
  return workload.op() == OpKind::kGemm ? k : workload.conv2d().c;
}

std::vector<int64_t> ImplicitGemm::CopyWidths() const {
  const int64_t bytes = ElementBytes(workload.input_type());
  const int64_t a_run = ContiguousK() * bytes;
  const int64_t b_row = (b_k_major ? k : n) * bytes;
  std::vector<int64_t> widths;
  for (int64_t c : {16, 8, 4}) {
    if (a_run % c == 0 && b_row % c == 0) {
      widths.push_back(c);
    }
  }
  if (widths.empty()) {
    widths.push_back(bytes);
  }
  return widths;
}

GlobalTileSource ImplicitGemm::A(const GemmParams& p, const Expr& row, const Expr& col,
                                 int64_t lanes) const {
  if (workload.op() == OpKind::kGemm) {
    return ClampedSource(p.a, row, m, col, k, lanes);
  }
  // Pixel (image, y, x) of row m and tap (r, s, c) of column k, both clamped in range: the
  // input element of that tap's window, clamped into the image where the window reaches into
  // the padding (where it reads zeros).
  const Conv2dShape& s = workload.conv2d();
  const int64_t pq = s.p() * s.q();
  Expr pixel = ir::Min::Make(row, Expr(m - 1));
  Expr tap = ir::Min::Make(col, Expr(k - lanes));
  Expr image = pixel / pq;
  Expr y = pixel % pq / s.q() * s.stride - s.pad + tap / (s.s * s.c) * s.dilation;
  Expr x = pixel % s.q() * s.stride - s.pad + tap / s.c % s.s * s.dilation;
  Expr valid = row < m && col < k;
  Expr yc = y, xc = x;
  if (s.pad > 0) {
    valid = valid && y >= Expr(int64_t{0}) && y < s.h && x >= Expr(int64_t{0}) && x < s.w;
    yc = ir::Max::Make(ir::Min::Make(y, Expr(s.h - 1)), Expr(int64_t{0}));
    xc = ir::Max::Make(ir::Min::Make(x, Expr(s.w - 1)), Expr(int64_t{0}));
  }
  return {p.a, ((image * s.h + yc) * s.w + xc) * s.c + tap % s.c, valid};
}

GlobalTileSource ImplicitGemm::B(const GemmParams& p, const Expr& row, const Expr& col,
                                 int64_t lanes) const {
  return b_k_major ? ClampedSource(p.b, row, n, col, k, lanes)
                   : ClampedSource(p.b, row, k, col, n, lanes);
}

double TensorCoreTolerance(const Workload& workload, const Config&) {
  return IsFp8Dtype(workload.dtype()) ? 4 : 1;
}

MmaEpilogue::MmaEpilogue(const Workload& workload, int64_t columns, ir::Buffer c, ir::Buffer bias,
                         ir::Buffer scale_a, ir::Buffer scale_b)
    : w_(workload),
      columns_(columns),
      c_(std::move(c)),
      bias_(std::move(bias)),
      scale_a_(std::move(scale_a)),
      scale_b_(std::move(scale_b)) {}

Expr MmaEpilogue::Value(const Expr& n, Expr value, int lanes) const {
  // Integer accumulators stay integers for an integer output (the raw sums, wrapping) and are
  // converted for a float one (dequantised by the scales).
  const bool integer_out = c_.element_type().is_int();
  if (value.type().is_int() && !integer_out) {
    value = ir::Cast::Make(ir::Type::Float32().WithLanes(lanes), value);
  }
  if (w_.has_scales()) {
    value = value * (ir::Load::Make(scale_a_, Expr(int64_t{0})) *
                     ir::Load::Make(scale_b_, Expr(int64_t{0})));
  }
  Expr bias;
  if (EpilogueHasBias(w_.epilogue())) {
    bias = ir::LoadAsOrZero(bias_, n, lanes, Expr());
  }
  value = ApplyEpilogue(w_.epilogue(), std::move(value), bias);
  const ir::Type out = c_.element_type();
  if (out != value.type().Element()) {
    value = ir::Cast::Make(out.WithLanes(lanes), std::move(value));
  }
  return value;
}

ir::Stmt MmaEpilogue::Store(const Expr& m, const Expr& n, Expr value, int lanes) const {
  Expr index = m * columns_ + n;
  value = Value(n, std::move(value), lanes);
  return ir::Store::Make(c_, std::move(index), std::move(value));
}

}  // namespace tune
