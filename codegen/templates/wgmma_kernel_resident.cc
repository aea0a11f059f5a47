// WgmmaKernel's resident pipeline (resident = 1, ResidentPipelineApplies): a persistent grid
// whose blocks each fill every step's stage of B once and keep them, then take tiles in turn,
// the next tile's A copied while this one multiplies. A dense A (a 1x1 convolution's input) is
// copied direct into two sets of stages; narrow channels' A (the stem's 6-byte taps) is built in
// shared memory from the tile's input rows, staged whole (conv_window.h): each element a load
// at a constant offset from its pixel's place (wgmma_kernel_builder.h).
#include <utility>
#include <vector>

#include "codegen/templates/wgmma_kernel_builder.h"

namespace tune::wgmma_detail {
namespace {

// The vector of the scalars `lanes` (of one type).
Expr VectorOf(const std::vector<Expr>& lanes) {
  std::vector<Expr> pairs;
  std::vector<int> indices;
  for (size_t i = 0; i < lanes.size(); ++i) {
    pairs.push_back(ir::Broadcast::Make(lanes[i], 2));
    indices.push_back(static_cast<int>(2 * i));
  }
  return ir::Shuffle::Make(std::move(pairs), std::move(indices));
}

}  // namespace

int64_t WgmmaKernel::WindowTilesQ() const { return GpuCeilDiv(w_.conv2d().q(), k_.bm); }

Expr WgmmaKernel::OutRow(const Expr& local) const {
  if (!win_) {
    return tile_m_ * k_.bm + local;
  }
  const int64_t tiles_q = WindowTilesQ();
  return tile_m_ / tiles_q * w_.conv2d().q() + tile_m_ % tiles_q * k_.bm + local;
}

Expr WgmmaKernel::OutRowValid(const Expr& local) const {
  if (!win_) {
    return OutRow(local) < g_.m;
  }
  return tile_m_ % WindowTilesQ() * k_.bm + local < w_.conv2d().q();
}

template <typename BaseFn, typename LaneFn>
Stmt WgmmaKernel::WindowBuildStages(const ir::Buffer& dst, int64_t stage_elements, int64_t rows,
                                    BaseFn row_base, LaneFn lane) const {
  // Row `row` of every step's stage, 16-byte chunk j (elements k0 .. k0 + per_chunk - 1 of the
  // reduction) at its swizzled place c ^ (row % 8): each element's offset from the row's base is
  // a constant, so the reduction's coordinates are resolved here, not in the kernel. With more
  // threads than rows, the row's chunks are shared among threads / rows threads.
  const int64_t threads = k_.SplitThreads();
  const int64_t per_chunk = 16 / bytes_;
  const int64_t chunks = row_ / per_chunk;
  const int64_t share =
      threads > rows && threads % rows == 0 && chunks % (threads / rows) == 0 ? threads / rows : 1;
  const int64_t per_thread = share > 1 ? 1 : GpuCeilDiv(rows, threads);
  Var it("it"), row("row"), base("base");
  std::vector<Stmt> stores;
  for (int64_t step = 0; step < k_.k_steps; ++step) {
    for (int64_t j = 0; j < chunks; ++j) {
      std::vector<Expr> lanes;
      for (int64_t e = 0; e < per_chunk; ++e) {
        const int64_t k = step * row_ + j * per_chunk + e;
        Expr value = k < g_.k ? lane(Expr(base), k) : Expr();
        lanes.push_back(value.defined() ? value : ir::Cast::Make(dst.element_type(), Expr(0.0f)));
      }
      Expr at = step * stage_elements + row * row_ + Xor3(Expr(j), row % 8) * per_chunk;
      Stmt store =
          Store::Make(dst, ir::Ramp::Make(at, 1, static_cast<int>(per_chunk)), VectorOf(lanes));
      if (share > 1) {
        store = IfThenElse::Make(split_tx_ / rows == j % share, std::move(store));
      }
      stores.push_back(std::move(store));
    }
  }
  Stmt body = LetStmt::Make(base, row_base(Expr(row)), Block::Make(std::move(stores)));
  if (share == 1 && rows % threads != 0) {
    body = IfThenElse::Make(row < rows, std::move(body));
  }
  Expr first = share > 1 ? split_tx_ % rows : split_tx_ + it * threads;
  return For::Make(it, 0, per_thread, LoopKind::kUnrolled, LetStmt::Make(row, first, body));
}

Stmt WgmmaKernel::WindowBuildB() const {
  // Row n of B is the weights' row n (the flat copy's elements n K ..); rows past N (bn > N)
  // repeat the last, as their columns of C are never stored.
  return WindowBuildStages(
      bs_, BStage(), k_.bn, [&](const Expr& n) { return ir::Min::Make(n, Expr(g_.n - 1)) * g_.k; },
      [&](const Expr& base, int64_t k) { return ir::Load::Make(staging_, base + k); });
}

Stmt WgmmaKernel::WindowBuildA() const {
  // Row i is pixel q = q0 + i of the tile's output row (clamped to the last: rows past Q are
  // never stored); tap (r, s, c) of it is staged row r's element at the pixel's first column
  // (q stride - pad, shifted by the zero pixels pad_lo) plus s dilation C + c.
  const Conv2dShape& s = w_.conv2d();
  const Expr q0 = tile_m_ % WindowTilesQ() * k_.bm;
  return WindowBuildStages(
      as_, AStage(), k_.bm,
      [&](const Expr& i) {
        Expr q = ir::Min::Make(q0 + i, Expr(s.q() - 1));
        return (q * s.stride + (win_->pad_lo - s.pad)) * s.c;
      },
      [&](const Expr& base, int64_t k) {
        const int64_t r = k / (s.s * s.c), tap = k % (s.s * s.c) / s.c, c = k % s.c;
        return ir::Load::Make(staging_, base + (r * win_->row_len + tap * s.dilation * s.c + c));
      });
}

Stmt WgmmaKernel::WindowCopyWeights() const {
  const int64_t lanes = win_->b_copy_bytes / bytes_;
  const int64_t chunks = g_.n * g_.k / lanes;
  const bool async = win_->b_copy_bytes >= 4;
  Var c("c_w");
  Expr chunk = split_tx_ + c * k_.SplitThreads();
  GlobalTileSource src{p_.b, chunk * lanes, Expr()};
  return SpreadOverThreads(c, chunk, chunks, k_.SplitThreads(),
                           CopyChunk(staging_, chunk * lanes, src, lanes, async), async);
}

Stmt WgmmaKernel::WindowZeroRows() const {
  const int64_t lanes = 16 / bytes_;
  const int64_t chunks = win_->rows * win_->row_len / lanes;
  Var c("c_z");
  Expr chunk = split_tx_ + c * k_.SplitThreads();
  Stmt zero = Store::Make(staging_, ir::Ramp::Make(chunk * lanes, 1, static_cast<int>(lanes)),
                          ir::Broadcast::Make(ir::Cast::Make(staging_.element_type(), Expr(0.0f)),
                                              static_cast<int>(lanes)));
  return SpreadOverThreads(c, chunk, chunks, k_.SplitThreads(), std::move(zero), true);
}

Stmt WgmmaKernel::WindowCopyRows(const Expr& tile) const {
  // Tile `tile` is output row p of image `image`, pixels from q0 (tiles_q tiles a row): staged
  // row r is input row p stride - pad + r dilation, its W C elements after pad_lo zero pixels;
  // rows outside the image are zero-filled.
  const Conv2dShape& s = w_.conv2d();
  const int64_t lanes = win_->copy_bytes / bytes_;
  const int64_t per_row = s.w * s.c / lanes;
  const bool async = win_->copy_bytes >= 4;
  Expr image_row = tile / WindowTilesQ();  // image P + p
  Expr image = image_row / s.p(), p = image_row % s.p();
  Var c("c_rows");
  Expr chunk = split_tx_ + c * k_.SplitThreads();
  Expr r = chunk / per_row, col = chunk % per_row * lanes;
  Expr y = p * s.stride - s.pad + r * s.dilation;
  Expr inside = y >= Expr(int64_t{0}) && y < s.h;
  Expr yc = ir::Max::Make(ir::Min::Make(y, Expr(s.h - 1)), Expr(int64_t{0}));
  GlobalTileSource src{p_.a, (image * s.h + yc) * (s.w * s.c) + col, inside};
  Expr at = r * win_->row_len + win_->pad_lo * s.c + col;
  return SpreadOverThreads(c, chunk, win_->rows * per_row, k_.SplitThreads(),
                           CopyChunk(staging_, at, src, lanes, async), async);
}

std::vector<Stmt> WgmmaKernel::ResidentStmts() const {
  const int64_t tiles = TilesM(), grid = PersistentBlocks();
  // The block's tiles: bx + i grid for i < count (the grid has no more blocks than tiles).
  Expr count = (Expr(tiles) - v_.bx + (grid - 1)) / grid;
  auto tile_of = [&](const Expr& i) { return v_.bx + i * grid; };
  Var i("tile_i");
  std::vector<Stmt> tile = {ir::Barrier::MakeAfterAsyncCopies(true, 0)};  // this tile's A
  // A's stages of this tile: the staged rows' build, or the set its copies filled.
  Expr set = Expr(int64_t{0});
  if (win_) {
    tile.push_back(WindowBuildA());
    tile.push_back(ir::Barrier::Make());  // built: the staged rows are free for the next tile's
    tile.push_back(IfThenElse::Make(i + 1 < count, WindowCopyRows(tile_of(i + 1))));
  } else {
    // The other set was last read by the previous tile's instructions, waited for before its
    // store and before the barrier above.
    set = i % 2;
    tile.push_back(IfThenElse::Make(i + 1 < count, DenseCopyA(tile_of(i + 1), (i + 1) % 2)));
  }
  tile.push_back(ZeroAccumulators());
  for (int64_t step = 0; step < k_.k_steps; ++step) {
    tile.push_back(Multiply(set * k_.k_steps + step, step + 1 < k_.k_steps ? 1 : 0, 0, Expr(step)));
  }
  tile.push_back(StoreAccumulators());
  Stmt loop = For::Make(
      i, 0, count, LoopKind::kSerial,
      LetStmt::Make(tile_m_, tile_of(i),
                    LetStmt::Make(tile_n_, Expr(int64_t{0}), Block::Make(std::move(tile)))));
  if (!win_) {
    return {DenseCopyB(), DenseCopyA(tile_of(Expr(int64_t{0})), Expr(int64_t{0})), std::move(loop)};
  }
  return {
      WindowCopyWeights(),
      ir::Barrier::MakeAfterAsyncCopies(true, 0),
      WindowBuildB(),
      ir::Barrier::Make(),  // B's stages built: the staging buffer is the rows' from here
      WindowZeroRows(),
      ir::Barrier::Make(),
      WindowCopyRows(tile_of(Expr(int64_t{0}))),
      std::move(loop),
  };
}

}  // namespace tune::wgmma_detail
