#include "codegen/templates/gpu_tiled_matmul.h"

#include <algorithm>

#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {

using ir::Allocate;
using ir::Barrier;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::Fma;
using ir::For;
using ir::IfThenElse;
using ir::LetStmt;
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;

namespace {

// Width of the per-thread fragment chunks along a tile dimension: consecutive elements one
// thread reads with one shared-memory access.
int64_t ChunkOf(int64_t t) { return t % 4 == 0 ? 4 : (t % 2 == 0 ? 2 : 1); }

int64_t PaddedStride(int64_t x) { return x >= 32 ? x + 4 : x; }

Expr DenseLoad(const Buffer& buf, Expr base, int64_t lanes) {
  return Load::Make(buf, std::move(base), static_cast<int>(lanes));
}

}  // namespace

int64_t MatmulTiling::SharedStrideA() const { return PaddedStride(bm); }
int64_t MatmulTiling::SharedStrideB() const { return PaddedStride(bn); }

int64_t MatmulTiling::SharedFloats() const {
  int64_t floats = stages * bk * (SharedStrideA() + SharedStrideB());
  if (splitk > 1) {
    floats += splitk * bm * bn;
  }
  return floats;
}

int64_t MatmulTiling::Registers(int64_t lanes_a, int64_t lanes_b) const {
  const int64_t t = Threads();
  const int64_t staged_a = async_copy && async_a ? 0 : GpuCeilDiv(bk * bm / lanes_a, t) * lanes_a;
  const int64_t staged_b = async_copy ? 0 : GpuCeilDiv(bk * bn / lanes_b, t) * lanes_b;
  const int64_t staged = staged_a + staged_b;
  const int64_t fragments = (frag_pipe ? 2 : 1) * (tm + tn);
  return tm * tn + fragments + staged + 24;
}

namespace {

class MatmulBuilder {
 public:
  MatmulBuilder(const MatmulProblem& p, const MatmulTiling& t) : p_(p), t_(t) {
    fa_ = ChunkOf(t.tm);
    fb_ = ChunkOf(t.tn);
    sa_ = t.SharedStrideA();
    sb_ = t.SharedStrideB();
    threads_ = t.Threads();
    group_threads_ = t.ThreadsM() * t.ThreadsN();
    bkg_ = t.bk / t.splitk;
    acc_m_major_ = !p.out.contiguous_along_m;
    pipelined_ = t.frag_pipe;
  }

  Stmt Build() {
    Stmt thread_body = ThreadBody();
    Stmt body = For::Make(tx_, 0, threads_, LoopKind::kGpuThread, thread_body, 0);
    if (t_.splitk > 1) {
      body = Allocate::Make(red_, t_.splitk * t_.bm * t_.bn, body);
    }
    body = Allocate::Make(bs_, t_.stages * t_.bk * sb_, body);
    body = Allocate::Make(as_, t_.stages * t_.bk * sa_, body);
    if (t_.gridk > 1) {
      body = For::Make(bz_, 0, t_.gridk, LoopKind::kGpuBlock, body, 2);
    }
    body = For::Make(bn_, 0, GpuCeilDiv(p_.n, t_.bn), LoopKind::kGpuBlock, body, 1);
    body = For::Make(bm_, 0, GpuCeilDiv(p_.m, t_.bm), LoopKind::kGpuBlock, body, 0);
    return body;
  }

 private:
  // One operand's copy: slots of `lanes` elements spread over the threads.
  struct Copy {
    const MatmulOperand* op = nullptr;
    Buffer shared, staging;
    int64_t x_extent = 0;  // bm or bn
    int64_t stride = 0;    // shared row stride
    Expr x0;               // global x of the tile's first row/column
    int64_t slots_per_thread = 0, total = 0;
    std::vector<Var> xl, kl, xg;             // per slot
    std::vector<std::vector<Var>> let_vars;  // per slot: the operand's x_lets
    std::vector<std::vector<Expr>> let_values;
  };

  static Copy MakeCopy(const MatmulOperand* op, const Buffer& shared, const char* staging,
                       int64_t x_extent, int64_t stride, Expr x0) {
    Copy c;
    c.op = op;
    c.shared = shared;
    c.staging = Buffer(staging, MemoryScope::kGpuLocal);
    c.x_extent = x_extent;
    c.stride = stride;
    c.x0 = std::move(x0);
    return c;
  }

