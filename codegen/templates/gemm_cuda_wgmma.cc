#include "codegen/templates/gemm_cuda_wgmma.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/split_reduction.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "codegen/templates/tma_pipeline.h"
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

constexpr char kArch[] = "sm_90a";
constexpr int64_t kRowBytes = 128;  // K bytes per staged row: one 128-byte swizzle atom
constexpr int kKSteps = 4;          // wgmma steps of 32 bytes of K per staged row

// fp8 wgmma sums its products with fewer bits than float32 keeps (as DeepGEMM measured on
// Hopper): over K = 4096 that puts outputs past the bound. Kernels of 8-bit floats therefore
// promote: each step's instructions add into a second set of accumulators, zeroed before them
// and added into the first after them (in float32), so that the tensor cores sum 128 values of K
// at a time.
bool Promotes(Dtype dtype) { return IsFp8Dtype(dtype); }

struct WgmmaKnobs {
  int64_t bm, bn, wg_m, wg_n, wg_k, stages, copy, raster, gridk, stage_c, tma;
  bool promote = false;
  int64_t out_bytes = 4;  // C's element size
  int64_t k_steps = 1;    // the product's steps of K (128 bytes each)

  // Stage buffers per K range: a block whose range has fewer steps than stages never fills the
  // others (step t uses buffer t % stages), so short reductions (a 1x1 convolution's K of 64)
  // keep their shared memory for more blocks per multiprocessor.
  int64_t Buffers() const {
    const int64_t per_range = ((k_steps + gridk - 1) / gridk + wg_k - 1) / wg_k;
    return std::max<int64_t>(1, std::min(stages, per_range));
  }

  int64_t SplitThreads() const { return 128 * wg_m * wg_n; }  // the warpgroups of one K range
  // A TMA pipeline's register split (setmaxnreg): the producer's warpgroup keeps
  // kProducerRegisters, the consumers share the rest of the multiprocessor's 64K.
  static constexpr int kProducerRegisters = 40;
  int ConsumerRegisters() const {
    const int64_t share = (65536 - 128 * kProducerRegisters) / SplitThreads() / 8 * 8;
    return static_cast<int>(std::min<int64_t>(256, share));
  }
  // The block: the K ranges' warpgroups, after the producer warpgroup of a TMA pipeline.
  int64_t Threads() const { return SplitThreads() * wg_k + 128 * tma; }
  int64_t GroupM() const { return bm / wg_m; }  // rows per warpgroup
  int64_t GroupN() const { return bn / wg_n; }  // the instruction's n
  int64_t MTiles() const { return GroupM() / 64; }
  int64_t Accumulators() const { return MTiles() * GroupN() / 2; }
  // Accumulator registers per thread: twice the accumulators where the sums are promoted.
  int64_t AccumulatorRegisters() const { return Accumulators() * (promote ? 2 : 1); }
  // Elements of C per row of the staged output tile: bn and 16 bytes, so that the rows a warp's
  // stores reach (8 apart) start 4 banks apart.
  int64_t StagedRow() const { return bn + 16 / out_bytes; }
  // The stage buffers of every K range, the partial sums of all but the first (4-byte elements),
  // and the staged output tile.
  int64_t SharedBytes() const {
    return wg_k * Buffers() * (bm + bn) * kRowBytes + (wg_k - 1) * bm * bn * 4 +
           stage_c * bm * StagedRow() * out_bytes + tma * 1024;  // the mbarriers' array
  }
};

// What the knobs' costs depend on beside the config (copied into the space's constraints).
struct WgmmaCostShape {
  Dtype dtype;
  int64_t out_bytes, k_steps;
  explicit WgmmaCostShape(const ImplicitGemm& g)
      : dtype(g.workload.dtype()),
        out_bytes(ElementBytes(g.workload.out_type())),
        k_steps((g.k * ElementBytes(g.workload.input_type()) + kRowBytes - 1) / kRowBytes) {}
};

WgmmaKnobs KnobsOf(const Config& c, const WgmmaCostShape& shape) {
  return {KnobValue(c, "bm"),      KnobValue(c, "bn"),     KnobValue(c, "wg_m"),
          KnobValue(c, "wg_n"),    KnobValue(c, "wg_k"),   KnobValue(c, "stages"),
          KnobValue(c, "copy"),    KnobValue(c, "raster"), KnobValue(c, "gridk"),
          KnobValue(c, "stage_c"), KnobValue(c, "tma"),    Promotes(shape.dtype),
          shape.out_bytes,         shape.k_steps};
}

// Whether C's rows are whole 16-byte chunks, as the staged output tile's copies write them.
bool SixteenByteRows(const ImplicitGemm& g) {
  return g.n * ElementBytes(g.workload.out_type()) % 16 == 0;
}

int64_t InputBytes(const Workload& w) { return ElementBytes(w.input_type()); }

}  // namespace

bool WgmmaApplies(const Target& target) { return target.cpu == kArch; }

std::vector<std::string> WgmmaShapeFaults(const ImplicitGemm& g) {
  std::vector<std::string> wrong;
  const Workload& w = g.workload;
  if (InputBytes(w) == 1 && g.ContiguousK() % 4 != 0) {
    wrong.push_back(w.op() == OpKind::kGemm
                        ? StrCat("K=", g.k, " with 8-bit elements")
                        : StrCat("C=", g.ContiguousK(), " with 8-bit elements"));
  }
  if (!g.b_k_major && InputBytes(w) != 2) {
    wrong.push_back(StrCat("dtype=", DtypeName(w.dtype()), " with layout=NN"));
  }
  return wrong;
}

