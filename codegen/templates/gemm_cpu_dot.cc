// gemm.cpu.dot's loop nest, BLIS-like around a register tile of dot products:
//
//   B packed into VNNI panels of nr = nv vectors' columns (cpu_matrix_gemm.h), once per call,
//     or once before the calls (weights=prepared)
//   for ib: row blocks of mc (parallel with -threads > 1)
//     for jb: column blocks of nc
//       for pb: reduction blocks of kc
//         [pack A's mc x kc block into mr-row panels of groups (pack_a; i8: shifted to u8)]
//         for jr: panels of the column block; for ir: mr-row tiles of the row block
//           acc[mr][nv] = 0 (first pb) or the block's partial sums
//           for each group of G reduction elements:
//             nv vector loads of B, then per row one broadcast group of A and nv dot products
//           the partial sums kept (acc_block), or C written with the epilogue (last pb)
//
// With pack_b = 1 (canonical weights, more than one column block) B is packed a column block at
// a time where it is used, and the column blocks are the outer loop:
//
//   for jb: column blocks of nc
//     pack the block's panels (nc columns, all of K: a buffer that stays in cache)
//     for ib: row blocks of mc (parallel with -threads > 1)
//       for pb: ... as above
//
// so that B is read once from memory and its packed copy never goes there: packing all of a
// large B (a 4096 x 4096 projection's 32 MB) writes it out and reads it back.
//
// With layout NT, b_in_place = 1 builds gemm_cpu_dot_rows.h's form instead: B's rows read in
// place, no packing (what few rows against canonical weights need).
//
// i8 x i8 has no VNNI instruction: B is packed as it is (s8, vpdpbusd's signed operand), A read
// (or packed) as a + 128 (u8, the unsigned one), and each column's accumulator starts at the
// compensation -128 x its sum of B, written after its panel when B is packed
// (cpu_matrix_gemm.h): sum (a + 128) b - 128 sum b = sum a b. The compensation is the weights'
// alone, so prepared weights carry it, and A is read in place as for u8i8. (The first form
// shifted B and subtracted A's row sums, taken while packing A for every column block: s8 x s8
// then ran at 0.71-0.90 of u8i8 on a Zen 5 core.)
#include "codegen/templates/gemm_cpu_dot.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/templates/cpu_matrix_gemm.h"
#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/gemm_cpu_dot_rows.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Type;
using ir::Var;

constexpr int64_t kLanes = 16;  // f32 / i32 lanes of a 512-bit vector

int GroupOf(const Workload& workload) { return IsIntegerDtype(workload.dtype()) ? 4 : 2; }
int64_t PaddedK(const Workload& workload) {
  const int64_t g = GroupOf(workload);
  return CeilDiv(workload.gemm().k, g) * g;
}

// The bytes of all of B packed, and the most the default packs before the loops: larger ones
// are packed a column block at a time (pack_b).
int64_t PackedBBytes(const Workload& workload) {
  return workload.gemm().n * PaddedK(workload) * ElementBytes(workload.weight_type());
}
constexpr int64_t kPackedBInCache = int64_t{4} << 20;

