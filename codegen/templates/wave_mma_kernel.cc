#include "codegen/templates/wave_mma_kernel.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/split_reduction.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"

namespace tune {
namespace {

using ir::Block;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::LetStmt;
using ir::LoopKind;
using ir::Stmt;
using ir::Store;
using ir::Var;
using ir::WaveMmaShape;

int64_t InputBytes(const Workload& w) { return ElementBytes(w.input_type()); }

bool IsArch(const Target& target, std::string_view name) {
  absl::StatusOr<GpuArch> arch = GpuArchFor(target);
  return arch.ok() && arch->name == name;
}

WaveMmaShape ShapeFor(const Target& target, int64_t inst) {
  if (WmmaApplies(target)) {
    return WaveMmaShape::kWmma16x16;
  }
  return inst == 32 ? WaveMmaShape::kMfma32x32 : WaveMmaShape::kMfma16x16;
}

}  // namespace

bool MfmaApplies(const Target& target) {
  return IsArch(target, "gfx90a") || IsArch(target, "gfx942");
}

bool WmmaApplies(const Target& target) { return IsArch(target, "gfx1100"); }

int WaveMmaKFor(const Target& target, Dtype dtype, int64_t inst) {
  if (WmmaApplies(target)) {
    return inst == 16 && ir::WaveMmaTakes(WaveMmaShape::kWmma16x16, dtype, 16) ? 16 : 0;
  }
  if (!MfmaApplies(target) || (inst != 32 && inst != 16)) {
    return 0;
  }
  const WaveMmaShape shape = ShapeFor(target, inst);
  const int f16 = inst == 32 ? 8 : 16;
  // CDNA3 (gfx942) doubled the integer instructions' K and added the FNUZ 8-bit floats.
  const bool cdna3 = IsArch(target, "gfx942");
  int k = 0;
  switch (dtype) {
    case Dtype::kF16:
    case Dtype::kBf16:
      k = f16;
      break;
    case Dtype::kI8:
      k = cdna3 ? 2 * f16 : f16;
      break;
    case Dtype::kFp8E4m3Fnuz:
    case Dtype::kFp8E5m2Fnuz:
      k = cdna3 ? 2 * f16 : 0;
      break;
    default:
      k = 0;
  }
  return k > 0 && ir::WaveMmaTakes(shape, dtype, k) ? k : 0;
}

WaveMmaKnobs WaveMmaKnobsOf(const Config& c) {
  return {KnobValue(c, "bm"),      KnobValue(c, "bn"),      KnobValue(c, "bk"),
          KnobValue(c, "waves_m"), KnobValue(c, "waves_n"), KnobValue(c, "inst"),
          KnobValue(c, "stages"),  KnobValue(c, "copy"),    KnobValue(c, "raster"),
          KnobValue(c, "gridk")};
}

int64_t WaveMmaChunksPerThread(int64_t rows, int64_t cols, int64_t lanes, int64_t threads) {
  return GpuCeilDiv(rows * (cols / std::max<int64_t>(1, lanes)), threads);
}

namespace {

// The kernel, knob by knob; the comments of gemm_rocm_mfma.h describe its shape.
class WaveMmaKernel {
 public:
  WaveMmaKernel(const ImplicitGemm& g, const Target& target, const WaveMmaKnobs& k)
      : w_(g.workload),
        g_(g),
        k_(k),
        nt_(g.b_k_major),
        bytes_(InputBytes(w_)),
        shape_(ShapeFor(target, k.inst)),
        inst_k_(WaveMmaKFor(target, w_.dtype(), k.inst)),
        wave_(ir::WaveMmaLanes(shape_)),
        lay_(k.bm, k.bn, k.bk, bytes_, nt_),
        p_(w_),
        as_("As", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.input_type())),
        bs_("Bs", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.weight_type())),
        ra_("Ar", ir::MemoryScope::kGpuLocal, ir::Type::Of(w_.input_type())),
        rb_("Br", ir::MemoryScope::kGpuLocal, ir::Type::Of(w_.weight_type())),
        acc_("acc", ir::MemoryScope::kGpuLocal, ir::Type::Of(AccumulatorType(w_.dtype()))),
        split_(g, k.bm, k.bn, k.gridk, ir::Type::Of(AccumulatorType(w_.dtype()))) {
    TUNE_CHECK(inst_k_ > 0) << "gemm.rocm.mfma: no instruction of tile " << k.inst << " for "
                            << DtypeName(w_.dtype()) << " on " << target.ToString();
  }

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = p_.InOrder();
    func.body = Body();
    return func;
  }

 private:
  int64_t Threads() const { return wave_ * k_.waves_m * k_.waves_n; }
  int64_t TilesM() const { return GpuCeilDiv(g_.m, k_.bm); }
  int64_t TilesN() const { return GpuCeilDiv(g_.n, k_.bn); }
  int64_t Steps() const { return GpuCeilDiv(g_.k, k_.bk); }
  int64_t StepsPerSplit() const { return GpuCeilDiv(Steps(), k_.gridk); }
  int64_t Lanes() const { return std::max<int64_t>(1, k_.copy / bytes_); }
  int64_t AccsPerTile() const { return ir::WaveMmaAccumulators(shape_); }
  int64_t Accs() const { return k_.MTiles() * k_.NTiles() * AccsPerTile(); }

  // One operand tile of a step: [rows][cols] of the LDS buffer, its row stride and where each
  // chunk of it comes from.
  struct TileCopy {
    const ir::Buffer* lds;
    const ir::Buffer* regs;
    int64_t stage_elements, ld, rows, cols;
    bool is_a;
  };
  std::vector<TileCopy> Tiles() const {
    std::vector<TileCopy> tiles = {{&as_, &ra_, lay_.a_stage, lay_.lda, k_.bm, k_.bk, true}};
    if (nt_) {
      tiles.push_back({&bs_, &rb_, lay_.b_stage, lay_.ldb, k_.bn, k_.bk, false});
    } else {
      tiles.push_back({&bs_, &rb_, lay_.b_stage, lay_.ldb, k_.bk, k_.bn, false});
    }
    return tiles;
  }
  GlobalTileSource Source(const TileCopy& t, const Expr& step, const Expr& row,
                          const Expr& col) const {
    Expr k0 = (bz_ * StepsPerSplit() + step) * k_.bk;
    if (t.is_a) {
      return g_.A(p_, tile_m_ * k_.bm + row, k0 + col, Lanes());
    }
    if (nt_) {
      return g_.B(p_, tile_n_ * k_.bn + row, k0 + col, Lanes());
    }
    return g_.B(p_, k0 + row, tile_n_ * k_.bn + col, Lanes());
  }
  int64_t PerThread(const TileCopy& t) const {
    return WaveMmaChunksPerThread(t.rows, t.cols, Lanes(), Threads());
  }

  // For each chunk c of a thread in tile `t`: `body(chunk, row, col)`, guarded where the chunks
  // do not divide evenly; unrolled, so that the registers' indexes are constants.
  template <typename BodyFn>
  Stmt EachChunk(const TileCopy& t, const Var& c, BodyFn body) const {
    const int64_t per_row = t.cols / Lanes();
    const int64_t chunks = t.rows * per_row;
    Expr chunk = tx_ + c * Threads();
    Stmt s = body(chunk / per_row, chunk % per_row * Lanes());
    if (chunks % Threads() != 0) {
      s = IfThenElse::Make(chunk < chunks, s);
    }
    return For::Make(c, 0, PerThread(t), LoopKind::kUnrolled, s);
  }

  // Global -> registers: the chunks of step `step`, read whole from their clamped sources.
  Stmt ReadStep(const Expr& step) const {
    std::vector<Stmt> stmts;
    for (const TileCopy& t : Tiles()) {
      Var c(t.is_a ? "ca" : "cb");
      stmts.push_back(EachChunk(t, c, [&](const Expr& row, const Expr& col) {
        GlobalTileSource src = Source(t, step, row, col);
        return Store::Make(*t.regs, c * Lanes(),
                           ir::Load::Make(src.buffer, src.index, static_cast<int>(Lanes())));
      }));
    }
    return Block::Make(std::move(stmts));
  }

  // Registers -> LDS buffer `stage`: the chunks of step `step`, zeros where a chunk lies
  // outside its operand (past M, N or K, or in a convolution's padding).
  Stmt WriteStep(const Expr& step, const Expr& stage) const {
    std::vector<Stmt> stmts;
    const int lanes = static_cast<int>(Lanes());
    for (const TileCopy& t : Tiles()) {
      Var c(t.is_a ? "wa" : "wb");
      const ir::Type storage = t.lds->element_type();
      const int64_t bytes = lanes * storage.Bytes();
      // The zeros: the IR casts no value to an 8-bit float, so chunks of 4, 8 or 16 bytes are
      // zeroed by an asynchronous copy whose source is not valid (a plain store of zeros on
      // AMDGPU; nothing is read); narrower chunks (16-bit and integer types only: CheckShape)
      // store a cast zero.
      const bool zero_fill = bytes == 4 || bytes == 8 || bytes == 16;
      Expr zero = storage.ComputeType().is_float()
                      ? ir::FloatImm::Make(0.0)
                      : ir::IntImm::Make(0, storage.ComputeType().Element());
      if (!zero_fill) {
        zero = ir::Cast::Make(storage.WithLanes(lanes), ir::BroadcastTo(zero, lanes));
      }
      stmts.push_back(EachChunk(t, c, [&](const Expr& row, const Expr& col) {
        GlobalTileSource src = Source(t, step, row, col);
        Expr at = stage * t.stage_elements + row * t.ld + col;
        Stmt zeros = zero_fill
                         ? Store::MakeAsyncCopy(*t.lds, at, src.buffer, src.index, lanes, src.valid)
                         : Store::Make(*t.lds, at, zero);
        return IfThenElse::Make(
            src.valid, Store::Make(*t.lds, at, ir::Load::Make(*t.regs, c * Lanes(), lanes)), zeros);
      }));
    }
    return Block::Make(std::move(stmts));
  }

  Stmt Body() const {
    Stmt threads =
        split_.AllocateShared(For::Make(tx_, 0, Threads(), LoopKind::kGpuThread, ThreadBody(), 0));
    return split_.AllocateWorkspace(RasterizedGemmBlocks(
        TilesM(), TilesN(), k_.raster, k_.gridk, Steps(), v_,
        ir::Allocate::Make(as_, k_.stages * lay_.a_stage,
                           ir::Allocate::Make(bs_, k_.stages * lay_.b_stage, threads))));
  }

  Stmt ThreadBody() const {
    Expr wave = tx_ / wave_;
    std::vector<Stmt> stmts;
    Var i("i");
    stmts.push_back(For::Make(i, 0, Accs(), LoopKind::kUnrolled,
                              Store::Make(acc_, i, ir::Cast::Make(acc_.element_type(), Expr(0)))));
    Var t("t");
    if (k_.stages == 2) {
      // Step 0 into buffer 0; then per step t: read step t + 1 into registers, multiply buffer
      // t % 2, store the registers into buffer (t + 1) % 2, which step t - 1 read before the
      // barrier that ended it.
      stmts.push_back(IfThenElse::Make(
          Expr(0) < step_count_, Block::Make({ReadStep(Expr(0)), WriteStep(Expr(0), Expr(0))})));
      stmts.push_back(ir::Barrier::Make());
      Expr next = t + 1;
      stmts.push_back(For::Make(t, 0, step_count_, LoopKind::kSerial,
                                Block::Make({
                                    IfThenElse::Make(next < step_count_, ReadStep(next)),
                                    Multiply(t % 2, wave),
                                    IfThenElse::Make(next < step_count_, WriteStep(next, next % 2)),
                                    ir::Barrier::Make(),
                                })));
    } else {
      stmts.push_back(For::Make(t, 0, step_count_, LoopKind::kSerial,
                                Block::Make({
                                    ReadStep(t),
                                    ir::Barrier::Make(),
                                    WriteStep(t, Expr(0)),
                                    ir::Barrier::Make(),
                                    Multiply(Expr(0), wave),
                                })));
    }
    stmts.push_back(StoreAccumulators(wave));
    if (split_.Active()) {  // once every thread has parked, the tile's last block stores C
      stmts.push_back(split_.Finish(v_.bx, tile_m_, tile_n_, tx_, Threads(), Epilogue()));
    }
    const int64_t regs_a = PerThread(Tiles()[0]) * Lanes();
    const int64_t regs_b = PerThread(Tiles()[1]) * Lanes();
    return ir::Allocate::Make(
        acc_, Accs(),
        ir::Allocate::Make(
            ra_, regs_a,
            ir::Allocate::Make(rb_, regs_b,
                               LetStmt::Make(lane_, tx_ % wave_, Block::Make(stmts)))));
  }

  // The wavefront's tiles of LDS buffer `stage`, one WaveMma per instruction K.
  Stmt Multiply(const Expr& stage, const Expr& wave) const {
    Expr wave_m = wave / k_.waves_n;
    Expr wave_n = wave % k_.waves_n;
    std::vector<Stmt> stmts;
    for (int64_t kk = 0; kk < k_.bk; kk += inst_k_) {
      Expr a_index = stage * lay_.a_stage + wave_m * (k_.WaveM() * lay_.lda) + kk;
      Expr b_index = nt_ ? stage * lay_.b_stage + wave_n * (k_.WaveN() * lay_.ldb) + kk
                         : stage * lay_.b_stage + kk * lay_.ldb + wave_n * k_.WaveN();
      stmts.push_back(ir::WaveMma::Make(
          w_.dtype(), shape_, inst_k_, as_, a_index, lay_.lda, bs_, b_index, lay_.ldb, nt_, acc_, 0,
          static_cast<int>(k_.MTiles()), static_cast<int>(k_.NTiles())));
    }
    return Block::Make(std::move(stmts));
  }

  MmaEpilogue Epilogue() const {
    return MmaEpilogue(w_, g_.n, p_.c, p_.bias, p_.scale_a, p_.scale_b);
  }

  // Each accumulator at the row and column the instruction's layout gives it, with the epilogue
  // (or, for a split reduction, into the block's partial tile).
  Stmt StoreAccumulators(const Expr& wave) const {
    Expr row0 = tile_m_ * k_.bm + wave / k_.waves_n * k_.WaveM();
    Expr col0 =
        tile_n_ * k_.bn + wave % k_.waves_n * k_.WaveN() + ir::WaveMmaAccCol<Expr>(shape_, lane_);
    const MmaEpilogue epilogue = Epilogue();
    const int64_t tile = ir::WaveMmaTile(shape_);
    std::vector<Stmt> stmts;
    for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
      for (int64_t ni = 0; ni < k_.NTiles(); ++ni) {
        for (int r = 0; r < AccsPerTile(); ++r) {
          const int64_t slot = AccsPerTile() * (mi * k_.NTiles() + ni) + r;
          Expr m = row0 + tile * mi + ir::WaveMmaAccRow<Expr>(shape_, lane_, r);
          Expr n = col0 + tile * ni;
          Expr value = ir::Load::Make(acc_, Expr(slot));
          if (split_.Active()) {  // every place of the tile is parked: it lies in the workspace
            stmts.push_back(split_.Park(v_.bx, bz_, m - tile_m_ * k_.bm, n - tile_n_ * k_.bn,
                                        std::move(value), 1));
            continue;
          }
          stmts.push_back(
              IfThenElse::Make(m < g_.m && n < g_.n, epilogue.Store(m, n, std::move(value), 1)));
        }
      }
    }
    return Block::Make(std::move(stmts));
  }

  const Workload& w_;
  const ImplicitGemm& g_;
  WaveMmaKnobs k_;
  bool nt_;
  int64_t bytes_;
  WaveMmaShape shape_;
  int inst_k_;
  int64_t wave_;
  PaddedTileLayout lay_;  // the LDS tiles
  GemmParams p_;
  ir::Buffer as_, bs_, ra_, rb_, acc_;
  SplitReduction split_;
  Var tx_{"tx"}, lane_{"lane"};
  GemmBlockVars v_;
  const Var &bz_ = v_.split, &tile_m_ = v_.tile_m, &tile_n_ = v_.tile_n, &step_count_ = v_.steps;
};

}  // namespace

ir::LoweredFunc BuildWaveMmaKernel(const ImplicitGemm& g, const Target& target,
                                   const WaveMmaKnobs& k, std::string_view func_name) {
  return WaveMmaKernel(g, target, k).Build(func_name);
}

}  // namespace tune
