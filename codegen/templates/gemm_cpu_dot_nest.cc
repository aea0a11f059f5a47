#include "codegen/templates/gemm_cpu_dot_nest.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/templates/template_util.h"

namespace tune {

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

namespace {

// The width of a row block's partial sums (and, pack_b, of the packed column block): the column
// block rounded up to whole panels.
int64_t BlockWidthOf(const GemmDotPlan& p) {
  return CeilDiv(std::min(p.nc, p.shape.n), p.panels.width) * p.panels.width;
}

}  // namespace

GemmDotPlan GemmDotPlanOf(const Workload& workload, const Target& target, const Config& config) {
  GemmDotPlan p;
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
  p.panels.width = p.nv * kGemmDotLanes;
  p.panels.group = p.types.group;
  p.panels.kp = GemmDotPaddedK(workload);
  if (p.i8) {  // the compensations after the panels of one column block, or of all of B
    p.panels.sums_at = p.pack_b ? BlockWidthOf(p) * p.panels.kp : p.panels.Elements(p.shape.n);
  }
  return p;
}

namespace {

class DotGemmBuilder {
 public:
  DotGemmBuilder(const Workload& workload, const GemmDotPlan& p)
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
    const int lanes = static_cast<int>(kGemmDotLanes);
    const int group_lanes = static_cast<int>(kGemmDotLanes * G());
    Buffer acc(rows == p_.mr ? "acc" : "acc_edge", MemoryScope::kStack, p_.types.acc);
    auto acc_at = [&](int64_t r, int64_t v) { return Expr(r * Nr() + v * kGemmDotLanes); };
    auto block_at = [&](int64_t r, int64_t v) {
      return (row0 + r) * BlockWidth() + jr_ * Nr() + v * kGemmDotLanes;
    };
    const Expr zero = p_.types.acc.is_float()
                          ? ir::BroadcastTo(Expr(0.0f), lanes)
                          : ir::BroadcastTo(ir::Cast::Make(Type::Int32(), 0), lanes);
    // i8's sums start at their columns' compensations.
    auto start = [&](int64_t v) {
      return p_.i8 ? LoadCompensation(p_.panels, b_packed_,
                                      (FirstPanel() + jr_) * Nr() + v * kGemmDotLanes, lanes)
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
      b_vectors.push_back(
          Load::Make(b_packed_, panel_base + ((P0() / G() + kg) * Nr() + v * kGemmDotLanes) * G(),
                     group_lanes));
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
    return ops_.StoreColumns(I0() + row0 + r, J0() + jr_ * Nr() + v * kGemmDotLanes,
                             static_cast<int>(kGemmDotLanes), p_.shape.n % Nr() == 0,
                             [&](const Expr& offset, int lanes) {
                               return Load::Make(acc, r * Nr() + v * kGemmDotLanes + offset, lanes);
                             });
  }

  const GemmDotPlan p_;
  CpuMatrixOperands ops_;
  Buffer b_packed_, a_packed_, acc_block_;
  Var ib_{"ib"}, jb_{"jb"}, pb_{"pb"}, jr_{"jr"};
};

}  // namespace

ir::LoweredFunc BuildGemmDotNest(const Workload& workload, const GemmDotPlan& plan,
                                 std::string_view func_name) {
  return DotGemmBuilder(workload, plan).Build(func_name);
}

PreparedWeights BuildGemmDotPreparation(const Workload& workload, const GemmDotPlan& plan,
                                        std::string_view func_name) {
  return DotGemmBuilder(workload, plan).BuildPreparation(func_name);
}

}  // namespace tune
