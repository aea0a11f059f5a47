// gemm.cpu.dot with B read in place (gemm_cpu_dot_rows.h):
//
//   for column tiles j0 (parallel with -threads > 1); for row tiles i0:
//     acc[r][c] (vectors of 16 lanes) = 0
//     for each step of 16 groups (32 bf16 or 64 8-bit elements) of K:
//       rows vector loads of A, cols vector loads of B, rows x cols dot products
//     each C[i0 + r][j0 + c] = the sum of acc[r][c]'s lanes + the K elements past the last
//     whole step (scalar), with the epilogue
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
  DotRowsBuilder(const Workload& w, int64_t rows, int64_t cols, bool parallel)
      : shape_(w.gemm()),
        ops_(w),
        types_(ops_.types()),
        rows_(rows),
        cols_(cols),
        parallel_(parallel),
        i8_(w.dtype() == Dtype::kI8),
        a_(ops_.a()),
        b_(ops_.b()) {}

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = ops_.Params(b_);
    // Whole tiles, then the last row tile and the last column tile of their own sizes.
    const int64_t m_full = shape_.m / rows_, n_full = shape_.n / cols_;
    const int64_t m_tail = shape_.m % rows_, n_tail = shape_.n % cols_;
    Var jt("jt"), it("it");
    auto over_rows = [&](const Expr& j0, int64_t cols) {
      std::vector<Stmt> s;
      if (m_full > 0) {
        s.push_back(For::Make(it, 0, m_full, LoopKind::kSerial, Tile(it * rows_, j0, rows_, cols)));
      }
      if (m_tail > 0) {
        s.push_back(Tile(Expr(m_full * rows_), j0, m_tail, cols));
      }
      return Block::Make(std::move(s));
    };
    std::vector<Stmt> body;
    if (n_full > 0) {
      body.push_back(For::Make(jt, 0, n_full, parallel_ ? LoopKind::kParallel : LoopKind::kSerial,
                               over_rows(jt * cols_, cols_)));
    }
    if (n_tail > 0) {
      body.push_back(over_rows(Expr(n_full * cols_), n_tail));
    }
    func.body = ops_.BindScale(Block::Make(std::move(body)));
    return func;
  }

 private:
  int64_t G() const { return types_.group; }
  int64_t Step() const { return kLanes * G(); }  // K elements of one vector

  // The tile of `rows` x `cols` C elements at (i0, j0).
  Stmt Tile(const Expr& i0, const Expr& j0, int64_t rows, int64_t cols) const {
    const int step_lanes = static_cast<int>(Step());
    Buffer acc("acc", MemoryScope::kStack, types_.acc);
    Buffer row_sums("row_sums", MemoryScope::kStack, Type::Int32());
    auto acc_at = [&](int64_t r, int64_t c) { return Expr((r * cols + c) * kLanes); };
    const Expr zero_vec = types_.acc.is_float()
                              ? ir::BroadcastTo(Expr(0.0f), kLanes)
                              : ir::BroadcastTo(ir::Cast::Make(Type::Int32(), 0), kLanes);
    std::vector<Stmt> init;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        init.push_back(Store::Make(acc, acc_at(r, c), zero_vec));
      }
      if (i8_) {
        init.push_back(Store::Make(row_sums, Expr(r * kLanes), zero_vec));
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
    const int64_t steps = shape_.k / Step();
    Stmt reduce = For::Make(s, 0, steps, LoopKind::kSerial, Block::Make(std::move(step)));

    // Each element: its lanes summed, the K elements past the whole steps added one by one.
    std::vector<Stmt> finish;
    const Type compute = types_.acc;  // float32 or int32 scalar
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        Expr total = acc(acc_at(r, c));
        for (int l = 1; l < kLanes; ++l) {
          total = total + acc(acc_at(r, c) + l);
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
        Stmt tail_sum =
            Block::Make({Store::Make(tail, Expr(0), total),
                         For::Make(k, steps * Step(), shape_.k - steps * Step(), LoopKind::kSerial,
                                   Store::Make(tail, Expr(0), tail(Expr(0)) + product))});
        const Expr col = j0 + c;
        finish.push_back(
            Allocate::Make(tail, 1,
                           Block::Make({tail_sum, Store::Make(ops_.c(), (i0 + r) * shape_.n + col,
                                                              ops_.Finish(tail(Expr(0)), col))})));
      }
    }
    Stmt body = Block::Make({Block::Make(std::move(init)), reduce, Block::Make(std::move(finish))});
    body = Allocate::Make(acc, rows * cols * kLanes, body);
    if (i8_) {
      body = Allocate::Make(row_sums, rows * kLanes, body);
    }
    return body;
  }

  const GemmShape shape_;
  const CpuMatrixOperands ops_;
  const CpuMatrixTypes types_;
  const int64_t rows_, cols_;
  const bool parallel_, i8_;
  const Buffer a_, b_;
};

}  // namespace

ir::LoweredFunc BuildDotRowsGemm(const Workload& workload, int64_t rows, int64_t cols,
                                 bool parallel, std::string_view func_name) {
  return DotRowsBuilder(workload, rows, cols, parallel).Build(func_name);
}

}  // namespace tune
