#include "codegen/templates/conv2d_gpu_implicit_gemm.h"

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
using ir::Var;

struct Knobs {
  int64_t bm, bn, tm, tn, bk, stages, vec, gridk;
};

Knobs KnobsOf(const Config& c) {
  return {KnobValue(c, "bm"), KnobValue(c, "bn"),     KnobValue(c, "tm"),  KnobValue(c, "tn"),
          KnobValue(c, "bk"), KnobValue(c, "stages"), KnobValue(c, "vec"), KnobValue(c, "gridk")};
}

MatmulTiling TilingOf(const Knobs& k) {
  MatmulTiling t;
  t.bm = k.bm;
  t.bn = k.bn;
  t.bk = k.bk;
  t.tm = k.tm;
  t.tn = k.tn;
  t.stages = k.stages;
  t.splitk = 1;
  t.gridk = k.gridk;
  t.rows_fastest = true;
  return t;
}

ir::Expr Cast32(const ir::Expr& e) { return ir::Cast::Make(ir::Type::Int32(), e); }

// The GEMM sizes of a conv2d.
struct GemmView {
  int64_t m, n, k, pq;
};
GemmView ViewOf(const Conv2dShape& s) {
  return {s.n * s.p() * s.q(), s.k, s.c * s.r * s.s, s.p() * s.q()};
}

int64_t LanesA(const Conv2dShape& s, const Knobs& k) {
  return s.pointwise() ? LanesDividing(k.vec, {ViewOf(s).pq, k.bm}) : 1;
}
int64_t LanesB(const Conv2dShape& s, const Knobs& k) {
  return LanesDividing(k.vec, {ViewOf(s).k, k.bk});
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const GemmView g = ViewOf(s);
  const GpuArch arch = GpuArchOrDefault(target);
  ConfigSpace space;
  space.AddKnob("bm", AtMost({8, 16, 32, 64, 128, 256}, NextPow2(g.m), 8),
                "output pixels (N*P*Q) per block");
  space.AddKnob("bn", AtMost({4, 8, 16, 32, 64, 128, kWidestSimtBlockColumns}, NextPow2(g.n), 4),
                "output channels per block");
  space.AddKnob("tm", {1, 2, 4, 8}, "pixels of the register tile of a thread");
  space.AddKnob("tn", AtMost({1, 2, 4, 8}, NextPow2(g.n), 1),
                "channels of the register tile of a thread");
  space.AddKnob("bk", AtMost({4, 8, 16, 32}, std::max<int64_t>(4, NextPow2(g.k)), 4),
                "filter taps (C*R*S) per reduction step");
  space.AddKnob("stages", {1, 2}, "shared-memory buffers (2: load step k+1 while computing k)");
  std::vector<int64_t> vecs = {1};
  for (int64_t v : {2, 4}) {
    if (g.k % v == 0 || (s.pointwise() && g.pq % v == 0)) {
      vecs.push_back(v);
    }
  }
  space.AddKnob("vec", vecs, "elements per global load (weights; pixels of 1x1 convolutions)");
  // Blocks sharing a reduction: deep layers on small images have few pixel tiles and long
  // reductions (C*R*S).
  std::vector<int64_t> gridks = {1};
  if (!EpilogueHasRelu(workload.epilogue())) {
    for (int64_t v : {2, 3, 4, 6, 8, 12, 16}) {
      if (v <= g.k / 64) {
        gridks.push_back(v);
      }
    }
  }
  space.AddKnob("gridk", gridks,
                "blocks that share each tile's reduction (grid z; their sums are added "
                "atomically into a zeroed output; not with a ReLU epilogue)");
  const int64_t kdim = g.k;
  space.AddConstraint("every one of the gridk blocks gets at least one bk step of C*R*S",
                      [kdim](const Config& c) {
                        return GridSplitFits(kdim, KnobValue(c, "bk"), KnobValue(c, "gridk"));
                      });
  space.AddConstraint("bm % tm == 0",
                      [](const Config& c) { return KnobValue(c, "bm") % KnobValue(c, "tm") == 0; });
  space.AddConstraint("bn % tn == 0",
                      [](const Config& c) { return KnobValue(c, "bn") % KnobValue(c, "tn") == 0; });
  space.AddConstraint("bk * tm * tn <= 4096 (size of the unrolled step)", [](const Config& c) {
    return KnobValue(c, "bk") * KnobValue(c, "tm") * KnobValue(c, "tn") <= 4096;
  });
  const int64_t n = g.n;
  space.AddConstraint("ceil(K / bn) <= 65535 (grid y)",
                      [n](const Config& c) { return GpuCeilDiv(n, KnobValue(c, "bn")) <= 65535; });
  AddGpuLimitConstraints(space, arch, [s](const Config& c) {
    const Knobs k = KnobsOf(c);
    GpuBlockCost cost;
    if (k.bm % k.tm != 0 || k.bn % k.tn != 0) {
      return cost;
    }
    const MatmulTiling t = TilingOf(k);
    const int64_t la = LanesA(s, k);
    cost.threads = t.Threads();
    cost.shared_bytes = t.SharedFloats() * 4;
    // Plus the hoisted image offset and window origin of each gathered pixel.
    cost.registers = t.Registers(la, LanesB(s, k)) + 3 * GpuCeilDiv(k.bk * k.bm / la, t.Threads());
    return cost;
  });
  return space;
}

