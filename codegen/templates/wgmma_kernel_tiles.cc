// WgmmaKernel's tiles: A's and B's copied into swizzled stages by cp.async (a K range's steps,
// or a resident pipeline's tiles), and the
// accumulators out through the epilogue, a staged output tile or a split's workspace
// (wgmma_kernel_builder.h).
#include <algorithm>
#include <vector>

#include "codegen/templates/wgmma_kernel_builder.h"

namespace tune::wgmma_detail {

// The sum of each bit's (a_i + b_i) % 2.
Expr Xor3(const Expr& a, const Expr& b) {
  Expr out = (a + b) % 2;
  out = out + (a / 2 + b / 2) % 2 * 2;
  return out + (a / 4 + b / 4) % 2 * 4;
}

Stmt WgmmaKernel::CopyStep(const Expr& step, const Expr& stage) const {
  Expr block_step = group_k_ * range_steps_ + step;
  Expr k0 = (FirstStep() + block_step) * row_;
  Expr inside = block_step < step_count_;
  auto guarded = [&](GlobalTileSource src) {
    if (k_.wg_k > 1) {
      src.valid = src.valid && inside;
    }
    return src;
  };
  Expr range_stage = group_k_ * k_.Buffers() + stage;
  return Block::Make({
      CopyTile(as_, range_stage * AStage(), k_.bm,
               [&](const Expr& r, const Expr& col) {
                 return guarded(g_.A(p_, tile_m_ * k_.bm + r, k0 + col, Lanes()));
               }),
      nt_ ? CopyTile(bs_, range_stage * BStage(), k_.bn,
                     [&](const Expr& r, const Expr& col) {
                       return guarded(g_.B(p_, tile_n_ * k_.bn + r, k0 + col, Lanes()));
                     })
          : CopyTileNMajor(bs_, range_stage * BStage(),
                           [&](const Expr& k, const Expr& n) {
                             return guarded(g_.B(p_, k0 + k, tile_n_ * k_.bn + n, Lanes()));
                           }),
  });
}

template <typename SourceFn>
Stmt WgmmaKernel::CopyTileNMajor(const ir::Buffer& dst, const Expr& base, SourceFn source) const {
  const int64_t lanes = Lanes();
  const int64_t per_row = k_.bn / lanes;
  const int64_t chunks = row_ * per_row;
  const int64_t threads = k_.SplitThreads();
  const int64_t per_chunk16 = 16 / bytes_;
  const int64_t atom_cols = kRowBytes / bytes_;  // 64 columns of 16-bit elements
  Var c("c");
  Expr chunk = split_tx_ + c * threads;
  Expr k = chunk / per_row;
  Expr n = chunk % per_row * lanes;
  Expr in_atom = n % atom_cols;
  Expr swizzled = Xor3(in_atom / per_chunk16, k % 8) * per_chunk16 + in_atom % per_chunk16;
  Expr at = base + n / atom_cols * (row_ * atom_cols) + k * atom_cols + swizzled;
  GlobalTileSource src = source(k, n);
  return SpreadOverThreads(c, chunk, chunks, threads, CopyChunk(dst, at, src, lanes, k_.copy >= 4),
                           k_.copy >= 4);
}

template <typename SourceFn>
Stmt WgmmaKernel::CopyTile(const ir::Buffer& dst, const Expr& base, int64_t rows,
                           SourceFn source) const {
  const int64_t lanes = Lanes();
  const int64_t per_row = row_ / lanes;
  const int64_t chunks = rows * per_row;
  const int64_t threads = k_.SplitThreads();  // the warpgroups of this K range
  const int64_t per_chunk16 = 16 / bytes_;    // elements per 16-byte chunk
  Var c("c");
  Expr chunk = split_tx_ + c * threads;
  Expr row = chunk / per_row;
  Expr col = chunk % per_row * lanes;  // element of K within the row
  Expr swizzled = Xor3(col / per_chunk16, row % 8) * per_chunk16 + col % per_chunk16;
  Expr at = base + row * row_ + swizzled;
  GlobalTileSource src = source(row, col);
  return SpreadOverThreads(c, chunk, chunks, threads, CopyChunk(dst, at, src, lanes, k_.copy >= 4),
                           k_.copy >= 4);
}

Stmt WgmmaKernel::DenseCopyA(const Expr& tile, const Expr& set) const {
  std::vector<Stmt> copies;
  for (int64_t step = 0; step < k_.k_steps; ++step) {
    copies.push_back(CopyTile(as_, (set * k_.k_steps + step) * AStage(), k_.bm,
                              [&](const Expr& r, const Expr& col) {
                                return g_.A(p_, tile * k_.bm + r, step * row_ + col, Lanes());
                              }));
  }
  return Block::Make(std::move(copies));
}

Stmt WgmmaKernel::DenseCopyB() const {
  std::vector<Stmt> copies;
  for (int64_t step = 0; step < k_.k_steps; ++step) {
    copies.push_back(CopyTile(bs_, step * BStage(), k_.bn, [&](const Expr& r, const Expr& col) {
      return g_.B(p_, r, step * row_ + col, Lanes());
    }));
  }
  return Block::Make(std::move(copies));
}

Stmt WgmmaKernel::StoreAccumulators() const {
  if (k_.stage_c == 1) {
    return Block::Make({StageWrites(), StageCopyOut()});
  }
  return split_.Active() ? WriteAccumulators(v_.bx, bz_) : WriteAccumulators();
}

Stmt WgmmaKernel::WriteAccumulators(const Expr& park_tile, const Expr& part) const {
  const MmaEpilogue epilogue = Epilogue();
  Expr warp = tx_ % 128 / 32;
  Expr local_row0 = group_m_ * k_.GroupM() + warp * 16 + lane_ / 4;
  Expr local_col0 = group_n_ * k_.GroupN() + lane_ % 4 * 2;
  Expr col0 = tile_n_ * k_.bn + local_col0;
  const bool pairs = g_.n % 2 == 0;
  const int64_t n = k_.GroupN();
  std::vector<Stmt> stmts;
  for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
    for (int64_t j = 0; j < n / 2; j += 2) {
      const int64_t slot = mi * n / 2 + j;
      const int64_t dm = 64 * mi + 8 * ((j / 2) % 2), dn = 8 * (j / 4);
      if (park_tile.defined()) {  // rows past C's (a skinny M's) are never read: not parked
        Stmt park = split_.Park(park_tile, part, local_row0 + dm, local_col0 + dn,
                                ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2)), 2);
        stmts.push_back(g_.m % k_.bm == 0 ? park
                                          : IfThenElse::Make(OutRowValid(local_row0 + dm), park));
        continue;
      }
      Expr m = OutRow(local_row0 + dm);
      Expr row_valid = OutRowValid(local_row0 + dm);
      Expr col = col0 + dn;
      if (pairs) {
        Expr value = ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2));
        stmts.push_back(
            IfThenElse::Make(row_valid && col < g_.n, epilogue.Store(m, col, value, 2)));
        continue;
      }
      for (int64_t e = 0; e < 2; ++e) {
        Expr value = ir::Load::Make(acc_, Expr(slot + e));
        stmts.push_back(
            IfThenElse::Make(row_valid && col + e < g_.n, epilogue.Store(m, col + e, value, 1)));
      }
    }
  }
  return Block::Make(std::move(stmts));
}

