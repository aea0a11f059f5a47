#include "codegen/templates/gemm_cuda_mma.h"

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

struct MmaKnobs {
  int64_t bm, bn, bk, warps_m, warps_n, stages, copy, raster, gridk;

  int64_t Threads() const { return 32 * warps_m * warps_n; }
  int64_t WarpM() const { return bm / warps_m; }
  int64_t WarpN() const { return bn / warps_n; }
  int64_t MTiles() const { return WarpM() / 16; }
  int64_t NTiles() const { return WarpN() / 8; }
};

MmaKnobs KnobsOf(const Config& c) {
  return {KnobValue(c, "bm"),      KnobValue(c, "bn"),      KnobValue(c, "bk"),
          KnobValue(c, "warps_m"), KnobValue(c, "warps_n"), KnobValue(c, "stages"),
          KnobValue(c, "copy"),    KnobValue(c, "raster"),  KnobValue(c, "gridk")};
}

// Bytes of one input element (A and B share their storage type for the dtypes taken here).
int64_t InputBytes(const Workload& w) { return ElementBytes(w.input_type()); }

}  // namespace

std::vector<std::string> MmaShapeFaults(const ImplicitGemm& g) {
  const Workload& w = g.workload;
  std::vector<std::string> wrong;
  if (!g.b_k_major && InputBytes(w) != 2) {
    wrong.push_back(StrCat("dtype=", DtypeName(w.dtype()), " with layout=NN"));
  }
  if (InputBytes(w) == 1 && g.ContiguousK() % 4 != 0) {
    wrong.push_back(w.op() == OpKind::kGemm
                        ? StrCat("K=", g.k, " with 8-bit elements")
                        : StrCat("C=", g.ContiguousK(), " with 8-bit elements"));
  }
  return wrong;
}

ConfigSpace MmaSpace(const ImplicitGemm& g, const Target& target) {
  const Workload& workload = g.workload;
  const GpuArch arch = GpuArchOrDefault(target);
  const int64_t bytes = InputBytes(workload);
  const int64_t k_step = ir::WarpMmaK(workload.dtype());
  ConfigSpace space;
  space.AddKnob("bm", AtMost({16, 32, 64, 128, 256}, std::max<int64_t>(16, NextPow2(g.m)), 16),
                "rows of C per block");
  space.AddKnob("bn", AtMost({16, 32, 64, 128, 256}, std::max<int64_t>(16, NextPow2(g.n)), 16),
                "columns of C per block");
  space.AddKnob("bk",
                AtMost({2 * k_step, 4 * k_step}, std::max(2 * k_step, NextPow2(g.k)), 2 * k_step),
                "reduction step staged in shared memory (64 or 128 bytes of K per row)");
  space.AddKnob("warps_m", {1, 2, 4}, "warps along M (each takes bm / warps_m rows)");
  space.AddKnob("warps_n", {1, 2, 4, 8}, "warps along N (each takes bn / warps_n columns)");
  space.AddKnob("stages", {2, 3, 4, 5},
                "shared-memory buffers in the pipeline (copies issued stages - 1 steps ahead)");
  space.AddKnob("copy", g.CopyWidths(),
                "bytes per global-to-shared copy (cp.async of 16, 8 or 4 bytes; smaller: element "
                "by element through registers)");
  space.AddKnob("raster", {1, 4, 8, 16},
                "block rows per raster group (blocks of a group share B's tiles in L2)");
  space.AddKnob("gridk", GridSplits(GpuCeilDiv(g.k, 2 * k_step)),
                "blocks that share each tile's reduction (grid z; each parks its partial tile in "
                "a workspace, and the tile's last block adds them and runs the epilogue)");
  AddSplitWorkspaceConstraint(space, g);
  space.AddConstraint("bm % (16 * warps_m) == 0 (m16 fragments per warp)", [](const Config& c) {
    return KnobValue(c, "bm") % (16 * KnobValue(c, "warps_m")) == 0;
  });
  space.AddConstraint("bn % (8 * warps_n) == 0 (n8 fragments per warp)", [](const Config& c) {
    return KnobValue(c, "bn") % (8 * KnobValue(c, "warps_n")) == 0;
  });
  space.AddConstraint(
      "(bm / warps_m / 16) * (bn / warps_n / 8) * 4 <= 128 (accumulators per thread)",
      [](const Config& c) {
        const MmaKnobs k = KnobsOf(c);
        return k.bm % (16 * k.warps_m) != 0 || k.bn % (8 * k.warps_n) != 0 ||
               k.MTiles() * k.NTiles() * 4 <= 128;
      });
  const int64_t kdim = g.k;
  space.AddConstraint("every one of the gridk blocks gets at least one bk step of K",
                      [kdim](const Config& c) {
                        return GridSplitFits(kdim, KnobValue(c, "bk"), KnobValue(c, "gridk"));
                      });
  const bool nt = g.b_k_major;
  // Registers: the accumulators, one k-step's fragments, addresses and the copy loop's state.
  // The fp8 instruction is inline PTX, around which ptxas keeps more registers live: a 64 x 64
  // warp tile spills (tests/codegen/templates/gemm_cuda_mma_test.cc), so fp8 counts 64 more.
  const int64_t extra_registers = IsFp8Dtype(workload.dtype()) ? 64 : 0;
  auto cost = [bytes, nt, extra_registers](const Config& c) {
    const MmaKnobs k = KnobsOf(c);
    GpuBlockCost cost;
    cost.threads = k.Threads();
    cost.shared_bytes = PaddedTileLayout(k.bm, k.bn, k.bk, bytes, nt).Bytes(k.stages, bytes);
    if (k.bm % (16 * k.warps_m) == 0 && k.bn % (8 * k.warps_n) == 0) {
      cost.registers =
          k.MTiles() * k.NTiles() * 4 + k.MTiles() * 4 + k.NTiles() * 2 + 48 + extra_registers;
    }
    return cost;
  };
  AddGpuLimitConstraints(space, arch, cost,
                         {.dynamic_shared = true, .one_block_per_multiprocessor = true});
  return space;
}