// The preferred tilings (grid split 1), best first for large layers.
std::vector<Config> Presets(const ConfigSpace& space) {
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  auto make = [&](int64_t bm, int64_t bn, int64_t tm, int64_t tn, int64_t bk) {
    Config c;
    c["bm"] = snap("bm", bm);
    c["bn"] = snap("bn", bn);
    c["tm"] = snap("tm", std::min(tm, c["bm"]));
    c["tn"] = snap("tn", std::min(tn, c["bn"]));
    c["bk"] = snap("bk", bk);
    c["stages"] = 2;
    c["vec"] = snap("vec", 4);
    c["gridk"] = 1;
    return c;
  };
  return {
      make(128, 128, 8, 8, 8), make(128, 128, 8, 8, 16), make(128, 64, 8, 8, 8),
      make(64, 128, 8, 8, 8),  make(64, 64, 8, 8, 8),    make(64, 64, 4, 4, 16),
      make(64, 32, 4, 4, 16),  make(32, 32, 4, 4, 16),   make(32, 16, 4, 2, 16),
      make(16, 16, 2, 2, 16),  make(8, 8, 2, 2, 8),
  };
}

// The presets with the smallest grid split of C*R*S that fills the GPU (MatmulDefault).
Config DefaultConfig(const Workload& workload, const Target& target) {
  const GemmView g = ViewOf(workload.conv2d());
  const ConfigSpace space = Space(workload, target);
  return MatmulDefault(space, Presets(space), {g.m, g.n, g.k}, 120,
                       StrCat("conv2d.gpu.implicit_gemm for ", workload.ToString()));
}

