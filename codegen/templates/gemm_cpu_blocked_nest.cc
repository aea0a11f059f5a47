#include "codegen/templates/gemm_cpu_blocked_nest.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/template_util.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Block;
using ir::Broadcast;
using ir::Buffer;
using ir::Expr;
using ir::Fma;
using ir::For;
using ir::IfThenElse;
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;

// The three cache loops: columns (nc blocks), reduction (kc blocks), rows (mc blocks).
enum Dim : uint8_t { kCols, kRed, kRows };

// Orders of the cache loops, outermost first; the knob `order` indexes this table.
constexpr std::array<std::array<Dim, 3>, 6> kOrders = {{
    {kCols, kRed, kRows},  // 0: BLIS: pack B once per (nc, kc) block, A per (mc, kc) block
    {kCols, kRows, kRed},
    {kRed, kCols, kRows},
    {kRed, kRows, kCols},
    {kRows, kCols, kRed},
    {kRows, kRed, kCols},
}};

// One register tile: `rows` x `cols` of C starting at (row0, col0). With packing, the tile's
// A panel starts at a_base in A_packed (row stride `rows`) and its B panel at b_base in
// B_packed (row stride `cols`).
struct Tile {
  int64_t rows, cols;
  Expr row0, col0;
  Expr a_base, b_base;
};

class GemmBuilder {
 public:
  explicit GemmBuilder(const BlockedGemmPlan& p) : p_(p) {}

  ir::LoweredFunc Build(std::string_view func_name) {
    ir::LoweredFunc func;
    func.name = std::string(func_name);
    const Buffer& b = p_.prepacked_b ? b_prepared_ : b_;
    func.params = p_.form.b_first ? std::vector<Buffer>{b, a_} : std::vector<Buffer>{a_, b};
    if (EpilogueHasBias(p_.epilogue)) {
      func.params.push_back(bias_);
    }
    func.params.push_back(c_);
    func.body = LoopNest();
    if (p_.form.batch > 1) {
      func.body = For::Make(batch_, 0, p_.form.batch, LoopKind::kSerial, func.body);
    }
    return func;
  }

  // The prepared B of a plan with prepacked_b: every (columns, reduction) block packed as PackB
  // packs it, the blocks of one column block after each other (PreparedBlockBase): the panels
  // the kernel reads, in the order it reads them. K x N floats.
  PreparedWeights BuildPreparation(std::string_view func_name) const {
    PreparedWeights out;
    out.func.name = std::string(func_name);
    out.func.params = {b_, b_prepared_};
    out.func.body = For::Make(jb_, 0, Blocks(kCols), LoopKind::kSerial,
                              For::Make(pb_, 0, Blocks(kRed), LoopKind::kSerial,
                                        PackB(false, b_prepared_, PreparedBlockBase())));
    out.floats = p_.k * p_.n;
    return out;
  }

 private:
  // Where the current GEMM's B and C start (A is shared by the batch).
  Expr BOffset() const { return p_.form.batch > 1 ? batch_ * (p_.k * p_.n) : Expr(int64_t{0}); }
  Expr COffset() const { return p_.form.batch > 1 ? batch_ * (p_.m * p_.n) : Expr(int64_t{0}); }