ConfigSpace WgmmaSpace(const ImplicitGemm& g, const Target& target) {
  const Workload& workload = g.workload;
  const GpuArch arch = GpuArchOrDefault(target);
  const Dtype dtype = workload.dtype();
  const int64_t out_bytes = ElementBytes(workload.out_type());
  ConfigSpace space;
  space.AddKnob("bm", AtMost({64, 128, 192, 256}, std::max<int64_t>(64, NextPow2(g.m)), 64),
                "rows of C per block (m64 steps of the warpgroups)");
  space.AddKnob("bn", AtMost({32, 64, 128, 192, 256}, std::max<int64_t>(32, NextPow2(g.n)), 32),
                "columns of C per block");
  space.AddKnob("wg_m", {1, 2}, "warpgroups along M (each takes bm / wg_m rows)");
  space.AddKnob("wg_n", {1, 2}, "warpgroups along N (each one m64n<bn / wg_n> instruction)");
  space.AddKnob("wg_k", {1, 2, 4},
                "warpgroups along K: the block's steps of K split into wg_k ranges, each reduced "
                "by wg_m x wg_n warpgroups of its own and their sums added through shared memory "
                "(shorter chains of steps for skinny shapes, whose outputs are few)");
  space.AddKnob("stages", {3, 4, 5, 6},
                "shared-memory buffers of 128 bytes of K per row (copies issued stages - 2 "
                "steps ahead)");
  space.AddKnob("copy", g.CopyWidths(),
                "bytes per global-to-shared copy (cp.async of 16, 8 or 4 bytes; smaller: element "
                "by element through registers)");
  space.AddKnob("raster", {1, 4, 8, 16},
                "block rows per raster group (blocks of a group share B's tiles in L2)");
  space.AddKnob("gridk", GridSplits(WgmmaCostShape(g).k_steps),
                "blocks that share each tile's reduction (grid z; each parks its partial tile in "
                "a workspace, and the tile's last block adds them and runs the epilogue)");
  space.AddKnob("stage_c",
                SixteenByteRows(g) ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: the block's output tile is staged in shared memory and written in 16-byte "
                "rows (coalesced); 0: each thread stores its accumulator pairs");
  space.AddKnob("tma", g.TmaReadable() ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: a producer warpgroup's one thread streams the tiles with TMA copies through "
                "mbarriers while the other warpgroups multiply (warp specialisation); 0: every "
                "thread issues cp.async copies between block barriers");
  const int64_t first_copy = g.CopyWidths().front();
  space.AddConstraint("tma needs wg_k == 1 (and takes the first copy width: TMA ignores it)",
                      [first_copy](const Config& c) {
                        return KnobValue(c, "tma") == 0 ||
                               (KnobValue(c, "wg_k") == 1 && KnobValue(c, "copy") == first_copy);
                      });
  AddSplitWorkspaceConstraint(space, g);
  space.AddConstraint("stage_c needs wg_k == 1 and gridk == 1", [](const Config& c) {
    return KnobValue(c, "stage_c") == 0 ||
           (KnobValue(c, "wg_k") == 1 && KnobValue(c, "gridk") == 1);
  });
  space.AddConstraint("bm % (64 * wg_m) == 0 (m64 steps per warpgroup)", [](const Config& c) {
    return KnobValue(c, "bm") % (64 * KnobValue(c, "wg_m")) == 0;
  });
  space.AddConstraint(
      "bn / wg_n is a wgmma n (a multiple of 8 up to 256; of 16 above 32 for "
      "integers)",
      [dtype](const Config& c) {
        const int64_t n = KnobValue(c, "bn") / KnobValue(c, "wg_n");
        return KnobValue(c, "bn") % KnobValue(c, "wg_n") == 0 &&
               ir::WarpGroupMmaTakesN(dtype, static_cast<int>(n));
      });
  if (!g.b_k_major) {
    space.AddConstraint(
        "bn / wg_n is a multiple of 64 (B read N-major in 64-column atoms)",
        [](const Config& c) { return KnobValue(c, "bn") % (64 * KnobValue(c, "wg_n")) == 0; });
  }
  space.AddConstraint(
      "(bm / wg_m / 64) * (bn / wg_n) / 2 <= 128 (accumulator registers per thread; twice as "
      "many for the 8-bit floats, which promote their sums)",
      [shape = WgmmaCostShape(g)](const Config& c) {
        const WgmmaKnobs k = KnobsOf(c, shape);
        return k.bm % (64 * k.wg_m) != 0 || k.AccumulatorRegisters() <= 128;
      });
  const int64_t kdim = g.k;
  const int64_t bk = kRowBytes / InputBytes(workload);
  space.AddConstraint(
      "every one of the gridk blocks gets at least one step of K",
      [kdim, bk](const Config& c) { return GridSplitFits(kdim, bk, KnobValue(c, "gridk")); });
  // Registers: the accumulators, and addresses, descriptors and the copy loop's state.
  auto cost = [shape = WgmmaCostShape(g)](const Config& c) {
    const WgmmaKnobs k = KnobsOf(c, shape);
    GpuBlockCost cost;
    cost.threads = k.Threads();
    cost.shared_bytes = k.SharedBytes();
    if (k.bm % (64 * k.wg_m) == 0 && k.bn % k.wg_n == 0) {
      cost.registers = k.AccumulatorRegisters() + 56;
      if (k.tma == 1) {  // the block's average: the producer gives registers to the consumers
        cost.registers = (128 * WgmmaKnobs::kProducerRegisters + k.SplitThreads() * cost.registers +
                          k.Threads() - 1) /
                         k.Threads();
      }
    }
    return cost;
  };
  AddGpuLimitConstraints(space, arch, cost,
                         {.dynamic_shared = true, .one_block_per_multiprocessor = true});
  return space;
}

