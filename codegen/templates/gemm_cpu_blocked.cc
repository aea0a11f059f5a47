#include "codegen/templates/gemm_cpu_blocked.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"

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

ConfigSpace Space(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t lanes = cpu.lanes;
  const int64_t registers = cpu.registers;
  const int64_t m = g.m, n = g.n;
  ConfigSpace space;
  space.AddKnob("mr", AtMost({1, 2, 4, 6, 8, 12, 14}, g.m, 1),
                "rows of the register tile (one broadcast of A each)");
  space.AddKnob("nr",
                AtMost({lanes, 2 * lanes, 3 * lanes, 4 * lanes}, CeilDiv(n, lanes) * lanes, lanes),
                "columns of the register tile (a multiple of the vector width)");
  // With few rows B is read about once: blocks of 8 or 16 rows of B stream it with few rows in
  // flight at a time (bench/RESULTS.md, matrix-vector on Zen 5).
  std::vector<int64_t> kcs = {32, 64, 128, 256, 384, 512, 768};
  if (g.m <= 16) {
    kcs.insert(kcs.begin(), {8, 16});
  }
  space.AddKnob("kc", ClipToExtent(kcs, g.k), "reduction block (K) of the packed panels");
  space.AddKnob(
      "mc",
      ClipToExtent({16, 24, 32, 48, 56, 64, 96, 112, 128, 168, 192, 256, 288, 336, 384, 576}, g.m),
      "row block (M) of A kept in L2");
  const int64_t nc_unit = 12 * lanes;  // a multiple of every nr candidate
  space.AddKnob(
      "nc",
      ClipToExtent({nc_unit, 2 * nc_unit, 4 * nc_unit, 8 * nc_unit, 16 * nc_unit, 32 * nc_unit},
                   g.n),
      "column block (N) of B kept in L3");
  space.AddKnob("unroll_k", AtMost({1, 2, 4, 8}, g.k, 1), "unroll factor of the reduction loop");
  space.AddKnob("pack_a", {0, 1}, "copy A blocks into contiguous mr-row panels");
  space.AddKnob("pack_b", {0, 1}, "copy B blocks into contiguous nr-column panels");
  space.AddKnob("order", {0, 1, 2, 3, 4, 5},
                "order of the cache loops: 0 n,k,m 1 n,m,k 2 k,n,m 3 k,m,n 4 m,n,k 5 m,k,n");
  space.AddConstraint(
      fmt::format("mr*nr/{0} + nr/{0} + 1 <= {1} (accumulators fit the vector registers)", lanes,
                  registers),
      [lanes, registers](const Config& c) {
        int64_t vectors = KnobValue(c, "nr") / lanes;
        return KnobValue(c, "mr") * vectors + vectors + 1 <= registers;
      });
  space.AddConstraint(fmt::format("mc % mr == 0 || mc == {}", m), [m](const Config& c) {
    return KnobValue(c, "mc") % KnobValue(c, "mr") == 0 || KnobValue(c, "mc") == m;
  });
  space.AddConstraint(fmt::format("nc % nr == 0 || nc == {}", n), [n](const Config& c) {
    return KnobValue(c, "nc") % KnobValue(c, "nr") == 0 || KnobValue(c, "nc") == n;
  });
  return space;
}