  int64_t StageFloats(const Copy& c) const { return t_.bk * c.stride; }

  void PlanCopy(Copy& c, const char* name) {
    const int64_t lanes = c.op->lanes;
    c.total = t_.bk * c.x_extent / lanes;
    c.slots_per_thread = GpuCeilDiv(c.total, threads_);
    for (int64_t j = 0; j < c.slots_per_thread; ++j) {
      c.xl.emplace_back(StrCat(name, "x", j));
      c.kl.emplace_back(StrCat(name, "k", j));
      c.xg.emplace_back(StrCat(name, "g", j));
      std::vector<Var> vars;
      std::vector<Expr> values;
      if (c.op->x_lets) {
        for (auto& [var, value] : c.op->x_lets(c.xg.back())) {
          vars.push_back(var);
          values.push_back(value);
        }
      }
      c.let_vars.push_back(std::move(vars));
      c.let_values.push_back(std::move(values));
    }
  }

  // Wraps `body` in the per-slot lets of a copy (computed once per thread).
  Stmt WithCopyLets(const Copy& c, Stmt body) const {
    const int64_t lanes = c.op->lanes;
    for (int64_t j = c.slots_per_thread - 1; j >= 0; --j) {
      for (size_t v = c.let_vars[j].size(); v-- > 0;) {
        body = LetStmt::Make(c.let_vars[j][v], c.let_values[j][v], body);
      }
      Expr e = tx_ + j * threads_;
      if (j == c.slots_per_thread - 1 && c.total % threads_ != 0) {
        // Threads without a last slot compute a harmless in-range position.
        e = ir::Min::Make(e, c.total - 1);
      }
      Expr xl, kl;
      if (c.op->vector_along_k) {
        const int64_t per_x = t_.bk / lanes;
        xl = e / per_x;
        kl = (e % per_x) * lanes;
      } else {
        const int64_t per_k = c.x_extent / lanes;
        kl = e / per_k;
        xl = (e % per_k) * lanes;
      }
      body = LetStmt::Make(c.xg[j], c.x0 + c.xl[j], body);
      body = LetStmt::Make(c.kl[j], kl, body);
      body = LetStmt::Make(c.xl[j], xl, body);
    }
    return body;
  }

  Stmt GuardSlot(const Copy& c, int64_t j, Stmt s) const {
    if (j == c.slots_per_thread - 1 && c.total % threads_ != 0) {
      return IfThenElse::Make(tx_ + j * threads_ < c.total, s);
    }
    return s;
  }

  // The operand's elements of slot j at reduction index k: its `load`, or the guarded load of
  // its `source_index`.
  Expr OperandLoad(const Copy& c, int64_t j, const Expr& k) const {
    if (c.op->load) {
      return c.op->load(c.let_vars[j], c.xg[j], k);
    }
    auto [index, valid] = c.op->source_index(c.let_vars[j], c.xg[j], k);
    // An operand of a storage type (bf16, f16, fp8) is read as float32.
    return ir::LoadAsOrZero(c.op->source, index, static_cast<int>(c.op->lanes), valid);
  }

  // Global -> staging registers for tile k0.
  Stmt LoadSlots(const Copy& c, const Expr& k0) const {
    std::vector<Stmt> stmts;
    const int64_t lanes = c.op->lanes;
    for (int64_t j = 0; j < c.slots_per_thread; ++j) {
      Expr value = OperandLoad(c, j, k0 + c.kl[j]);
      Expr dst = lanes == 1 ? Expr(j) : ir::Ramp::Make(j * lanes, 1, static_cast<int>(lanes));
      stmts.push_back(GuardSlot(c, j, Store::Make(c.staging, dst, value)));
    }
    return Block::Make(std::move(stmts));
  }