  // Block geometry in terms of the cache-loop variables.
  int64_t Blocks(Dim d) const {
    switch (d) {
      case kCols:
        return CeilDiv(p_.n, p_.nc);
      case kRed:
        return CeilDiv(p_.k, p_.kc);
      case kRows:
        return CeilDiv(p_.m, p_.mc);
    }
    return 1;
  }
  const Var& VarOf(Dim d) const {
    switch (d) {
      case kCols:
        return jb_;
      case kRed:
        return pb_;
      case kRows:
        return ib_;
    }
    return jb_;
  }
  Expr J0() const { return jb_ * p_.nc; }
  Expr P0() const { return pb_ * p_.kc; }
  Expr I0() const { return ib_ * p_.mc; }
  Expr NCur() const { return ir::Min::Make(p_.nc, p_.n - J0()); }
  Expr KCur() const { return ir::Min::Make(p_.kc, p_.k - P0()); }
  Expr MCur() const { return ir::Min::Make(p_.mc, p_.m - I0()); }
  Expr LastBlock(Dim d) const { return VarOf(d) == Blocks(d) - 1; }
  // Where the packed (columns, reduction) block (jb, pb) starts in the prepared B: the blocks of
  // earlier column blocks hold J0 full columns, and those of this one before pb P0 full rows of
  // NCur columns.
  Expr PreparedBlockBase() const { return J0() * p_.k + P0() * NCur(); }
  int64_t RowRem() const { return p_.m % p_.mr; }
  int64_t ColRem() const { return p_.n % p_.nr; }

  // The three cache loops in the configured order. Each packing step sits in the body of the
  // innermost loop it depends on. With several threads the innermost non-reduction loop is
  // parallel: a packed panel filled inside it is private to an iteration (allocated in the
  // parallel body), one filled outside it is shared (allocated around everything, and its
  // panel loop is parallel instead).
  Stmt LoopNest() {
    const std::array<Dim, 3>& order = kOrders[p_.order];
    auto depth_of = [&](Dim d) {
      for (int i = 0; i < 3; ++i) {
        if (order[i] == d) {
          return i;
        }
      }
      return 0;
    };
    const int parallel_depth = p_.parallel ? std::max(depth_of(kRows), depth_of(kCols)) : -1;
    const int pack_a_depth = std::max(depth_of(kRows), depth_of(kRed));
    const int pack_b_depth = std::max(depth_of(kCols), depth_of(kRed));
    const bool share_a = parallel_depth >= 0 && pack_a_depth < parallel_depth;
    const bool share_b = parallel_depth >= 0 && pack_b_depth < parallel_depth;
    Stmt body = Compute();
    for (int d = 2; d >= 0; --d) {
      std::vector<Stmt> stmts;
      if (p_.pack_a && pack_a_depth == d) {
        stmts.push_back(PackA(share_a));
      }
      if (p_.pack_b && !p_.prepacked_b && pack_b_depth == d) {
        stmts.push_back(PackB(share_b, b_packed_, Expr(int64_t{0})));
      }
      stmts.push_back(body);
      body = Block::Make(std::move(stmts));
      if (d == parallel_depth) {
        body = WithPackBuffers(body, !share_a, !share_b);
      }
      LoopKind kind = d == parallel_depth ? LoopKind::kParallel : LoopKind::kSerial;
      body = For::Make(VarOf(order[d]), 0, Blocks(order[d]), kind, body);
    }
    if (parallel_depth < 0) {
      return WithPackBuffers(body, true, true);
    }
    return WithPackBuffers(body, share_a, share_b);
  }

  Stmt WithPackBuffers(Stmt body, bool a, bool b) const {
    const int64_t kc = std::min(p_.kc, p_.k);
    if (p_.pack_b && !p_.prepacked_b && b) {
      body = Allocate::Make(b_packed_, std::min(p_.nc, p_.n) * kc, body);
    }
    if (p_.pack_a && a) {
      body = Allocate::Make(a_packed_, std::min(p_.mc, p_.m) * kc, body);
    }
    return body;
  }