// Measured on AVX-512 (Zen 4, Emerald Rapids) at 512^3: an 8 x 2-vector register tile with
// kc 512 and mc 96 is at or near the best of the space on both; on 16-register targets the
// classic 6 x 2-vector tile fits. Order 0 packs B once per (nc, kc) block and, with several
// threads, splits the row blocks among them.
Config DefaultConfig(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t lanes = cpu.lanes;
  const ConfigSpace space = Space(workload, target);
  auto values = [&](std::string_view knob) { return space.FindKnob(knob)->values; };
  Config config;
  config["pack_a"] = 1;
  config["pack_b"] = 1;
  config["order"] = 0;
  config["kc"] = LargestAtMost(values("kc"), 512);
  config["nc"] = LargestAtMost(values("nc"), 4096);
  config["unroll_k"] = LargestAtMost(values("unroll_k"), 4);
  config["nr"] = LargestAtMost(values("nr"), 2 * lanes);
  const int64_t vectors = config["nr"] / lanes;
  const int64_t mr_limit = std::min<int64_t>(8, (cpu.registers - vectors - 1) / vectors);
  config["mr"] = LargestAtMost(values("mr"), mr_limit);
  // About 96 rows per block (a multiple of mr, or all of M). With several threads the row
  // blocks are what they share: take the candidate nearest 96 that keeps them at least 97%
  // busy, else the best balanced one.
  std::vector<int64_t> mcs;
  for (int64_t mc : values("mc")) {
    config["mc"] = mc;
    if (space.ConstraintsHold(config)) {
      mcs.push_back(mc);
    }
  }
  // Nearest 96 first; of two as near, the larger.
  std::stable_sort(mcs.begin(), mcs.end(), [](int64_t a, int64_t b) {
    return std::abs(a - 96) != std::abs(b - 96) ? std::abs(a - 96) < std::abs(b - 96) : a > b;
  });
  // The share of the threads' time spent working when the parallel loop hands each thread a
  // contiguous run of ceil(blocks / threads) row blocks (the last block may be short).
  auto busy = [&](int64_t mc) {
    const int64_t blocks = CeilDiv(g.m, mc);
    const int64_t per_thread = CeilDiv(blocks, target.threads);
    const int64_t most_rows = std::min(g.m, per_thread * mc);
    return static_cast<double>(g.m) / static_cast<double>(most_rows * target.threads);
  };
  config["mc"] = mcs.front();
  if (target.threads > 1) {
    auto balanced =
        std::find_if(mcs.begin(), mcs.end(), [&](int64_t mc) { return busy(mc) >= 0.97; });
    config["mc"] = balanced != mcs.end()
                       ? *balanced
                       : *std::max_element(mcs.begin(), mcs.end(),
                                           [&](int64_t a, int64_t b) { return busy(a) < busy(b); });
    if (balanced == mcs.end()) {
      // The rows do not split evenly (M = 197 on 2 threads: 88% at best): split the columns
      // instead, with order 3 (k, m, n), whose parallel loop is the column blocks, and the
      // largest nc that keeps the threads 97% busy.
      auto col_busy = [&](int64_t nc) {
        const int64_t per_thread = CeilDiv(CeilDiv(g.n, nc), target.threads);
        return static_cast<double>(g.n) /
               static_cast<double>(std::min(g.n, per_thread * nc) * target.threads);
      };
      // All of M in one row block (A packed once per k block) and kc 256: the best of a search
      // at M=197, N=3072, K=768 on 2 threads (Emerald Rapids, bench/RESULTS.md).
      Config by_cols = config;
      by_cols["order"] = 3;
      by_cols["mc"] = LargestAtMost(values("mc"), std::min<int64_t>(g.m, 384));
      by_cols["kc"] = LargestAtMost(values("kc"), 256);
      if (by_cols["mc"] != g.m && by_cols["mc"] % by_cols["mr"] != 0) {
        by_cols["mc"] = mcs.front();
      }
      std::vector<int64_t> ncs = values("nc");
      for (auto it = ncs.rbegin(); it != ncs.rend(); ++it) {
        by_cols["nc"] = *it;
        if (col_busy(*it) >= 0.97 && col_busy(*it) > busy(config["mc"]) &&
            space.ConstraintsHold(by_cols)) {
          config = by_cols;
          break;
        }
      }
    }
  }
  if (g.m <= 4) {
    // Matrix-vector (and a few rows): B is read once, so it is not packed; the widest tile of
    // all of M's rows, short k blocks and a long unroll stream it. Measured best of 64 random
    // configs at M=1, N=K=4096 on Emerald Rapids (4x the blocked default). Blocks of 8 rows of
    // B rather than 32 keep 8 rows in flight instead of 32: 47 GB/s of B instead of 30 on Zen
    // 5, where one core reads 50-52 GB/s sequentially.
    Config mv = config;
    mv["mr"] = LargestAtMost(values("mr"), g.m);
    mv["nr"] = LargestAtMost(values("nr"),
                             std::min<int64_t>(4, (cpu.registers - 1) / (mv["mr"] + 1)) * lanes);
    mv["mc"] = LargestAtMost(values("mc"), g.m);
    // Packed (prepared) B is one stream whatever kc is: longer blocks reload C less often.
    mv["kc"] = LargestAtMost(values("kc"), workload.prepared_weights() ? 256 : 8);
    mv["nc"] = LargestAtMost(values("nc"), g.n);
    mv["unroll_k"] = LargestAtMost(values("unroll_k"), 8);
    // Prepared weights come packed: reading the panels is one sequential stream.
    mv["pack_b"] = workload.prepared_weights() ? 1 : 0;
    mv["order"] = 4;
    if (space.IsValid(mv)) {
      config = mv;
    }
  }
  TUNE_CHECK(space.IsValid(config)) << ConfigToString(config);
  return config;
}

