#include "codegen/templates/conv2d_gpu_direct.h"

#include <algorithm>
#include <string>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Barrier;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::LetStmt;
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;

struct Knobs {
  int64_t tf, ty, tx, rc, vf, vx;
};

Knobs KnobsOf(const Config& c) {
  return {KnobValue(c, "tile_f"),  KnobValue(c, "tile_y"), KnobValue(c, "tile_x"),
          KnobValue(c, "tile_rc"), KnobValue(c, "vf"),     KnobValue(c, "vx")};
}

int64_t PatchRows(const Conv2dShape& s, const Knobs& k) {
  return (k.ty - 1) * s.stride + (s.r - 1) * s.dilation + 1;
}
int64_t PatchCols(const Conv2dShape& s, const Knobs& k) {
  return (k.tx - 1) * s.stride + (s.s - 1) * s.dilation + 1;
}
// Threads that own outputs, and the block's threads (rounded up to a whole warp).
int64_t WorkThreads(const Knobs& k) { return (k.tf / k.vf) * k.ty * (k.tx / k.vx); }
int64_t BlockThreads(const Knobs& k, int64_t warp) {
  const int64_t t = WorkThreads(k);
  return t < warp ? t : GpuCeilDiv(t, warp) * warp;
}

// Candidates up to `extent`, with `extent` itself when it is small (a tile covers it whole).
std::vector<int64_t> SpatialCandidates(int64_t extent) {
  std::vector<int64_t> c = {1, 2, 4, 7, 8, 14, 16, 28, 32};
  if (extent <= 32) {
    c.push_back(extent);
  }
  return AtMost(c, extent, 1);
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const GpuArch arch = GpuArchOrDefault(target);
  ConfigSpace space;
  space.AddKnob("tile_f", AtMost({1, 2, 4, 8, 16, 32, 64}, NextPow2(s.k), 1),
                "output channels per block");
  space.AddKnob("tile_y", SpatialCandidates(s.p()), "output rows per block");
  space.AddKnob("tile_x", SpatialCandidates(s.q()), "output columns per block");
  space.AddKnob("tile_rc", AtMost({1, 2, 4, 8, 16, 32}, NextPow2(s.c), 1),
                "input channels per reduction step (staged in shared memory)");
  space.AddKnob("vf", AtMost({1, 2, 4, 8}, NextPow2(s.k), 1), "output channels per thread");
  space.AddKnob("vx", {1, 2, 4}, "output columns per thread");
  space.AddConstraint("tile_f % vf == 0", [](const Config& c) {
    return KnobValue(c, "tile_f") % KnobValue(c, "vf") == 0;
  });
  space.AddConstraint("tile_x % vx == 0", [](const Config& c) {
    return KnobValue(c, "tile_x") % KnobValue(c, "vx") == 0;
  });
  const int64_t taps = s.r * s.s;
  space.AddConstraint(
      "tile_rc * R * S * vf * vx <= 4096 (size of the unrolled step)", [taps](const Config& c) {
        return KnobValue(c, "tile_rc") * taps * KnobValue(c, "vf") * KnobValue(c, "vx") <= 4096;
      });
  const int64_t warp = arch.warp_size;
  AddGpuLimitConstraints(space, arch, [s, warp](const Config& c) {
    const Knobs k = KnobsOf(c);
    GpuBlockCost cost;
    if (k.tf % k.vf != 0 || k.tx % k.vx != 0) {
      return cost;
    }
    cost.threads = BlockThreads(k, warp);
    cost.shared_bytes = 4 * (k.rc * PatchRows(s, k) * PatchCols(s, k) + k.tf * k.rc * s.r * s.s);
    cost.registers = k.vf * k.vx + k.vf + k.vx + 32;
    return cost;
  });
  return space;
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const ConfigSpace space = Space(workload, target);
  auto snap = [&](std::string_view knob, int64_t want) {
    return LargestAtMost(space.FindKnob(knob)->values, want);
  };
  std::vector<Config> presets;
  for (auto [tf, ty, tx, rc, vf, vx] : std::vector<std::array<int64_t, 6>>{
           {32, 4, 16, 8, 4, 2},
           {32, 8, 8, 8, 4, 1},
           {64, 7, 7, 8, 4, 1},
           {32, 7, 7, 16, 2, 1},
           {16, 4, 8, 8, 2, 1},
           {8, 2, 8, 4, 2, 1},
           {4, 1, 4, 4, 1, 1},
       }) {
    Config c;
    c["tile_f"] = snap("tile_f", tf);
    c["tile_y"] = snap("tile_y", ty);
    c["tile_x"] = snap("tile_x", tx);
    c["tile_rc"] = snap("tile_rc", rc);
    c["vf"] = snap("vf", std::min(vf, c["tile_f"]));
    c["vx"] = snap("vx", std::min(vx, c["tile_x"]));
    presets.push_back(c);
  }
  auto blocks = [&](const Config& c) {
    return s.n * GpuCeilDiv(s.k, c.at("tile_f")) * GpuCeilDiv(s.p(), c.at("tile_y")) *
           GpuCeilDiv(s.q(), c.at("tile_x"));
  };
  const Config* most = nullptr;
  for (const Config& c : presets) {
    if (!space.IsValid(c)) {
      continue;
    }
    if (blocks(c) >= 120) {
      return c;
    }
    if (most == nullptr || blocks(c) > blocks(*most)) {
      most = &c;
    }
  }
  if (most != nullptr) {
    return *most;
  }
  std::vector<Config> any = space.EnumerateValid(1);
  TUNE_CHECK(!any.empty()) << "conv2d.gpu.direct has no valid config for " << workload.ToString();
  return any.front();
}

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dGpuDirect, workload, target, config));
  const Conv2dShape s = workload.conv2d();
  const Knobs k = KnobsOf(config);
  const GpuArch arch = GpuArchOrDefault(target);
  const int64_t p = s.p(), q = s.q(), taps = s.r * s.s;
  const int64_t ph = PatchRows(s, k), pw = PatchCols(s, k);
  const int64_t threads = BlockThreads(k, arch.warp_size), work = WorkThreads(k);
  const int64_t tiles_y = GpuCeilDiv(p, k.ty), tiles_x = GpuCeilDiv(q, k.tx);
  Buffer input("input"), weight("weight"), bias("bias"), output("output");
  Buffer patch("patch", MemoryScope::kGpuShared), wsh("weight_shared", MemoryScope::kGpuShared);
  Buffer acc("acc", MemoryScope::kGpuLocal), wf("w_frag", MemoryScope::kGpuLocal),
      xf("x_frag", MemoryScope::kGpuLocal);
  Var b_sp("b_sp"), b_f("b_f"), b_n("b_n"), tx("tx");
  Var oy0("oy0"), ox0("ox0"), f0("f0");
  Var tfi("tfi"), tyi("tyi"), txi("txi"), rc0("rc0");

  // Cooperative copies: element e = tx + j * threads of a flattened tile.
  auto copy = [&](int64_t total, const std::function<Stmt(const Expr&)>& element) {
    Var j("j");
    Expr e = tx + j * threads;
    Stmt body = element(e);
    if (total % threads != 0) {
      body = IfThenElse::Make(e < total, body);
    }
    return For::Make(j, 0, GpuCeilDiv(total, threads), LoopKind::kSerial, body);
  };
  // The input patch: channels [rc0, rc0 + rc) x the rows and columns the tile reads.
  Stmt copy_patch = copy(k.rc * ph * pw, [&](const Expr& e) {
    Expr c = e / (ph * pw), yy = (e / pw) % ph, xx = e % pw;
    Expr ch = rc0 + c, y = oy0 * s.stride - s.pad + yy, x = ox0 * s.stride - s.pad + xx;
    Expr inside = ch < s.c && y >= Expr(int64_t{0}) && y < s.h && x >= Expr(int64_t{0}) && x < s.w;
    Expr yc = ir::Max::Make(ir::Min::Make(y, s.h - 1), Expr(int64_t{0}));
    Expr xc = ir::Max::Make(ir::Min::Make(x, s.w - 1), Expr(int64_t{0}));
    Expr chc = ir::Min::Make(ch, s.c - 1);
    Expr value =
        ir::Select::Make(inside, input(((b_n * s.c + chc) * s.h + yc) * s.w + xc), Expr(0.0f));
    return Store::Make(patch, e, value);
  });
  // The weights: [tap-major] weight_shared[(c * taps + tap) * tile_f + f].
  Stmt copy_weights = copy(k.tf * k.rc * taps, [&](const Expr& e) {
    Expr f = e / (k.rc * taps), crs = e % (k.rc * taps);
    Expr ch = rc0 + crs / taps;
    Expr inside = f0 + f < s.k && ch < s.c;
    Expr index = ir::Min::Make(f0 + f, s.k - 1) * (s.c * taps) + ir::Min::Make(ch, s.c - 1) * taps +
                 crs % taps;
    return Store::Make(wsh, crs * k.tf + f, ir::Select::Make(inside, weight(index), Expr(0.0f)));
  });

  // The register tile: vf channels x vx columns of row tyi.
  std::vector<Stmt> compute;
  const int64_t fchunk = k.vf % 4 == 0 ? 4 : (k.vf % 2 == 0 ? 2 : 1);
  for (int64_t c = 0; c < k.rc; ++c) {
    for (int64_t r = 0; r < s.r; ++r) {
      for (int64_t t = 0; t < s.s; ++t) {
        const int64_t tap = r * s.s + t;
        for (int64_t f = 0; f < k.vf; f += fchunk) {
          Expr src = (c * taps + tap) * k.tf + tfi * k.vf + f;
          Expr dst = fchunk == 1 ? Expr(f) : ir::Ramp::Make(f, 1, static_cast<int>(fchunk));
          compute.push_back(Store::Make(wf, dst, Load::Make(wsh, src, static_cast<int>(fchunk))));
        }
        for (int64_t x = 0; x < k.vx; ++x) {
          Expr row = tyi * s.stride + r * s.dilation;
          Expr col = (txi * k.vx + x) * s.stride + t * s.dilation;
          compute.push_back(Store::Make(xf, x, patch((c * ph + row) * pw + col)));
        }
        for (int64_t f = 0; f < k.vf; ++f) {
          for (int64_t x = 0; x < k.vx; ++x) {
            const int64_t i = f * k.vx + x;
            compute.push_back(Store::Make(acc, i, ir::Fma::Make(wf(f), xf(x), acc(i))));
          }
        }
      }
    }
  }
  Stmt step = Block::Make({
      Barrier::Make(),
      copy_patch,
      copy_weights,
      Barrier::Make(),
      work == threads ? Block::Make(std::move(compute))
                      : IfThenElse::Make(tx < work, Block::Make(std::move(compute))),
  });
  Var step_index("rs");
  Stmt reduction = For::Make(step_index, 0, GpuCeilDiv(s.c, k.rc), LoopKind::kSerial,
                             LetStmt::Make(rc0, step_index * k.rc, step));

  // Stores with the epilogue, guarded at the edges.
  std::vector<Stmt> stores;
  for (int64_t f = 0; f < k.vf; ++f) {
    for (int64_t x = 0; x < k.vx; ++x) {
      Expr ch = f0 + tfi * k.vf + f, y = oy0 + tyi, col = ox0 + txi * k.vx + x;
      Expr value = ApplyEpilogue(workload.epilogue(), acc(f * k.vx + x),
                                 EpilogueHasBias(workload.epilogue()) ? bias(ch) : Expr());
      Stmt st = Store::Make(output, ((b_n * s.k + ch) * p + y) * q + col, value);
      Expr cond;
      auto add = [&](Expr c) { cond = cond.defined() ? (cond && c) : c; };
      if (s.k % k.tf != 0) {
        add(ch < s.k);
      }
      if (p % k.ty != 0) {
        add(y < p);
      }
      if (q % k.tx != 0) {
        add(col < q);
      }
      stores.push_back(cond.defined() ? IfThenElse::Make(cond, st) : st);
    }
  }
  Stmt store = Block::Make(std::move(stores));
  if (work != threads) {
    store = IfThenElse::Make(tx < work, store);
  }
  Var zi("i");
  Stmt thread = Block::Make({
      For::Make(zi, 0, k.vf * k.vx, LoopKind::kUnrolled, Store::Make(acc, zi, Expr(0.0f))),
      reduction,
      store,
  });
  // Thread coordinates: columns fastest, then rows, then channel groups.
  const int64_t xs = k.tx / k.vx;
  thread = LetStmt::Make(tfi, tx / (xs * k.ty), thread);
  thread = LetStmt::Make(tyi, (tx / xs) % k.ty, thread);
  thread = LetStmt::Make(txi, tx % xs, thread);
  thread = Allocate::Make(xf, k.vx, thread);
  thread = Allocate::Make(wf, k.vf, thread);
  thread = Allocate::Make(acc, k.vf * k.vx, thread);
  Stmt body = For::Make(tx, 0, threads, LoopKind::kGpuThread, thread, 0);
  body = Allocate::Make(wsh, k.tf * k.rc * taps, body);
  body = Allocate::Make(patch, k.rc * ph * pw, body);
  body = LetStmt::Make(f0, b_f * k.tf, body);
  body = LetStmt::Make(ox0, (b_sp % tiles_x) * k.tx, body);
  body = LetStmt::Make(oy0, (b_sp / tiles_x) * k.ty, body);
  body = For::Make(b_n, 0, s.n, LoopKind::kGpuBlock, body, 2);
  body = For::Make(b_f, 0, GpuCeilDiv(s.k, k.tf), LoopKind::kGpuBlock, body, 1);
  body = For::Make(b_sp, 0, tiles_y * tiles_x, LoopKind::kGpuBlock, body, 0);

  ir::LoweredFunc func;
  func.name = std::string(func_name);
  func.params = {input, weight};
  if (EpilogueHasBias(workload.epilogue())) {
    func.params.push_back(bias);
  }
  func.params.push_back(output);
  func.body = body;
  return func;
}

}  // namespace

const KernelTemplate kConv2dGpuDirect = {
    .name = "conv2d.gpu.direct",
    .version = 1,
    .op = OpKind::kConv2d,
    .targets = TemplateTargets::kGpu,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
};

}  // namespace tune