ConfigSpace Space(const Workload& workload, const Target&) {
  const GemmShape& s = workload.gemm();
  const int64_t g = GroupOf(workload);
  const int64_t kp = PaddedK(workload);
  ConfigSpace space;
  space.AddKnob("mr", AtMost({1, 2, 3, 4, 6, 8, 10, 12, 14}, s.m, 1),
                "rows of the register tile (one broadcast group of A each)");
  space.AddKnob("nv", AtMost({1, 2, 3, 4}, CeilDiv(s.n, kLanes), 1),
                "vectors of 16 columns in the register tile");
  std::vector<int64_t> kcs;
  for (int64_t kc : ClipToExtent({64, 128, 256, 512, 768, 1024, 2048}, kp)) {
    kcs.push_back(CeilDiv(kc, g) * g);
  }
  space.AddKnob("kc", kcs, "reduction block (K, a multiple of the group)");
  space.AddKnob("mc", ClipToExtent({16, 24, 32, 48, 64, 96, 128, 192, 256, 384}, s.m),
                "row block (M) of A kept in L2");
  space.AddKnob("nc", ClipToExtent({192, 384, 768, 1536, 3072}, s.n),
                "column block (N) of the packed B (a multiple of every panel width)");
  space.AddKnob("pack_a", {0, 1}, "copy A's blocks into mr-row panels of groups");
  // Layout NT keeps B's rows K-contiguous: its in-place form (gemm_cpu_dot_rows.h) packs
  // nothing, its register tile is mr rows of A x `cols` rows of B, and kc blocks its K (mc, nc,
  // nv and pack_a do not apply to it).
  const bool nt = s.layout == GemmLayout::kNT;
  space.AddKnob("b_in_place", nt ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: B read in place (layout NT): dot products along K, nothing packed");
  space.AddKnob("cols", AtMost({1, 2, 4, 8}, s.n, 1), "rows of B in the in-place form's tile");
  space.AddKnob("pack_b",
                workload.prepared_weights() ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 1},
                "0: all of B packed before the loops; 1: each column block packed where it is "
                "used, the column blocks outermost (canonical weights)");
  const int64_t n = s.n;
  space.AddConstraint(
      fmt::format("pack_b == 0 || (b_in_place == 0 && nc < {}) (a packed B, in more than one "
                  "column block)",
                  n),
      [n](const Config& c) {
        return KnobValue(c, "pack_b") == 0 ||
               (KnobValue(c, "b_in_place") == 0 && KnobValue(c, "nc") < n);
      });
  space.AddConstraint(
      "b_in_place == 0 || mr*cols + mr + cols <= 32 (the in-place tile's "
      "accumulators and operands fit the vector registers)",
      [](const Config& c) {
        const int64_t mr = KnobValue(c, "mr"), cols = KnobValue(c, "cols");
        return KnobValue(c, "b_in_place") == 0 || mr * cols + mr + cols <= 32;
      });
  space.AddConstraint(
      fmt::format("b_in_place == 0 || kc >= {} || {} * cols <= 512 (an in-place column tile's "
                  "accumulators parked between blocks of K: M x cols vectors on the stack)",
                  kp, s.m),
      [kp, m = s.m](const Config& c) {
        return KnobValue(c, "b_in_place") == 0 || KnobValue(c, "kc") >= kp ||
               m * KnobValue(c, "cols") <= 512;
      });
  space.AddConstraint(
      "mr*nv + nv + 1 <= 32 (accumulators fit the vector registers)", [](const Config& c) {
        return KnobValue(c, "mr") * KnobValue(c, "nv") + KnobValue(c, "nv") + 1 <= 32;
      });
  const int64_t m = s.m;
  space.AddConstraint(fmt::format("mc % mr == 0 || mc == {}", m), [m](const Config& c) {
    return KnobValue(c, "mc") % KnobValue(c, "mr") == 0 || KnobValue(c, "mc") == m;
  });
  if (s.k % g != 0) {
    space.AddConstraint(fmt::format("pack_a == 1 (K = {} is not a multiple of {})", s.k, g),
                        [](const Config& c) { return KnobValue(c, "pack_a") == 1; });
  }
  return space;
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  Config c;
  c["nv"] = snap("nv", 3);
  c["mr"] = snap("mr", c["nv"] >= 3 ? 8 : 14);
  c["kc"] = snap("kc", 512);
  c["nc"] = snap("nc", 768);
  c["pack_a"] = 1;
  c["mc"] = workload.gemm().m;
  for (int64_t mc : space.FindKnob("mc")->values) {
    if (mc <= 96 && mc % c["mr"] == 0) {
      c["mc"] = mc;
    }
  }
  c["cols"] = snap("cols", 4);
  c["b_in_place"] = 0;
  c["pack_b"] = 0;
  // A packed B larger than the caches keep close is packed a column block of 384 at a time:
  // on a Zen 5 core 2048 x 4096 x 4096 (NT, bf16) ran 1.2x faster so (bench/RESULTS.md,
  // 2026-12-06), and B's of 2 MB and less ran the same either way.
  Config blocks = c;
  blocks["pack_b"] = 1;
  blocks["nc"] = snap("nc", 384);
  // On a Zen 4 core (AVX-512 in two halves: half of Zen 5's dot products per cycle), narrower
  // blocks over longer reductions: 64 x 4096 x 4096 (NT, bf16) ran 1.09x faster with blocks of
  // 192 columns in pieces of 2048 of K, 64 x 11008 x 4096 1.11x, 256 x 4096 x 4096 1.04x,
  // 1024 x 4096 x 4096 the same (bench/RESULTS.md, 2026-12-07).
  if (target.Resolved().cpu == "znver4") {
    blocks["nc"] = snap("nc", 192);
    blocks["kc"] = snap("kc", 2048);
  }
  if (PackedBBytes(workload) > kPackedBInCache && space.IsValid(blocks)) {
    c = blocks;
  }
  // Few rows against canonical NT weights: packing B would cost more than the product. Not
  // s8 x s8 of more than 8 rows over K <= 2048: in place it adds a row sum of A to every step
  // and shifts every vector of B, which the rows no longer pay for. On a Zen 5 core
  // (2026-12-06, N = K = 768) in place ran 1.6x faster for 4 rows, the same for 8, and 0.69x
  // for 16, where B packed in 4 x 4 vector tiles over all of K ran at 0.95x oneDNN's plain
  // matmul (8 x 3 tiles in blocks of 512: 0.90).
  const bool nt_few_rows = workload.gemm().layout == GemmLayout::kNT && workload.gemm().m <= 16 &&
                           !workload.prepared_weights();
  const bool short_i8 =
      workload.dtype() == Dtype::kI8 && workload.gemm().k <= 2048 && workload.gemm().m > 8;
  if (nt_few_rows && short_i8) {  // B packed, as above, in 4 x 4 vector tiles over all of K
    Config tiles = c;
    tiles["mr"] = snap("mr", 4);
    tiles["nv"] = snap("nv", 4);
    tiles["kc"] = space.FindKnob("kc")->values.back();  // all of K at once
    if (space.IsValid(tiles)) {
      c = tiles;
    }
  } else if (nt_few_rows) {
    c["b_in_place"] = 1;
    c["pack_b"] = 0;
    c["mr"] = snap("mr", 4);
    c["cols"] = snap("cols", 4);
    c["kc"] = space.FindKnob("kc")->values.back();  // all of K at once
    // Long rows: 8 rows of B a tile, in blocks of 2048 of K that L1 keeps while every row tile
    // reads them. On a Zen 5 core (2026-12-06, bench/RESULTS.md) M = 16 ran 1.2-1.4x faster so
    // at K = 3072 to 11008 than 4 x 4 tiles over all of K; at K = 768, 4 x 4 was 1.15x faster.
    Config blocked = c;
    blocked["mr"] = snap("mr", 2);
    blocked["cols"] = snap("cols", 8);
    blocked["kc"] = snap("kc", 2048);
    if (workload.gemm().k > 2048 && space.IsValid(blocked)) {
      c = blocked;
    }
  }
  // A read in place where it may be: on a Zen 5 core every row measured so far ran 1.1-1.3x
  // faster so than with A packed (bench/RESULTS.md, 2026-12-05).
  Config in_place = c;
  in_place["pack_a"] = 0;
  return space.IsValid(in_place) ? in_place : c;
}

