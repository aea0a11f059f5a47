// gemm.cpu.dot with B read in place (gemm_cpu_dot_rows.h):
//
//   for column tiles j0 (parallel with -threads > 1); for blocks of kc of K; for row tiles i0:
//     acc[r][c] (vectors of 16 lanes) = 0 in the first block, else the block before's
//     for each step of 16 groups (32 bf16 or 64 8-bit elements) of the block:
//       rows vector loads of A, cols vector loads of B, rows x cols dot products
//     the last block: each C[i0 + r][j0 + c] = the sum of acc[r][c]'s lanes + the K elements
//     past the last whole step (scalar), with the epilogue; the others park acc (per row, in
//     the column tile's `parked` vectors) for the next block
//
// Blocks of K keep a column tile's rows of B (cols x kc elements) in L1 while every row tile
// reads them: over all of K at once (22 KB a row for K = 11008 in bf16) they are read again
// from L2 by each row tile.
//
// i8 x i8: B's vectors are shifted to u8 (b + 128) as vpdpbusd's unsigned operand, A is the
// signed one, and each row's sum of A (a dot product with ones, per step) times 128 is
// subtracted: sum (b + 128) a = sum a b + 128 sum a.
#include "codegen/templates/gemm_cpu_dot_rows.h"

#include <string>
#include <vector>

#include "codegen/templates/cpu_matrix_gemm.h"
#include "codegen/templates/template_util.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Block;
using ir::Buffer;
using ir::DotAccumulate;
using ir::DotKind;
using ir::Expr;
using ir::For;
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Type;
using ir::Var;

constexpr int kLanes = 16;