  // Staging registers -> shared stage starting at `offset`.
  Stmt StoreSlots(const Copy& c, const Expr& offset) const {
    std::vector<Stmt> stmts;
    const int64_t lanes = c.op->lanes;
    for (int64_t j = 0; j < c.slots_per_thread; ++j) {
      std::vector<Stmt> per;
      if (c.op->vector_along_k || lanes == 1) {
        for (int64_t w = 0; w < lanes; ++w) {
          per.push_back(Store::Make(c.shared, offset + (c.kl[j] + w) * c.stride + c.xl[j],
                                    c.staging(j * lanes + w)));
        }
      } else {
        per.push_back(Store::Make(c.shared, offset + c.kl[j] * c.stride + c.xl[j],
                                  DenseLoad(c.staging, j * lanes, lanes)));
      }
      stmts.push_back(GuardSlot(c, j, Block::Make(std::move(per))));
    }
    return Block::Make(std::move(stmts));
  }

  // Global -> shared stage at `offset` for tile k0, by asynchronous copies.
  Stmt CopySlotsAsync(const Copy& c, const Expr& k0, const Expr& offset) const {
    std::vector<Stmt> stmts;
    const int64_t lanes = c.op->lanes;
    for (int64_t j = 0; j < c.slots_per_thread; ++j) {
      auto [src, valid] = c.op->source_index(c.let_vars[j], c.xg[j], k0 + c.kl[j]);
      std::vector<Stmt> per;
      if (c.op->vector_along_k || lanes == 1) {
        // Consecutive along k in global memory, a column apart in the shared tile.
        for (int64_t w = 0; w < lanes; ++w) {
          per.push_back(Store::MakeAsyncCopy(c.shared, offset + (c.kl[j] + w) * c.stride + c.xl[j],
                                             c.op->source, src + w, 1, valid));
        }
      } else {
        per.push_back(Store::MakeAsyncCopy(c.shared, offset + c.kl[j] * c.stride + c.xl[j],
                                           c.op->source, src, static_cast<int>(lanes), valid));
      }
      stmts.push_back(GuardSlot(c, j, Block::Make(std::move(per))));
    }
    return Block::Make(std::move(stmts));
  }

  int64_t AccIndex(int64_t i, int64_t j) const {
    return acc_m_major_ ? i * t_.tn + j : j * t_.tm + i;
  }
  // Tile-local row of the thread's fragment element i, relative to the thread's base.
  int64_t RowOffset(int64_t i) const { return (i / fa_) * (t_.ThreadsM() * fa_) + i % fa_; }
  int64_t ColOffset(int64_t j) const { return (j / fb_) * (t_.ThreadsN() * fb_) + j % fb_; }

  // Loads row kk of the thread's A and B fragments from a shared stage (a_off/b_off: the
  // thread's base offsets in it) into fragment set `set` (0 or 1).
  Stmt LoadFragments(int64_t set, const Expr& a_off, const Expr& b_off, const Expr& kk) const {
    std::vector<Stmt> stmts;
    for (int64_t c = 0; c < t_.tm / fa_; ++c) {
      Expr src = a_off + kk * sa_ + c * t_.ThreadsM() * fa_;
      const int64_t dst = set * t_.tm + c * fa_;
      stmts.push_back(
          Store::Make(afrag_, fa_ == 1 ? Expr(dst) : ir::Ramp::Make(dst, 1, static_cast<int>(fa_)),
                      DenseLoad(as_, src, fa_)));
    }
    for (int64_t c = 0; c < t_.tn / fb_; ++c) {
      Expr src = b_off + kk * sb_ + c * t_.ThreadsN() * fb_;
      const int64_t dst = set * t_.tn + c * fb_;
      stmts.push_back(
          Store::Make(bfrag_, fb_ == 1 ? Expr(dst) : ir::Ramp::Make(dst, 1, static_cast<int>(fb_)),
                      DenseLoad(bs_, src, fb_)));
    }
    return Block::Make(std::move(stmts));
  }

  // acc += a_frag[set] x b_frag[set] (outer product).
  Stmt Fmas(int64_t set) const {
    std::vector<Stmt> stmts;
    for (int64_t i = 0; i < t_.tm; ++i) {
      for (int64_t j = 0; j < t_.tn; ++j) {
        int64_t idx = AccIndex(i, j);
        stmts.push_back(Store::Make(
            acc_, idx, Fma::Make(afrag_(set * t_.tm + i), bfrag_(set * t_.tn + j), acc_(idx))));
      }
    }
    return Block::Make(std::move(stmts));
  }

  // The inner product over one shared stage: a_off/b_off are the thread's base offsets.
  Stmt Compute(const Expr& a_off, const Expr& b_off) const {
    Var kk("kk");
    return For::Make(kk, 0, bkg_, LoopKind::kUnrolled,
                     Block::Make({LoadFragments(0, a_off, b_off, kk), Fmas(0)}));
  }