namespace {

// Large tiles of two warpgroups for large problems (CUTLASS's Hopper defaults are 128 x 128
// and 128 x 256); one warpgroup of m64 and narrower n for skinny ones.
std::vector<Config> Presets(const ImplicitGemm& g, const ConfigSpace& space) {
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  auto make = [&](int64_t bm, int64_t bn, int64_t wm, int64_t wn, int64_t stages, int64_t wk = 1) {
    Config c;
    c["bm"] = snap("bm", bm);
    c["bn"] = snap("bn", bn);
    c["wg_m"] = std::min(wm, c["bm"] / 64);
    c["wg_n"] = wn;
    c["wg_k"] = wk;
    c["stages"] = stages;
    c["copy"] = space.FindKnob("copy")->values.front();
    c["raster"] = 8;
    c["gridk"] = 1;
    c["tma"] = 0;
    // The output tile staged in shared memory where it fits beside the stages.
    c["stage_c"] = 1;
    if (!space.Validate(c).ok()) {
      c["stage_c"] = 0;
    }
    return c;
  };
  std::vector<Config> presets;
  if (g.m <= 64) {
    // Skinny: few output tiles, so blocks split their K among warpgroups.
    presets.push_back(make(64, 32, 1, 1, 4, 4));
    presets.push_back(make(64, 64, 1, 1, 5, 2));
    presets.push_back(make(64, 32, 1, 1, 5, 2));
    presets.push_back(make(64, 128, 1, 1, 4, 2));
    for (int64_t bn : {64, 128, 32, 256}) {
      presets.push_back(make(64, bn, 1, 1, 5));
    }
    presets.push_back(make(64, 128, 1, 2, 5));
  }
  presets.push_back(make(128, 256, 2, 1, 4));
  presets.push_back(make(128, 128, 2, 1, 5));
  presets.push_back(make(256, 128, 2, 1, 4));
  presets.push_back(make(128, 256, 1, 2, 4));
  presets.push_back(make(128, 64, 2, 1, 6));
  presets.push_back(make(64, 256, 1, 1, 5));
  presets.push_back(make(64, 128, 1, 1, 6));
  return presets;
}

// For shapes of fewer tiles than multiprocessors, splits of light tiles: each tile shape below
// with three stages (room for two or more blocks per multiprocessor, as blocks with a share of K
// need no deep pipeline), split by the smallest gridk that makes two blocks per multiprocessor,
// else the largest offered. On the H200 the first splits tried, of the presets (four to six
// stages, one block per multiprocessor), ran in two waves and lost to no split.
std::vector<Config> SplitSeeds(const ImplicitGemm& g, const ConfigSpace& space) {
  std::vector<Config> seeds;
  const std::vector<int64_t>& gridks = space.FindKnob("gridk")->values;
  for (const auto& [bm, bn] : std::vector<std::pair<int64_t, int64_t>>{
           {64, 64}, {128, 128}, {64, 128}, {128, 64}, {64, 32}}) {
    Config c;
    c["bm"] = LargestAtMost(space.FindKnob("bm")->values, bm);
    c["bn"] = LargestAtMost(space.FindKnob("bn")->values, bn);
    c["wg_m"] = c["bm"] / 64 >= 2 ? 2 : 1;
    c["wg_n"] = 1;
    c["wg_k"] = 1;
    c["stages"] = 3;
    c["copy"] = space.FindKnob("copy")->values.front();
    c["raster"] = 8;
    c["stage_c"] = 0;
    c["tma"] = 0;
    const int64_t tiles = GpuCeilDiv(g.m, c["bm"]) * GpuCeilDiv(g.n, c["bn"]);
    if (tiles >= kGpuMultiprocessorsGuess) {
      continue;
    }
    std::optional<Config> chosen;
    for (int64_t gridk : gridks) {
      c["gridk"] = gridk;
      if (gridk > 1 && space.IsValid(c)) {
        chosen = c;
        if (tiles * gridk >= 2 * kGpuMultiprocessorsGuess) {
          break;
        }
      }
    }
    if (chosen && std::find(seeds.begin(), seeds.end(), *chosen) == seeds.end()) {
      seeds.push_back(*std::move(chosen));
    }
  }
  return seeds;
}

}  // namespace

Config WgmmaDefault(const ImplicitGemm& g, const Target& target, std::string_view template_name) {
  const ConfigSpace space = WgmmaSpace(g, target);
  return MatmulDefault(space, Presets(g, space), {g.m, g.n, g.k}, 132,
                       StrCat(template_name, " for ", g.workload.ToString()));
}

