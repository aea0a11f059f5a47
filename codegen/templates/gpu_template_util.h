// Pieces shared by the GPU schedule templates: the GPU limits every space is checked against,
// and the tiled-matmul kernel skeleton (block tile staged through shared memory, a register
// tile of accumulators per thread, optional double buffering and intra-block split-K, fused
// epilogue at store time) that gemm.gpu.tiled and conv2d.gpu.implicit_gemm instantiate with
// their own operand gathers and output mapping.
//
// The kernels follow the GPU loop-IR convention of codegen/ir/ir.h: block loops outermost,
// shared arrays between block and thread loops, one thread loop (axis 0), per-thread code
// inside, barriers reached by every thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/ir/ir.h"
#include "common/gpu_arch.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/config_space.h"

namespace tune {

/// Multiprocessors of a large GPU (H100 SXM: 132), for heuristics that size grids in waves.
inline constexpr int64_t kGpuMultiprocessorsGuess = 132;
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
/// at most kMaxGpuSeeds, in order.
std::vector<Config> MatmulSeeds(const ConfigSpace& space, const std::vector<Config>& variants,
                                const MatmulSize& size);

int64_t GpuCeilDiv(int64_t a, int64_t b);
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

/// Adds the constraints every GPU template shares, each described with the limit it checks:
/// threads per block <= max_threads_per_block and a multiple of warp_size (or fewer than a
/// warp), static shared bytes <= max_shared_bytes_per_block, estimated registers per thread
/// <= RegisterBudget(arch, threads).
void AddGpuLimitConstraints(ConfigSpace& space, const GpuArch& arch,
                            std::function<GpuBlockCost(const Config&)> cost);

/// One operand tile of the matmul, stored in shared memory as S[k][x] (row stride padded),
/// where x is the tile's row (M, for A) or column (N, for B).
struct MatmulOperand {
  /// Elements per global load (1, 2 or 4).
  int64_t lanes = 1;
  /// True: the `lanes` elements of one load are consecutive along k (A row-major); false:
  /// along x (B row-major, or a gather with lanes 1). It also orders the copy: the vector
  /// dimension varies fastest across threads.
  bool vector_along_k = false;
  /// Lets that depend only on the global x coordinate of a load (hoisted out of the k loop),
  /// e.g. the image and pixel of an im2col row; may be empty.
  std::function<std::vector<std::pair<ir::Var, ir::Expr>>(const ir::Expr& x)> x_lets;
  /// The `lanes` elements at global (k, x) (consecutive along the vector dimension), zero
  /// where they fall outside the operand; `vars` are the x_lets' variables. Must never read
  /// out of bounds (clamp indices). Unset: derived from `source` and `source_index`.
  std::function<ir::Expr(const std::vector<ir::Var>& vars, const ir::Expr& x, const ir::Expr& k)>
      load;
  /// The global buffer the operand is read from, and for the `lanes` elements at global (k, x)
  /// the index of the first one in it (clamped in range) and whether they lie inside the
  /// operand (undefined: always). Needed for asynchronous copies (MatmulTiling::async_copy);
  /// unset where the operand is a gather that only `load` can express.
  ir::Buffer source;
  std::function<std::pair<ir::Expr, ir::Expr>(const std::vector<ir::Var>& vars, const ir::Expr& x,
                                              const ir::Expr& k)>
      source_index;
};

/// The tiling of one block: a bm x bn output tile per block, tm x tn per thread, bk of the
/// reduction per step, 1 or 2 shared-memory stages, and `splitk` groups of threads that
/// share the reduction of each step (summed through shared memory at the end). With
/// `gridk` > 1, that many blocks (grid axis z) share each output tile's reduction, each taking
/// a contiguous run of bk steps, and add their sums into the output atomically (the launcher
/// zeroes it: GpuLaunch::zeroed_args); only the first adds the bias, and the epilogue must not
/// have a ReLU.
struct MatmulTiling {
  int64_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0, stages = 1, splitk = 1, gridk = 1;
  /// True: the fragments are software-pipelined, two register sets deep: row kk + 1 of the
  /// shared stage is read while row kk's FMAs run, and the next stage's row 0 right after the
  /// barrier, before the current stage's last FMAs (FragPipeFits must hold).
  bool frag_pipe = false;
  /// True: global tiles go to shared memory by asynchronous copies (cp.async), `stages` (2 to
  /// 4) of them in flight, instead of through registers (the operands copied need
  /// `source_index`).
  bool async_copy = false;
  /// With async_copy: false sends A through registers (one step ahead) and only B by copies.
  bool async_a = true;
  /// True: consecutive threads take consecutive row groups (for outputs contiguous along M);
  /// false: consecutive column groups (outputs contiguous along N).
  bool rows_fastest = false;

  int64_t ThreadsM() const { return bm / tm; }
  int64_t ThreadsN() const { return bn / tn; }
  int64_t Threads() const { return ThreadsM() * ThreadsN() * splitk; }
  /// Row strides of the shared tiles (padded by 4 against bank conflicts of the transposed
  /// stores when a tile is wide).
  int64_t SharedStrideA() const;
  int64_t SharedStrideB() const;
  int64_t SharedFloats() const;
  /// Estimated registers per thread for operands with these load widths.
  int64_t Registers(int64_t lanes_a, int64_t lanes_b) const;
};

/// Stores one output element group: `value` (lanes consecutive along N when the output is
/// N-contiguous, along M otherwise) at global (m, n); the epilogue is already applied.
struct MatmulOutput {
  /// Lanes per store along the contiguous dimension (1, 2 or 4); a store of several lanes
  /// covers columns n..n+lanes-1 (or rows m..m+lanes-1 with contiguous_along_m).
  int64_t lanes = 1;
  bool contiguous_along_m = false;
  /// The element index of output (m, n) in the output buffer.
  std::function<ir::Expr(const ir::Expr& m, const ir::Expr& n)> index;
};

struct MatmulProblem {
  int64_t m = 0, n = 0, k = 0;
  MatmulOperand a, b;
  MatmulOutput out;
  ir::Buffer out_buffer;
  Epilogue epilogue = Epilogue::kNone;
  ir::Buffer bias;  // bias[n], read when the epilogue has one
};

/// The kernel body (block loops down) of C = epilogue(A x B) with the tiling.
ir::Stmt BuildTiledMatmul(const MatmulProblem& problem, const MatmulTiling& tiling);

/// True when `gridk` blocks can share a reduction of `k` in steps of `bk`: every block gets at
/// least one step ((gridk - 1) * ceil(steps / gridk) < steps).
bool GridSplitFits(int64_t k, int64_t bk, int64_t gridk);

/// True when fragments can be pipelined (MatmulTiling::frag_pipe): two or more shared stages
/// and an even number of rows per thread group and step (bk / splitk).
bool FragPipeFits(int64_t stages, int64_t bk, int64_t splitk);

/// The largest of 4, 2, 1 that is <= `want` and divides every value of `divides`.
int64_t LanesDividing(int64_t want, const std::vector<int64_t>& divides);

}  // namespace tune