  // Software-pipelined fragments: row kk + 1 is read from shared memory while row kk's FMAs
  // run. Row 0 of the stage was loaded by the previous step (or the prologue) into set 0; the
  // stage's last row's FMAs are left to the caller (FinishPipelinedStage), after the barrier,
  // so that they cover the latency of reading the next stage's row 0. Needs an even bkg_.
  Stmt PipelinedStage(const Expr& a_off, const Expr& b_off) const {
    std::vector<Stmt> stmts;
    for (int64_t kk = 0; kk + 1 < bkg_; ++kk) {
      stmts.push_back(LoadFragments((kk + 1) % 2, a_off, b_off, Expr(kk + 1)));
      stmts.push_back(Fmas(kk % 2));
    }
    return Block::Make(std::move(stmts));
  }

  // After the barrier: row 0 of the next stage into set 0, then the last row's FMAs (set 1).
  Stmt FinishPipelinedStage(const Expr& next_a_off, const Expr& next_b_off) const {
    return Block::Make({LoadFragments(0, next_a_off, next_b_off, Expr(int64_t{0})), Fmas(1)});
  }

  Expr EpilogueValue(Expr value, const Expr& n, int64_t lanes_along_n) const {
    if (p_.scale.defined()) {
      value = value * p_.scale;
    }
    Expr bias;
    if (EpilogueHasBias(p_.epilogue)) {
      bias = ir::LoadAsOrZero(p_.bias, n, static_cast<int>(lanes_along_n), Expr());
      if (t_.gridk > 1) {
        // Every split adds into the output: the bias is the first split's.
        bias = ir::Select::Make(bz_ == 0, bias,
                                ir::BroadcastTo(Expr(0.0f), static_cast<int>(lanes_along_n)));
      }
    }
    return ApplyEpilogue(p_.epilogue, std::move(value), bias);
  }

  // The output store: an atomic add when blocks share the reduction; a narrower output type
  // rounds the float32 value (Cast) as it is stored.
  Stmt OutputStore(Expr index, Expr value) const {
    if (t_.gridk > 1) {
      return Store::MakeAtomicAdd(p_.out_buffer, std::move(index), std::move(value));
    }
    const ir::Type out = p_.out_buffer.element_type();
    if (out.is_storage_only()) {
      const int lanes = value.type().lanes();
      value = ir::Cast::Make(out.WithLanes(lanes), std::move(value));
    }
    return Store::Make(p_.out_buffer, std::move(index), std::move(value));
  }

  // Direct stores of the register tile (no split-K).
  Stmt StoreTile(const Expr& row_base, const Expr& col_base) const {
    const int64_t ol = std::min(p_.out.lanes, p_.out.contiguous_along_m ? fa_ : fb_);
    const bool guard_m = p_.m % t_.bm != 0, guard_n = p_.n % t_.bn != 0;
    std::vector<Stmt> stmts;
    for (int64_t i = 0; i < t_.tm; i += p_.out.contiguous_along_m ? ol : 1) {
      for (int64_t j = 0; j < t_.tn; j += p_.out.contiguous_along_m ? 1 : ol) {
        Expr m = row_base + RowOffset(i), n = col_base + ColOffset(j);
        Expr value = DenseLoad(acc_, AccIndex(i, j), ol);
        value = EpilogueValue(value, n, p_.out.contiguous_along_m ? 1 : ol);
        Stmt s = OutputStore(p_.out.index(m, n), value);
        Expr cond;
        if (guard_m) {
          cond = m < p_.m;
        }
        if (guard_n) {
          cond = cond.defined() ? (cond && n < p_.n) : (n < p_.n);
        }
        stmts.push_back(cond.defined() ? IfThenElse::Make(cond, s) : s);
      }
    }
    return Block::Make(std::move(stmts));
  }

