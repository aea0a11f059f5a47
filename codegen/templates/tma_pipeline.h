// The warp-specialised main loop of Hopper GEMM kernels (CUTLASS's "TMA warp-specialized"
// schedule): one producer thread streams the operands' tiles into a ring of shared-memory stages
// with TMA copies (ir::TensorCopy), and the consumer warpgroups multiply each stage as soon as it
// lands. Two mbarriers per stage carry the hand-offs, so no block-wide barrier stalls the loop:
//
//   producer (one thread)                        consumers (wgmma warpgroups)
//   for t: s = t % stages                        for t: s = t % stages
//     wait empty[s], parity (t / stages + 1) % 2   wait full[s], parity (t / stages) % 2
//     arrive_expect_tx full[s], stage bytes        multiply stage s (the step's group left in
//     copy A's tile, B's tile -> stage s             flight: pending 1, which completes t - 1)
//       (completing on full[s])                    arrive empty[(t - 1) % stages]
//
// full[s] completes when the producer has arrived and the stage's bytes have landed; empty[s]
// when every consumer warpgroup has arrived, i.e. the instructions that read the stage are done.
// One thread per warpgroup arrives, as in CUTLASS's pipelines: a warpgroup issues its wgmma
// instructions as one, so that they are complete for all of its threads when they are for one
// (which the simulator models: ExecHooks::WarpGroupStep). An arrival from each of the 128 threads
// cost an atomic each on the barrier's word, in series, per stage.
// The producer's first pass over the ring waits with parity 1 on barriers still in phase 0, so
// it starts at once. The loop's shape is the one kernel templates use; what they multiply and
// how they store is theirs.
//
// A persistent block (stream-K) runs one such loop per segment of its range over one ring: step t
// of a segment is step index_base + t of the block's sequence, whose stage and parities the
// loops use, and each segment's consumers release their last stage at its end (release_last).
// The producer issues any range of the sequence (ProducerRange), each step's tiles where `at`
// says, so that it can stream the next segment's first stages while the consumers finish one.
//
// In a thread-block cluster of cluster_m x cluster_n blocks (rank r: row r % cluster_m of the
// cluster's tiles, column r / cluster_m), the blocks of one column share B's tile (the same
// columns of C, neighbouring rows) and those of one row share A's. Each block's producer copies
// 1 / cluster_m of B's rows, multicast to every block of its column, and 1 / cluster_n of A's,
// multicast to every block of its row, so that L2 serves each shared tile once per cluster. A
// stage of any block is then written by the producers of its row and column, so empty[s] counts
// the consumers of all of them (each consumer warpgroup arrives at empty[s] of every block of its
// row and column, from a thread of a different warp for each where it can, so that the remote
// arrivals go out together), and full[s] expects the whole stage (A and B from every block that
// writes to it). The kernel passes a cluster barrier after Init (the peers' barriers are
// initialised before anything reaches them) and before it ends (no block leaves while a peer may
// still write to its shared memory or arrive at its barriers).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "codegen/ir/ir.h"

namespace tune {

struct TmaPipeline {
  ir::Buffer a_smem, b_smem;  // the stages of A (a_stage elements each) and of B (b_stage)
  ir::Buffer barriers;        // gpu_shared int64[2 * stages]: full[s] at s, empty[s] at stages + s
  ir::TensorMap a_map;        // boxes of [rows][128 bytes of K] (tiled, or im2col: a_at)
  ir::TensorMap b_map;        // the same (bn / cluster_m rows), or (N-major B) [K rows][128 bytes
                              // of N] per atom
  int64_t stages = 4;
  int64_t a_stage = 0, b_stage = 0;
  /// B's boxes per stage and the elements between them in b_smem (1 and 0 for a K-major B).
  int64_t b_boxes = 1, b_box_stride = 0;
  int64_t k_per_step = 64;         // elements of K per stage (128 bytes)
  int64_t consumer_threads = 128;  // whole warpgroups
  /// The block's thread index: the consumers' warpgroups start at multiples of 128 threads, and
  /// the threads of each that release a stage are elected by it (Release).
  ir::Expr thread;
  bool b_k_major = true;
  // Where the block's tiles start: A's row, B's column (n), the block's first step of K (so its
  // K coordinate is (first_step + t) * k_per_step), and the number of steps (>= 1).
  ir::Expr a_row, b_col, first_step, steps;
  /// The block's sequence number of step 0 (stage and parities count from it); 0 but for a
  /// persistent block's later segments.
  ir::Expr index_base = ir::Expr(int64_t{0});
  /// Whether the consumers release the last step's stage at the end (a persistent block's
  /// segments: the next segment's steps refill it).
  bool release_last = false;
  /// Whether Consumer runs the steps in pairs, so that each step's parity is a constant of its
  /// code (a multiply that differs between even and odd steps).
  bool in_pairs = false;
  /// The cluster's blocks along M (sharing B's tile; a K-major B) and along N (sharing A's; a
  /// plain A read in tiled boxes), and this block's rank in it. a_map's box is then
  /// 1 / cluster_n of A's tile rows, b_map's 1 / cluster_m of B's.
  int64_t cluster_m = 1, cluster_n = 1;
  ir::Expr rank = ir::Expr(int64_t{0});

  int64_t ClusterBlocks() const { return cluster_m * cluster_n; }
  /// Blocks whose producers write this block's stages: its row's and its column's.
  int64_t Writers() const { return cluster_m + cluster_n - 1; }

  /// Where step g of the block's sequence reads: its K coordinate (an element of K), A's row
  /// and B's column.
  struct StepTiles {
    ir::Expr k, a_row, b_col;
  };

  /// The coordinates (and im2col offsets) of A's box.
  struct ABox {
    std::vector<ir::Expr> coords, offsets;
  };
  /// Where A's box of K coordinate k and first row `row` lies in a_map, for an A that is not a
  /// plain [M][K] matrix (a convolution's input windows through an im2col map); unset: at
  /// {k, row}.
  std::function<ABox(const ir::Expr& k, const ir::Expr& row)> a_at;

  /// Bytes one stage receives (what the producer tells full[s] to expect).
  int64_t StageBytes() const;
  /// Every barrier initialised: run by one thread, then a Barrier before any other use.
  ir::Stmt Init() const;
  /// The producer's loop over this pipeline's steps: run by one thread.
  ir::Stmt Producer() const;
  /// The producer's loop over steps [from, to) of the block's sequence, each read where `at`
  /// says: run by one thread.
  ir::Stmt ProducerRange(const ir::Expr& from, const ir::Expr& to,
                         const std::function<StepTiles(const ir::Expr&)>& at) const;
  /// The consumers' loop: `multiply(stage, pending, parity)` issues the warpgroup's
  /// instructions on a stage and waits until at most `pending` of its groups are in flight; the
  /// last step waits for all of them (pending 0). `parity` is the step's t % 2 with `in_pairs`,
  /// else 0.
  ir::Stmt Consumer(const std::function<ir::Stmt(const ir::Expr&, int, int)>& multiply) const;
  /// A consumer thread's release of `stage`: the arrivals of its warpgroup at empty[stage] of
  /// every block of its row and column of the cluster, where the thread is the one elected for
  /// them.
  ir::Stmt Release(const ir::Expr& stage) const;
};

}  // namespace tune