// Every preset with every useful grid split (MatmulSeeds): where the search starts after the
// default.
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  const GemmView g = ViewOf(workload.conv2d());
  const ConfigSpace space = Space(workload, target);
  return MatmulSeeds(space, Presets(space), {g.m, g.n, g.k});
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dGpuImplicitGemm, workload, target, config));
  const Conv2dShape s = workload.conv2d();
  const GemmView g = ViewOf(s);
  const Knobs k = KnobsOf(config);
  const int64_t q = s.q(), rs = s.r * s.s, chw = s.c * s.h * s.w, hw = s.h * s.w;
  ir::Buffer input("input"), weight("weight"), bias("bias"), output("output");
  MatmulProblem p;
  p.m = g.m;
  p.n = g.n;
  p.k = g.k;
  const bool full_m = g.m % k.bm == 0, full_k = g.k % k.bk == 0, full_n = g.n % k.bn == 0;

  // A: the im2col matrix [pixel][tap], gathered.
  const int64_t lanes_a = LanesA(s, k);
  const bool narrow_gather =
      chw + (s.r + s.pad) * s.w < (int64_t{1} << 31) && g.k < (int64_t{1} << 31);
  p.a.lanes = lanes_a;
  p.a.vector_along_k = false;
  p.a.x_lets = [=](const Expr& m) {
    Expr mc = full_m ? m : ir::Min::Make(m, g.m - lanes_a);
    Expr image = mc / g.pq, pq = mc % g.pq;
    std::vector<std::pair<Var, Expr>> lets;
    lets.emplace_back(Var("img"), image * chw);
    if (s.pointwise()) {
      lets.emplace_back(Var("pix"), pq);
    } else {
      lets.emplace_back(Var("iy"), (pq / q) * s.stride - s.pad);
      lets.emplace_back(Var("ix"), (pq % q) * s.stride - s.pad);
    }
    return lets;
  };
  p.a.load = [=](const std::vector<Var>& v, const Expr&, const Expr& tap) -> Expr {
    const int lanes = static_cast<int>(lanes_a);
    Expr zero = ir::BroadcastTo(Expr(0.0f), lanes);
    if (s.pointwise()) {
      Expr c = full_k ? tap : ir::Min::Make(tap, s.c - 1);
      Expr load = ir::Load::Make(input, v[0] + c * hw + v[1], lanes);
      return full_k ? load : ir::Select::Make(tap < s.c, load, zero);
    }
    // The tap's channel and window position, and the offset within one image: int32 where
    // an image fits (the divisions by constants are then 32-bit multiplies, not 64-bit ones).
    auto narrow = [&](const Expr& e) { return narrow_gather ? Cast32(e) : e; };
    Expr tp = narrow(tap);
    Expr zero_index = narrow(Expr(int64_t{0}));
    Expr c = tp / rs, r = (tp / s.s) % s.r, t = tp % s.s;
    Expr y = narrow(v[1]) + r * s.dilation, x = narrow(v[2]) + t * s.dilation;
    Expr inside;
    Expr yc = y, xc = x;
    if (s.pad > 0) {
      inside = y >= zero_index && y < s.h && x >= zero_index && x < s.w;
      yc = ir::Max::Make(ir::Min::Make(y, s.h - 1), zero_index);
      xc = ir::Max::Make(ir::Min::Make(x, s.w - 1), zero_index);
    }
    if (!full_k) {
      inside = inside.defined() ? (tp < g.k && inside) : (tp < g.k);
      c = ir::Min::Make(c, s.c - 1);
    }
    Expr offset = (c * s.h + yc) * s.w + xc;
    if (narrow_gather) {
      offset = ir::Cast::Make(ir::Type::Int64(), offset);
    }
    Expr load = ir::Load::Make(input, v[0] + offset, lanes);
    return inside.defined() ? ir::Select::Make(inside, load, zero) : load;
  };

  // B: the weights as [tap][channel] = weight[channel][tap].
  const int64_t lanes_b = LanesB(s, k);
  p.b.lanes = lanes_b;
  p.b.vector_along_k = true;
  p.b.load = [=](const std::vector<Var>&, const Expr& ch, const Expr& tap) -> Expr {
    const int lanes = static_cast<int>(lanes_b);
    if (full_n && full_k) {
      return ir::Load::Make(weight, ch * g.k + tap, lanes);
    }
    Expr row = full_n ? ch : ir::Min::Make(ch, g.n - 1);
    Expr col = full_k ? tap : ir::Min::Make(tap, g.k - lanes);
    Expr in = full_n ? (tap < g.k) : (full_k ? (ch < g.n) : (ch < g.n && tap < g.k));
    return ir::Select::Make(in, ir::Load::Make(weight, row * g.k + col, lanes),
                            ir::BroadcastTo(Expr(0.0f), lanes));
  };

  p.out.lanes = LanesDividing(4, {g.pq});
  p.out.contiguous_along_m = true;
  p.out.index = [=](const Expr& m, const Expr& ch) {
    return ((m / g.pq) * s.k + ch) * g.pq + m % g.pq;
  };
  p.out_buffer = output;
  p.epilogue = workload.epilogue();
  p.bias = bias;

  ir::LoweredFunc func;
  func.name = std::string(func_name);
  func.params = {input, weight};
  if (EpilogueHasBias(workload.epilogue())) {
    func.params.push_back(bias);
  }
  func.params.push_back(output);
  func.body = BuildTiledMatmul(p, TilingOf(k));
  return func;
}

}  // namespace

const KernelTemplate kConv2dGpuImplicitGemm = {
    .name = "conv2d.gpu.implicit_gemm",
    .version = 3,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kGpu,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    // K past 65535 blocks of the widest tile has no valid config (the grid's y).
    .applies = [](const Workload& w, const Target&) { return SimtGridFitsColumns(w.conv2d().k); },
    .seeds = &Seeds,
};

}  // namespace tune