  // Split-K: every group parks its tile in shared memory, then all threads sum the groups and
  // store with the epilogue.
  Stmt ReduceAndStore(const Expr& tile_row, const Expr& tile_col, const Expr& group) const {
    const int64_t tile = t_.bm * t_.bn;
    std::vector<Stmt> stmts;
    for (int64_t i = 0; i < t_.tm; ++i) {
      for (int64_t j = 0; j < t_.tn; ++j) {
        Expr r = tile_row + RowOffset(i), c = tile_col + ColOffset(j);
        Expr at = p_.out.contiguous_along_m ? c * t_.bm + r : r * t_.bn + c;
        stmts.push_back(Store::Make(red_, group * tile + at, acc_(AccIndex(i, j))));
      }
    }
    stmts.push_back(Barrier::Make());
    Var e("e");
    Expr idx = tx_ + e * threads_;
    Expr r = p_.out.contiguous_along_m ? idx % t_.bm : idx / t_.bn;
    Expr c = p_.out.contiguous_along_m ? idx / t_.bm : idx % t_.bn;
    Expr sum = red_(idx);
    for (int64_t g = 1; g < t_.splitk; ++g) {
      sum = sum + red_(idx + g * tile);
    }
    Expr m = bm_ * t_.bm + r, n = bn_ * t_.bn + c;
    Stmt s = OutputStore(p_.out.index(m, n), EpilogueValue(sum, n, 1));
    Expr cond;
    if (p_.m % t_.bm != 0) {
      cond = m < p_.m;
    }
    if (p_.n % t_.bn != 0) {
      cond = cond.defined() ? (cond && n < p_.n) : (n < p_.n);
    }
    if (tile % threads_ != 0) {
      cond = cond.defined() ? (idx < tile && cond) : (idx < tile);
    }
    if (cond.defined()) {
      s = IfThenElse::Make(cond, s);
    }
    stmts.push_back(For::Make(e, 0, GpuCeilDiv(tile, threads_), LoopKind::kUnrolled, s));
    return Block::Make(std::move(stmts));
  }