Stmt WgmmaKernel::StageWrites() const {
  const MmaEpilogue epilogue = Epilogue();
  Expr warp = tx_ % 128 / 32;
  Expr row0 = group_m_ * k_.GroupM() + warp * 16 + lane_ / 4;
  Expr col0 = group_n_ * k_.GroupN() + lane_ % 4 * 2;
  const int64_t n = k_.GroupN();
  // Columns past C's (whose values are never copied out) read the bias of its last pair.
  auto bias_col = [&](const Expr& col) {
    return ir::Min::Make(tile_n_ * k_.bn + col, Expr(g_.n - 2));
  };
  std::vector<Stmt> stmts;
  for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
    for (int64_t j = 0; j < n / 2; j += 2) {
      const int64_t slot = mi * n / 2 + j;
      Expr row = row0 + (64 * mi + 8 * ((j / 2) % 2));
      Expr col = col0 + 8 * (j / 4);
      Expr value = ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2));
      stmts.push_back(Store::Make(cs_, ir::Ramp::Make(row * k_.StagedRow() + col, 1, 2),
                                  epilogue.Value(bias_col(col), value, 2)));
    }
  }
  return Block::Make(std::move(stmts));
}

Stmt WgmmaKernel::StageCopyOut() const {
  return StageCopyOut(ir::Barrier::Make(), tx_, k_.Threads());
}

Stmt WgmmaKernel::StageCopyOut(Stmt barrier, const Expr& thread, int64_t threads) const {
  std::vector<Stmt> stmts = {std::move(barrier)};
  const int64_t lanes = 16 / k_.out_bytes;
  const int64_t per_row = k_.bn / lanes;
  const int64_t chunks = k_.bm * per_row;
  Var c("c_out");
  Expr chunk = thread + c * threads;
  Expr r = chunk / per_row;
  Expr q = chunk % per_row * lanes;
  Expr m = OutRow(r);
  Expr col = tile_n_ * k_.bn + q;
  Stmt copy = IfThenElse::Make(
      OutRowValid(r) && col < g_.n,
      Store::Make(
          p_.c, ir::Ramp::Make(m * g_.n + col, 1, static_cast<int>(lanes)),
          ir::Load::Make(cs_, ir::Ramp::Make(r * k_.StagedRow() + q, 1, static_cast<int>(lanes)))));
  stmts.push_back(SpreadOverThreads(c, chunk, chunks, threads, std::move(copy), true));
  return Block::Make(std::move(stmts));
}

}  // namespace tune::wgmma_detail
