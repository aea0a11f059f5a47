#include "codegen/templates/gemm_cuda_wgmma.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/split_reduction.h"
#include "codegen/templates/stream_k.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "codegen/templates/wgmma_kernel.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

constexpr char kArch[] = "sm_90a";

// Whether C's rows are whole 16-byte chunks, as the staged output tile's copies write them.
bool SixteenByteRows(const ImplicitGemm& g) {
  return g.n * ElementBytes(g.workload.out_type()) % 16 == 0;
}

int64_t InputBytes(const Workload& w) { return ElementBytes(w.input_type()); }

// What stream-K's constraint needs of a product (the space outlives the ImplicitGemm).
struct StreamKShape {
  int64_t m, n, steps;
  explicit StreamKShape(const ImplicitGemm& g) : m(g.m), n(g.n), steps(WgmmaCostShape(g).k_steps) {}
  int64_t Tiles(int64_t bm, int64_t bn) const { return GpuCeilDiv(m, bm) * GpuCeilDiv(n, bn); }
};

// Knob streamk's values: 0, and 1 and 2 where the product has more steps of K (of its
// smallest tiles) than two per block of the grid.
std::vector<int64_t> StreamKValues(const StreamKShape& shape) {
  std::vector<int64_t> values = {0};
  for (int64_t s : {1, 2}) {
    if (StreamKPartition::Fits(shape.Tiles(64, 32), shape.steps, s * kGpuMultiprocessorsGuess, 2)) {
      values.push_back(s);
    }
  }
  return values;
}

