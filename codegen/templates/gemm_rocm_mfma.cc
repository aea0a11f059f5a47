#include "codegen/templates/gemm_rocm_mfma.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/split_reduction.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "common/status.h"
#include "common/strings.h"

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

struct WaveKnobs {
  int64_t bm, bn, bk, waves_m, waves_n, inst, stages, copy, raster, gridk;

  int64_t WaveM() const { return bm / waves_m; }
  int64_t WaveN() const { return bn / waves_n; }
  int64_t MTiles() const { return WaveM() / inst; }
  int64_t NTiles() const { return WaveN() / inst; }
  bool Tiled() const { return bm % (inst * waves_m) == 0 && bn % (inst * waves_n) == 0; }
};

WaveKnobs KnobsOf(const Config& c) {
  return {KnobValue(c, "bm"),      KnobValue(c, "bn"),      KnobValue(c, "bk"),
          KnobValue(c, "waves_m"), KnobValue(c, "waves_n"), KnobValue(c, "inst"),
          KnobValue(c, "stages"),  KnobValue(c, "copy"),    KnobValue(c, "raster"),
          KnobValue(c, "gridk")};
}

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

// The LDS tiles, in elements: rows padded by 16 bytes, which keeps every lane's run of K
// aligned to its own size (8 or 16 bytes; the vector reads of codegen_gpu_wave_mma.cc).
struct LdsLayout {
  int64_t lda = 0, ldb = 0;          // row strides of A [bm][lda] and B ([bn][ldb] or [bk][ldb])
  int64_t a_stage = 0, b_stage = 0;  // elements per buffer

  LdsLayout(const WaveKnobs& k, int64_t bytes, bool nt) {
    const int64_t pad = 16 / bytes;
    lda = k.bk + pad;
    a_stage = k.bm * lda;
    ldb = nt ? k.bk + pad : k.bn + pad;
    b_stage = nt ? k.bn * ldb : k.bk * ldb;
  }
  int64_t Bytes(const WaveKnobs& k, int64_t bytes) const {
    return k.stages * ((a_stage * bytes + 15) / 16 * 16 + (b_stage * bytes + 15) / 16 * 16);
  }
};

