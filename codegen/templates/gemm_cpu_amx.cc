// gemm.cpu.amx's loop nest: a register block of tm x tn accumulator tiles (16 x 16 f32 or i32
// each) over AMX tile loads of A and B.
//
//   B packed into VNNI panels of 16 columns (cpu_matrix_gemm.h), K padded to the tile's depth
//     (32 bf16, 64 bytes of 8-bit), once per call or once before the calls (weights=prepared)
//   for ib: row blocks of mc (parallel with -threads > 1); each configures its thread's tiles
//     for jb: column blocks of nc
//       for pb: reduction blocks of kc
//         [pack A's mc x kc block into 16-row tiles of one step each (pack_a)]
//         for jr: groups of tn panels; for ir: groups of tm 16-row tiles
//           C tiles = 0 (first pb) or the block's partial sums (tile loads of acc_block)
//           for each step of the tile's depth: tm A tiles, tn B tiles, tm x tn dot products
//           C tiles stored to acc_block, or (last pb) to a scratch the epilogue writes C from;
//           straight into C where C holds the sums as they are (f32 or i32, no epilogue) and
//           the block lies inside M and N
//
// Tile t: accumulators 0 .. tm tn - 1, then tm A tiles, then tn B tiles; every tile 16 rows of
// 64 bytes, so one configuration serves every block. Rows past M (packed A's zeros) and columns
// past N (the zero panels) are computed and never stored.
//
// swap (layout NT, canonical weights, bf16 and i8): the same nest computes C^T = B A^T. B's rows
// [N][K] are the row operand, read in place by tile loads of stride K (nothing of the weights is
// packed); A is packed into VNNI panels of 16 of its rows (A^T's columns), once per call; each
// accumulator tile holds 16 columns of 16 rows of C and is written through its transpose. For
// few rows against a large weight matrix, where packing B would cost more than the product.
#include "codegen/templates/gemm_cpu_amx.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/templates/cpu_matrix_gemm.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::AmxTileOp;
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
using ir::Var;

constexpr int64_t kTileRows = kAmxTileRows;
constexpr int64_t kTileBytes = kAmxTileBytes;

// K padded to whole tile steps (AmxStep: 64 bytes of A's row).
int64_t PaddedK(const Workload& w) { return CeilDiv(w.gemm().k, AmxStep(w)) * AmxStep(w); }