bool StreamKFits(const StreamKShape& shape, const Config& c) {
  const int64_t streamk = KnobValue(c, "streamk");
  if (streamk == 0) {
    return true;
  }
  if (KnobValue(c, "gridk") != 1 || KnobValue(c, "wg_k") != 1 || KnobValue(c, "stage_c") != 0) {
    return false;
  }
  const int64_t bm = KnobValue(c, "bm"), bn = KnobValue(c, "bn");
  const int64_t tiles = shape.Tiles(bm, bn), steps = shape.steps;
  const int64_t blocks = streamk * kGpuMultiprocessorsGuess;
  if (!StreamKPartition::Fits(tiles, steps, blocks, 2)) {
    return false;
  }
  return SplitWorkspaceBytes(tiles, bm, bn, StreamKPartition(tiles, steps, blocks).MaxParts()) <=
         kSplitWorkspaceLimitBytes;
}

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
  ConfigSpace space;
  space.AddKnob("bm", AtMost({64, 128, 192, 256}, std::max<int64_t>(64, NextPow2(g.m)), 64),
                "rows of C per block (m64 steps of the warpgroups)");
  space.AddKnob("bn",
                AtMost({32, 48, 64, 96, 128, 192, 256}, std::max<int64_t>(32, NextPow2(g.n)), 32),
                "columns of C per block");
  space.AddKnob("wg_m", {1, 2}, "warpgroups along M (each takes bm / wg_m rows)");
  space.AddKnob("wg_n", {1, 2}, "warpgroups along N (each one m64n<bn / wg_n> instruction)");
  space.AddKnob("wg_k", {1, 2, 4},
                "warpgroups along K: the block's steps of K split into wg_k ranges, each reduced "
                "by wg_m x wg_n warpgroups of its own and their sums added through shared memory "
                "(shorter chains of steps for skinny shapes, whose outputs are few)");
  space.AddKnob("stages", {3, 4, 5, 6, 8, 12, 16},
                "shared-memory buffers of 128 bytes of K per row (cp.async copies issued "
                "stages - 2 steps ahead; a TMA producer keeps every buffer in flight); 8 to 16 "
                "for skinny products that stream B from memory");
  space.AddKnob("copy", g.CopyWidths(),
                "bytes per global-to-shared copy (cp.async of 16, 8 or 4 bytes; smaller: element "
                "by element through registers)");
  space.AddKnob("raster", {1, 4, 8, 16},
                "block rows per raster group (blocks of a group share B's tiles in L2)");
  space.AddKnob("gridk", GridSplits(WgmmaCostShape(g).k_steps),
                "blocks that share each tile's reduction (grid z; each parks its partial tile in "
                "a workspace, and the tile's last block adds them and runs the epilogue)");
  space.AddKnob("streamk", StreamKValues(StreamKShape(g)),
                "stream-K: 0 off; s: a persistent grid of s blocks per multiprocessor (of a "
                "132-multiprocessor GPU) shares the tiles' steps of K evenly, tile by tile, the "
                "blocks that share a tile parking their parts for the last to add");
  space.AddKnob("stage_c",
                SixteenByteRows(g) ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: the block's output tile is staged in shared memory and written in 16-byte "
                "rows (coalesced); 0: each thread stores its accumulator pairs");
  space.AddKnob("tma", g.TmaReadable() ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: a producer warpgroup's one thread streams the tiles with TMA copies through "
                "mbarriers while the other warpgroups multiply (warp specialisation); 0: every "
                "thread issues cp.async copies between block barriers");
  const bool clusters = g.TmaReadable() && g.b_k_major;
  space.AddKnob("cluster", clusters ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1},
                "blocks per thread-block cluster along M: 2 pairs the blocks of neighbouring tile "
                "rows, whose producers each copy half of their common tile of B into both "
                "(TMA multicast), so that L2 serves B's tiles once per pair (offered where TMA "
                "reads a K-major B)");
  // A's rows are shared through multicast where TMA reads them in tiled boxes (no im2col map)
  // and a tile holds them whole (M of at least 64 rows).
  const bool share_a = g.TmaReadable() && !g.Im2colA() && g.m >= 64;
  space.AddKnob("cluster_n", share_a ? std::vector<int64_t>{1, 2, 4} : std::vector<int64_t>{1},
                "blocks per thread-block cluster along N: 2 or 4 group the blocks of neighbouring "
                "tile columns, whose producers each copy their share of the rows of their common "
                "tile of A into all of them (TMA multicast), so that L2 serves A's tiles once per "
                "group (with cluster 2, a cluster of 2 x cluster_n tiles, each sharing B along "
                "its columns and A along its rows; offered where TMA reads A in tiled boxes)");
  space.AddKnob("blocks", {1, 2},
                "blocks per multiprocessor the kernel is compiled for: 2 halves each thread's "
                "registers (.minnctapersm; a TMA pipeline's consumers get half the "
                "multiprocessor's registers less the producer's) so that two blocks run at once, "
                "one multiplying while the other fills its ring or stores (TMA pipelines of 1 "
                "otherwise run one block per multiprocessor: their register split takes all)");
  space.AddKnob("persistent",
                g.TmaReadable() ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0},
                "1: a TMA pipeline on a persistent grid of `blocks` blocks per multiprocessor "
                "(of a 132-multiprocessor GPU), each taking every grid-th tile in raster order "
                "through one ring of stages, so that its producer streams the next tile's first "
                "stages while its consumers store the last (CUTLASS's persistent schedules); "
                "0: a block per tile");
  space.AddKnob("promote_steps",
                WgmmaPromotes(dtype) ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1},
                "8-bit floats: steps of K (128 each) whose products the tensor cores add before "
                "the warpgroup waits for them and adds them into its float32 sums (2: half as "
                "many waits; needs tma 1)");
  space.AddKnob("split_cluster", {0, 1},
                "1: a grid split's gridk blocks of a tile form one thread-block cluster (gridk "
                "up to 8), and after a cluster barrier each adds its 1 / gridk of the tile's "
                "partial tiles and stores it, so that gridk blocks read the workspace at once; "
                "0: the tile's last block to arrive adds them all");
  if (ResidentPipelineApplies(g)) {
    space.AddKnob("resident", {0, 1},
                  "1: the resident pipeline (wgmma_kernel.h): a persistent grid of `blocks` "
                  "blocks per multiprocessor, each filling every step's stage of B once and "
                  "keeping it, then taking tiles in turn, the next tile's A copied while this one "
                  "multiplies (a 1x1 convolution's A direct; narrow channels' input rows staged "
                  "whole and A built from them in shared memory, conv_window.h); 0: a block per "
                  "tile");
  }
  const int64_t first_copy = g.CopyWidths().front();
  space.AddConstraint("tma needs wg_k == 1 (and takes the first copy width: TMA ignores it)",
                      [first_copy](const Config& c) {
                        return KnobValue(c, "tma") == 0 ||
                               (KnobValue(c, "wg_k") == 1 && KnobValue(c, "copy") == first_copy);
                      });
  space.AddConstraint("promote_steps 2 needs tma 1", [](const Config& c) {
    return KnobValue(c, "promote_steps") == 1 || KnobValue(c, "tma") == 1;
  });
  if (space.FindKnob("resident") != nullptr) {
    space.AddConstraint(
        "resident 1 needs one warpgroup (wg_m, wg_n, wg_k 1), bn >= N, no TMA, grid split, "
        "stream-K, persistent grid or cluster, and takes the first copy width, 3 stages and "
        "raster 1 (it ignores them)",
        [n = g.n, first_copy](const Config& c) {
          if (KnobValue(c, "resident") == 0) {
            return true;
          }
          for (const char* knob :
               {"wg_m", "wg_n", "wg_k", "gridk", "raster", "cluster", "cluster_n"}) {
            if (KnobValue(c, knob) != 1) {
              return false;
            }
          }
          return KnobValue(c, "bn") >= n && KnobValue(c, "tma") == 0 &&
                 KnobValue(c, "streamk") == 0 && KnobValue(c, "persistent") == 0 &&
                 KnobValue(c, "copy") == first_copy && KnobValue(c, "stages") == 3;
        });
  }
  AddSplitWorkspaceConstraint(space, g);
  space.AddConstraint(
      "streamk needs gridk == 1, wg_k == 1 and stage_c == 0, at least two steps of K per block "
      "and a workspace within 64 MiB",
      [shape = StreamKShape(g)](const Config& c) { return StreamKFits(shape, c); });
  space.AddConstraint("cluster 2 needs tma 1, gridk 1 and streamk 0, and bn a multiple of 16",
                      [](const Config& c) {
                        return KnobValue(c, "cluster") == 1 ||
                               (KnobValue(c, "tma") == 1 && KnobValue(c, "gridk") == 1 &&
                                KnobValue(c, "streamk") == 0 && KnobValue(c, "bn") % 16 == 0);
                      });
  // Each block copies bm / cluster_n of A's rows: a whole box of A (no rows cut off at M) in
  // shares of whole 8-row swizzle atoms.
  space.AddConstraint(
      "cluster_n 2 or 4 needs tma 1, gridk 1 and streamk 0, and bm >= 16 x cluster_n, at most M "
      "rounded up to 8",
      [m8 = GpuCeilDiv(g.m, 8) * 8](const Config& c) {
        const int64_t cluster_n = KnobValue(c, "cluster_n"), bm = KnobValue(c, "bm");
        return cluster_n == 1 || (KnobValue(c, "tma") == 1 && KnobValue(c, "gridk") == 1 &&
                                  KnobValue(c, "streamk") == 0 && bm >= 16 * cluster_n && bm <= m8);
      });
  space.AddConstraint(
      "persistent 1 needs tma 1, gridk 1 and streamk 0, and more tiles than its grid has blocks "
      "(blocks x 132; in clusters, more rectangles of cluster x cluster_n tiles than one wave "
      "holds clusters)",
      [m = g.m, n = g.n](const Config& c) {
        if (KnobValue(c, "persistent") == 0) {
          return true;
        }
        const int64_t cm = KnobValue(c, "cluster"), cn = KnobValue(c, "cluster_n");
        const int64_t units = GpuCeilDiv(GpuCeilDiv(m, KnobValue(c, "bm")), cm) *
                              GpuCeilDiv(GpuCeilDiv(n, KnobValue(c, "bn")), cn);
        const int64_t grid = cm * cn == 1 ? KnobValue(c, "blocks") * kGpuMultiprocessorsGuess
                                          : ClusterWaveBlocks(cm * cn) / (cm * cn);
        return KnobValue(c, "tma") == 1 && KnobValue(c, "gridk") == 1 &&
               KnobValue(c, "streamk") == 0 && units > grid;
      });
  space.AddConstraint("split_cluster 1 needs gridk of 2 to 8 (a cluster of at most 8 blocks)",
                      [](const Config& c) {
                        const int64_t gridk = KnobValue(c, "gridk");
                        return KnobValue(c, "split_cluster") == 0 || (gridk >= 2 && gridk <= 8);
                      });
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
        const WgmmaKnobs k = WgmmaKnobsOf(c, shape);
        return k.bm % (64 * k.wg_m) != 0 || k.AccumulatorRegisters() <= 128;
      });
  const int64_t kdim = g.k;
  const int64_t bk = kWgmmaRowBytes / InputBytes(workload);
  space.AddConstraint(
      "every one of the gridk blocks gets at least one step of K",
      [kdim, bk](const Config& c) { return GridSplitFits(kdim, bk, KnobValue(c, "gridk")); });
  // Registers: the accumulators, and addresses, descriptors and the copy loop's state.
  auto cost = [shape = WgmmaCostShape(g)](const Config& c) {
    const WgmmaKnobs k = WgmmaKnobsOf(c, shape);
    GpuBlockCost cost;
    cost.threads = k.Threads();
    cost.shared_bytes = k.SharedBytes();
    if (k.bm % (64 * k.wg_m) == 0 && k.bn % k.wg_n == 0) {
      // Stream-K holds ~40 more: its segment's state (ptxas: 162 for 128 x 128 tiles).
      cost.registers = k.AccumulatorRegisters() + 56 + (k.streamk > 0 ? 40 : 0);
      if (k.tma == 1 && k.streamk == 0) {
        // The block's average: the producer gives registers to the consumers (not with
        // stream-K, whose segments' finishes the producer's warpgroup shares).
        cost.registers = (128 * WgmmaKnobs::kProducerRegisters + k.SplitThreads() * cost.registers +
                          k.Threads() - 1) /
                         k.Threads();
      }
    }
    return cost;
  };
  // streamk 2 launches two blocks per multiprocessor, which must be resident together (else
  // the second half of the grid runs as a second wave).
  space.AddConstraint(
      "streamk 2 needs two blocks per multiprocessor: twice the shared memory within the "
      "multiprocessor's and twice (the registers' estimate + 40) x threads within 65536",
      [shape = WgmmaCostShape(g), arch](const Config& c) {
        const WgmmaKnobs k = WgmmaKnobsOf(c, shape);
        if (k.streamk != 2 || k.bm % (64 * k.wg_m) != 0) {
          return true;
        }
        return 2 * k.SharedBytes() <= arch.max_dynamic_shared_bytes_per_block &&
               2 * (k.AccumulatorRegisters() + 56 + 40) * k.Threads() <=
                   arch.registers_per_multiprocessor;
      });
  space.AddConstraint(
      "blocks 2 needs streamk 0, cluster 1 and cluster_n 1, twice the shared memory within a "
      "block's limit, "
      "and the registers' estimate (accumulators + 56) within half the multiprocessor's share "
      "(with a TMA register split: within the consumers' setmaxnreg budget)",
      [shape = WgmmaCostShape(g), arch](const Config& c) {
        const WgmmaKnobs k = WgmmaKnobsOf(c, shape);
        if (k.blocks == 1) {
          return true;
        }
        if (k.streamk != 0 || k.ClusterBlocks() != 1 || k.bm % (64 * k.wg_m) != 0 ||
            2 * k.SharedBytes() > arch.max_dynamic_shared_bytes_per_block) {
          return false;
        }
        const int64_t needed = k.AccumulatorRegisters() + 56;
        if (k.tma == 1) {
          return needed <= k.ConsumerRegisters();
        }
        return needed * k.Threads() * 2 <= arch.registers_per_multiprocessor;
      });
  AddGpuLimitConstraints(space, arch, cost,
                         {.dynamic_shared = true, .one_block_per_multiprocessor = true});
  return space;
}

ir::LoweredFunc BuildWgmmaKernel(const ImplicitGemm& g, const Config& config,
                                 std::string_view func_name) {
  return BuildWgmmaKernel(g, WgmmaKnobsOf(config, WgmmaCostShape(g)), func_name);
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
    .version = 15,
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