  Stmt ThreadBody() {
    Copy ca = MakeCopy(&p_.a, as_, "a_stage", t_.bm, sa_, bm_ * t_.bm);
    Copy cb = MakeCopy(&p_.b, bs_, "b_stage", t_.bn, sb_, bn_ * t_.bn);
    PlanCopy(ca, "a");
    PlanCopy(cb, "b");

    // Thread coordinates: split group, then the thread's row and column groups.
    Var group("group"), tr("tr"), tc("tc");
    Expr tg = tx_ % group_threads_;
    Expr tr_value = t_.rows_fastest ? tg % t_.ThreadsM() : tg / t_.ThreadsN();
    Expr tc_value = t_.rows_fastest ? tg / t_.ThreadsM() : tg % t_.ThreadsN();

    // The block's run of bk steps: [kt0, kt0 + ktiles) of the reduction's steps.
    const int64_t steps = GpuCeilDiv(p_.k, t_.bk);
    const int64_t per_split = GpuCeilDiv(steps, t_.gridk);
    Var kt0("kt0"), nkt("nkt");
    Expr ktiles = t_.gridk > 1 ? Expr(nkt) : Expr(steps);
    Expr kbase = t_.gridk > 1 ? Expr(kt0) : Expr(int64_t{0});
    Var ko("ko"), a_off("a_off"), b_off("b_off");
    Expr a_thread = group * (bkg_ * sa_) + tr * fa_;
    Expr b_thread = group * (bkg_ * sb_) + tc * fb_;
    std::vector<Stmt> main;
    Var zi("i");
    main.push_back(
        For::Make(zi, 0, t_.tm * t_.tn, LoopKind::kUnrolled, Store::Make(acc_, zi, Expr(0.0f))));
    Stmt loop;
    if (t_.async_copy) {
      // Stages of asynchronous copies: step s goes to stage s % S, issued S - 1 steps ahead,
      // one commit group per step (empty ones past the end keep the count), so that waiting
      // until S - 2 groups are in flight means the next step has landed.
      // Without async_a, A goes through registers one step ahead: loaded at the start of a
      // step, stored to the next step's stage before the barrier that ends it.
      const int64_t S = t_.stages;
      const bool async_a = t_.async_a;
      auto issue = [&](const Expr& step) {
        Expr stage = step % S;
        return IfThenElse::Make(
            step < ktiles,
            Block::Make({async_a
                             ? CopySlotsAsync(ca, (kbase + step) * t_.bk, stage * StageFloats(ca))
                             : Block::Make({}),
                         CopySlotsAsync(cb, (kbase + step) * t_.bk, stage * StageFloats(cb))}));
      };
      for (int64_t s = 0; s + 1 < S; ++s) {
        main.push_back(issue(Expr(s)));
        main.push_back(Barrier::MakeAfterAsyncCopies(true, -1));
      }
      if (!async_a) {
        main.push_back(LoadSlots(ca, kbase * t_.bk));
        main.push_back(StoreSlots(ca, Expr(int64_t{0})));
      }
      main.push_back(Barrier::MakeAfterAsyncCopies(false, static_cast<int>(S - 2)));
      if (pipelined_) {
        main.push_back(LoadFragments(0, a_thread, b_thread, Expr(int64_t{0})));
      }
      Var a_next("a_next"), b_next("b_next");
      Stmt step = Block::Make({
          async_a ? Block::Make({})
                  : IfThenElse::Make(ko + 1 < ktiles, LoadSlots(ca, (kbase + ko + 1) * t_.bk)),
          issue(ko + (S - 1)),
          pipelined_ ? PipelinedStage(a_off, b_off) : Compute(a_off, b_off),
          // Unconditional, as in the register path (see there).
          async_a ? Block::Make({}) : StoreSlots(ca, ((ko + 1) % S) * StageFloats(ca)),
          Barrier::MakeAfterAsyncCopies(true, static_cast<int>(S - 2)),
          pipelined_ ? FinishPipelinedStage(a_next, b_next) : Block::Make({}),
      });
      if (pipelined_) {
        // The last step reads its own stage again: the next one may never have been copied.
        Expr next = ir::Min::Make(ko + 1, ktiles - 1) % S;
        step = LetStmt::Make(b_next, next * StageFloats(cb) + b_thread, step);
        step = LetStmt::Make(a_next, next * StageFloats(ca) + a_thread, step);
      }
      step = LetStmt::Make(b_off, (ko % S) * StageFloats(cb) + b_thread, step);
      step = LetStmt::Make(a_off, (ko % S) * StageFloats(ca) + a_thread, step);
      loop = For::Make(ko, 0, ktiles, LoopKind::kSerial, step);
    } else if (t_.stages == 2) {
      main.push_back(LoadSlots(ca, kbase * t_.bk));
      main.push_back(LoadSlots(cb, kbase * t_.bk));
      main.push_back(StoreSlots(ca, Expr(int64_t{0})));
      main.push_back(StoreSlots(cb, Expr(int64_t{0})));
      main.push_back(Barrier::Make());
      Expr has_next = ko + 1 < ktiles;
      Expr next = (ko + 1) % 2;
      Var a_next("a_next"), b_next("b_next");
      if (pipelined_) {
        main.push_back(LoadFragments(0, a_thread, b_thread, Expr(int64_t{0})));
      }
      Stmt step = Block::Make({
          IfThenElse::Make(has_next, Block::Make({LoadSlots(ca, (kbase + ko + 1) * t_.bk),
                                                  LoadSlots(cb, (kbase + ko + 1) * t_.bk)})),
          pipelined_ ? PipelinedStage(a_off, b_off) : Compute(a_off, b_off),
          // Unconditional: after the last step the staged values land in the stage nobody
          // reads again. A condition here lets LLVM sink the step's FMAs below the stores and
          // keep all of the step's shared-memory fragments live at once (~100 registers more).
          StoreSlots(ca, next * StageFloats(ca)),
          StoreSlots(cb, next * StageFloats(cb)),
          Barrier::Make(),
          // After the last step this reads the stage nobody writes again: harmless.
          pipelined_ ? FinishPipelinedStage(a_next, b_next) : Block::Make({}),
      });
      if (pipelined_) {
        step = LetStmt::Make(b_next, next * StageFloats(cb) + b_thread, step);
        step = LetStmt::Make(a_next, next * StageFloats(ca) + a_thread, step);
      }
      step = LetStmt::Make(b_off, (ko % 2) * StageFloats(cb) + b_thread, step);
      step = LetStmt::Make(a_off, (ko % 2) * StageFloats(ca) + a_thread, step);
      loop = For::Make(ko, 0, ktiles, LoopKind::kSerial, step);
    } else {
      Stmt step = Block::Make({
          LoadSlots(ca, (kbase + ko) * t_.bk),
          LoadSlots(cb, (kbase + ko) * t_.bk),
          Barrier::Make(),
          StoreSlots(ca, Expr(int64_t{0})),
          StoreSlots(cb, Expr(int64_t{0})),
          Barrier::Make(),
          Compute(a_thread, b_thread),
      });
      loop = For::Make(ko, 0, ktiles, LoopKind::kSerial, step);
    }
    main.push_back(loop);
    Expr row_base = bm_ * t_.bm + tr * fa_;
    Expr col_base = bn_ * t_.bn + tc * fb_;
    if (t_.splitk > 1) {
      main.push_back(ReduceAndStore(tr * fa_, tc * fb_, group));
    } else {
      main.push_back(StoreTile(row_base, col_base));
    }
    Stmt body = Block::Make(std::move(main));
    if (t_.gridk > 1) {
      body = LetStmt::Make(nkt, ir::Min::Make(Expr(per_split), steps - kt0), body);
      body = LetStmt::Make(kt0, bz_ * per_split, body);
    }
    body = WithCopyLets(cb, body);
    body = WithCopyLets(ca, body);
    body = LetStmt::Make(tc, tc_value, body);
    body = LetStmt::Make(tr, tr_value, body);
    body = LetStmt::Make(group, tx_ / group_threads_, body);
    if (!t_.async_copy) {
      body = Allocate::Make(cb.staging, cb.slots_per_thread * p_.b.lanes, body);
    }
    if (!t_.async_copy || !t_.async_a) {
      body = Allocate::Make(ca.staging, ca.slots_per_thread * p_.a.lanes, body);
    }
    const int64_t sets = pipelined_ ? 2 : 1;
    body = Allocate::Make(bfrag_, sets * t_.tn, body);
    body = Allocate::Make(afrag_, sets * t_.tm, body);
    body = Allocate::Make(acc_, t_.tm * t_.tn, body);
    return body;
  }