std::vector<Config> WgmmaSeeds(const ImplicitGemm& g, const Target& target) {
  const ConfigSpace space = WgmmaSpace(g, target);
  // Each preset, one stage deeper, and with three stages: shared memory for two blocks per
  // multiprocessor, which short reductions need (on the H200 every config of 4096 x 768 x 768
  // and 1024 x 3072 x 768 with one block per multiprocessor took ~16 us: two waves of blocks,
  // each filling and draining its pipeline, against cuBLASLt's 8).
  // Last, each preset with its output stored the other way (staged in shared memory or not).
  std::vector<Config> variants;
  // Each preset first as a warp-specialised TMA pipeline, where the operands allow one (the
  // shape CUTLASS's fastest Hopper kernels take); with four stages after the others.
  const bool tma = space.FindKnob("tma")->values.size() > 1;
  auto as_tma = [&](const Config& preset, int64_t stages) {
    Config c = preset;
    c["tma"] = 1;
    c["wg_k"] = 1;
    c["stages"] = stages;
    if (!space.Validate(c).ok()) {
      c["stage_c"] = 1 - c["stage_c"];
    }
    return c;
  };
  for (const Config& preset : Presets(g, space)) {
    if (tma) {
      variants.push_back(as_tma(preset, preset.at("stages")));
    }
    variants.push_back(preset);
    Config deeper = preset;
    deeper["stages"] = std::min<int64_t>(6, preset.at("stages") + 1);
    if (!space.Validate(deeper).ok()) {
      deeper["stage_c"] = 0;  // the staged output tile leaves no room for another stage
    }
    variants.push_back(std::move(deeper));
  }
  for (const Config& preset : Presets(g, space)) {
    Config shallow = preset;
    shallow["stages"] = 3;
    variants.push_back(std::move(shallow));
  }
  for (const Config& preset : Presets(g, space)) {
    Config other = preset;
    other["stage_c"] = 1 - preset.at("stage_c");
    variants.push_back(std::move(other));
    if (tma) {
      variants.push_back(as_tma(preset, 4));
    }
  }
  // Splits of the reduction for tiles too few to fill the GPU once: first the split seeds of
  // light tiles, then each variant and its split.
  std::vector<Config> seeds = SplitSeeds(g, space);
  for (Config& c : MatmulSeeds(space, variants, {g.m, g.n, g.k}, kGpuMultiprocessorsGuess)) {
    if (seeds.size() < kMaxGpuSeeds && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(std::move(c));
    }
  }
  return seeds;
}

