// The kernel of gemm.cuda.wgmma and conv2d.cuda.wgmma (the templates' spaces, presets and seeds
// are gemm_cuda_wgmma.h's): its knobs as numbers, what they cost (threads, shared memory,
// registers) and the kernel they build for an ImplicitGemm. gemm_cuda_wgmma.h describes the
// kernel's shape knob by knob.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "codegen/ir/ir.h"
#include "codegen/templates/gpu_template_util.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "common/element_type.h"
#include "search/config_space.h"

namespace tune {

/// Bytes of K per staged row of A and B: one 128-byte swizzle atom (64 bf16, 32 tf32, 128 fp8).
inline constexpr int64_t kWgmmaRowBytes = 128;

/// Whether the kernels of `dtype` promote their sums: fp8 wgmma adds its products with fewer
/// bits than float32 keeps (as DeepGEMM measured on Hopper), which over K = 4096 puts outputs
/// past the bound, so each step's instructions add into a second set of accumulators, zeroed
/// before them and added into the first after them (in float32).
bool WgmmaPromotes(Dtype dtype);

/// A config of the wgmma kernel, knob by knob (gemm_cuda_wgmma.cc's WgmmaSpace names them), with
/// what its costs depend on beside the config.
struct WgmmaKnobs {
  int64_t bm, bn, wg_m, wg_n, wg_k, stages, copy, raster, gridk, stage_c, tma, streamk;
  int64_t cluster = 1;     // blocks per thread-block cluster along M, sharing B's tile (multicast)
  int64_t cluster_n = 1;   // blocks per cluster along N, sharing A's tile (multicast)
  int64_t blocks = 1;      // blocks per multiprocessor the kernel is compiled for (its registers)
  int64_t persistent = 0;  // 1: a grid of PersistentBlocks() blocks, each taking whole tiles
  int64_t promote_steps = 1;  // promoted sums: steps of K the tensor cores add per promotion
  int64_t resident = 0;  // 1: the resident pipeline (ResidentPipelineApplies) on a persistent grid
  int64_t split_cluster = 0;  // 1: a tile's gridk blocks form a cluster and share its finish
  bool promote = false;
  int64_t out_bytes = 4;      // C's element size
  int64_t k_steps = 1;        // the product's steps of K (kWgmmaRowBytes each)
  int64_t staging_bytes = 0;  // the resident pipeline's staging buffer (narrow channels)
  bool double_a = false;      // the resident pipeline's A copied direct, in two sets of stages
  // What a stream-K grid counts in (the simulator's tests take a handful).
  int64_t multiprocessors = kGpuMultiprocessorsGuess;

  // Stage buffers per K range: a block whose range has fewer steps than stages never fills the
  // others (step t uses buffer t % stages), so short reductions (a 1x1 convolution's K of 64)
  // keep their shared memory for more blocks per multiprocessor.
  int64_t Buffers() const {
    if (resident == 1) {  // every step's stage, built at once
      return k_steps;
    }
    if (streamk > 0 || persistent == 1) {  // a persistent block's steps go round the whole ring
      return stages;
    }
    const int64_t per_range = ((k_steps + gridk - 1) / gridk + wg_k - 1) / wg_k;
    return std::max<int64_t>(1, std::min(stages, per_range));
  }

  // A's stage buffers per K range: a resident pipeline that copies A direct has two sets, the
  // next tile's copied while this one's are multiplied.
  int64_t ABuffers() const { return double_a ? 2 * Buffers() : Buffers(); }

  /// The persistent grid of a stream-K config: streamk blocks per multiprocessor.
  int64_t StreamKBlocks() const { return streamk * multiprocessors; }

  int64_t ClusterBlocks() const { return cluster * cluster_n; }  // a cluster of tiles' blocks