class DotRowsBuilder {
 public:
  DotRowsBuilder(const Workload& w, int64_t rows, int64_t cols, int64_t kc, bool parallel)
      : shape_(w.gemm()),
        ops_(w),
        types_(ops_.types()),
        rows_(rows),
        cols_(cols),
        parallel_(parallel),
        i8_(w.dtype() == Dtype::kI8),
        a_(ops_.a()),
        b_(ops_.b()),
        steps_(shape_.k / Step()),
        block_steps_(kc > 0 && kc < shape_.k ? std::max<int64_t>(1, kc / Step()) : steps_) {}

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = ops_.Params(b_);
    // Whole tiles, then the last column tile of its own width.
    const int64_t n_full = shape_.n / cols_, n_tail = shape_.n % cols_;
    Var jt("jt");
    std::vector<Stmt> body;
    if (n_full > 0) {
      body.push_back(For::Make(jt, 0, n_full, parallel_ ? LoopKind::kParallel : LoopKind::kSerial,
                               ColumnTile(jt * cols_, cols_)));
    }
    if (n_tail > 0) {
      body.push_back(ColumnTile(Expr(n_full * cols_), n_tail));
    }
    func.body = ops_.BindScale(Block::Make(std::move(body)));
    return func;
  }

 private:
  int64_t G() const { return types_.group; }
  int64_t Step() const { return kLanes * G(); }  // K elements of one vector
  // Blocks of K: the whole steps in blocks of block_steps_ (at least one block, which may hold
  // no step where K is shorter than a vector).
  int64_t Blocks() const { return std::max<int64_t>(1, CeilDiv(steps_, block_steps_)); }

  // A block of K of one tile: its steps [first, first + count) (count > 0 a compile-time
  // number, or the last block's remainder), whether the accumulators start at zero or from the
  // parked ones, and whether the tile is finished (C written) or parked after it.
  struct KBlock {
    Expr first;
    int64_t count;
    bool first_block, last_block;
  };

  // The rows x cols tile at column j0: the row tiles of every block of K in turn.
  Stmt ColumnTile(const Expr& j0, int64_t cols) const {
    const int64_t m_full = shape_.m / rows_, m_tail = shape_.m % rows_;
    auto over_rows = [&](const KBlock& kb) {
      Var it("it");
      std::vector<Stmt> s;
      if (m_full > 0) {
        s.push_back(
            For::Make(it, 0, m_full, LoopKind::kSerial, Tile(it * rows_, j0, rows_, cols, kb)));
      }
      if (m_tail > 0) {
        s.push_back(Tile(Expr(m_full * rows_), j0, m_tail, cols, kb));
      }
      return Block::Make(std::move(s));
    };
    const int64_t blocks = Blocks();
    if (blocks == 1) {
      return over_rows({Expr(int64_t{0}), steps_, true, true});
    }
    const int64_t last_count = steps_ - (blocks - 1) * block_steps_;
    Var kb("kb");
    std::vector<Stmt> s = {over_rows({Expr(int64_t{0}), block_steps_, true, false})};
    if (blocks > 2) {
      s.push_back(For::Make(kb, 1, blocks - 2, LoopKind::kSerial,
                            over_rows({kb * block_steps_, block_steps_, false, false})));
    }
    s.push_back(over_rows({Expr((blocks - 1) * block_steps_), last_count, false, true}));
    Stmt body = Block::Make(std::move(s));
    body = Allocate::Make(parked_, shape_.m * cols * kLanes, std::move(body));
    if (i8_) {
      body = Allocate::Make(parked_sums_, shape_.m * kLanes, std::move(body));
    }
    return body;
  }

  // The tile of `rows` x `cols` C elements at (i0, j0) over block `kb` of K.
  Stmt Tile(const Expr& i0, const Expr& j0, int64_t rows, int64_t cols, const KBlock& kb) const {
    const int step_lanes = static_cast<int>(Step());
    Buffer acc("acc", MemoryScope::kStack, types_.acc);
    Buffer row_sums("row_sums", MemoryScope::kStack, Type::Int32());
    auto acc_at = [&](int64_t r, int64_t c) { return Expr((r * cols + c) * kLanes); };
    // Where row i0 + r, column c of the tile parks its accumulators between blocks.
    auto parked_at = [&](int64_t r, int64_t c) { return ((i0 + r) * cols + c) * kLanes; };
    const Expr zero_vec = types_.acc.is_float()
                              ? ir::BroadcastTo(Expr(0.0f), kLanes)
                              : ir::BroadcastTo(ir::Cast::Make(Type::Int32(), 0), kLanes);
    std::vector<Stmt> init, park;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        init.push_back(
            Store::Make(acc, acc_at(r, c),
                        kb.first_block ? zero_vec : Load::Make(parked_, parked_at(r, c), kLanes)));
        park.push_back(
            Store::Make(parked_, parked_at(r, c), Load::Make(acc, acc_at(r, c), kLanes)));
      }
      if (i8_) {
        const Expr sums_at = (i0 + r) * kLanes;
        init.push_back(
            Store::Make(row_sums, Expr(r * kLanes),
                        kb.first_block ? zero_vec : Load::Make(parked_sums_, sums_at, kLanes)));
        park.push_back(
            Store::Make(parked_sums_, sums_at, Load::Make(row_sums, Expr(r * kLanes), kLanes)));
      }
    }
    Var s("ks");
    std::vector<Stmt> step;
    std::vector<Expr> a_vec, b_vec;
    for (int64_t r = 0; r < rows; ++r) {
      a_vec.push_back(Load::Make(a_, (i0 + r) * shape_.k + s * Step(), step_lanes));
    }
    for (int64_t c = 0; c < cols; ++c) {
      Expr b = Load::Make(b_, (j0 + c) * shape_.k + s * Step(), step_lanes);
      b_vec.push_back(i8_ ? ShiftedToU8(b) : b);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const Expr sum = Load::Make(acc, acc_at(r, c), kLanes);
        step.push_back(
            Store::Make(acc, acc_at(r, c), MatrixDot(types_, i8_, sum, a_vec[r], b_vec[c])));
      }
      if (i8_) {  // the row's sum of A: a dot product with ones
        const Expr ones = ir::BroadcastTo(
            ir::Cast::Make(Type::UInt8(), ir::Cast::Make(Type::Int32(), Expr(1))), step_lanes);
        step.push_back(Store::Make(
            row_sums, Expr(r * kLanes),
            DotAccumulate::Make(DotKind::kU8S8Quads, Load::Make(row_sums, Expr(r * kLanes), kLanes),
                                ones, a_vec[r])));
      }
    }
    Stmt reduce = For::Make(s, kb.first, kb.count, LoopKind::kSerial, Block::Make(std::move(step)));
    Stmt after =
        kb.last_block ? Finish(acc, row_sums, i0, j0, rows, cols) : Block::Make(std::move(park));
    Stmt body = Block::Make({Block::Make(std::move(init)), reduce, after});
    body = Allocate::Make(acc, rows * cols * kLanes, body);
    if (i8_) {
      body = Allocate::Make(row_sums, rows * kLanes, body);
    }
    return body;
  }

  // Each element of the tile: its lanes summed, the K elements past the whole steps added one by
  // one, then the epilogue into C.
  Stmt Finish(const Buffer& acc, const Buffer& row_sums, const Expr& i0, const Expr& j0,
              int64_t rows, int64_t cols) const {
    std::vector<Stmt> finish;
    const Type compute = types_.acc;  // float32 or int32 scalar
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const Expr at((r * cols + c) * kLanes);
        Expr total = acc(at);
        for (int l = 1; l < kLanes; ++l) {
          total = total + acc(at + l);
        }
        if (i8_) {
          Expr a_sum = row_sums(Expr(r * kLanes));
          for (int l = 1; l < kLanes; ++l) {
            a_sum = a_sum + row_sums(Expr(r * kLanes + l));
          }
          total = total - a_sum * 128;
        }
        Buffer tail("k_tail", MemoryScope::kStack, compute);
        Var k("kt");
        const Expr product = ir::Cast::Make(compute, a_((i0 + r) * shape_.k + k)) *
                             ir::Cast::Make(compute, b_((j0 + c) * shape_.k + k));
        Stmt tail_sum = Block::Make(
            {Store::Make(tail, Expr(0), total),
             For::Make(k, steps_ * Step(), shape_.k - steps_ * Step(), LoopKind::kSerial,
                       Store::Make(tail, Expr(0), tail(Expr(0)) + product))});
        const Expr col = j0 + c;
        finish.push_back(
            Allocate::Make(tail, 1,
                           Block::Make({tail_sum, Store::Make(ops_.c(), (i0 + r) * shape_.n + col,
                                                              ops_.Finish(tail(Expr(0)), col))})));
      }
    }
    return Block::Make(std::move(finish));
  }

  const GemmShape shape_;
  const CpuMatrixOperands ops_;
  const CpuMatrixTypes types_;
  const int64_t rows_, cols_;
  const bool parallel_, i8_;
  const Buffer a_, b_;
  const int64_t steps_;        // whole steps of K
  const int64_t block_steps_;  // steps per block of K
  // A column tile's accumulators (and i8's row sums of A) between blocks of K, per row of C.
  const Buffer parked_{"parked", MemoryScope::kStack, types_.acc};
  const Buffer parked_sums_{"parked_sums", MemoryScope::kStack, Type::Int32()};
};

}  // namespace

ir::LoweredFunc BuildDotRowsGemm(const Workload& workload, int64_t rows, int64_t cols, int64_t kc,
                                 bool parallel, std::string_view func_name) {
  return DotRowsBuilder(workload, rows, cols, kc, parallel).Build(func_name);
}

}  // namespace tune