  const MatmulProblem& p_;
  const MatmulTiling t_;
  int64_t fa_ = 1, fb_ = 1, sa_ = 0, sb_ = 0, threads_ = 0, group_threads_ = 0, bkg_ = 0;
  bool acc_m_major_ = true;
  bool pipelined_ = false;
  Var bm_{"bm"}, bn_{"bn"}, bz_{"bz"}, tx_{"tx"};
  Buffer as_{"A_shared", MemoryScope::kGpuShared};
  Buffer bs_{"B_shared", MemoryScope::kGpuShared};
  Buffer red_{"partial", MemoryScope::kGpuShared};
  Buffer acc_{"acc", MemoryScope::kGpuLocal};
  Buffer afrag_{"a_frag", MemoryScope::kGpuLocal};
  Buffer bfrag_{"b_frag", MemoryScope::kGpuLocal};
};

}  // namespace

ir::Stmt BuildTiledMatmul(const MatmulProblem& problem, const MatmulTiling& tiling) {
  TUNE_CHECK(tiling.bm % tiling.tm == 0 && tiling.bn % tiling.tn == 0 &&
             tiling.bk % tiling.splitk == 0);
  TUNE_CHECK((problem.a.load || problem.a.source_index) &&
             (problem.b.load || problem.b.source_index));
  TUNE_CHECK(!tiling.frag_pipe || FragPipeFits(tiling.stages, tiling.bk, tiling.splitk));
  TUNE_CHECK(tiling.async_copy
                 ? (tiling.stages >= 2 && tiling.stages <= 4 &&
                    (problem.a.source_index || !tiling.async_a) && problem.b.source_index)
                 : (tiling.stages == 1 || tiling.stages == 2));
  TUNE_CHECK(tiling.gridk == 1 ||
             (GridSplitFits(problem.k, tiling.bk, tiling.gridk) &&
              !EpilogueHasRelu(problem.epilogue) && problem.out_buffer.defined()));
  TUNE_CHECK(problem.a.vector_along_k ? tiling.bk % problem.a.lanes == 0
                                      : tiling.bm % problem.a.lanes == 0);
  TUNE_CHECK(problem.b.vector_along_k ? tiling.bk % problem.b.lanes == 0
                                      : tiling.bn % problem.b.lanes == 0);
  return MatmulBuilder(problem, tiling).Build();
}

}  // namespace tune
