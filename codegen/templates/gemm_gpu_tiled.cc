#include "codegen/templates/gemm_gpu_tiled.h"

#include <algorithm>
#include <string>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/gpu_tiled_matmul.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

using ir::Expr;

struct GemmKnobs {
  int64_t bm, bn, tm, tn, bk, stages, vec, splitk, gridk, fragpipe, async;
};

GemmKnobs KnobsOf(const Config& c) {
  return {KnobValue(c, "bm"),       KnobValue(c, "bn"),     KnobValue(c, "tm"),
          KnobValue(c, "tn"),       KnobValue(c, "bk"),     KnobValue(c, "stages"),
          KnobValue(c, "vec"),      KnobValue(c, "splitk"), KnobValue(c, "gridk"),
          KnobValue(c, "fragpipe"), KnobValue(c, "async")};
}

MatmulTiling TilingOf(const GemmKnobs& k) {
  MatmulTiling t;
  t.bm = k.bm;
  t.bn = k.bn;
  t.bk = k.bk;
  t.tm = k.tm;
  t.tn = k.tn;
  t.stages = k.stages;
  t.splitk = k.splitk;
  t.gridk = k.gridk;
  t.frag_pipe = k.fragpipe == 1;
  t.async_copy = k.async >= 1;
  t.async_a = k.async == 1;
  return t;
}

// Load widths: vec where the dimension and the tile keep every load's offset a multiple of it
// (B in NT runs along K, as A does).
int64_t LanesA(const GemmShape& g, const GemmKnobs& k) { return LanesDividing(k.vec, {g.k, k.bk}); }
int64_t LanesB(const GemmShape& g, const GemmKnobs& k) {
  return g.layout == GemmLayout::kNT ? LanesDividing(k.vec, {g.k, k.bk})
                                     : LanesDividing(k.vec, {g.n, k.bn});
}

// Typed workloads (dtype= other than f32) read their operands as float32 through casts and
// round the output as it is stored: no asynchronous copies (they move raw elements into the
// float32 tiles) and, for an output narrower than float32, no grid split (atomic adds are
// float32).
bool Typed(const Workload& workload) { return workload.dtype() != Dtype::kF32; }