ConfigSpace Space(const Workload& workload, const Target&) {
  const GemmShape& s = workload.gemm();
  const int64_t step = AmxStep(workload);
  // With swap the tiles' rows are B's and their columns A's: the knobs cover either.
  // u8i8 does not swap: tdpbusd's row operand is the unsigned one.
  const bool can_swap = s.layout == GemmLayout::kNT && !workload.prepared_weights() &&
                        workload.dtype() != Dtype::kU8I8;
  const int64_t rows = can_swap ? std::max(s.m, s.n) : s.m;
  const int64_t cols = can_swap ? std::max(s.m, s.n) : s.n;
  ConfigSpace space;
  space.AddKnob("tm", AtMost({1, 2, 3}, CeilDiv(rows, kTileRows), 1),
                "16-row accumulator tiles of a register block");
  space.AddKnob("tn", AtMost({1, 2, 3}, CeilDiv(cols, kTileRows), 1),
                "16-column accumulator tiles of a register block");
  std::vector<int64_t> kcs;
  for (int64_t kc : ClipToExtent({128, 256, 512, 1024, 2048, 4096}, PaddedK(workload))) {
    kcs.push_back(CeilDiv(kc, step) * step);
  }
  space.AddKnob("kc", kcs, "reduction block (K, whole tile steps)");
  // Multiples of 48 and 96 (M rounded up to 96 the largest): every tm has a row block.
  space.AddKnob("mc", ClipToExtent({48, 96, 192, 384}, CeilDiv(rows, 96) * 96),
                "row block (M) of A (rows past M are zeros, never stored)");
  space.AddKnob("nc", ClipToExtent({192, 384, 768, 1536, 3072}, cols),
                "column block (N) of the packed B");
  space.AddKnob("pack_a", {0, 1}, "copy A's blocks into tiles of one step each");
  space.AddKnob(
      "swap", can_swap ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
      "1: C^T = B A^T, B's rows read in place and A packed (layout NT, canonical weights)");
  space.AddConstraint(
      "tm*tn + tm + tn <= 8 (the accumulators and one step's operands fit the "
      "eight tiles)",
      [](const Config& c) {
        const int64_t tm = KnobValue(c, "tm"), tn = KnobValue(c, "tn");
        return tm * tn + tm + tn <= 8;
      });
  space.AddConstraint(
      "mc % (16*tm) == 0 (whole register blocks in a row block)",
      [](const Config& c) { return KnobValue(c, "mc") % (kTileRows * KnobValue(c, "tm")) == 0; });
  const int64_t m = s.m, n = s.n, k = s.k;
  space.AddConstraint(fmt::format("pack_a == 1 || swap == 1 || (M % (16*tm) == 0 && K % {} == 0) "
                                  "(tiles read in place must be whole)",
                                  step),
                      [m, k, step](const Config& c) {
                        return KnobValue(c, "pack_a") == 1 || KnobValue(c, "swap") == 1 ||
                               (m % (kTileRows * KnobValue(c, "tm")) == 0 && k % step == 0);
                      });
  space.AddConstraint(
      fmt::format("swap == 0 || (pack_a == 0 && N % (16*tm) == 0 && K % {} == 0) (B's rows are "
                  "read in place, in whole tiles)",
                  step),
      [n, k, step](const Config& c) {
        return KnobValue(c, "swap") == 0 ||
               (KnobValue(c, "pack_a") == 0 && n % (kTileRows * KnobValue(c, "tm")) == 0 &&
                k % step == 0);
      });
  return space;
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  Config c;
  c["tm"] = snap("tm", 2);
  c["tn"] = snap("tn", 2);
  c["kc"] = snap("kc", 1024);
  c["nc"] = snap("nc", 768);
  c["pack_a"] = 1;
  c["mc"] = 96;  // a candidate for every M, and a multiple of 16 tm
  c["swap"] = 0;
  // Layout NT against canonical weights: B's rows read in place, A packed (swap), all of K in one
  // block. On an Emerald Rapids core it was the best of 16 trials for 5 of 6 such rows, and at
  // 16 rows it ran 15x (bf16) and 3.5x (i8) faster than the packed default (bench/RESULTS.md,
  // 2026-12-06).
  if (space.FindKnob("swap")->values.size() > 1) {
    Config swapped = c;
    swapped["swap"] = 1;
    swapped["pack_a"] = 0;
    swapped["tn"] = snap("tn", std::min<int64_t>(2, CeilDiv(workload.gemm().m, kTileRows)));
    swapped["kc"] = snap("kc", 4096);
    swapped["mc"] = snap("mc", 192);
    if (space.ConstraintsHold(swapped)) {
      return swapped;
    }
  }
  return c;
}

std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  const Config base = DefaultConfig(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  std::vector<Config> seeds;
  // Few rows against canonical NT weights: B read in place, A packed (swap), first.
  if (space.FindKnob("swap")->values.size() > 1) {
    for (auto [tm, tn] : std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {3, 1}, {2, 1}, {1, 1}}) {
      for (int64_t kc : {1024, 4096}) {
        Config c = base;
        c["tm"] = snap("tm", tm);
        c["tn"] = snap("tn", std::min(tn, CeilDiv(workload.gemm().m, kTileRows)));
        c["kc"] = snap("kc", kc);
        c["pack_a"] = 0;
        c["swap"] = 1;
        c["mc"] = snap("mc", 192);
        if (space.ConstraintsHold(c) && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
          seeds.push_back(c);
        }
      }
    }
  }
  for (auto [tm, tn] :
       std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {1, 3}, {3, 1}, {1, 2}, {2, 1}, {1, 1}}) {
    for (int64_t kc : {1024, 512, 2048, 256}) {
      for (int64_t pack_a : {1, 0}) {
        Config c = base;
        c["tm"] = snap("tm", tm);
        c["tn"] = snap("tn", tn);
        c["kc"] = snap("kc", kc);
        c["pack_a"] = pack_a;
        c["mc"] = 96;
        if (space.ConstraintsHold(c) && c != base &&
            std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
          seeds.push_back(c);
        }
      }
    }
  }
  return seeds;
}