  // Copies rows [i0, i0 + mcur) x reduction [p0, p0 + kcur) of A into mr-row panels, k-major:
  // panel t holds element (i, k) at t*mr*kcur + k*mr + i; the remainder rows (last block
  // only) form one narrower panel after the full ones. `parallel`: the panels are filled by
  // several threads.
  Stmt PackA(bool parallel) const {
    Var t("t"), k("k"), i("i");
    Expr kcur = KCur();
    Stmt full =
        For::Make(t, 0, MCur() / p_.mr, parallel ? LoopKind::kParallel : LoopKind::kSerial,
                  For::Make(k, 0, kcur, LoopKind::kSerial,
                            For::Make(i, 0, p_.mr, LoopKind::kUnrolled,
                                      Store::Make(a_packed_, t * (p_.mr * kcur) + k * p_.mr + i,
                                                  a_((I0() + t * p_.mr + i) * p_.k + P0() + k)))));
    const int64_t rem = RowRem();
    if (rem == 0) {
      return full;
    }
    Var kt("k"), it("i");
    Stmt tail = For::Make(
        kt, 0, kcur, LoopKind::kSerial,
        For::Make(it, 0, rem, LoopKind::kUnrolled,
                  Store::Make(a_packed_, (MCur() / p_.mr) * (p_.mr * kcur) + kt * rem + it,
                              a_((p_.m - rem + it) * p_.k + P0() + kt))));
    return Block::Make({full, IfThenElse::Make(LastBlock(kRows), tail)});
  }

  // Copies `cols` columns of row k of B (from column col) to `to` at dst, with vector loads
  // and stores for whole vectors and scalars for the rest.
  Stmt CopyBRow(const Buffer& to, Expr dst, Expr src, int64_t cols) const {
    std::vector<Stmt> stmts;
    const int64_t vectors = cols / p_.lanes;
    if (vectors > 0) {
      Var v("v");
      stmts.push_back(
          For::Make(v, 0, vectors, LoopKind::kUnrolled,
                    Store::Make(to, dst + v * p_.lanes,
                                Load::Make(b_, src + v * p_.lanes, static_cast<int>(p_.lanes)))));
    }
    if (cols % p_.lanes != 0) {
      Var s("s");
      stmts.push_back(For::Make(s, vectors * p_.lanes, cols % p_.lanes, LoopKind::kUnrolled,
                                Store::Make(to, dst + s, b_(src + s))));
    }
    return Block::Make(std::move(stmts));
  }

  // Copies reduction [p0, p0 + kcur) x columns [j0, j0 + ncur) of B into nr-column panels in
  // `to` from `base` on: panel t holds element (k, j) at t*nr*kcur + k*nr + j; the remainder
  // columns (last block only) form one narrower panel after the full ones. `parallel`: the
  // panels are filled by several threads.
  Stmt PackB(bool parallel, const Buffer& to, const Expr& base) const {
    Var t("t"), k("k");
    Expr kcur = KCur();
    Stmt full =
        For::Make(t, 0, NCur() / p_.nr, parallel ? LoopKind::kParallel : LoopKind::kSerial,
                  For::Make(k, 0, kcur, LoopKind::kSerial,
                            CopyBRow(to, base + t * (p_.nr * kcur) + k * p_.nr,
                                     BOffset() + (P0() + k) * p_.n + J0() + t * p_.nr, p_.nr)));
    const int64_t rem = ColRem();
    if (rem == 0) {
      return full;
    }
    Var kt("k");
    Stmt tail = For::Make(kt, 0, kcur, LoopKind::kSerial,
                          CopyBRow(to, base + (NCur() / p_.nr) * (p_.nr * kcur) + kt * rem,
                                   BOffset() + (P0() + kt) * p_.n + p_.n - rem, rem));
    return Block::Make({full, IfThenElse::Make(LastBlock(kCols), tail)});
  }