ConfigSpace Space(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const GpuArch arch = GpuArchOrDefault(target);
  ConfigSpace space;
  space.AddKnob("bm", AtMost({1, 2, 4, 8, 16, 32, 64, 128, 256}, NextPow2(g.m), 1),
                "rows of C per block");
  space.AddKnob("bn",
                AtMost({1, 2, 4, 8, 16, 32, 64, 128, kWidestSimtBlockColumns}, NextPow2(g.n), 1),
                "columns of C per block");
  space.AddKnob("tm", AtMost({1, 2, 4, 8, 16}, NextPow2(g.m), 1),
                "rows of the register tile of a thread");
  space.AddKnob("tn", AtMost({1, 2, 4, 8, 16}, NextPow2(g.n), 1),
                "columns of the register tile of a thread");
  space.AddKnob("bk", AtMost({4, 8, 16, 32, 64, 128}, std::max<int64_t>(4, NextPow2(g.k)), 4),
                "reduction step staged in shared memory");
  // Asynchronous copies (cp.async) are an NVPTX instruction; AMDGPU stages through registers.
  const bool copies = target.kind == TargetKind::kCuda && !Typed(workload);
  space.AddKnob("stages", copies ? std::vector<int64_t>{1, 2, 3, 4} : std::vector<int64_t>{1, 2},
                "shared-memory buffers (2: load step k+1 while computing k; 3 and 4: copies "
                "issued stages-1 steps ahead, with async)");
  space.AddKnob("async", copies ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{0},
                "1: global tiles go to shared memory by asynchronous copies (cp.async), not "
                "through registers; 2: B's tiles by copies, A's through registers");
  std::vector<int64_t> vecs = {1};
  for (int64_t v : {2, 4}) {
    if (g.k % v == 0 || g.n % v == 0) {
      vecs.push_back(v);
    }
  }
  space.AddKnob("vec", vecs, "elements per global load (A when K allows it, B when N allows it)");
  space.AddKnob("splitk", AtMost({1, 2, 4, 8, 16}, std::max<int64_t>(4, NextPow2(g.k)), 1),
                "thread groups that share each step's reduction (summed in shared memory)");
  // Blocks sharing a reduction: what fills the GPU when M x N has few tiles and K is long.
  std::vector<int64_t> gridks = {1};
  if (!EpilogueHasRelu(workload.epilogue()) && workload.out_type() == ElementType::kF32) {
    for (int64_t v : {2, 3, 4, 6, 8, 12, 16, 24, 32}) {
      if (v <= g.k / 64) {
        gridks.push_back(v);
      }
    }
  }
  space.AddKnob("gridk", gridks,
                "blocks that share each tile's reduction (grid z; their sums are added "
                "atomically into a zeroed C; not with a ReLU epilogue nor a narrow output)");
  space.AddKnob("fragpipe", {0, 1},
                "1: read the next row of shared-memory fragments while the current row's FMAs "
                "run (two register sets)");
  space.AddConstraint("bm % tm == 0",
                      [](const Config& c) { return KnobValue(c, "bm") % KnobValue(c, "tm") == 0; });
  space.AddConstraint("bn % tn == 0",
                      [](const Config& c) { return KnobValue(c, "bn") % KnobValue(c, "tn") == 0; });
  space.AddConstraint("bk % splitk == 0", [](const Config& c) {
    return KnobValue(c, "bk") % KnobValue(c, "splitk") == 0;
  });
  space.AddConstraint("bk / splitk * tm * tn <= 4096 (size of the unrolled step)",
                      [](const Config& c) {
                        return KnobValue(c, "bk") / KnobValue(c, "splitk") * KnobValue(c, "tm") *
                                   KnobValue(c, "tn") <=
                               4096;
                      });
  space.AddConstraint(
      "async >= 1 or stages <= 2 (registers stage at most one step ahead)",
      [](const Config& c) { return KnobValue(c, "async") >= 1 || KnobValue(c, "stages") <= 2; });
  space.AddConstraint("async == 0 or stages >= 2", [](const Config& c) {
    return KnobValue(c, "async") == 0 || KnobValue(c, "stages") >= 2;
  });
  space.AddConstraint(
      "fragpipe == 0 or (stages >= 2 and (bk / splitk) % 2 == 0)", [](const Config& c) {
        return KnobValue(c, "fragpipe") == 0 ||
               FragPipeFits(KnobValue(c, "stages"), KnobValue(c, "bk"), KnobValue(c, "splitk"));
      });
  const int64_t kdim = g.k;
  space.AddConstraint("every one of the gridk blocks gets at least one bk step of K",
                      [kdim](const Config& c) {
                        return GridSplitFits(kdim, KnobValue(c, "bk"), KnobValue(c, "gridk"));
                      });
  const int64_t n = g.n;
  space.AddConstraint("ceil(N / bn) <= 65535 (grid y)",
                      [n](const Config& c) { return GpuCeilDiv(n, KnobValue(c, "bn")) <= 65535; });
  AddGpuLimitConstraints(space, arch, [g](const Config& c) {
    const GemmKnobs k = KnobsOf(c);
    const MatmulTiling t = TilingOf(k);
    GpuBlockCost cost;
    if (k.bm % k.tm != 0 || k.bn % k.tn != 0) {
      return cost;  // reported by the divisibility constraints
    }
    cost.threads = t.Threads();
    cost.shared_bytes = t.SharedFloats() * 4;
    cost.registers = t.Registers(LanesA(g, k), LanesB(g, k));
    return cost;
  });
  return space;
}