std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  const Config base = DefaultConfig(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  std::vector<Config> seeds;
  auto add = [&](const Config& c) {
    if (space.IsValid(c) && c != base && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(c);
    }
  };
  // The other way of packing B, where the space has it.
  Config other_packing = base;
  other_packing["b_in_place"] = 0;
  other_packing["pack_b"] = 1 - base.at("pack_b");
  add(other_packing);
  // The in-place form's tiles, over all of K (kc 0) or in blocks: first where it is the
  // default, after the packed form's variants elsewhere.
  auto in_place_tiles = [&] {
    if (space.FindKnob("b_in_place")->values.size() < 2) {
      return;
    }
    const int64_t all_k = space.FindKnob("kc")->values.back();
    for (auto [mr, cols, kc] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{2, 8, 2048},
                                                                                  {4, 4, 0},
                                                                                  {2, 8, 1024},
                                                                                  {4, 4, 1024},
                                                                                  {2, 8, 0},
                                                                                  {1, 8, 0},
                                                                                  {4, 2, 0},
                                                                                  {2, 4, 0},
                                                                                  {1, 4, 0},
                                                                                  {3, 4, 0}}) {
      Config c = base;
      c["b_in_place"] = 1;
      c["mr"] = snap("mr", mr);
      c["cols"] = snap("cols", cols);
      c["kc"] = kc == 0 ? all_k : snap("kc", kc);
      add(c);
    }
  };
  if (base.at("b_in_place") != 0) {
    in_place_tiles();
  }
  // B packed a column block at a time: narrower blocks over longer reductions (a block of 192
  // columns in pieces of 2048 of K), and the other width.
  if (base.at("pack_b") == 1) {
    for (auto [nc, kc] : std::vector<std::pair<int64_t, int64_t>>{
             {192, 2048}, {192, 1024}, {384, 2048}, {768, 512}}) {
      Config c = base;
      c["nc"] = snap("nc", nc);
      c["kc"] = snap("kc", kc);
      add(c);
    }
  }
  for (auto [mr, nv] : std::vector<std::pair<int64_t, int64_t>>{
           {8, 3}, {6, 4}, {14, 2}, {12, 2}, {4, 4}, {10, 2}, {4, 2}, {2, 4}, {1, 4}}) {
    for (int64_t kc : {512, 256, 1024}) {
      for (int64_t pack_a : {1, 0}) {
        Config c = base;
        c["mr"] = snap("mr", mr);
        c["nv"] = snap("nv", nv);
        c["kc"] = snap("kc", kc);
        c["pack_a"] = pack_a;
        c["b_in_place"] = 0;
        c["mc"] = workload.gemm().m;
        for (int64_t mc : space.FindKnob("mc")->values) {
          if (mc <= 96 && mc % c["mr"] == 0) {
            c["mc"] = mc;
          }
        }
        add(c);
      }
    }
  }
  if (base.at("b_in_place") == 0) {
    in_place_tiles();
  }
  return seeds;
}

