// Stream-K (Osama, Merrill, Cecka, Garland and Owens, PPoPP 2023): a persistent grid of `blocks`
// blocks shares the tiles x steps iterations of a tiled GEMM's reduction evenly, instead of
// giving each block whole tiles. Block b takes the iterations [b I / G, (b + 1) I / G) of the
// I = tiles x steps in tile-major order, one segment per tile its range touches. A tile whose
// steps all lie in one block's range is computed and stored by that block alone; the blocks
// that share a tile each park their partial tile and the last to arrive adds the parts in order
// (SplitReduction with parts counted per tile), so that no block ever waits for another and the
// result does not depend on which arrives last.
//
// Where the tiles are few or do not divide into whole waves (a 1024 x 768 product in tiles of
// 128 x 128 is 48 tiles on 132 multiprocessors), every multiprocessor still gets the same work.
#pragma once

#include <cstdint>

#include "codegen/ir/ir.h"

namespace tune {

/// The variables of one segment of a stream-K block (StreamKPartition::Segments).
struct StreamKVars {
  ir::Var begin{"sk_begin"}, end{"sk_end"};  // the block's range of iterations
  ir::Var segment{"sk_segment"};
  ir::Var tile{"sk_tile"};                // the tile, in tile-major order
  ir::Var first_step{"sk_first_step"};    // the segment's first step of the tile's reduction
  ir::Var steps{"sk_steps"};              // the segment's count of steps (>= 1)
  ir::Var first_index{"sk_first_index"};  // its first step's place in the block's range
  ir::Var parts{"sk_parts"};              // blocks whose ranges share the tile (1: this one alone)
  ir::Var part{"sk_part"};                // this block's place among them, in order of K
};

class StreamKPartition {
 public:
  /// `tiles` tiles of `steps_per_tile` steps each over `blocks` blocks; needs at least one
  /// iteration per block (Fits).
  StreamKPartition(int64_t tiles, int64_t steps_per_tile, int64_t blocks);

  /// Whether every block gets at least `min_steps` iterations.
  static bool Fits(int64_t tiles, int64_t steps_per_tile, int64_t blocks, int64_t min_steps);

  int64_t Iterations() const { return tiles_ * steps_; }
  int64_t blocks() const { return blocks_; }
  /// The most blocks whose ranges share one tile: the slots of partial tiles a tile needs.
  int64_t MaxParts() const;

  /// `body` once per segment of block `block`'s range, in a serial loop over its tiles (inside
  /// the block's threads: the body may hold barriers, as every thread of a block runs the same
  /// segments), with `v` bound.
  ir::Stmt Segments(const ir::Expr& block, const StreamKVars& v, ir::Stmt body) const;

 private:
  ir::Expr Begin(const ir::Expr& block) const;        // the block's first iteration
  ir::Expr BlockOf(const ir::Expr& iteration) const;  // the block whose range holds it

  int64_t tiles_, steps_, blocks_;
};

}  // namespace tune