// The tilings worth trying first for a shape: large tiles of 8 or 4 warps for large problems,
// narrow ones with the whole of M in a block row for skinny ones.
namespace {

std::vector<Config> Presets(const ImplicitGemm& g, const ConfigSpace& space) {
  const int64_t k_step = ir::WarpMmaK(g.workload.dtype());
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  auto make = [&](int64_t bm, int64_t bn, int64_t bk_steps, int64_t wm, int64_t wn,
                  int64_t stages) {
    Config c;
    c["bm"] = snap("bm", bm);
    c["bn"] = snap("bn", bn);
    c["bk"] = snap("bk", bk_steps * k_step);
    c["warps_m"] = std::min(wm, std::max<int64_t>(1, c["bm"] / 16));
    c["warps_n"] = std::min(wn, std::max<int64_t>(1, c["bn"] / 8));
    c["stages"] = stages;
    c["copy"] = space.FindKnob("copy")->values.front();
    c["raster"] = 8;
    c["gridk"] = 1;
    return c;
  };
  std::vector<Config> presets;
  if (g.m <= 64) {
    // Skinny: B streams from memory once, so what matters is many blocks and, within each,
    // enough warps to keep the tensor cores' latency covered (measured on the H200: 2 warps of
    // 64 x 16 tiles ran 64 x 4096 x 4096 at a third of cuBLASLt): up to 8 warps of m16 x n8..n16.
    const int64_t bm = std::max<int64_t>(16, NextPow2(g.m));
    const int64_t wm = std::min<int64_t>(4, bm / 16);
    for (int64_t bn : {32, 64, 16, 128}) {
      presets.push_back(make(bm, bn, 4, wm, std::min<int64_t>(bn / 8, 8 / wm), 4));
    }
    presets.push_back(make(bm, 64, 2, wm, std::min<int64_t>(8, 8 / wm), 5));
  }
  presets.push_back(make(128, 256, 2, 2, 4, 3));
  presets.push_back(make(256, 128, 2, 4, 2, 3));
  presets.push_back(make(128, 128, 2, 2, 2, 4));
  presets.push_back(make(128, 128, 4, 2, 2, 3));
  presets.push_back(make(128, 64, 2, 2, 2, 4));
  presets.push_back(make(64, 128, 2, 2, 2, 4));
  presets.push_back(make(64, 64, 4, 2, 2, 4));
  return presets;
}

}  // namespace