struct DotPlan {
  GemmShape shape;
  GemmLayout layout = GemmLayout::kNN;
  CpuMatrixTypes types;
  Epilogue epilogue = Epilogue::kNone;
  int64_t mr = 8, nv = 2, kc = 512, mc = 96, nc = 768;
  bool pack_a = true;
  bool pack_b = false;  // B packed a column block at a time, the column blocks outermost
  bool prepared = false;
  bool parallel = false;
  bool i8 = false;  // s8 x s8 through vpdpbusd: A shifted to u8, B's compensation added
  VnniPanels panels;
};

// The width of a row block's partial sums (and, pack_b, of the packed column block): the column
// block rounded up to whole panels.
int64_t BlockWidthOf(const DotPlan& p) {
  return CeilDiv(std::min(p.nc, p.shape.n), p.panels.width) * p.panels.width;
}

DotPlan PlanOf(const Workload& workload, const Target& target, const Config& config) {
  DotPlan p;
  p.shape = workload.gemm();
  p.layout = p.shape.layout;
  p.types = CpuMatrixTypesOf(workload);
  p.epilogue = workload.epilogue();
  p.mr = KnobValue(config, "mr");
  p.nv = KnobValue(config, "nv");
  p.kc = KnobValue(config, "kc");
  p.mc = KnobValue(config, "mc");
  p.nc = KnobValue(config, "nc");
  p.pack_a = KnobValue(config, "pack_a") != 0;
  p.pack_b = KnobValue(config, "pack_b") != 0;
  p.prepared = workload.prepared_weights();
  p.parallel = target.threads > 1;
  p.i8 = workload.dtype() == Dtype::kI8;
  p.panels.width = p.nv * kLanes;
  p.panels.group = p.types.group;
  p.panels.kp = PaddedK(workload);
  if (p.i8) {  // the compensations after the panels of one column block, or of all of B
    p.panels.sums_at = p.pack_b ? BlockWidthOf(p) * p.panels.kp : p.panels.Elements(p.shape.n);
  }
  return p;
}

