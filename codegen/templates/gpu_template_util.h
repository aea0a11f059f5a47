// What the spaces of the GPU schedule templates share: the GPU limits every space is checked
// against (threads, shared memory, registers per block), the defaults and seeds of matmul-shaped
// templates and the arithmetic of their tile sizes. The kernel skeleton that gemm.gpu.tiled and
// conv2d.gpu.implicit_gemm instantiate is gpu_tiled_matmul.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/gpu_arch.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/config_space.h"

namespace tune {

/// Multiprocessors of a large GPU (H100 SXM: 132), for heuristics that size grids in waves.
inline constexpr int64_t kGpuMultiprocessorsGuess = 132;
/// The blocks of one wave in thread-block clusters of `c` blocks (one block per multiprocessor).
/// A cluster's blocks run in one GPC, so a wave holds fewer blocks in clusters than there are
/// multiprocessors: counted for GPCs of 18, 18, 18, 18, 16, 16, 14 and 14 multiprocessors, an
/// assumed split of the H100's and H200's 132 (their GPCs hold 14 to 18), which matches the
/// H100's readings (2026-12-07): 128 and 132 blocks in clusters of 4 and 3 (past its 120 and
/// 126) took 1.3-1.5x their unclustered twins' time, as a second wave would; 128 blocks in
/// clusters of 2 (within its 132) and 96-117 in clusters of 2 to 8 ran 0.72-1.04x theirs.
int64_t ClusterWaveBlocks(int64_t c);
/// The most seeds (KernelTemplate::seeds) a GPU template offers a search.
inline constexpr size_t kMaxGpuSeeds = 40;

/// The M x N x K of a matmul-shaped template (a GEMM, or a conv2d as an implicit GEMM) whose
/// configs have the knobs bm, bn and gridk.
struct MatmulSize {
  int64_t m = 0, n = 0, k = 0;
  /// Blocks a config launches: its tiles times its grid split of K.
  int64_t Blocks(const Config& c) const;
};

/// The default of a matmul-shaped template: each of `presets` (gridk 1, best first) takes the
/// smallest gridk of `space` that gives it `want_blocks` while each block keeps >= 256 of K;
/// the first valid one with `want_blocks` wins, else the valid one with most blocks, else any
/// valid config (`what` names the template and workload if there is none).
Config MatmulDefault(const ConfigSpace& space, std::vector<Config> presets, const MatmulSize& size,
                     int64_t want_blocks, std::string_view what);

/// The seeds of a matmul-shaped template: each of `variants` with each gridk of `space` that
/// keeps >= 128 of K per block and at most ~8 waves of blocks on a large GPU; valid, distinct,
/// at most kMaxGpuSeeds, in order. With `split_below_blocks`, only variants of fewer blocks than
/// that are split, each once: by the smallest gridk that reaches that many blocks (else the
/// largest allowed).
std::vector<Config> MatmulSeeds(const ConfigSpace& space, const std::vector<Config>& variants,
                                const MatmulSize& size, int64_t split_below_blocks = INT64_MAX);

/// A block tile of a matmul-shaped template: bm rows by bn columns of the output.
struct BlockTile {
  int64_t bm = 0, bn = 0;
  bool operator==(const BlockTile&) const = default;
};

/// `tiles` in order of a model of the time a product of `size` takes with each, on a GPU of
/// kGpuMultiprocessorsGuess multiprocessors running one block each, fastest first. The blocks
/// run in whole waves (a wave's last blocks keep it as long as its first), and a wave lasts as
/// long as a block's work per step of K: the larger of its multiply-adds (bm x bn) and its
/// operands' traffic (64 x (bm + bn)), which balance at 128 x 128, where a Hopper block's
/// tensor cores and its share of L2's bandwidth are both about busy. Ties keep the larger tile
/// first (fewer blocks read the operands fewer times), then the given order. Shapes whose tile
/// count misses the waves (4096 x 768 in 128 x 128 tiles: 192 blocks, a wave and a half) so
/// find the tile that fills them (128 x 192: 128 blocks, one wave).
std::vector<BlockTile> WaveFitTiles(const MatmulSize& size, std::vector<BlockTile> tiles);

int64_t GpuCeilDiv(int64_t a, int64_t b);
/// The largest block tile (columns) of the SIMT matmul templates' `bn` knob, and whether `columns`
/// fit their grid's y dimension (65535 blocks) with it: a template whose columns cannot fit has
/// no valid config, so it does not apply (KernelTemplate::applies).
inline constexpr int64_t kWidestSimtBlockColumns = 256;
bool SimtGridFitsColumns(int64_t columns);
/// The smallest power of two >= n (n >= 1).
int64_t NextPow2(int64_t n);

/// The arch of a cuda/rocm target; sm_90's entry for anything else (spaces are asked for by
/// code that has already checked the target kind; the build rejects a wrong target).
GpuArch GpuArchOrDefault(const Target& target);

/// What a config of a GPU template costs per block, for the limit constraints.
struct GpuBlockCost {
  int64_t threads = 1;
  int64_t shared_bytes = 0;
  int64_t registers = 0;  // estimated 32-bit registers per thread
};

/// The register budget of a thread in a block of `threads`: what lets two such blocks share a
/// multiprocessor, but never below 128 (one block of up to 512 threads) nor above the arch's
/// maximum. Small blocks with large register tiles (128 threads of 8 x 16 accumulators) get
/// up to 255 on NVIDIA GPUs, the low-occupancy, high-ILP shape of the fastest FP32 GEMMs.
int64_t RegisterBudget(const GpuArch& arch, int64_t threads);

/// What a template's kernels may use beyond the limits every GPU template keeps to.
struct GpuLimitOptions {
  /// Shared memory allocated dynamically, up to max_dynamic_shared_bytes_per_block (the
  /// backend allocates it so past max_shared_bytes_per_block: UsesDynamicSharedMemory).
  bool dynamic_shared = false;
  /// Registers for one block per multiprocessor (registers_per_multiprocessor / threads), not
  /// two: the tensor-core kernels' large accumulator tiles.
  bool one_block_per_multiprocessor = false;
};

/// Adds the constraints every GPU template shares, each described with the limit it checks:
/// threads per block <= max_threads_per_block and a multiple of warp_size (or fewer than a
/// warp), static shared bytes <= max_shared_bytes_per_block (or the dynamic limit), estimated
/// registers per thread <= RegisterBudget(arch, threads) (or one block's share).
void AddGpuLimitConstraints(ConfigSpace& space, const GpuArch& arch,
                            std::function<GpuBlockCost(const Config&)> cost,
                            GpuLimitOptions options = {});

/// True when `gridk` blocks can share a reduction of `k` in steps of `bk`: every block gets at
/// least one step ((gridk - 1) * ceil(steps / gridk) < steps).
bool GridSplitFits(int64_t k, int64_t bk, int64_t gridk);

/// True when fragments can be pipelined (MatmulTiling::frag_pipe): two or more shared stages
/// and an even number of rows per thread group and step (bk / splitk).
bool FragPipeFits(int64_t stages, int64_t bk, int64_t splitk);

/// The largest of 4, 2, 1 that is <= `want` and divides every value of `divides`.
int64_t LanesDividing(int64_t want, const std::vector<int64_t>& divides);

}  // namespace tune