// The preferred tilings (grid split 1), best first for large shapes; skinny shapes get their
// own first.
std::vector<Config> Presets(const GemmShape& g, const ConfigSpace& space) {
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  auto make = [&](int64_t bm, int64_t bn, int64_t tm, int64_t tn, int64_t bk, int64_t splitk) {
    Config c;
    c["bm"] = snap("bm", bm);
    c["bn"] = snap("bn", bn);
    c["tm"] = snap("tm", std::min(tm, c["bm"]));
    c["tn"] = snap("tn", std::min(tn, c["bn"]));
    c["bk"] = snap("bk", bk);
    c["stages"] = 2;
    c["vec"] = snap("vec", 4);
    c["splitk"] = snap("splitk", std::min(splitk, c["bk"]));
    c["gridk"] = 1;
    c["fragpipe"] = 0;
    c["async"] = 0;
    return c;
  };
  std::vector<Config> presets;
  if (g.m <= 16) {
    // Skinny: the whole of M in one block row, narrow column tiles, the reduction split over
    // thread groups so that a block has ~256 threads.
    const int64_t bm = std::min<int64_t>(NextPow2(g.m), 16);
    const int64_t tm = std::min<int64_t>(bm, 4);
    for (int64_t bn : {32, 64, 128}) {
      const int64_t tn = bn >= 128 ? 4 : (bn >= 64 ? 2 : 1);
      const int64_t group = (bm / tm) * (bn / tn);
      presets.push_back(make(bm, bn, tm, tn, 64, std::max<int64_t>(1, 256 / group)));
    }
  }
  presets.push_back(make(128, 128, 8, 8, 8, 1));
  presets.push_back(make(128, 128, 8, 8, 16, 1));
  presets.push_back(make(128, 64, 8, 8, 8, 1));
  presets.push_back(make(64, 128, 8, 8, 8, 1));
  presets.push_back(make(64, 64, 8, 8, 8, 1));
  presets.push_back(make(64, 64, 4, 4, 16, 1));
  presets.push_back(make(32, 64, 4, 4, 16, 1));
  presets.push_back(make(32, 32, 4, 4, 16, 1));
  presets.push_back(make(16, 32, 2, 2, 16, 1));
  return presets;
}

// The presets with the smallest grid split of K that fills the GPU (MatmulDefault). A skinny
// GEMM streams B from memory and wants several blocks per multiprocessor to keep enough loads in
// flight.
Config DefaultConfig(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const ConfigSpace space = Space(workload, target);
  return MatmulDefault(space, Presets(g, space), {g.m, g.n, g.k}, g.m <= 16 ? 480 : 120,
                       StrCat("gemm.gpu.tiled for ", workload.ToString()));
}