  // Every register tile of the current (columns, reduction, rows) block: full tiles, then the
  // remainder row tiles and column tiles of the last blocks.
  Stmt Compute() const {
    Var jt("jt"), it("it");
    Expr kcur = KCur();
    const int64_t row_rem = RowRem(), col_rem = ColRem();
    auto tile_row = [&](const Expr& col0, const Expr& b_base, int64_t cols) {
      std::vector<Stmt> stmts;
      Var t("it");
      stmts.push_back(For::Make(
          t, 0, MCur() / p_.mr, LoopKind::kSerial,
          MicroKernel({p_.mr, cols, I0() + t * p_.mr, col0, t * (p_.mr * kcur), b_base})));
      if (row_rem > 0) {
        stmts.push_back(IfThenElse::Make(LastBlock(kRows),
                                         MicroKernel({row_rem, cols, Expr(p_.m - row_rem), col0,
                                                      (MCur() / p_.mr) * (p_.mr * kcur), b_base})));
      }
      return Block::Make(std::move(stmts));
    };
    std::vector<Stmt> stmts;
    stmts.push_back(For::Make(jt, 0, NCur() / p_.nr, LoopKind::kSerial,
                              tile_row(J0() + jt * p_.nr, jt * (p_.nr * kcur), p_.nr)));
    if (col_rem > 0) {
      stmts.push_back(IfThenElse::Make(
          LastBlock(kCols),
          tile_row(Expr(p_.n - col_rem), (NCur() / p_.nr) * (p_.nr * kcur), col_rem)));
    }
    return Block::Make(std::move(stmts));
  }

  // The element (i, k) of the tile's A panel.
  Expr LoadA(const Tile& t, const Expr& i, const Expr& k) const {
    if (p_.pack_a) {
      return a_packed_(t.a_base + k * t.rows + i);
    }
    return a_((t.row0 + i) * p_.k + P0() + k);
  }
  // `lanes` elements (k, j..j+lanes) of the tile's B panel.
  Expr LoadB(const Tile& t, const Expr& k, const Expr& j, int lanes) const {
    if (p_.prepacked_b) {
      return Load::Make(b_prepared_, PreparedBlockBase() + t.b_base + k * t.cols + j, lanes);
    }
    if (p_.pack_b) {
      return Load::Make(b_packed_, t.b_base + k * t.cols + j, lanes);
    }
    return Load::Make(b_, BOffset() + (P0() + k) * p_.n + t.col0 + j, lanes);
  }

