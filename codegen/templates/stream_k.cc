#include "codegen/templates/stream_k.h"

#include <algorithm>
#include <utility>

#include "common/status.h"

namespace tune {

using ir::Expr;
using ir::LetStmt;
using ir::Stmt;

StreamKPartition::StreamKPartition(int64_t tiles, int64_t steps_per_tile, int64_t blocks)
    : tiles_(tiles), steps_(steps_per_tile), blocks_(blocks) {
  TUNE_CHECK(Fits(tiles, steps_per_tile, blocks, 1))
      << tiles << " tiles of " << steps_per_tile << " steps over " << blocks << " blocks";
}

bool StreamKPartition::Fits(int64_t tiles, int64_t steps_per_tile, int64_t blocks,
                            int64_t min_steps) {
  return tiles > 0 && steps_per_tile > 0 && blocks > 0 &&
         tiles * steps_per_tile >= blocks * std::max<int64_t>(1, min_steps);
}

int64_t StreamKPartition::MaxParts() const {
  // A tile's steps_ consecutive iterations meet at most ceil((steps_ - 1) / shortest) + 1
  // ranges, the shortest range being floor(I / G) iterations long.
  const int64_t shortest = Iterations() / blocks_;
  return (steps_ - 1 + shortest - 1) / shortest + 1;
}

Expr StreamKPartition::Begin(const Expr& block) const { return block * Iterations() / blocks_; }

Expr StreamKPartition::BlockOf(const Expr& iteration) const {
  // The largest b with floor(b I / G) <= i: b I < (i + 1) G.
  return ((iteration + 1) * blocks_ - 1) / Iterations();
}

Stmt StreamKPartition::Segments(const Expr& block, const StreamKVars& v, Stmt body) const {
  const ir::Var &begin = v.begin, &end = v.end;
  ir::Var first_tile("sk_first_tile");
  Expr tile_begin = v.tile * steps_;
  Expr lo = ir::Max::Make(Expr(begin), tile_begin);
  Expr hi = ir::Min::Make(Expr(end), tile_begin + steps_);
  ir::Var first_block("sk_first_block");
  body = LetStmt::Make(v.part, block - first_block, std::move(body));
  body =
      LetStmt::Make(v.parts, BlockOf(tile_begin + (steps_ - 1)) - first_block + 1, std::move(body));
  body = LetStmt::Make(first_block, BlockOf(tile_begin), std::move(body));
  body = LetStmt::Make(v.steps, hi - lo, std::move(body));
  body = LetStmt::Make(v.first_index, lo - begin, std::move(body));
  body = LetStmt::Make(v.first_step, lo - tile_begin, std::move(body));
  body = LetStmt::Make(v.tile, first_tile + v.segment, std::move(body));
  Stmt loop = ir::For::Make(v.segment, 0, (end - 1) / steps_ - first_tile + 1,
                            ir::LoopKind::kSerial, std::move(body));
  loop = LetStmt::Make(first_tile, begin / steps_, std::move(loop));
  loop = LetStmt::Make(end, Begin(block + 1), std::move(loop));
  return LetStmt::Make(begin, Begin(block), std::move(loop));
}

}  // namespace tune