  /// The grid of a persistent config over `units` output tiles, or rectangles of a cluster's
  /// tiles: `blocks` blocks per multiprocessor, or the clusters one wave holds
  /// (ClusterWaveBlocks, scaled to `multiprocessors`), or one block (cluster) per unit where the
  /// units are fewer.
  int64_t PersistentBlocks(int64_t units) const {
    const int64_t c = ClusterBlocks();
    if (c > 1) {
      const int64_t wave = ClusterWaveBlocks(c) * multiprocessors / kGpuMultiprocessorsGuess;
      return std::min(units, std::max<int64_t>(1, wave / c)) * c;
    }
    return std::min(units, blocks * multiprocessors);
  }
  int64_t SplitThreads() const { return 128 * wg_m * wg_n; }  // the warpgroups of one K range
  // A TMA pipeline's register split (setmaxnreg): the producer's warpgroup keeps
  // kProducerRegisters, the consumers share the rest of the block's launch registers.
  static constexpr int kProducerRegisters = 40;
  // The registers ptxas gives each thread at launch: the block's share of the multiprocessor's
  // 64K (all of it, or half of it with blocks 2) in whole units of 8, at most 255: the
  // `.maxnreg` that the GPU code generator gives a kernel with setmaxnreg.
  int LaunchRegisters() const {
    return static_cast<int>(std::min<int64_t>(255, 65536 / blocks / Threads() / 8 * 8));
  }
  // setmaxnreg.inc takes registers only from the block's own pool, which holds what the
  // producer's warpgroup releases, and waits until the pool has them: a count beyond launch +
  // released / consumer threads never comes, and the block hangs (blocks 2 of 384 threads launch
  // with 80, not 85: 104 hung on an H100, 2026-12-06).
  int ConsumerRegisters() const {
    const int64_t launch = LaunchRegisters();
    const int64_t released = (launch - kProducerRegisters) * 128;
    return static_cast<int>(std::min<int64_t>(256, (launch + released / SplitThreads()) / 8 * 8));
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
  // the staged output tile and the resident pipeline's staging.
  int64_t SharedBytes() const {
    return wg_k * (ABuffers() * bm + Buffers() * bn) * kWgmmaRowBytes + (wg_k - 1) * bm * bn * 4 +
           stage_c * bm * StagedRow() * out_bytes + tma * 1024 +  // the mbarriers' array
           staging_bytes;
  }
};

/// The steps of K (kWgmmaRowBytes each) of `g`'s reduction.
int64_t WgmmaKSteps(const ImplicitGemm& g);

/// Whether the resident pipeline (knob resident) applies to `g`: a persistent block keeps every
/// step's stage of B (all of N: at most 256 columns) in shared memory and takes tiles in turn,
/// the next tile's A copied while this one multiplies. Offered for convolutions whose taps'
/// channels are too narrow for wide copies (their input rows staged, conv_window.h) and for
/// those whose A is dense (1x1, stride 1, unpadded) with a reduction of one or two steps.
bool ResidentPipelineApplies(const ImplicitGemm& g);
/// Whether the resident pipeline copies `g`'s A direct (dense), not from staged input rows.
bool ResidentDenseA(const ImplicitGemm& g);

/// What the knobs' costs depend on beside the config (copied into the space's constraints).
struct WgmmaCostShape {
  Dtype dtype;
  int64_t out_bytes, k_steps;
  // The resident pipeline's staging buffer (narrow channels; 0 elsewhere), and whether its A is
  // copied direct (a dense A).
  int64_t staging_bytes;
  bool dense_a;
  explicit WgmmaCostShape(const ImplicitGemm& g);
};

/// `c`'s knobs (a point of WgmmaSpace).
WgmmaKnobs WgmmaKnobsOf(const Config& c, const WgmmaCostShape& shape);

/// The kernel of `k` for `g`.
ir::LoweredFunc BuildWgmmaKernel(const ImplicitGemm& g, const WgmmaKnobs& k,
                                 std::string_view func_name);

}  // namespace tune