struct AmxPlan {
  GemmShape shape;
  CpuMatrixTypes types;
  Epilogue epilogue = Epilogue::kNone;
  int64_t tm = 2, tn = 2, kc = 1024, mc = 96, nc = 768;
  int64_t step = 32;  // reduction elements of one tile step
  bool pack_a = true;
  bool swap = false;
  int64_t rows = 0, cols = 0;  // the tiled product's: M and N, or with swap N and M
  bool prepared = false;
  bool parallel = false;
  VnniPanels panels;
};

AmxPlan PlanOf(const Workload& workload, const Target& target, const Config& config) {
  AmxPlan p;
  p.shape = workload.gemm();
  p.types = CpuMatrixTypesOf(workload);
  p.epilogue = workload.epilogue();
  p.tm = KnobValue(config, "tm");
  p.tn = KnobValue(config, "tn");
  p.kc = KnobValue(config, "kc");
  p.mc = KnobValue(config, "mc");
  p.nc = KnobValue(config, "nc");
  p.pack_a = KnobValue(config, "pack_a") != 0;
  p.swap = KnobValue(config, "swap") != 0;
  p.rows = p.swap ? p.shape.n : p.shape.m;
  p.cols = p.swap ? p.shape.m : p.shape.n;
  p.step = AmxStep(workload);
  p.prepared = workload.prepared_weights();
  p.parallel = target.threads > 1;
  p.panels.width = kTileRows;
  p.panels.group = p.types.group;
  p.panels.kp = PaddedK(workload);
  // Whole groups of tn panels: the last group's missing panels are zeros.
  p.panels.columns = CeilDiv(p.cols, kTileRows * p.tn) * kTileRows * p.tn;
  return p;
}