class DotGemmBuilder {
 public:
  DotGemmBuilder(const Workload& workload, const DotPlan& p)
      : p_(p),
        ops_(workload),
        b_packed_(p.prepared ? "B_prepared" : "B_packed",
                  p.prepared ? MemoryScope::kGlobal : MemoryScope::kStack, p.types.b),
        a_packed_("A_packed", MemoryScope::kStack, p.i8 ? Type::UInt8() : p.types.a),
        acc_block_("acc_block", MemoryScope::kStack, p.types.acc) {}

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = ops_.Params(p_.prepared ? b_packed_ : ops_.b());
    if (p_.pack_b) {
      func.body = Allocate::Make(b_packed_, p_.panels.Storage(BlockWidth() / Nr()), ColumnBlocks());
      return func;
    }
    Stmt body = RowBlocks();
    if (!p_.prepared) {
      body = Allocate::Make(
          b_packed_, p_.panels.Storage(p_.panels.Panels(p_.shape.n)),
          Block::Make({PackVnniPanels(p_.shape, p_.layout, p_.panels, ops_.b(), b_packed_), body}));
    }
    func.body = body;
    return func;
  }

  PreparedWeights BuildPreparation(std::string_view name) const {
    PreparedWeights out;
    out.func.name = std::string(name);
    out.func.params = {ops_.b(), b_packed_};
    out.func.body = PackVnniPanels(p_.shape, p_.layout, p_.panels, ops_.b(), b_packed_);
    const int64_t bytes =
        p_.panels.Storage(p_.panels.Panels(p_.shape.n)) * (b_packed_.element_type().bits() / 8);
    out.floats = CeilDiv(bytes, 4);
    return out;
  }

 private:
  int64_t G() const { return p_.types.group; }
  int64_t Nr() const { return p_.panels.width; }
  int64_t KBlocks() const { return CeilDiv(p_.panels.kp, p_.kc); }
  int64_t BlockWidth() const { return BlockWidthOf(p_); }
  Expr I0() const { return ib_ * p_.mc; }
  Expr J0() const { return jb_ * p_.nc; }
  Expr P0() const { return pb_ * p_.kc; }
  Expr MCur() const { return ir::Min::Make(p_.mc, p_.shape.m - I0()); }
  Expr NCur() const { return ir::Min::Make(p_.nc, p_.shape.n - J0()); }
  Expr KCur() const { return ir::Min::Make(p_.kc, p_.panels.kp - P0()); }  // a multiple of G

  int64_t ColumnBlockCount() const { return CeilDiv(p_.shape.n, p_.nc); }

  // All of B packed: the row blocks outermost, each over every column block.
  Stmt RowBlocks() const {
    return RowBlockLoop(For::Make(jb_, 0, ColumnBlockCount(), LoopKind::kSerial,
                                  For::Make(pb_, 0, KBlocks(), LoopKind::kSerial, KBlock())));
  }

  // pack_b: each column block's panels packed into b_packed_, then every row block over them.
  // Such an nc lies below N, so it is a multiple of 192 and of every panel width.
  Stmt ColumnBlocks() const {
    const Stmt pack = PackVnniPanelRange(p_.shape, p_.layout, p_.panels, ops_.b(), b_packed_,
                                         jb_ * (p_.nc / Nr()), (NCur() + (Nr() - 1)) / Nr(),
                                         p_.parallel ? LoopKind::kParallel : LoopKind::kSerial);
    const Stmt rows = RowBlockLoop(For::Make(pb_, 0, KBlocks(), LoopKind::kSerial, KBlock()));
    return For::Make(jb_, 0, ColumnBlockCount(), LoopKind::kSerial, Block::Make({pack, rows}));
  }

  // The loop over the row blocks (parallel with threads) around `per_row_block`, with the
  // buffers a row block keeps: its partial sums and A's packed block.
  Stmt RowBlockLoop(Stmt per_row_block) const {
    if (KBlocks() > 1) {
      per_row_block = Allocate::Make(acc_block_, p_.mc * BlockWidth(), per_row_block);
    }
    if (p_.pack_a) {
      per_row_block =
          Allocate::Make(a_packed_, CeilDiv(p_.mc, p_.mr) * p_.mr * p_.kc, per_row_block);
    }
    per_row_block = ops_.BindScale(per_row_block);
    return For::Make(ib_, 0, CeilDiv(p_.shape.m, p_.mc),
                     p_.parallel ? LoopKind::kParallel : LoopKind::kSerial, per_row_block);
  }

  // The first panel of column block jb in b_packed_: all of B's panels are there, or (pack_b) the
  // block's alone.
  Expr FirstPanel() const { return p_.pack_b ? Expr(int64_t{0}) : J0() / Nr(); }

  // One (jb, pb) block: A's block packed, then every register tile.
  Stmt KBlock() const {
    std::vector<Stmt> steps;
    if (p_.pack_a) {
      steps.push_back(PackA());
    }
    Var ir_var("ir");
    const int64_t tail = p_.shape.m % p_.mr;
    Stmt tiles =
        For::Make(ir_var, 0, MCur() / p_.mr, LoopKind::kSerial, MicroKernel(p_.mr, ir_var * p_.mr));
    if (tail != 0) {
      tiles = Block::Make({tiles, IfThenElse::Make(MCur() % p_.mr != 0,
                                                   MicroKernel(tail, (MCur() / p_.mr) * p_.mr))});
    }
    steps.push_back(For::Make(jr_, 0, (NCur() + (Nr() - 1)) / Nr(), LoopKind::kSerial, tiles));
    return Block::Make(std::move(steps));
  }

  // A's (mc x kc) block into panels of mr rows: element (r, k) of panel t at
  // t * mr * kc + ((k / G) * mr + r % mr) * G + k % G; zero past M and K (i8: a + 128 as u8).
  Stmt PackA() const {
    Var r("ar"), kg("akg"), e("ae");
    const Expr row = I0() + r;
    const Expr k = P0() + kg * G() + e;
    const Expr rr = ir::Min::Make(row, p_.shape.m - 1);
    const Expr kk = ir::Min::Make(k, p_.shape.k - 1);
    Expr value =
        ir::LoadAsOrZero(ops_.a(), rr * p_.shape.k + kk, 1, row < p_.shape.m && k < p_.shape.k);
    if (p_.i8) {
      value = value + 128;
    }
    const Expr index = (r / p_.mr) * (p_.mr * p_.kc) + (kg * p_.mr + r % p_.mr) * G() + e;
    const Stmt store =
        Store::Make(a_packed_, index, ir::Cast::Make(a_packed_.element_type(), value));
    return For::Make(r, 0, CeilDiv(p_.mc, p_.mr) * p_.mr, LoopKind::kSerial,
                     For::Make(kg, 0, KCur() / G(), LoopKind::kSerial,
                               For::Make(e, 0, G(), LoopKind::kUnrolled, store)));
  }

  // One group (G elements) of A for row `r` of the tile at `row0`, reduction group `kg` of
  // the block.
  Expr LoadAGroup(const Expr& row0, int64_t r, const Expr& kg) const {
    const int lanes = static_cast<int>(G());
    if (p_.pack_a) {
      const Expr local = row0 + r;  // within the row block; row0 a multiple of mr
      return Load::Make(
          a_packed_, (local / p_.mr) * (p_.mr * p_.kc) + (kg * p_.mr + local % p_.mr) * G(), lanes);
    }
    const Expr group =
        Load::Make(ops_.a(), (I0() + row0 + r) * p_.shape.k + P0() + kg * G(), lanes);
    return p_.i8 ? ShiftedToU8(group) : group;
  }

  // The register tile of `rows` rows at `row0` (within the row block) of panel jr.
  Stmt MicroKernel(int64_t rows, const Expr& row0) const {
    const int lanes = static_cast<int>(kLanes);
    const int group_lanes = static_cast<int>(kLanes * G());
    Buffer acc(rows == p_.mr ? "acc" : "acc_edge", MemoryScope::kStack, p_.types.acc);
    auto acc_at = [&](int64_t r, int64_t v) { return Expr(r * Nr() + v * kLanes); };
    auto block_at = [&](int64_t r, int64_t v) {
      return (row0 + r) * BlockWidth() + jr_ * Nr() + v * kLanes;
    };
    const Expr zero = p_.types.acc.is_float()
                          ? ir::BroadcastTo(Expr(0.0f), lanes)
                          : ir::BroadcastTo(ir::Cast::Make(Type::Int32(), 0), lanes);
    // i8's sums start at their columns' compensations.
    auto start = [&](int64_t v) {
      return p_.i8 ? LoadCompensation(p_.panels, b_packed_,
                                      (FirstPanel() + jr_) * Nr() + v * kLanes, lanes)
                   : zero;
    };
    std::vector<Stmt> zero_init, reload;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t v = 0; v < p_.nv; ++v) {
        zero_init.push_back(Store::Make(acc, acc_at(r, v), start(v)));
        if (KBlocks() > 1) {
          reload.push_back(
              Store::Make(acc, acc_at(r, v), Load::Make(acc_block_, block_at(r, v), lanes)));
        }
      }
    }
    Stmt init = KBlocks() > 1 ? IfThenElse::Make(pb_ == 0, Block::Make(std::move(zero_init)),
                                                 Block::Make(std::move(reload)))
                              : Block::Make(std::move(zero_init));

    // One group of the reduction: nv vectors of B, then rows x nv dot products.
    Var kg("kg");
    std::vector<Stmt> step;
    const Expr panel_base = (FirstPanel() + jr_) * (p_.panels.kp * Nr());
    std::vector<Expr> b_vectors;
    for (int64_t v = 0; v < p_.nv; ++v) {
      b_vectors.push_back(Load::Make(
          b_packed_, panel_base + ((P0() / G() + kg) * Nr() + v * kLanes) * G(), group_lanes));
    }
    for (int64_t r = 0; r < rows; ++r) {
      const Expr a = LoadAGroup(row0, r, kg);
      for (int64_t v = 0; v < p_.nv; ++v) {
        step.push_back(Store::Make(
            acc, acc_at(r, v),
            MatrixDot(p_.types, false, Load::Make(acc, acc_at(r, v), lanes), a, b_vectors[v])));
      }
    }
    Stmt reduce = For::Make(kg, 0, KCur() / G(), LoopKind::kSerial, Block::Make(std::move(step)));

    std::vector<Stmt> keep, finish;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t v = 0; v < p_.nv; ++v) {
        keep.push_back(
            Store::Make(acc_block_, block_at(r, v), Load::Make(acc, acc_at(r, v), lanes)));
        finish.push_back(WriteC(acc, r, v, row0));
      }
    }
    Stmt write = KBlocks() > 1
                     ? IfThenElse::Make(pb_ == KBlocks() - 1, Block::Make(std::move(finish)),
                                        Block::Make(std::move(keep)))
                     : Block::Make(std::move(finish));
    return Allocate::Make(acc, rows * Nr(), Block::Make({init, reduce, write}));
  }

  // C's vector v of row r of the tile.
  Stmt WriteC(const Buffer& acc, int64_t r, int64_t v, const Expr& row0) const {
    return ops_.StoreColumns(I0() + row0 + r, J0() + jr_ * Nr() + v * kLanes,
                             static_cast<int>(kLanes), p_.shape.n % Nr() == 0,
                             [&](const Expr& offset, int lanes) {
                               return Load::Make(acc, r * Nr() + v * kLanes + offset, lanes);
                             });
  }

  const DotPlan p_;
  CpuMatrixOperands ops_;
  Buffer b_packed_, a_packed_, acc_block_;
  Var ib_{"ib"}, jb_{"jb"}, pb_{"pb"}, jr_{"jr"};
};

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuDot, workload, target, config));
  if (KnobValue(config, "b_in_place") != 0) {
    return BuildDotRowsGemm(workload, KnobValue(config, "mr"), KnobValue(config, "cols"),
                            KnobValue(config, "kc"), target.threads > 1, func_name);
  }
  return DotGemmBuilder(workload, PlanOf(workload, target, config)).Build(func_name);
}

absl::StatusOr<PreparedWeights> Prepare(const Workload& workload, const Target& target,
                                        const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuDot, workload, target, config));
  if (KnobValue(config, "b_in_place") != 0) {
    return CopyOfWeights(workload, func_name);  // read as it is
  }
  return DotGemmBuilder(workload, PlanOf(workload, target, config)).BuildPreparation(func_name);
}

}  // namespace

const KernelTemplate kGemmCpuDot = {
    .name = "gemm.cpu.dot",
    .version = 4,  // 2: the knob pack_b; NT panels packed by transposes. 3: i8 compensated by B.
                   // 4: the in-place form blocks K by kc
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .worker_features = &DotWorkerFeatures,
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = kCpuDotDtypes,
    .requant = true,
    .seeds = &Seeds,
    .prepare = &Prepare,
};

}  // namespace tune