// Where a search starts after the default, by shape class: register tiles that fill the vector
// registers in different shapes (8 x 2, 6 x 4, 12 x 2, 4 x 3, 14 x 2 vectors on 32 registers;
// 6 x 2, 4 x 3, 3 x 4 on 16), each with the default's blocking and a shorter kc. A GEMM of few
// rows reads each element of B about once (rows / mr times): packing B costs as much as it
// saves, so those seeds also leave B in place, with each order of the cache loops and a short
// kc (matrix-vector: streams B at memory speed).
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const ConfigSpace space = Space(workload, target);
  const Config def = DefaultConfig(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  std::vector<Config> seeds;
  auto add = [&](const Config& c) {
    if (c != def && space.IsValid(c) && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(c);
    }
  };
  // mc near the default's that is a multiple of mr (or all of M).
  auto with_tile = [&](int64_t mr, int64_t vectors) {
    Config c = def;
    c["mr"] = snap("mr", std::min(mr, g.m));
    c["nr"] = snap("nr", vectors * cpu.lanes);
    for (int64_t mc : space.FindKnob("mc")->values) {
      if ((mc % c["mr"] == 0 || mc == g.m) &&
          std::abs(mc - def.at("mc")) < std::abs(c["mc"] - def.at("mc"))) {
        c["mc"] = mc;
      }
    }
    if (c["mc"] % c["mr"] != 0 && c["mc"] != g.m) {
      c["mc"] = snap("mc", g.m);
    }
    return c;
  };
  const std::vector<std::pair<int64_t, int64_t>> tiles =
      cpu.registers >= 32
          ? std::vector<std::pair<int64_t, int64_t>>{{8, 2}, {6, 4}, {12, 2}, {4, 3}, {14, 2}}
          : std::vector<std::pair<int64_t, int64_t>>{{6, 2}, {4, 3}, {3, 4}};
  // Prepared weights are packed once, outside the call: B in place only costs.
  const int64_t few_rows_pack_b = workload.prepared_weights() ? 1 : 0;
  // Best first: a search with a small budget sees the likeliest seeds.
  if (g.m <= 4) {
    // Matrix-vector: the whole of M in one tile, the widest columns, longer unrolls; B packed
    // once (prepared weights) is one stream whatever kc is, so there kc varies too.
    const std::vector<int64_t> kcs =
        workload.prepared_weights() ? std::vector<int64_t>{256, 64, 8} : std::vector<int64_t>{8};
    for (int64_t kc : kcs) {
      for (int64_t vectors : {4, 3, 2}) {
        for (int64_t unroll : {8, 4}) {
          for (int64_t pack_a : {1, 0}) {
            Config v = with_tile(g.m, vectors);
            v["pack_b"] = few_rows_pack_b;
            v["pack_a"] = pack_a;
            v["order"] = 4;
            v["kc"] = snap("kc", kc);
            v["nc"] = snap("nc", g.n);
            v["unroll_k"] = snap("unroll_k", unroll);
            add(v);
          }
        }
      }
    }
  }
  for (auto [mr, vectors] : tiles) {
    add(with_tile(mr, vectors));
  }
  if (g.m <= 32) {
    for (size_t t = 0; t < 2; ++t) {
      for (int64_t order : {0, 2, 4}) {
        for (int64_t kc : {128, 32, 512}) {
          Config v = with_tile(tiles[t].first, tiles[t].second);
          v["pack_b"] = few_rows_pack_b;
          v["order"] = order;
          v["kc"] = snap("kc", kc);
          add(v);
        }
      }
    }
  }
  for (auto [mr, vectors] : tiles) {
    Config c = with_tile(mr, vectors);
    c["kc"] = snap("kc", 256);
    add(c);
  }
  return seeds;
}

struct Plan {
  int64_t m, n, k;
  int64_t mr, nr, kc, mc, nc;
  int64_t unroll_k;
  bool pack_a, pack_b;
  int order;
  int64_t lanes;
  bool parallel;
  Epilogue epilogue;
  GemmKernelForm form;
  // weights=prepared with pack_b: B comes packed (PreparedB), and the kernel packs none of it.
  bool prepacked_b = false;
};

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
  explicit GemmBuilder(const Plan& p) : p_(p) {}

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

  const Plan p_;
  Var jb_{"jb"}, pb_{"pb"}, ib_{"ib"}, batch_{"batch"};
  Buffer a_{"A"}, b_{"B"}, bias_{"bias"}, c_{"C"};
  Buffer a_packed_{"A_packed", MemoryScope::kStack};
  Buffer b_packed_{"B_packed", MemoryScope::kStack};
  Buffer b_prepared_{"B_prepared"};
};

Plan PlanFor(const GemmShape& g, Epilogue epilogue, const GemmKernelForm& form,
             const Target& target, const Config& config) {
  Plan p;
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

Plan PlanOf(const Workload& workload, const Target& target, const Config& config) {
  Plan p = PlanFor(workload.gemm(), workload.epilogue(), {}, target, config);
  p.prepacked_b = workload.prepared_weights() && p.pack_b;
  return p;
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuBlocked, workload, target, config));
  return GemmBuilder(PlanOf(workload, target, config)).Build(func_name);
}

// Prepared weights: B packed into the panels of every block, once, when the config packs B
// (the kernel then packs none); a copy of B when it reads B as it is.
absl::StatusOr<PreparedWeights> Prepare(const Workload& workload, const Target& target,
                                        const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuBlocked, workload, target, config));
  const Plan plan = PlanOf(workload, target, config);
  if (plan.prepacked_b) {
    return GemmBuilder(plan).BuildPreparation(func_name);
  }
  return CopyOfWeights(workload, func_name);
}

}  // namespace

const KernelTemplate kGemmCpuBlocked = {
    .name = "gemm.cpu.blocked",
    .version = 1,
    .op = OpKind::kGemm,
    .target_kind = TargetKind::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .seeds = &Seeds,
    .prepare = &Prepare,
};

ir::LoweredFunc BuildBlockedGemm(const GemmShape& shape, Epilogue epilogue,
                                 const GemmKernelForm& form, const Target& target,
                                 const Config& config, std::string_view func_name) {
  return GemmBuilder(PlanFor(shape, epilogue, form, target, config)).Build(func_name);
}

}  // namespace tune