namespace {

// a ^ b for a, b in [0, 8), from the IR's integer arithmetic (it has no bitwise operators): the
// sum of each bit's (a_i + b_i) % 2.
Expr Xor3(const Expr& a, const Expr& b) {
  Expr out = (a + b) % 2;
  out = out + (a / 2 + b / 2) % 2 * 2;
  return out + (a / 4 + b / 4) % 2 * 4;
}

// The kernel, knob by knob; the comments of gemm_cuda_wgmma.h describe its shape.
class WgmmaKernel {
 public:
  WgmmaKernel(const ImplicitGemm& g, const WgmmaKnobs& k)
      : w_(g.workload),
        g_(g),
        k_(k),
        nt_(g.b_k_major),
        bytes_(InputBytes(w_)),
        row_(kRowBytes / bytes_),
        p_(w_),
        as_("As", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.input_type())),
        bs_("Bs", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.weight_type())),
        acc_("acc", ir::MemoryScope::kGpuLocal, ir::Type::Of(AccumulatorType(w_.dtype()))),
        part_("part", ir::MemoryScope::kGpuLocal, ir::Type::Of(AccumulatorType(w_.dtype()))),
        partial_("partial", ir::MemoryScope::kGpuShared, ir::Type::Of(AccumulatorType(w_.dtype()))),
        cs_("Cs", ir::MemoryScope::kGpuShared, ir::Type::Of(w_.out_type())),
        bars_("bars", ir::MemoryScope::kGpuShared, ir::Type::Int64()),
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
  int64_t Steps() const { return GpuCeilDiv(g_.k, row_); }
  int64_t StepsPerSplit() const { return GpuCeilDiv(Steps(), k_.gridk); }
  int64_t AStage() const { return k_.bm * row_; }  // elements per stage
  int64_t BStage() const { return k_.bn * row_; }
  int64_t Ahead() const { return k_.stages - 2; }
  // Bytes between B's 64-column atoms when it is stored N-major (layout=NN); 0 for NT.
  int64_t BAtomStride() const { return nt_ ? 0 : row_ * kRowBytes; }

  Stmt Body() const {
    Stmt threads = For::Make(tx_, 0, k_.Threads(), LoopKind::kGpuThread, ThreadBody(), 0);
    if (k_.wg_k > 1) {
      threads = ir::Allocate::Make(partial_, (k_.wg_k - 1) * k_.Accumulators() * k_.SplitThreads(),
                                   threads);
    }
    if (k_.stage_c == 1) {
      threads = ir::Allocate::Make(cs_, k_.bm * k_.StagedRow(), threads);
    }
    if (k_.tma == 1) {
      threads = ir::Allocate::Make(bars_, 2 * k_.stages, threads);
    }
    threads = split_.AllocateShared(threads);
    Stmt body =
        ir::Allocate::Make(as_, k_.wg_k * k_.Buffers() * AStage(),
                           ir::Allocate::Make(bs_, k_.wg_k * k_.Buffers() * BStage(), threads));
    // The steps of each of the wg_k ranges (the last range's past the block's are zeros).
    body = LetStmt::Make(range_steps_, (step_count_ + (k_.wg_k - 1)) / k_.wg_k, body);
    return split_.AllocateWorkspace(
        RasterizedGemmBlocks(TilesM(), TilesN(), k_.raster, k_.gridk, Steps(), v_, body));
  }

  // The warp-specialised TMA pipeline of this block (tma = 1): the tiles of A and B as the
  // copy engine delivers them are the layouts the cp.async copies build (rows of 128 bytes of K
  // swizzled; for layout=NN, atoms of 64 columns by row_ rows of K).
  TmaPipeline Pipeline() const {
    TmaPipeline p;
    p.a_smem = as_;
    p.b_smem = bs_;
    p.barriers = bars_;
    p.a_map = ir::TensorMap{.buffer = p_.a,
                            .dims = {g_.k, g_.m},
                            .strides = {g_.k},
                            .box = {row_, k_.bm},
                            .swizzle_bytes = 128};
    if (nt_) {
      p.b_map = ir::TensorMap{.buffer = p_.b,
                              .dims = {g_.k, g_.n},
                              .strides = {g_.k},
                              .box = {row_, k_.bn},
                              .swizzle_bytes = 128};
    } else {
      const int64_t atom_cols = kRowBytes / bytes_;
      p.b_map = ir::TensorMap{.buffer = p_.b,
                              .dims = {g_.n, g_.k},
                              .strides = {g_.n},
                              .box = {atom_cols, row_},
                              .swizzle_bytes = 128};
      p.b_boxes = k_.bn / atom_cols;
      p.b_box_stride = row_ * atom_cols;
    }
    p.stages = k_.stages;
    p.a_stage = AStage();
    p.b_stage = BStage();
    p.k_per_step = row_;
    p.consumer_threads = k_.SplitThreads();
    p.b_k_major = nt_;
    p.a_row = tile_m_ * k_.bm;
    p.b_col = tile_n_ * k_.bn;
    p.first_step = bz_ * StepsPerSplit();
    p.steps = step_count_;
    return p;
  }

  // tma = 1: thread 0 sets up the barriers and produces; warpgroups 1.. consume and store.
  // The accumulators live in the consumers' branch alone (zeroed, summed, stored there), so
  // that the producer's warpgroup, down to kProducerRegisters, holds none of them.
  std::vector<Stmt> TmaThreadStmts() const {
    const TmaPipeline pipeline = Pipeline();
    Stmt consumer = Block::Make({
        ir::SetMaxRegisters::Make(k_.ConsumerRegisters(), true),
        ZeroAccumulators(),
        pipeline.Consumer(
            [this](const Expr& stage, int pending) { return Multiply(stage, pending); }),
        k_.stage_c == 1 ? StageWrites() : StoreAccumulators(),
    });
    std::vector<Stmt> stmts = {
        IfThenElse::Make(tx_ == 0, pipeline.Init()),
        ir::Barrier::Make(),
        IfThenElse::Make(
            tx_ < 128,
            Block::Make({ir::SetMaxRegisters::Make(WgmmaKnobs::kProducerRegisters, false),
                         IfThenElse::Make(tx_ == 0, pipeline.Producer())}),
            std::move(consumer)),
    };
    if (k_.stage_c == 1) {
      stmts.push_back(StageCopyOut());
    }
    stmts.push_back(FinishSplit());
    return stmts;
  }

  // gridk > 1: once every thread has parked its accumulators, the tile's last block stores C.
  Stmt FinishSplit() const {
    if (!split_.Active()) {
      return Stmt();
    }
    return split_.Finish(v_.bx, tile_m_, tile_n_, tx_, k_.Threads(), Epilogue());
  }

  MmaEpilogue Epilogue() const {
    return MmaEpilogue(w_, g_.n, p_.c, p_.bias, p_.scale_a, p_.scale_b, bz_, 1);
  }

  Stmt ZeroAccumulators() const {
    Var i("i");
    return For::Make(i, 0, k_.Accumulators(), LoopKind::kUnrolled,
                     Store::Make(acc_, i, ir::Cast::Make(acc_.element_type(), Expr(0))));
  }

  Stmt ThreadBody() const {
    if (k_.tma == 1) {
      return Lets(Block::Make(TmaThreadStmts()));
    }
    std::vector<Stmt> stmts = {ZeroAccumulators()};
    // Prologue: steps 0 .. stages - 3, each its own group (the last is committed in the loop).
    for (int64_t s = 0; s < Ahead(); ++s) {
      stmts.push_back(IfThenElse::Make(Expr(s) < range_steps_, CopyStep(Expr(s), Expr(s))));
      if (s + 1 < Ahead()) {
        stmts.push_back(ir::Barrier::MakeAfterAsyncCopies(true, -1));
      }
    }
    // Step t: close the group of step t + stages - 3, wait for step t's, fill the buffer that
    // step t - 2 read (complete in every warpgroup: each waited for it in step t - 1, before
    // this barrier), and issue step t's instructions, leaving them in flight (pending 1) but for
    // the last step.
    auto step = [&](const Expr& t, int pending) {
      Expr ahead = t + Ahead();
      return Block::Make({
          ir::Barrier::MakeAfterAsyncCopies(true, static_cast<int>(Ahead() - 1)),
          IfThenElse::Make(ahead < range_steps_, CopyStep(ahead, ahead % k_.stages)),
          Multiply(t % k_.stages, pending),
      });
    };
    Var t("t");
    stmts.push_back(For::Make(t, 0, range_steps_ - 1, LoopKind::kSerial, step(t, 1)));
    stmts.push_back(step(range_steps_ - 1, 0));
    if (k_.wg_k > 1) {
      // Ranges 1 .. wg_k - 1 leave their sums in shared memory; range 0 adds them and stores.
      const int64_t accs = k_.Accumulators(), threads = k_.SplitThreads();
      Var j("j");
      Expr slot = ((group_k_ - 1) * accs + j) * threads + split_tx_;
      stmts.push_back(IfThenElse::Make(
          group_k_ > 0, For::Make(j, 0, accs, LoopKind::kUnrolled,
                                  Store::Make(partial_, slot, ir::Load::Make(acc_, j)))));
      stmts.push_back(ir::Barrier::Make());
      std::vector<Stmt> first;
      for (int64_t r = 1; r < k_.wg_k; ++r) {
        Var i("i");
        Expr from = ((r - 1) * accs + i) * threads + split_tx_;
        first.push_back(For::Make(
            i, 0, accs, LoopKind::kUnrolled,
            Store::Make(acc_, i, ir::Load::Make(acc_, i) + ir::Load::Make(partial_, from))));
      }
      first.push_back(StoreAccumulators());
      stmts.push_back(IfThenElse::Make(group_k_ == 0, Block::Make(std::move(first))));
    } else {
      stmts.push_back(StoreAccumulators());
    }
    stmts.push_back(FinishSplit());
    return Lets(Block::Make(std::move(stmts)));
  }

  // The thread's warpgroup coordinates around `stmts`, and its accumulators. Warpgroup g: K
  // range g / (wg_m wg_n), then rows and columns; with a TMA pipeline, warpgroup 0 is the
  // producer's and the others' are counted from 1.
  Stmt Lets(Stmt stmts) const {
    Expr consumer_tx = k_.tma == 1 ? tx_ - 128 : Expr(tx_);
    Expr group = consumer_tx / 128 % (k_.wg_m * k_.wg_n);
    Stmt body = LetStmt::Make(
        group_m_, group / k_.wg_n,
        LetStmt::Make(group_n_, group % k_.wg_n, LetStmt::Make(lane_, tx_ % 32, std::move(stmts))));
    body =
        LetStmt::Make(group_k_, consumer_tx / k_.SplitThreads(),
                      LetStmt::Make(split_tx_, consumer_tx % k_.SplitThreads(), std::move(body)));
    if (k_.promote) {
      body = ir::Allocate::Make(part_, k_.Accumulators(), std::move(body));
    }
    return ir::Allocate::Make(acc_, k_.Accumulators(), std::move(body));
  }

  // The copies of reduction step `step` of this warpgroup's K range into its shared buffer
  // `stage`; zeros for a step past the block's.
  Stmt CopyStep(const Expr& step, const Expr& stage) const {
    Expr block_step = group_k_ * range_steps_ + step;
    Expr k0 = (bz_ * StepsPerSplit() + block_step) * row_;
    Expr inside = block_step < step_count_;
    auto guarded = [&](GlobalTileSource src) {
      if (k_.wg_k > 1) {
        src.valid = src.valid && inside;
      }
      return src;
    };
    Expr range_stage = group_k_ * k_.Buffers() + stage;
    return Block::Make({
        CopyTile(as_, range_stage * AStage(), k_.bm,
                 [&](const Expr& r, const Expr& col) {
                   return guarded(g_.A(p_, tile_m_ * k_.bm + r, k0 + col, Lanes()));
                 }),
        nt_ ? CopyTile(bs_, range_stage * BStage(), k_.bn,
                       [&](const Expr& r, const Expr& col) {
                         return guarded(g_.B(p_, tile_n_ * k_.bn + r, k0 + col, Lanes()));
                       })
            : CopyTileNMajor(bs_, range_stage * BStage(),
                             [&](const Expr& k, const Expr& n) {
                               return guarded(g_.B(p_, k0 + k, tile_n_ * k_.bn + n, Lanes()));
                             }),
    });
  }

  // Copies B's [row_][bn] tile of a step (rows of K, stored N-major for layout=NN) into `dst` at
  // `base`: 64-column atoms of row_ rows of 128 bytes each, chunk c of row k at c ^ (k % 8).
  template <typename SourceFn>
  Stmt CopyTileNMajor(const ir::Buffer& dst, const Expr& base, SourceFn source) const {
    const int64_t lanes = Lanes();
    const int64_t per_row = k_.bn / lanes;
    const int64_t chunks = row_ * per_row;
    const int64_t threads = k_.SplitThreads();
    const int64_t per_chunk16 = 16 / bytes_;
    const int64_t atom_cols = kRowBytes / bytes_;  // 64 columns of 16-bit elements
    Var c("c");
    Expr chunk = split_tx_ + c * threads;
    Expr k = chunk / per_row;
    Expr n = chunk % per_row * lanes;
    Expr in_atom = n % atom_cols;
    Expr swizzled = Xor3(in_atom / per_chunk16, k % 8) * per_chunk16 + in_atom % per_chunk16;
    Expr at = base + n / atom_cols * (row_ * atom_cols) + k * atom_cols + swizzled;
    GlobalTileSource src = source(k, n);
    return SpreadOverThreads(c, chunk, chunks, threads,
                             CopyChunk(dst, at, src, lanes, k_.copy >= 4), k_.copy >= 4);
  }

  int64_t Lanes() const { return std::max<int64_t>(1, k_.copy / bytes_); }

  // Copies `rows` rows of 128 bytes of K into `dst` at `base`, `copy` bytes at a time spread
  // over the block's threads, each chunk to its swizzled place: 16-byte chunk c of row r at
  // c ^ (r % 8).
  template <typename SourceFn>
  Stmt CopyTile(const ir::Buffer& dst, const Expr& base, int64_t rows, SourceFn source) const {
    const int64_t lanes = Lanes();
    const int64_t per_row = row_ / lanes;
    const int64_t chunks = rows * per_row;
    const int64_t threads = k_.SplitThreads();  // the warpgroups of this K range
    const int64_t per_chunk16 = 16 / bytes_;    // elements per 16-byte chunk
    Var c("c");
    Expr chunk = split_tx_ + c * threads;
    Expr row = chunk / per_row;
    Expr col = chunk % per_row * lanes;  // element of K within the row
    Expr swizzled = Xor3(col / per_chunk16, row % 8) * per_chunk16 + col % per_chunk16;
    Expr at = base + row * row_ + swizzled;
    GlobalTileSource src = source(row, col);
    return SpreadOverThreads(c, chunk, chunks, threads,
                             CopyChunk(dst, at, src, lanes, k_.copy >= 4), k_.copy >= 4);
  }

  // This warpgroup's instructions on shared buffer `stage`: one statement per m64 step. Promoted
  // sums (fp8) go through `part`: zeroed, summed into by the step's instructions (waited for at
  // once), added into `acc`.
  Stmt Multiply(const Expr& local_stage, int pending) const {
    std::vector<Stmt> stmts;
    Expr stage = group_k_ * k_.Buffers() + local_stage;
    const int n = static_cast<int>(k_.GroupN());
    for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
      Expr a_index = stage * AStage() + (group_m_ * k_.GroupM() + 64 * mi) * row_;
      Expr b_index = stage * BStage() + group_n_ * k_.GroupN() * row_;
      const int64_t first = mi * n / 2;
      if (!k_.promote) {
        stmts.push_back(ir::WarpGroupMma::Make(w_.dtype(), as_, a_index, bs_, b_index, n, kKSteps,
                                               acc_, first, pending, BAtomStride()));
        continue;
      }
      Var j("j");
      stmts.push_back(
          For::Make(j, first, n / 2, LoopKind::kUnrolled, Store::Make(part_, j, Expr(0.0f))));
      stmts.push_back(ir::WarpGroupMma::Make(w_.dtype(), as_, a_index, bs_, b_index, n, kKSteps,
                                             part_, first, 0, BAtomStride()));
      Var i("i");
      stmts.push_back(
          For::Make(i, first, n / 2, LoopKind::kUnrolled,
                    Store::Make(acc_, i, ir::Load::Make(acc_, i) + ir::Load::Make(part_, i))));
    }
    return Block::Make(std::move(stmts));
  }

  // Each thread's accumulators, two adjacent columns at a time, with the epilogue (or, for a
  // split reduction, into the block's partial tile): thread (warp w, lane l) of a warpgroup
  // holds, for j < n / 2 of m64 step mi, row 64 mi + 16 w + l / 4 + 8 ((j / 2) % 2) and column
  // 8 (j / 4) + 2 (l % 4) + j % 2.
  Stmt StoreAccumulators() const {
    if (k_.stage_c == 1) {
      return Block::Make({StageWrites(), StageCopyOut()});
    }
    const MmaEpilogue epilogue = Epilogue();
    Expr warp = tx_ % 128 / 32;
    Expr local_row0 = group_m_ * k_.GroupM() + warp * 16 + lane_ / 4;
    Expr local_col0 = group_n_ * k_.GroupN() + lane_ % 4 * 2;
    Expr row0 = tile_m_ * k_.bm + local_row0;
    Expr col0 = tile_n_ * k_.bn + local_col0;
    const bool pairs = g_.n % 2 == 0;
    const int64_t n = k_.GroupN();
    std::vector<Stmt> stmts;
    for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
      for (int64_t j = 0; j < n / 2; j += 2) {
        const int64_t slot = mi * n / 2 + j;
        const int64_t dm = 64 * mi + 8 * ((j / 2) % 2), dn = 8 * (j / 4);
        if (split_.Active()) {  // rows past C's (a skinny M's) are never read: not parked
          Stmt park = split_.Park(v_.bx, bz_, local_row0 + dm, local_col0 + dn,
                                  ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2)), 2);
          stmts.push_back(g_.m % k_.bm == 0 ? park : IfThenElse::Make(row0 + dm < g_.m, park));
          continue;
        }
        Expr m = row0 + dm;
        Expr col = col0 + dn;
        if (pairs) {
          Expr value = ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2));
          stmts.push_back(
              IfThenElse::Make(m < g_.m && col < g_.n, epilogue.Store(m, col, value, 2)));
          continue;
        }
        for (int64_t e = 0; e < 2; ++e) {
          Expr value = ir::Load::Make(acc_, Expr(slot + e));
          stmts.push_back(
              IfThenElse::Make(m < g_.m && col + e < g_.n, epilogue.Store(m, col + e, value, 1)));
        }
      }
    }
    return Block::Make(std::move(stmts));
  }

  // stage_c = 1: the epilogue's values into the block's output tile in shared memory (rows of
  // StagedRow() elements; StageWrites), a barrier, then the tile out to C in 16-byte chunks,
  // consecutive threads along a row (C's rows are whole chunks: SixteenByteRows; StageCopyOut).
  Stmt StageWrites() const {
    const MmaEpilogue epilogue = Epilogue();
    Expr warp = tx_ % 128 / 32;
    Expr row0 = group_m_ * k_.GroupM() + warp * 16 + lane_ / 4;
    Expr col0 = group_n_ * k_.GroupN() + lane_ % 4 * 2;
    const int64_t n = k_.GroupN();
    // Columns past C's (whose values are never copied out) read the bias of its last pair.
    auto bias_col = [&](const Expr& col) {
      return ir::Min::Make(tile_n_ * k_.bn + col, Expr(g_.n - 2));
    };
    std::vector<Stmt> stmts;
    for (int64_t mi = 0; mi < k_.MTiles(); ++mi) {
      for (int64_t j = 0; j < n / 2; j += 2) {
        const int64_t slot = mi * n / 2 + j;
        Expr row = row0 + (64 * mi + 8 * ((j / 2) % 2));
        Expr col = col0 + 8 * (j / 4);
        Expr value = ir::Load::Make(acc_, ir::Ramp::Make(Expr(slot), 1, 2));
        stmts.push_back(Store::Make(cs_, ir::Ramp::Make(row * k_.StagedRow() + col, 1, 2),
                                    epilogue.Value(bias_col(col), value, 2)));
      }
    }
    return Block::Make(std::move(stmts));
  }

  // Every thread of the block (the producer's too) copies the staged tile out.
  Stmt StageCopyOut() const {
    std::vector<Stmt> stmts = {ir::Barrier::Make()};
    const int64_t lanes = 16 / k_.out_bytes;
    const int64_t per_row = k_.bn / lanes;
    const int64_t chunks = k_.bm * per_row;
    Var c("c_out");
    Expr chunk = tx_ + c * k_.Threads();
    Expr r = chunk / per_row;
    Expr q = chunk % per_row * lanes;
    Expr m = tile_m_ * k_.bm + r;
    Expr col = tile_n_ * k_.bn + q;
    Stmt copy = IfThenElse::Make(
        m < g_.m && col < g_.n,
        Store::Make(p_.c, ir::Ramp::Make(m * g_.n + col, 1, static_cast<int>(lanes)),
                    ir::Load::Make(
                        cs_, ir::Ramp::Make(r * k_.StagedRow() + q, 1, static_cast<int>(lanes)))));
    stmts.push_back(SpreadOverThreads(c, chunk, chunks, k_.Threads(), std::move(copy), true));
    return Block::Make(std::move(stmts));
  }

  const Workload& w_;
  const ImplicitGemm& g_;
  WgmmaKnobs k_;
  bool nt_;
  int64_t bytes_, row_;
  GemmParams p_;
  ir::Buffer as_, bs_, acc_, part_, partial_, cs_, bars_;
  SplitReduction split_;
  Var tx_{"tx"}, lane_{"lane"}, group_m_{"group_m"}, group_n_{"group_n"};
  Var group_k_{"group_k"}, split_tx_{"split_tx"};
  Var range_steps_{"range_steps"};
  GemmBlockVars v_;
  const Var &bz_ = v_.split, &tile_m_ = v_.tile_m, &tile_n_ = v_.tile_n, &step_count_ = v_.steps;
};

}  // namespace

