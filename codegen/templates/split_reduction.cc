#include "codegen/templates/split_reduction.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/template_util.h"
#include "common/strings.h"

namespace tune {

using ir::Expr;
using ir::Stmt;

int64_t SplitWorkspaceBytes(int64_t tiles, int64_t bm, int64_t bn, int64_t gridk) {
  return gridk <= 1 ? 0 : 4 * tiles * (gridk * bm * bn + 1);
}

std::vector<int64_t> GridSplits(int64_t k_steps) {
  std::vector<int64_t> splits = {1};
  for (int64_t v : {2, 3, 4, 6, 8, 12, 16}) {
    if (2 * v <= k_steps) {
      splits.push_back(v);
    }
  }
  return splits;
}

void AddSplitWorkspaceConstraint(ConfigSpace& space, const ImplicitGemm& g) {
  space.AddConstraint(
      "a split reduction's workspace (gridk partial tiles of bm x bn per tile, 4-byte "
      "elements) fits in 64 MiB",
      [m = g.m, n = g.n](const Config& c) {
        const int64_t bm = KnobValue(c, "bm"), bn = KnobValue(c, "bn");
        return SplitWorkspaceBytes(GpuCeilDiv(m, bm) * GpuCeilDiv(n, bn), bm, bn,
                                   KnobValue(c, "gridk")) <= kSplitWorkspaceLimitBytes;
      });
}

SplitReduction::SplitReduction(const ImplicitGemm& g, int64_t bm, int64_t bn, int64_t slots,
                               ir::Type acc)
    : g_(g),
      bm_(bm),
      bn_(bn),
      slots_(slots),
      tiles_(GpuCeilDiv(g.m, bm) * GpuCeilDiv(g.n, bn)),
      partials_("split_partials", ir::MemoryScope::kGlobal, acc),
      arrivals_("split_arrivals", ir::MemoryScope::kGlobal, ir::Type::Int32()),
      arrived_("split_arrived", ir::MemoryScope::kGpuShared, ir::Type::Int32()) {}

Stmt SplitReduction::AllocateWorkspace(Stmt kernel) const {
  if (!Active()) {
    return kernel;
  }
  return ir::Allocate::Make(partials_, tiles_ * slots_ * bm_ * bn_,
                            ir::Allocate::Make(arrivals_, tiles_, std::move(kernel)));
}

Stmt SplitReduction::AllocateShared(Stmt threads) const {
  return Active() ? ir::Allocate::Make(arrived_, 1, std::move(threads)) : threads;
}

Expr SplitReduction::PartialIndex(const Expr& tile, const Expr& split, const Expr& row,
                                  const Expr& col) const {
  return ((tile * slots_ + split) * bm_ + row) * bn_ + col;
}

Stmt SplitReduction::Park(const Expr& tile, const Expr& split, const Expr& row, const Expr& col,
                          Expr value, int lanes) const {
  Expr at = PartialIndex(tile, split, row, col);
  return ir::Store::Make(partials_, lanes == 1 ? at : ir::Ramp::Make(at, 1, lanes),
                         std::move(value));
}

Stmt SplitReduction::Finish(const Expr& tile, const Expr& tile_m, const Expr& tile_n,
                            const ir::Var& tx, int64_t threads, const MmaEpilogue& epilogue,
                            int named_barrier) const {
  return Finish(tile, Expr(slots_), tile_m, tile_n, tx, threads, epilogue, named_barrier);
}

int SplitReduction::Lanes() const {
  for (int l : {4, 2}) {
    if (g_.n % l == 0 && bn_ % l == 0) {
      return l;
    }
  }
  return 1;
}

Stmt SplitReduction::SumChunks(const Expr& tile, const Expr& parts, const Expr& tile_m,
                               const Expr& tile_n, const ir::Var& tx, int64_t threads,
                               const MmaEpilogue& epilogue, const Expr& first,
                               int64_t count) const {
  const bool all_slots = ir::AsConstInt(parts) == slots_;
  const int lanes = Lanes();
  const int64_t per_row = bn_ / lanes;
  const int64_t chunks = Chunks();
  // Whether every thread's every chunk is one of the tile's (else the last ones are guarded).
  const bool whole = count % threads == 0 && ir::AsConstInt(first) == 0 && count == chunks;
  const bool inside_share = count % threads == 0;
  // The sum of chunk `chunk`'s partial tiles, in split order whichever block arrived last;
  // slots past `parts` (stream-K) read but not added. Part 0 is always there.
  auto sum_of = [&](const Expr& chunk) {
    Expr row = chunk / per_row;
    Expr col = chunk % per_row * lanes;
    Expr sum;
    for (int64_t s = 0; s < slots_; ++s) {
      Expr at = PartialIndex(tile, Expr(s), row, col);
      Expr part = ir::Load::Make(partials_, lanes == 1 ? at : ir::Ramp::Make(at, 1, lanes));
      if (s > 0 && !all_slots) {
        Expr none = ir::Cast::Make(partials_.element_type(), Expr(int64_t{0}));
        part = ir::Select::Make(Expr(s) < parts, part, ir::BroadcastTo(none, lanes));
      }
      sum = sum.defined() ? sum + part : part;
    }
    return sum;
  };
  // Each thread's chunks (first + tx, first + tx + threads, ...) in batches: first the batch's
  // sums, so that all of its loads are in flight at once, then its stores. The stores of a tile
  // inside C go unguarded, so that no branch separates them from the loads (a branch per store
  // lets the compilers sink each load to its store: one round trip to L2 per chunk).
  // A batch keeps at most ~64 loaded values in flight (registers), and at most 8 chunks.
  const int64_t batch_size = std::clamp<int64_t>(64 / (lanes * slots_), 1, 8);
  const int64_t per_thread = (count + threads - 1) / threads;
  auto batches_of = [&](bool guarded) {
    std::vector<Stmt> batches;
    for (int64_t b = 0; b < per_thread; b += batch_size) {
      std::vector<std::pair<ir::Var, Expr>> sums;
      std::vector<Stmt> stores;
      for (int64_t i = b; i < std::min(per_thread, b + batch_size); ++i) {
        Expr local = tx + i * threads;
        Expr chunk = first + local;
        // A chunk past the share's or the tile's reads the tile's last chunk, stores nothing.
        Expr value = sum_of(whole ? chunk : ir::Min::Make(chunk, Expr(chunks - 1)));
        ir::Var sum(StrCat("split_sum", i), value.type());
        sums.emplace_back(sum, std::move(value));
        Expr m = tile_m * bm_ + chunk / per_row;
        Expr n = tile_n * bn_ + chunk % per_row * lanes;
        Stmt store = epilogue.Store(m, n, sum, lanes);
        if (guarded) {
          store = ir::IfThenElse::Make(m < g_.m && n < g_.n, std::move(store));
        }
        if (!whole) {
          Expr mine = chunk < chunks;
          if (!inside_share) {
            mine = local < count && mine;
          }
          store = ir::IfThenElse::Make(mine, std::move(store));
        }
        stores.push_back(std::move(store));
      }
      Stmt batch = ir::Block::Make(std::move(stores));
      for (auto it = sums.rbegin(); it != sums.rend(); ++it) {
        batch = ir::LetStmt::Make(it->first, std::move(it->second), std::move(batch));
      }
      batches.push_back(std::move(batch));
    }
    return ir::Block::Make(std::move(batches));
  };
  if (g_.m % bm_ == 0 && g_.n % bn_ == 0) {
    return batches_of(false);
  }
  Expr inside_c = (tile_m + 1) * bm_ <= g_.m && (tile_n + 1) * bn_ <= g_.n;
  return ir::IfThenElse::Make(inside_c, batches_of(false), batches_of(true));
}

Stmt SplitReduction::Finish(const Expr& tile, const Expr& parts, const Expr& tile_m,
                            const Expr& tile_n, const ir::Var& tx, int64_t threads,
                            const MmaEpilogue& epilogue, int named_barrier) const {
  const bool all_slots = ir::AsConstInt(parts) == slots_;
  const Expr zero(int64_t{0});
  Stmt last = ir::Block::Make({
      SumChunks(tile, parts, tile_m, tile_n, tx, threads, epilogue, zero, Chunks()),
      ir::IfThenElse::Make(
          tx == zero, ir::Store::Make(arrivals_, tile, ir::IntImm::Make(0, ir::Type::Int32()))),
  });
  Expr arrived = ir::Cast::Make(ir::Type::Int64(), ir::Load::Make(arrived_, zero));
  // A tile of one block (stream-K's parts of 1) has been stored: no arrival. The barriers stay
  // outside the conditions, as every thread must reach them.
  Expr shared = all_slots ? Expr(true) : parts > 1;
  auto barrier = [&] {
    return named_barrier == 0 ? ir::Barrier::Make()
                              : ir::Barrier::MakeNamed(named_barrier, threads);
  };
  return ir::Block::Make({
      barrier(),
      ir::IfThenElse::Make(
          tx == zero && shared,
          ir::FetchAdd::Make(arrivals_, tile, ir::IntImm::Make(1, ir::Type::Int32()), arrived_,
                             zero)),
      barrier(),
      all_slots ? ir::IfThenElse::Make(arrived == parts - 1, std::move(last))
                : ir::IfThenElse::Make(parts > 1,
                                       ir::IfThenElse::Make(arrived == parts - 1, std::move(last))),
  });
}

Stmt SplitReduction::FinishInCluster(const Expr& tile, const Expr& split, const Expr& tile_m,
                                     const Expr& tile_n, const ir::Var& tx, int64_t threads,
                                     const MmaEpilogue& epilogue) const {
  // Shares of whole rows of chunks where the rows divide evenly, so that a block's stores
  // stay in rows of its own.
  const int64_t per_row = bn_ / Lanes();
  const int64_t share = bm_ % slots_ == 0 ? bm_ / slots_ * per_row : GpuCeilDiv(Chunks(), slots_);
  return ir::Block::Make({
      ir::Barrier::MakeCluster(),
      SumChunks(tile, Expr(slots_), tile_m, tile_n, tx, threads, epilogue, split * share, share),
  });
}

}  // namespace tune