// Every preset with every useful grid split of K (MatmulSeeds), the skinny presets also with one
// thread group per step: where the search starts after the default.
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  const ConfigSpace space = Space(workload, target);
  std::vector<Config> variants;
  for (const Config& preset : Presets(g, space)) {
    variants.push_back(preset);
    // Not seeded: asynchronous copies (async 1), measured slower on the H100 than staging
    // through registers for all but one of the bench's GEMMs (bench/RESULTS.md).
    if (g.m <= 16 && preset.at("bm") <= 16) {
      Config v = preset;
      v["splitk"] = 1;
      variants.push_back(std::move(v));
    } else if (preset.at("bm") * preset.at("bn") <= 128 * 64) {
      // Pipelined fragments pay off where a multiprocessor holds few warps (measured on an
      // H100: 7-9% on 1000^3's 128 x 64 and 64 x 128 tiles, 2-4% slower on 128 x 128).
      Config v = preset;
      v["fragpipe"] = 1;
      variants.push_back(std::move(v));
    }
  }
  return MatmulSeeds(space, variants, {g.m, g.n, g.k});
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kGemmGpuTiled, workload, target, config));
  const GemmShape& g = workload.gemm();
  const GemmKnobs k = KnobsOf(config);
  const ir::MemoryScope global = ir::MemoryScope::kGlobal;
  ir::Buffer a("A", global, ir::Type::Of(workload.input_type()));
  ir::Buffer b("B", global, ir::Type::Of(workload.weight_type()));
  ir::Buffer bias("bias", global, ir::Type::Of(workload.out_type()));
  ir::Buffer c("C", global, ir::Type::Of(workload.out_type()));
  ir::Buffer scale_a("scale_A"), scale_b("scale_B");
  const bool nt = g.layout == GemmLayout::kNT;
  MatmulProblem p;
  p.m = g.m;
  p.n = g.n;
  p.k = g.k;
  const bool full_m = g.m % k.bm == 0, full_n = g.n % k.bn == 0, full_k = g.k % k.bk == 0;
  const int64_t lanes_a = LanesA(g, k), lanes_b = LanesB(g, k);
  p.a.lanes = lanes_a;
  p.a.vector_along_k = true;
  // Both operands are read through source_index: by the register path (LoadOrZero) and by
  // asynchronous copies alike.
  p.a.source = a;
  p.a.source_index = [=](const std::vector<ir::Var>&, const Expr& m,
                         const Expr& kk) -> std::pair<Expr, Expr> {
    Expr row = full_m ? m : ir::Min::Make(m, g.m - 1);
    Expr col = full_k ? kk : ir::Min::Make(kk, g.k - lanes_a);
    Expr in;
    if (!full_m || !full_k) {
      in = full_m ? (kk < g.k) : (full_k ? (m < g.m) : (m < g.m && kk < g.k));
    }
    return {row * g.k + col, in};
  };
  p.b.lanes = lanes_b;
  p.b.vector_along_k = nt;
  p.b.source = b;
  p.b.source_index = [=](const std::vector<ir::Var>&, const Expr& n,
                         const Expr& kk) -> std::pair<Expr, Expr> {
    Expr in;
    if (!full_n || !full_k) {
      in = full_k ? (n < g.n) : (full_n ? (kk < g.k) : (kk < g.k && n < g.n));
    }
    if (nt) {  // B[N][K]: the lanes run along K, as A's do
      Expr row = full_n ? n : ir::Min::Make(n, g.n - 1);
      Expr col = full_k ? kk : ir::Min::Make(kk, g.k - lanes_b);
      return {row * g.k + col, in};
    }
    Expr row = full_k ? kk : ir::Min::Make(kk, g.k - 1);
    Expr col = full_n ? n : ir::Min::Make(n, g.n - lanes_b);
    return {row * g.n + col, in};
  };
  p.out.lanes = LanesDividing(4, {g.n});
  p.out.contiguous_along_m = false;
  p.out.index = [n = g.n](const Expr& m, const Expr& col) { return m * n + col; };
  p.out_buffer = c;
  p.epilogue = workload.epilogue();
  p.bias = bias;
  if (workload.has_scales()) {
    p.scale = ir::Load::Make(scale_a, Expr(int64_t{0})) * ir::Load::Make(scale_b, Expr(int64_t{0}));
  }

  ir::LoweredFunc func;
  func.name = std::string(func_name);
  func.params = {a, b};
  if (EpilogueHasBias(workload.epilogue())) {
    func.params.push_back(bias);
  }
  func.params.push_back(c);
  if (workload.has_scales()) {
    func.params.push_back(scale_a);
    func.params.push_back(scale_b);
  }
  func.body = BuildTiledMatmul(p, TilingOf(k));
  return func;
}

}  // namespace

const KernelTemplate kGemmGpuTiled = {
    .name = "gemm.gpu.tiled",
    .version = 4,
    .op = OpKind::kGemm,
    .targets = TemplateTargets::kGpu,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    // N past 65535 blocks of the widest tile has no valid config (the grid's y).
    .applies = [](const Workload& w, const Target&) { return SimtGridFitsColumns(w.gemm().n); },
    .gemm_layouts = GemmLayouts::kBoth,
    .dtypes = DtypeSet{Dtype::kF32, Dtype::kTf32, Dtype::kF16, Dtype::kBf16, Dtype::kFp8E4m3,
                       Dtype::kFp8E5m2, Dtype::kFp8E4m3Fnuz, Dtype::kFp8E5m2Fnuz},
    .seeds = &Seeds,
};

}  // namespace tune