Config MmaDefault(const ImplicitGemm& g, const Target& target, std::string_view template_name) {
  const ConfigSpace space = MmaSpace(g, target);
  return MatmulDefault(space, Presets(g, space), {g.m, g.n, g.k}, 132,
                       StrCat(template_name, " for ", g.workload.ToString()));
}

std::vector<Config> MmaSeeds(const ImplicitGemm& g, const Target& target) {
  const ConfigSpace space = MmaSpace(g, target);
  std::vector<Config> variants;
  for (const Config& preset : Presets(g, space)) {
    variants.push_back(preset);
    Config plain = preset;
    plain["raster"] = 1;
    variants.push_back(std::move(plain));
  }
  // Splits of the reduction for tiles too few to fill the GPU once.
  return MatmulSeeds(space, variants, {g.m, g.n, g.k}, kGpuMultiprocessorsGuess);
}

namespace {

// The kernel, knob by knob; the comments of gemm_cuda_mma.h describe its shape.
class MmaKernel {
 public:
  MmaKernel(const ImplicitGemm& g, const MmaKnobs& k)
      : w_(g.workload),
        g_(g),
        k_(k),
        nt_(g.b_k_major),
        bytes_(InputBytes(w_)),
        k_step_(ir::WarpMmaK(w_.dtype())),
        lay_(k.bm, k.bn, k.bk, bytes_, nt_),
        p_(w_),
        as_("As", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.input_type())),
        bs_("Bs", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.weight_type())),
        acc_("acc", ir::MemoryScope::kGpuLocal, ir::Type::Of(AccumulatorType(w_.dtype()))),
        split_(g, k.bm, k.bn, k.gridk, ir::Type::Of(AccumulatorType(w_.dtype()))) {}

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = p_.InOrder();
    func.body = Body();
    return func;
  }

 private:
  int64_t TilesM() const { return GpuCeilDiv(g_.m, k_.bm); }
  int64_t TilesN() const { return GpuCeilDiv(g_.n, k_.bn); }
  int64_t Steps() const { return GpuCeilDiv(g_.k, k_.bk); }
  int64_t StepsPerSplit() const { return GpuCeilDiv(Steps(), k_.gridk); }

  Stmt Body() const {
    Stmt threads = split_.AllocateShared(
        For::Make(tx_, 0, k_.Threads(), LoopKind::kGpuThread, ThreadBody(), 0));
    return split_.AllocateWorkspace(RasterizedGemmBlocks(
        TilesM(), TilesN(), k_.raster, k_.gridk, Steps(), v_,
        ir::Allocate::Make(as_, k_.stages * lay_.a_stage,
                           ir::Allocate::Make(bs_, k_.stages * lay_.b_stage, threads))));
  }

  Stmt ThreadBody() const {
    Expr warp = tx_ / 32;
    std::vector<Stmt> stmts;
    // Zeroed accumulators.
    const int64_t accs = k_.MTiles() * k_.NTiles() * 4;
    Var i("i");
    stmts.push_back(For::Make(i, 0, accs, LoopKind::kUnrolled,
                              Store::Make(acc_, i, ir::Cast::Make(acc_.element_type(), Expr(0)))));
    // Prologue: steps 0 .. stages - 2, each its own group (the last is committed in the loop).
    for (int64_t s = 0; s + 1 < k_.stages; ++s) {
      stmts.push_back(IfThenElse::Make(Expr(s) < step_count_, CopyStep(Expr(s), Expr(s))));
      if (s + 2 < k_.stages) {
        stmts.push_back(ir::Barrier::MakeAfterAsyncCopies(true, -1));
      }
    }
    // The main loop: close the group of step t + stages - 2, wait for step t's, fill the
    // buffer that step t - 1 read, multiply step t.
    Var t("t");
    Expr ahead = t + (k_.stages - 1);
    Stmt step = Block::Make({
        ir::Barrier::MakeAfterAsyncCopies(true, static_cast<int>(k_.stages - 2)),
        IfThenElse::Make(ahead < step_count_, CopyStep(ahead, ahead % k_.stages)),
        Multiply(t % k_.stages, warp),
    });
    stmts.push_back(For::Make(t, 0, step_count_, LoopKind::kSerial, step));
    stmts.push_back(StoreFragments(warp));
    if (split_.Active()) {  // once every thread has parked, the tile's last block stores C
      stmts.push_back(split_.Finish(v_.bx, tile_m_, tile_n_, tx_, k_.Threads(), Epilogue()));
    }
    return ir::Allocate::Make(acc_, accs, LetStmt::Make(lane_, tx_ % 32, Block::Make(stmts)));
  }

  // The copies of reduction step `step` (of this block's range) into shared buffer `stage`.
  Stmt CopyStep(const Expr& step, const Expr& stage) const {
    Expr k0 = (bz_ * StepsPerSplit() + step) * k_.bk;
    std::vector<Stmt> stmts;
    // A [bm][bk] from A[M][K].
    stmts.push_back(CopyTile(as_, stage * lay_.a_stage, lay_.lda, k_.bm, k_.bk,
                             [&](const Expr& row, const Expr& col) {
                               return g_.A(p_, tile_m_ * k_.bm + row, k0 + col, Lanes());
                             }));
    if (nt_) {  // B [bn][bk] from B[N][K]
      stmts.push_back(CopyTile(bs_, stage * lay_.b_stage, lay_.ldb, k_.bn, k_.bk,
                               [&](const Expr& row, const Expr& col) {
                                 return g_.B(p_, tile_n_ * k_.bn + row, k0 + col, Lanes());
                               }));
    } else {  // B [bk][bn] from B[K][N]
      stmts.push_back(CopyTile(bs_, stage * lay_.b_stage, lay_.ldb, k_.bk, k_.bn,
                               [&](const Expr& row, const Expr& col) {
                                 return g_.B(p_, k0 + row, tile_n_ * k_.bn + col, Lanes());
                               }));
    }
    return Block::Make(std::move(stmts));
  }

  int64_t Lanes() const { return std::max<int64_t>(1, k_.copy / bytes_); }

  // Copies a [rows][cols] tile into `dst` at `base` (row stride `ld`), `copy` bytes at a time,
  // the chunks spread over the block's threads.
  template <typename SourceFn>
  Stmt CopyTile(const ir::Buffer& dst, const Expr& base, int64_t ld, int64_t rows, int64_t cols,
                SourceFn source) const {
    const int64_t lanes = Lanes();
    const int64_t per_row = cols / lanes;
    const int64_t chunks = rows * per_row;
    const int64_t threads = k_.Threads();
    Var c("c");
    Expr chunk = tx_ + c * threads;
    Expr row = chunk / per_row;
    Expr col = chunk % per_row * lanes;
    GlobalTileSource src = source(row, col);
    return SpreadOverThreads(c, chunk, chunks, threads,
                             CopyChunk(dst, base + row * ld + col, src, lanes, k_.copy >= 4),
                             k_.copy >= 4);
  }

  // The warp's fragments of shared buffer `stage`, one WarpMma per k-step of the instruction.
  Stmt Multiply(const Expr& stage, const Expr& warp) const {
    Expr warp_m = warp / k_.warps_n;
    Expr warp_n = warp % k_.warps_n;
    std::vector<Stmt> stmts;
    for (int64_t kk = 0; kk < k_.bk; kk += k_step_) {
      Expr a_index = stage * lay_.a_stage + warp_m * (k_.WarpM() * lay_.lda) + kk;
      Expr b_index = nt_ ? stage * lay_.b_stage + warp_n * (k_.WarpN() * lay_.ldb) + kk
                         : stage * lay_.b_stage + kk * lay_.ldb + warp_n * k_.WarpN();
      stmts.push_back(ir::WarpMma::Make(w_.dtype(), as_, a_index, lay_.lda, bs_, b_index, lay_.ldb,
                                        nt_, acc_, 0, static_cast<int>(k_.MTiles()),
                                        static_cast<int>(k_.NTiles())));
    }
    return Block::Make(std::move(stmts));
  }

  // Each lane's fragments, two adjacent columns at a time, with the epilogue.
  Stmt StoreFragments(const Expr& warp) const {
    Expr row0 = tile_m_ * k_.bm + warp / k_.warps_n * k_.WarpM() + lane_ / 4;
    Expr col0 = tile_n_ * k_.bn + warp % k_.warps_n * k_.WarpN() + lane_ % 4 * 2;
    const bool pairs = g_.n % 2 == 0;
    std::vector<Stmt> stmts;
    for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
      for (int64_t ni = 0; ni < k_.NTiles(); ++ni) {
        for (int64_t half = 0; half < 2; ++half) {
          const int64_t slot = 4 * (mi * k_.NTiles() + ni) + 2 * half;
          Expr m = row0 + (16 * mi + 8 * half);
          Expr n = col0 + 8 * ni;
          if (pairs) {
            Expr value = ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2));
            stmts.push_back(IfThenElse::Make(m < g_.m && n < g_.n, OutputStore(m, n, value, 2)));
            continue;
          }
          for (int64_t j = 0; j < 2; ++j) {
            Expr value = ir::Load::Make(acc_, Expr(slot + j));
            stmts.push_back(
                IfThenElse::Make(m < g_.m && n + j < g_.n, OutputStore(m, n + j, value, 1)));
          }
        }
      }
    }
    return Block::Make(std::move(stmts));
  }

  // C[m][n ...] through the epilogue, or (a split reduction) the block's partial tile.
  Stmt OutputStore(const Expr& m, const Expr& n, Expr value, int lanes) const {
    if (split_.Active()) {
      return split_.Park(v_.bx, bz_, m - tile_m_ * k_.bm, n - tile_n_ * k_.bn, std::move(value),
                         lanes);
    }
    return Epilogue().Store(m, n, std::move(value), lanes);
  }

  MmaEpilogue Epilogue() const {
    return MmaEpilogue(w_, g_.n, p_.c, p_.bias, p_.scale_a, p_.scale_b);
  }

  const Workload& w_;
  const ImplicitGemm& g_;
  MmaKnobs k_;
  bool nt_;
  int64_t bytes_, k_step_;
  PaddedTileLayout lay_;
  GemmParams p_;
  ir::Buffer as_, bs_, acc_;
  SplitReduction split_;
  Var tx_{"tx"}, lane_{"lane"};
  GemmBlockVars v_;
  const Var &bz_ = v_.split, &tile_m_ = v_.tile_m, &tile_n_ = v_.tile_n, &step_count_ = v_.steps;
};

}  // namespace