// Chunks of `lanes` elements each thread copies of a [rows][cols] tile.
int64_t ChunksPerThread(int64_t rows, int64_t cols, int64_t lanes, int64_t threads) {
  return GpuCeilDiv(rows * (cols / std::max<int64_t>(1, lanes)), threads);
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

ConfigSpace WaveMmaSpace(const ImplicitGemm& g, const Target& target) {
  const Workload& workload = g.workload;
  const GpuArch arch = GpuArchOrDefault(target);
  const int64_t bytes = InputBytes(workload);
  const bool wmma = WmmaApplies(target);
  const int64_t lanes_per_wave = wmma ? 32 : 64;
  ConfigSpace space;
  space.AddKnob("bm", AtMost({16, 32, 64, 128, 256}, std::max<int64_t>(16, NextPow2(g.m)), 16),
                "rows of C per block");
  space.AddKnob("bn", AtMost({16, 32, 64, 128, 256}, std::max<int64_t>(16, NextPow2(g.n)), 16),
                "columns of C per block");
  // 64 or 128 bytes of K per row and step: a multiple of every instruction's K.
  const int64_t bk_small = 64 / bytes;
  space.AddKnob("bk", AtMost({bk_small, 2 * bk_small}, std::max(bk_small, NextPow2(g.k)), bk_small),
                "reduction step staged in LDS (64 or 128 bytes of K per row)");
  space.AddKnob("waves_m", {1, 2, 4}, "wavefronts along M (each takes bm / waves_m rows)");
  space.AddKnob("waves_n", {1, 2, 4}, "wavefronts along N (each takes bn / waves_n columns)");
  std::vector<int64_t> insts;
  for (int64_t inst : {32, 16}) {
    if (WaveMmaKFor(target, workload.dtype(), inst) > 0) {
      insts.push_back(inst);
    }
  }
  if (insts.empty()) {
    insts.push_back(16);  // a target without the instruction: the template does not apply
  }
  space.AddKnob("inst", insts,
                wmma ? "instruction tile (WMMA: 16x16)"
                     : "instruction tile: 32 (v_mfma 32x32, 16 accumulators per lane and tile) or "
                       "16 (v_mfma 16x16, 4 per lane; finer edges)");
  space.AddKnob("stages", {2, 1},
                "LDS buffers: 2 reads the next step into registers while the current one "
                "multiplies (one barrier per step); 1 reads, stores and multiplies in turn");
  space.AddKnob("copy", g.CopyWidths(),
                "bytes per global read of a thread (16, 8 or 4 dividing both operands' rows; "
                "smaller: element by element)");
  space.AddKnob("raster", {1, 4, 8, 16},
                "block rows per raster group (blocks of a group share B's tiles in L2)");
  space.AddKnob("gridk", GridSplits(GpuCeilDiv(g.k, space.FindKnob("bk")->values.front())),
                "blocks that share each tile's reduction (grid z; each parks its partial tile in "
                "a workspace, and the tile's last block adds them and runs the epilogue)");
  AddSplitWorkspaceConstraint(space, g);
  space.AddConstraint(
      "bm % (inst * waves_m) == 0 (whole instruction tiles per wavefront)", [](const Config& c) {
        return KnobValue(c, "bm") % (KnobValue(c, "inst") * KnobValue(c, "waves_m")) == 0;
      });
  space.AddConstraint(
      "bn % (inst * waves_n) == 0 (whole instruction tiles per wavefront)", [](const Config& c) {
        return KnobValue(c, "bn") % (KnobValue(c, "inst") * KnobValue(c, "waves_n")) == 0;
      });
  const int64_t per_tile = wmma ? 8 : 0;
  auto accumulators = [per_tile](const WaveKnobs& k) {
    const int64_t tile = per_tile > 0 ? per_tile : (k.inst == 32 ? 16 : 4);
    return k.MTiles() * k.NTiles() * tile;
  };
  space.AddConstraint("accumulators per lane <= 128 (wave tile / inst tiles x 16, 4 or 8)",
                      [accumulators](const Config& c) {
                        const WaveKnobs k = KnobsOf(c);
                        return !k.Tiled() || accumulators(k) <= 128;
                      });
  const int64_t kdim = g.k;
  space.AddConstraint("every one of the gridk blocks gets at least one bk step of K",
                      [kdim](const Config& c) {
                        return GridSplitFits(kdim, KnobValue(c, "bk"), KnobValue(c, "gridk"));
                      });
  const bool nt = g.b_k_major;
  // Registers: the accumulators, the operand runs of a whole step (the backend's scheduler
  // issues every LDS read of the unrolled step before its matrix instructions), the staged
  // global reads with their 64-bit addresses, and the rest. On gfx1100 the accumulators share the
  // 256 VGPRs with everything else; CDNA keeps them in AGPRs, beside 256 VGPRs.
  const int k32 = WaveMmaKFor(target, workload.dtype(), 32);
  const int k16 = WaveMmaKFor(target, workload.dtype(), 16);
  auto cost = [bytes, nt, lanes_per_wave, accumulators, wmma, k32, k16](const Config& c) {
    const WaveKnobs k = KnobsOf(c);
    GpuBlockCost cost;
    cost.threads = lanes_per_wave * k.waves_m * k.waves_n;
    cost.shared_bytes = LdsLayout(k, bytes, nt).Bytes(k, bytes);
    const int inst_k = k.inst == 32 ? k32 : k16;
    if (k.Tiled() && inst_k > 0) {
      const int64_t lanes = std::max<int64_t>(1, k.copy / bytes);
      const int64_t staged = ChunksPerThread(k.bm, k.bk, lanes, cost.threads) +
                             (nt ? ChunksPerThread(k.bn, k.bk, lanes, cost.threads)
                                 : ChunksPerThread(k.bk, k.bn, lanes, cost.threads));
      const int64_t staged_registers = staged * std::max<int64_t>(1, k.copy / 4);
      const int64_t run_registers =
          std::max<int64_t>(1, ir::WaveMmaKPerLane(k.inst == 32 ? ir::WaveMmaShape::kMfma32x32
                                                   : wmma       ? ir::WaveMmaShape::kWmma16x16
                                                                : ir::WaveMmaShape::kMfma16x16,
                                                   inst_k) *
                                   bytes / 4);
      const int64_t operands = (k.MTiles() + k.NTiles()) * run_registers * (k.bk / inst_k);
      cost.registers = accumulators(k) + operands + staged_registers + 2 * staged + 40;
    }
    return cost;
  };
  AddGpuLimitConstraints(space, arch, cost, {.one_block_per_multiprocessor = true});
  return space;
}

namespace {

// The tilings worth trying first: 256-thread blocks of 64 x 64 wave tiles of 32x32 instructions
// for large problems (64 accumulators per lane, the operands reused 2x2), narrow ones with the
// whole of M in a block row for skinny ones, where 16x16 instructions waste less of the tile.
std::vector<Config> Presets(const ImplicitGemm& g, const Target& target, const ConfigSpace& space) {
  const bool wmma = WmmaApplies(target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  const int64_t bk_small = space.FindKnob("bk")->values.front();
  auto make = [&](int64_t bm, int64_t bn, int64_t bk_mult, int64_t wm, int64_t wn, int64_t inst) {
    Config c;
    c["inst"] = snap("inst", inst);
    c["bm"] = snap("bm", bm);
    c["bn"] = snap("bn", bn);
    c["bk"] = snap("bk", bk_mult * bk_small);
    c["waves_m"] = std::min(wm, std::max<int64_t>(1, c["bm"] / c["inst"]));
    c["waves_n"] = std::min(wn, std::max<int64_t>(1, c["bn"] / c["inst"]));
    c["stages"] = 2;
    c["copy"] = space.FindKnob("copy")->values.front();
    c["raster"] = 8;
    c["gridk"] = 1;
    return c;
  };
  const int64_t big = wmma ? 16 : 32;
  std::vector<Config> presets;
  if (g.m <= 64) {
    const int64_t bm = std::max<int64_t>(16, NextPow2(g.m));
    const int64_t inst = bm <= 16 ? 16 : big;
    for (int64_t bn : {64, 128, 32}) {
      presets.push_back(make(bm, bn, 2, 1, 4, inst));
    }
    presets.push_back(make(bm, 64, 1, 1, 2, 16));
  }
  presets.push_back(make(128, 128, 1, 2, 2, big));
  presets.push_back(make(128, 128, 2, 2, 2, big));
  presets.push_back(make(256, 128, 1, 4, 2, big));
  presets.push_back(make(128, 256, 1, 2, 4, big));
  presets.push_back(make(128, 64, 2, 2, 2, big));
  presets.push_back(make(64, 128, 2, 2, 2, big));
  presets.push_back(make(64, 64, 2, 2, 2, big));
  presets.push_back(make(64, 64, 2, 2, 2, 16));
  presets.push_back(make(32, 32, 2, 1, 1, 16));
  return presets;
}

// Compute units the default's grid aims to fill: MI250X's GCD has 110, MI300X 304, the 7900 XTX
// 96 (48 WGPs of two).
int64_t WantBlocks(const Target& target) {
  if (IsArch(target, "gfx942")) {
    return 304;
  }
  return WmmaApplies(target) ? 96 : 110;
}

}  // namespace

Config WaveMmaDefault(const ImplicitGemm& g, const Target& target, std::string_view template_name) {
  const ConfigSpace space = WaveMmaSpace(g, target);
  return MatmulDefault(space, Presets(g, target, space), {g.m, g.n, g.k}, WantBlocks(target),
                       StrCat(template_name, " for ", g.workload.ToString()));
}

std::vector<Config> WaveMmaSeeds(const ImplicitGemm& g, const Target& target) {
  const ConfigSpace space = WaveMmaSpace(g, target);
  std::vector<Config> variants;
  for (const Config& preset : Presets(g, target, space)) {
    variants.push_back(preset);
    Config plain = preset;
    plain["raster"] = 1;
    variants.push_back(std::move(plain));
    Config single = preset;
    single["stages"] = 1;
    variants.push_back(std::move(single));
  }
  return MatmulSeeds(space, variants, {g.m, g.n, g.k});
}

namespace {

// The kernel, knob by knob; the comments of gemm_rocm_mfma.h describe its shape.
class WaveMmaKernel {
 public:
  WaveMmaKernel(const ImplicitGemm& g, const Target& target, const WaveKnobs& k)
      : w_(g.workload),
        g_(g),
        k_(k),
        nt_(g.b_k_major),
        bytes_(InputBytes(w_)),
        shape_(ShapeFor(target, k.inst)),
        inst_k_(WaveMmaKFor(target, w_.dtype(), k.inst)),
        wave_(ir::WaveMmaLanes(shape_)),
        lay_(k, bytes_, nt_),
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
    return ChunksPerThread(t.rows, t.cols, Lanes(), Threads());
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
  WaveKnobs k_;
  bool nt_;
  int64_t bytes_;
  WaveMmaShape shape_;
  int inst_k_;
  int64_t wave_;
  LdsLayout lay_;
  GemmParams p_;
  ir::Buffer as_, bs_, ra_, rb_, acc_;
  SplitReduction split_;
  Var tx_{"tx"}, lane_{"lane"};
  GemmBlockVars v_;
  const Var &bz_ = v_.split, &tile_m_ = v_.tile_m, &tile_n_ = v_.tile_n, &step_count_ = v_.steps;
};

}  // namespace

ir::LoweredFunc BuildWaveMmaKernel(const ImplicitGemm& g, const Target& target,
                                   const Config& config, std::string_view func_name) {
  return WaveMmaKernel(g, target, KnobsOf(config)).Build(func_name);
}

std::vector<std::string> WaveMmaShapeFaults(const ImplicitGemm& g) {
  const Workload& w = g.workload;
  std::vector<std::string> wrong;
  if (IsFp8Dtype(w.dtype()) && g.CopyWidths().front() < 4) {
    wrong.push_back(w.op() == OpKind::kGemm
                        ? (g.b_k_major
                               ? StrCat("K=", g.k, " with 8-bit float elements")
                               : StrCat("K=", g.k, " or N=", g.n, " with 8-bit float elements"))
                        : StrCat("C=", g.ContiguousK(), " with 8-bit float elements"));
  }
  return wrong;
}

namespace {

template <const KernelTemplate& kTpl>
absl::Status CheckShape(const Workload& workload) {
  return RefuseShapeUnless(kTpl.name, "GEMMs whose rows its global reads can zero-fill",
                           "rows of the 8-bit floats (K, and N for layout=NN) a multiple of 4 "
                           "elements; any shape for the other dtypes",
                           workload, WaveMmaShapeFaults(ImplicitGemm(workload)));
}

absl::Status CheckTarget(const KernelTemplate& tpl, const Target& target) {
  const bool ok = &tpl == &kGemmRocmWmma ? WmmaApplies(target) : MfmaApplies(target);
  if (ok) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(StrCat(tpl.name, " builds for ",
                                           &tpl == &kGemmRocmWmma
                                               ? "rocm -mcpu=gfx1100 (RDNA3's WMMA)"
                                               : "rocm -mcpu=gfx90a|gfx942 (CDNA's MFMA)",
                                           ", not for target '", target.ToString(), "'"));
}

template <const KernelTemplate& kTpl>
absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kTpl, workload, target, config));
  RETURN_IF_ERROR(CheckTarget(kTpl, target));
  RETURN_IF_ERROR(CheckShape<kTpl>(workload));
  if (WaveMmaKFor(target, workload.dtype(), KnobValue(config, "inst")) == 0) {
    return absl::InvalidArgumentError(
        StrCat(kTpl.name, ": ", target.ToString(), " has no matrix instruction of tile ",
               KnobValue(config, "inst"), " for dtype=", DtypeName(workload.dtype())));
  }
  return BuildWaveMmaKernel(ImplicitGemm(workload), target, config, func_name);
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  return WaveMmaSpace(ImplicitGemm(workload), target);
}