  // acc[rows][cols] += A panel x B panel over the current reduction block, with acc loaded
  // from C (or zero in the first block) and stored back with the epilogue in the last block.
  Stmt MicroKernel(const Tile& t) const {
    Buffer acc(t.rows == p_.mr && t.cols == p_.nr ? "acc" : "acc_edge", MemoryScope::kStack);
    const int lanes = static_cast<int>(p_.lanes);
    const int64_t vectors = t.cols / p_.lanes;
    const int64_t scalars = t.cols % p_.lanes;
    // Emits f(i, column, width) for every vector (width = lanes) and scalar (width 1) of a
    // row of the tile, over every row, as unrolled loops.
    auto each = [&](auto&& f) {
      std::vector<Stmt> per_row;
      Var i("i");
      if (vectors > 0) {
        Var v("v");
        per_row.push_back(For::Make(v, 0, vectors, LoopKind::kUnrolled, f(i, v * lanes, lanes)));
      }
      if (scalars > 0) {
        Var s("s");
        per_row.push_back(For::Make(s, vectors * lanes, scalars, LoopKind::kUnrolled, f(i, s, 1)));
      }
      return For::Make(i, 0, t.rows, LoopKind::kUnrolled, Block::Make(std::move(per_row)));
    };
    auto acc_at = [&](const Expr& i, const Expr& j) { return i * t.cols + j; };
    auto c_at = [&](const Expr& i, const Expr& j) {
      return COffset() + (t.row0 + i) * p_.n + t.col0 + j;
    };

    Stmt zero = each([&](const Expr& i, const Expr& j, int w) {
      return Store::Make(acc, acc_at(i, j), ir::BroadcastTo(Expr(0.0f), w));
    });
    Stmt reload = each([&](const Expr& i, const Expr& j, int w) {
      return Store::Make(acc, acc_at(i, j), Load::Make(c_, c_at(i, j), w));
    });
    Stmt init = IfThenElse::Make(pb_ == 0, zero, reload);

    auto step = [&](const Expr& k) {
      return each([&](const Expr& i, const Expr& j, int w) {
        Expr a = ir::BroadcastTo(LoadA(t, i, k), w);
        return Store::Make(acc, acc_at(i, j),
                           Fma::Make(a, LoadB(t, k, j, w), Load::Make(acc, acc_at(i, j), w)));
      });
    };
    Expr kcur = KCur();
    const int64_t u = p_.unroll_k;
    Var ko("ko"), ku("ku"), kt("kt");
    std::vector<Stmt> reduce;
    if (u == 1) {
      reduce.push_back(For::Make(kt, 0, kcur, LoopKind::kSerial, step(kt)));
    } else {
      reduce.push_back(For::Make(ko, 0, kcur / u, LoopKind::kSerial,
                                 For::Make(ku, 0, u, LoopKind::kUnrolled, step(ko * u + ku))));
      reduce.push_back(For::Make(kt, (kcur / u) * u, kcur % u, LoopKind::kSerial, step(kt)));
    }

    auto store = [&](bool with_epilogue) {
      return each([&](const Expr& i, const Expr& j, int w) {
        Expr value = Load::Make(acc, acc_at(i, j), w);
        if (with_epilogue && EpilogueHasBias(p_.epilogue)) {
          value = value + (p_.form.bias_per_row ? ir::BroadcastTo(Load::Make(bias_, t.row0 + i), w)
                                                : Load::Make(bias_, t.col0 + j, w));
        }
        if (with_epilogue && EpilogueHasRelu(p_.epilogue)) {
          value = ir::Max::Make(value, ir::BroadcastTo(Expr(0.0f), w));
        }
        return Store::Make(c_, c_at(i, j), value);
      });
    };
    Stmt write_back = p_.epilogue == Epilogue::kNone
                          ? store(false)
                          : IfThenElse::Make(LastBlock(kRed), store(true), store(false));
    return Allocate::Make(acc, t.rows * t.cols,
                          Block::Make({init, Block::Make(std::move(reduce)), write_back}));
  }

  const BlockedGemmPlan p_;
  Var jb_{"jb"}, pb_{"pb"}, ib_{"ib"}, batch_{"batch"};
  Buffer a_{"A"}, b_{"B"}, bias_{"bias"}, c_{"C"};
  Buffer a_packed_{"A_packed", MemoryScope::kStack};
  Buffer b_packed_{"B_packed", MemoryScope::kStack};
  Buffer b_prepared_{"B_prepared"};
};

}  // namespace

BlockedGemmPlan BlockedGemmPlanFor(const GemmShape& g, Epilogue epilogue,
                                   const GemmKernelForm& form, const Target& target,
                                   const Config& config) {
  BlockedGemmPlan p;
  p.m = g.m;
  p.n = g.n;
  p.k = g.k;
  p.mr = KnobValue(config, "mr");
  p.nr = KnobValue(config, "nr");
  p.kc = KnobValue(config, "kc");
  p.mc = KnobValue(config, "mc");
  p.nc = KnobValue(config, "nc");
  p.unroll_k = KnobValue(config, "unroll_k");
  p.pack_a = KnobValue(config, "pack_a") != 0;
  p.pack_b = KnobValue(config, "pack_b") != 0;
  p.order = static_cast<int>(KnobValue(config, "order"));
  p.lanes = CpuVectorInfoFor(target).lanes;
  p.parallel = target.threads > 1;
  p.epilogue = epilogue;
  p.form = form;
  return p;
}

ir::LoweredFunc BuildBlockedGemmNest(const BlockedGemmPlan& plan, std::string_view func_name) {
  return GemmBuilder(plan).Build(func_name);
}

PreparedWeights BuildBlockedGemmPreparation(const BlockedGemmPlan& plan,
                                            std::string_view func_name) {
  return GemmBuilder(plan).BuildPreparation(func_name);
}

}  // namespace tune