class AmxGemmBuilder {
 public:
  AmxGemmBuilder(const Workload& workload, const AmxPlan& p)
      : p_(p),
        ops_(workload),
        b_packed_(p.prepared ? "B_prepared" : (p.swap ? "A_panels" : "B_packed"),
                  p.prepared ? MemoryScope::kGlobal : MemoryScope::kStack, p.types.b),
        a_packed_("A_packed", MemoryScope::kStack, p.types.a),
        acc_block_("acc_block", MemoryScope::kStack, p.types.acc),
        c_tiles_("c_tiles", MemoryScope::kStack, p.types.acc) {}

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = ops_.Params(p_.prepared ? b_packed_ : ops_.b());
    Stmt body = RowBlocks();
    if (!p_.prepared) {
      body =
          Allocate::Make(b_packed_, p_.panels.Elements(p_.cols), Block::Make({PackPanels(), body}));
    }
    func.body = body;
    return func;
  }

  PreparedWeights BuildPreparation(std::string_view name) const {
    PreparedWeights out;
    out.func.name = std::string(name);
    out.func.params = {ops_.b(), b_packed_};
    out.func.body = PackVnniPanels(p_.shape, p_.shape.layout, p_.panels, ops_.b(), b_packed_);
    const int64_t bytes = p_.panels.Elements(p_.shape.n) * (p_.types.b.bits() / 8);
    out.floats = CeilDiv(bytes, 4);
    return out;
  }

 private:
  int64_t G() const { return p_.types.group; }
  // The panels the column operand's tiles read: B's, or with swap A's rows (A [M][K] packed as
  // an NT matrix of M columns).
  Stmt PackPanels() const {
    if (p_.swap) {
      const GemmShape a_as_b{.m = p_.shape.n, .n = p_.shape.m, .k = p_.shape.k};
      return PackVnniPanels(a_as_b, GemmLayout::kNT, p_.panels, ops_.a(), b_packed_);
    }
    return PackVnniPanels(p_.shape, p_.shape.layout, p_.panels, ops_.b(), b_packed_);
  }
  int64_t Tiles() const { return p_.tm * p_.tn + p_.tm + p_.tn; }
  int AccTile(int64_t i, int64_t j) const { return static_cast<int>(i * p_.tn + j); }
  int ATile(int64_t i) const { return static_cast<int>(p_.tm * p_.tn + i); }
  int BTile(int64_t j) const { return static_cast<int>(p_.tm * p_.tn + p_.tm + j); }
  int64_t KBlocks() const { return CeilDiv(p_.panels.kp, p_.kc); }
  int64_t GroupCols() const { return kTileRows * p_.tn; }
  int64_t GroupRows() const { return kTileRows * p_.tm; }
  // acc_block's width: the column block rounded up to whole groups of panels.
  int64_t BlockWidth() const {
    return CeilDiv(std::min(p_.nc, p_.cols), GroupCols()) * GroupCols();
  }
  int64_t BlockRows() const { return CeilDiv(p_.mc, GroupRows()) * GroupRows(); }
  Expr I0() const { return ib_ * p_.mc; }
  Expr J0() const { return jb_ * p_.nc; }
  Expr P0() const { return pb_ * p_.kc; }
  Expr MCur() const { return ir::Min::Make(p_.mc, p_.rows - I0()); }
  Expr NCur() const { return ir::Min::Make(p_.nc, p_.cols - J0()); }
  Expr KCur() const { return ir::Min::Make(p_.kc, p_.panels.kp - P0()); }  // whole steps

  Stmt RowBlocks() const {
    Stmt per_row_block = For::Make(jb_, 0, CeilDiv(p_.cols, p_.nc), LoopKind::kSerial,
                                   For::Make(pb_, 0, KBlocks(), LoopKind::kSerial, KBlock()));
    per_row_block = Allocate::Make(c_tiles_, p_.tm * p_.tn * kTileRows * kTileRows, per_row_block);
    if (KBlocks() > 1) {
      per_row_block = Allocate::Make(acc_block_, BlockRows() * BlockWidth(), per_row_block);
    }
    if (p_.pack_a) {
      per_row_block = Allocate::Make(a_packed_, BlockRows() * p_.kc, per_row_block);
    }
    per_row_block = ops_.BindScale(per_row_block);
    // Each row block (each thread's, with several) configures the tiles it uses.
    const std::vector<ir::AmxTileShape> shapes(
        static_cast<size_t>(Tiles()), {static_cast<int>(kTileRows), static_cast<int>(kTileBytes)});
    per_row_block =
        Block::Make({AmxTileOp::Configure(shapes), per_row_block, AmxTileOp::Release()});
    return For::Make(ib_, 0, CeilDiv(p_.rows, p_.mc),
                     p_.parallel ? LoopKind::kParallel : LoopKind::kSerial, per_row_block);
  }

  Stmt KBlock() const {
    std::vector<Stmt> steps;
    if (p_.pack_a) {
      steps.push_back(PackA());
    }
    Var ir_var("ir");
    Stmt blocks = For::Make(ir_var, 0, (MCur() + (GroupRows() - 1)) / GroupRows(),
                            LoopKind::kSerial, RegisterBlock(ir_var * GroupRows()));
    steps.push_back(
        For::Make(jr_, 0, (NCur() + (GroupCols() - 1)) / GroupCols(), LoopKind::kSerial, blocks));
    return Block::Make(std::move(steps));
  }

  // A's block into tiles: element (r, k) of the block at ((r / 16) * (kc / step) + k / step) *
  // 16 * step + (r % 16) * step + k % step; zero past M and K (rows up to whole register blocks).
  // A step of a row inside M and K is one vector copy of 64 bytes; the others element by element.
  Stmt PackA() const {
    Var r("ar"), s("as"), e("ae");
    const Expr row = I0() + r;
    const Expr k0 = P0() + s * p_.step;
    const Expr dst = ((r / kTileRows) * (p_.kc / p_.step) + s) * (kTileRows * p_.step) +
                     (r % kTileRows) * p_.step;
    const Stmt whole = Store::Make(
        a_packed_, dst, Load::Make(ops_.a(), row * p_.shape.k + k0, static_cast<int>(p_.step)));
    const Expr kk = k0 + e;
    const Expr rr = ir::Min::Make(row, p_.shape.m - 1);
    const Expr kc = ir::Min::Make(kk, p_.shape.k - 1);
    const Expr value =
        ir::LoadAsOrZero(ops_.a(), rr * p_.shape.k + kc, 1, row < p_.shape.m && kk < p_.shape.k);
    const Stmt edge = For::Make(e, 0, p_.step, LoopKind::kSerial,
                                Store::Make(a_packed_, dst + e, ir::Cast::Make(p_.types.a, value)));
    return For::Make(
        r, 0, (MCur() + (GroupRows() - 1)) / GroupRows() * GroupRows(), LoopKind::kSerial,
        For::Make(s, 0, KCur() / p_.step, LoopKind::kSerial,
                  IfThenElse::Make(row < p_.shape.m && k0 + p_.step <= p_.shape.k, whole, edge)));
  }

  // The register block of tm x tn tiles at row `row0` of the row block, column group jr.
  Stmt RegisterBlock(const Expr& row0) const {
    auto block_at = [&](int64_t i, int64_t j) {
      return (row0 + i * kTileRows) * BlockWidth() + jr_ * GroupCols() + j * kTileRows;
    };
    std::vector<Stmt> zero, reload, keep;
    for (int64_t i = 0; i < p_.tm; ++i) {
      for (int64_t j = 0; j < p_.tn; ++j) {
        zero.push_back(AmxTileOp::Zero(AccTile(i, j)));
        if (KBlocks() > 1) {
          reload.push_back(
              AmxTileOp::Load(AccTile(i, j), acc_block_, block_at(i, j), BlockWidth()));
          keep.push_back(AmxTileOp::Store(AccTile(i, j), acc_block_, block_at(i, j), BlockWidth()));
        }
      }
    }
    Stmt init = KBlocks() > 1 ? IfThenElse::Make(pb_ == 0, Block::Make(std::move(zero)),
                                                 Block::Make(std::move(reload)))
                              : Block::Make(std::move(zero));
    Var s("s");
    std::vector<Stmt> step;
    for (int64_t i = 0; i < p_.tm; ++i) {
      if (p_.pack_a) {
        const Expr tile = (row0 / kTileRows + i) * (p_.kc / p_.step) + s;
        step.push_back(AmxTileOp::Load(ATile(i), a_packed_, tile * (kTileRows * p_.step), p_.step));
      } else if (p_.swap) {  // B's rows [N][K] in place
        step.push_back(AmxTileOp::Load(
            ATile(i), ops_.b(), (I0() + row0 + i * kTileRows) * p_.shape.k + P0() + s * p_.step,
            p_.shape.k));
      } else {
        step.push_back(AmxTileOp::Load(
            ATile(i), ops_.a(), (I0() + row0 + i * kTileRows) * p_.shape.k + P0() + s * p_.step,
            p_.shape.k));
      }
    }
    // B's tile j of step s: panel (J0 / 16 + jr tn + j), rows of groups P0 / G + s step / G ...
    const int64_t panel_elems = p_.panels.kp * kTileRows;
    for (int64_t j = 0; j < p_.tn; ++j) {
      const Expr panel = J0() / kTileRows + jr_ * p_.tn + j;
      step.push_back(AmxTileOp::Load(BTile(j), b_packed_,
                                     panel * panel_elems + (P0() + s * p_.step) * kTileRows,
                                     kTileRows * G()));
    }
    for (int64_t i = 0; i < p_.tm; ++i) {
      for (int64_t j = 0; j < p_.tn; ++j) {
        step.push_back(AmxTileOp::Dot(p_.types.dtype, AccTile(i, j), ATile(i), BTile(j)));
      }
    }
    Stmt reduce =
        For::Make(s, 0, KCur() / p_.step, LoopKind::kSerial, Block::Make(std::move(step)));
    Stmt write = KBlocks() > 1 ? IfThenElse::Make(pb_ == KBlocks() - 1, Finish(row0),
                                                  Block::Make(std::move(keep)))
                               : Finish(row0);
    return Block::Make({init, reduce, write});
  }

  // C holds the accumulators as they are: their type, no scale, bias, ReLU or requantisation.
  bool AccumulatorsAreC() const {
    return !p_.swap && p_.types.out == p_.types.acc && !p_.types.scales && !p_.types.requant &&
           p_.epilogue == Epilogue::kNone;
  }

  // The block's tiles into C. Where C holds the accumulators as they are and the register block
  // lies inside M and N, each tile is stored straight into C; else the tiles go to c_tiles and C
  // is written from them (StagedFinish).
  Stmt Finish(const Expr& row0) const {
    if (!AccumulatorsAreC()) {
      return StagedFinish(row0);
    }
    const Expr row = I0() + row0;
    const Expr col = J0() + jr_ * GroupCols();
    std::vector<Stmt> direct;
    for (int64_t i = 0; i < p_.tm; ++i) {
      for (int64_t j = 0; j < p_.tn; ++j) {
        direct.push_back(AmxTileOp::Store(AccTile(i, j), ops_.c(),
                                          (row + i * kTileRows) * p_.shape.n + col + j * kTileRows,
                                          p_.shape.n));
      }
    }
    const Expr inside = row + GroupRows() <= p_.shape.m && col + GroupCols() <= p_.shape.n;
    return IfThenElse::Make(inside, Block::Make(std::move(direct)), StagedFinish(row0));
  }

  // The block's tiles stored to c_tiles, then C written from them with the epilogue: the rows
  // inside M, the columns inside N (whole vectors of 16 where they fit, else one by one).
  Stmt StagedFinish(const Expr& row0) const {
    std::vector<Stmt> out;
    for (int64_t i = 0; i < p_.tm; ++i) {
      for (int64_t j = 0; j < p_.tn; ++j) {
        out.push_back(AmxTileOp::Store(AccTile(i, j), c_tiles_,
                                       Expr(AccTile(i, j) * kTileRows * kTileRows), kTileRows));
      }
    }
    if (p_.swap) {
      out.push_back(FinishTransposed(row0));
      return Block::Make(std::move(out));
    }
    for (int64_t i = 0; i < p_.tm; ++i) {
      Var r("cr");
      const Expr row = I0() + row0 + i * kTileRows + r;
      std::vector<Stmt> per_row;
      for (int64_t j = 0; j < p_.tn; ++j) {
        const int64_t tile_base = AccTile(i, j) * kTileRows * kTileRows;
        per_row.push_back(ops_.StoreColumns(
            row, J0() + jr_ * GroupCols() + j * kTileRows, static_cast<int>(kTileRows),
            p_.shape.n % GroupCols() == 0, [&](const Expr& offset, int lanes) {
              return Load::Make(c_tiles_, tile_base + r * kTileRows + offset, lanes);
            }));
      }
      out.push_back(For::Make(r, 0, kTileRows, LoopKind::kSerial,
                              IfThenElse::Make(row < p_.shape.m, Block::Make(std::move(per_row)))));
    }
    return Block::Make(std::move(out));
  }

  // With swap: tile (i, j) holds C^T, rows of B (C's columns) by rows of A (C's rows). Row c of
  // A's tile j is column c of the stored tile: 16 elements 16 apart, C's columns from the tile
  // of B's rows i (whole: N is whole register blocks).
  Stmt FinishTransposed(const Expr& row0) const {
    std::vector<Stmt> out;
    for (int64_t j = 0; j < p_.tn; ++j) {
      Var c("cc");
      const Expr row = J0() + jr_ * GroupCols() + j * kTileRows + c;  // C's row (A's)
      std::vector<Stmt> per_row;
      for (int64_t i = 0; i < p_.tm; ++i) {
        const int64_t tile_base = AccTile(i, j) * kTileRows * kTileRows;
        per_row.push_back(ops_.StoreColumns(
            row, I0() + row0 + i * kTileRows, static_cast<int>(kTileRows), /*inside=*/true,
            [&](const Expr& offset, int lanes) {
              const Expr first = tile_base + offset * kTileRows + c;
              return lanes == 1 ? Load::Make(c_tiles_, first, 1)
                                : Load::Make(c_tiles_, ir::Ramp::Make(first, kTileRows, lanes));
            }));
      }
      out.push_back(For::Make(c, 0, kTileRows, LoopKind::kSerial,
                              IfThenElse::Make(row < p_.shape.m, Block::Make(std::move(per_row)))));
    }
    return Block::Make(std::move(out));
  }

  const AmxPlan p_;
  CpuMatrixOperands ops_;
  Buffer b_packed_, a_packed_, acc_block_, c_tiles_;
  Var ib_{"ib"}, jb_{"jb"}, pb_{"pb"}, jr_{"jr"};
};

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuAmx, workload, target, config));
  RETURN_IF_ERROR(CheckAmx("gemm.cpu.amx", workload, target));
  return AmxGemmBuilder(workload, PlanOf(workload, target, config)).Build(func_name);
}

absl::StatusOr<PreparedWeights> Prepare(const Workload& workload, const Target& target,
                                        const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCpuAmx, workload, target, config));
  return AmxGemmBuilder(workload, PlanOf(workload, target, config)).BuildPreparation(func_name);
}

}  // namespace

const KernelTemplate kGemmCpuAmx = {
    .name = "gemm.cpu.amx",
    .version = 4,  // 3: NT panels packed by transposes in registers; 4: NT's default swaps
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .worker_features = &AmxWorkerFeatures,
    .applies = &HasAmxFor,
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = kCpuMatrixDtypes,
    .requant = true,
    .seeds = &Seeds,
    .prepare = &Prepare,
};

}  // namespace tune