std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  return WaveMmaSeeds(ImplicitGemm(workload), target);
}

}  // namespace

// CDNA's integer MFMA is s8 x s8 only and its 8-bit floats are the FNUZ ones (gfx942; the
// refusal matrix of codegen/dtype_support.h keeps fp8 off gfx90a); RDNA3's WMMA takes u8 x s8 too.
const KernelTemplate kGemmRocmMfma = {
    .name = "gemm.rocm.mfma",
    .version = 2,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kRocm,
    .space = &Space,
    .default_config =
        [](const Workload& w, const Target& t) {
          return WaveMmaDefault(ImplicitGemm(w), t, "gemm.rocm.mfma");
        },
    .build = &Build<kGemmRocmMfma>,
    .applies = [](const Workload&, const Target& t) { return MfmaApplies(t); },
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes =
        DtypeSet{Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kFp8E4m3Fnuz, Dtype::kFp8E5m2Fnuz},
    .seeds = &Seeds,
    .check_shape = &CheckShape<kGemmRocmMfma>,
    .tolerance = &TensorCoreTolerance,
};

const KernelTemplate kGemmRocmWmma = {
    .name = "gemm.rocm.wmma",
    .version = 2,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kRocm,
    .space = &Space,
    .default_config =
        [](const Workload& w, const Target& t) {
          return WaveMmaDefault(ImplicitGemm(w), t, "gemm.rocm.wmma");
        },
    .build = &Build<kGemmRocmWmma>,
    .applies = [](const Workload&, const Target& t) { return WmmaApplies(t); },
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = DtypeSet{Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kU8I8},
    .seeds = &Seeds,
    .check_shape = &CheckShape<kGemmRocmWmma>,
    .tolerance = &TensorCoreTolerance,
};

}  // namespace tune