ir::LoweredFunc BuildMmaKernel(const ImplicitGemm& g, const Config& config,
                               std::string_view func_name) {
  return MmaKernel(g, KnobsOf(config)).Build(func_name);
}

namespace {

absl::Status CheckShape(const Workload& workload) {
  return RefuseShapeUnless(kGemmCudaMma.name, "GEMMs whose operands ldmatrix and cp.async read",
                           "layout=NN for f16 and bf16, layout=NT for every dtype; K a multiple "
                           "of 4 for 8-bit dtypes",
                           workload, MmaShapeFaults(ImplicitGemm(workload)));
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  return MmaSpace(ImplicitGemm(workload), target);
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  return MmaDefault(ImplicitGemm(workload), target, kGemmCudaMma.name);
}

std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  return MmaSeeds(ImplicitGemm(workload), target);
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCudaMma, workload, target, config));
  RETURN_IF_ERROR(CheckShape(workload));
  return BuildMmaKernel(ImplicitGemm(workload), config, func_name);
}

}  // namespace

const KernelTemplate kGemmCudaMma = {
    .name = "gemm.cuda.mma",
    .version = 3,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kCuda,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = DtypeSet{Dtype::kTf32, Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kU8I8,
                       Dtype::kFp8E4m3, Dtype::kFp8E5m2},
    .seeds = &Seeds,
    .check_shape = &CheckShape,
    .tolerance = &TensorCoreTolerance,
};

}  // namespace tune