ir::LoweredFunc BuildWgmmaKernel(const ImplicitGemm& g, const Config& config,
                                 std::string_view func_name) {
  return WgmmaKernel(g, KnobsOf(config, WgmmaCostShape(g))).Build(func_name);
}

namespace {

bool Applies(const Workload&, const Target& target) { return WgmmaApplies(target); }

absl::Status CheckShape(const Workload& workload) {
  return RefuseShapeUnless(kGemmCudaWgmma.name,
                           "GEMMs whose operands cp.async stages and wgmma reads",
                           "layout=NN for f16 and bf16 (B read N-major), layout=NT for every "
                           "dtype; K a multiple of 4 for 8-bit dtypes",
                           workload, WgmmaShapeFaults(ImplicitGemm(workload)));
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  return WgmmaSpace(ImplicitGemm(workload), target);
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  return WgmmaDefault(ImplicitGemm(workload), target, kGemmCudaWgmma.name);
}

std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  return WgmmaSeeds(ImplicitGemm(workload), target);
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmCudaWgmma, workload, target, config));
  if (!Applies(workload, target)) {
    return absl::InvalidArgumentError(
        StrCat("gemm.cuda.wgmma builds for cuda -arch=sm_90a (wgmma is an arch-specific "
               "instruction of Hopper), not for '",
               target.ToString(), "'"));
  }
  RETURN_IF_ERROR(CheckShape(workload));
  return BuildWgmmaKernel(ImplicitGemm(workload), config, func_name);
}

}  // namespace
const KernelTemplate kGemmCudaWgmma = {
    .name = "gemm.cuda.wgmma",
    .version = 5,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kCuda,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .applies = &Applies,
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = DtypeSet{Dtype::kTf32, Dtype::kF16, Dtype::kBf16, Dtype::kI8, Dtype::kU8I8,
                       Dtype::kFp8E4m3, Dtype::kFp8E5m2},
    .seeds = &Seeds,
    .check_shape = &CheckShape,
    .tolerance = &TensorCoreTolerance,
};

}  // namespace tune
