// The tiled-matmul kernel skeleton shared by gemm.gpu.tiled and conv2d.gpu.implicit_gemm: a
// block tile staged through shared memory, a register tile of accumulators per thread, optional
// double buffering, asynchronous copies and intra-block or grid split-K, and the epilogue fused
// at store time. Each template instantiates it with its own operand gathers and output mapping.
//
// The kernels follow the GPU loop-IR convention of codegen/ir/ir.h: block loops outermost,
// shared arrays between block and thread loops, one thread loop (axis 0), per-thread code
// inside, barriers reached by every thread.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/templates/gpu_template_util.h"
#include "common/workload.h"

namespace tune {

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

/// Operands and the output may be of storage types (bf16, f16, fp8: read as float32, the
/// output rounded as it is stored); the shared tiles and the accumulation are float32. Atomic
/// adds (MatmulTiling::gridk > 1) and asynchronous copies need float32 buffers.
struct MatmulProblem {
  int64_t m = 0, n = 0, k = 0;
  MatmulOperand a, b;
  MatmulOutput out;
  ir::Buffer out_buffer;
  Epilogue epilogue = Epilogue::kNone;
  ir::Buffer bias;  // bias[n], read when the epilogue has one
  /// A float32 factor applied to each sum before the epilogue (the product of fp8 scales);
  /// undefined: none.
  ir::Expr scale = {};
};

/// The kernel body (block loops down) of C = epilogue(A x B) with the tiling.
ir::Stmt BuildTiledMatmul(const MatmulProblem& problem, const MatmulTiling& tiling);

}  // namespace tune
