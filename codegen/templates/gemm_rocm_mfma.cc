#include "codegen/templates/gemm_rocm_mfma.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/split_reduction.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "codegen/templates/wave_mma_kernel.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

int64_t InputBytes(const Workload& w) { return ElementBytes(w.input_type()); }

}  // namespace

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
  auto accumulators = [per_tile](const WaveMmaKnobs& k) {
    const int64_t tile = per_tile > 0 ? per_tile : (k.inst == 32 ? 16 : 4);
    return k.MTiles() * k.NTiles() * tile;
  };
  space.AddConstraint("accumulators per lane <= 128 (wave tile / inst tiles x 16, 4 or 8)",
                      [accumulators](const Config& c) {
                        const WaveMmaKnobs k = WaveMmaKnobsOf(c);
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
    const WaveMmaKnobs k = WaveMmaKnobsOf(c);
    GpuBlockCost cost;
    cost.threads = lanes_per_wave * k.waves_m * k.waves_n;
    cost.shared_bytes = PaddedTileLayout(k.bm, k.bn, k.bk, bytes, nt).Bytes(k.stages, bytes);
    const int inst_k = k.inst == 32 ? k32 : k16;
    if (k.Tiled() && inst_k > 0) {
      const int64_t lanes = std::max<int64_t>(1, k.copy / bytes);
      const int64_t staged = WaveMmaChunksPerThread(k.bm, k.bk, lanes, cost.threads) +
                             (nt ? WaveMmaChunksPerThread(k.bn, k.bk, lanes, cost.threads)
                                 : WaveMmaChunksPerThread(k.bk, k.bn, lanes, cost.threads));
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
  if (GpuArchOrDefault(target).name == "gfx942") {
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

ir::LoweredFunc BuildWaveMmaKernel(const ImplicitGemm& g, const Target& target,
                                   const Config& config, std::string_view func_name) {
  return BuildWaveMmaKernel(g, target, WaveMmaKnobsOf(config), func_name);
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
