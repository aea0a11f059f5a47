// The CPU's matrix statements: AmxTileOp's constructors (the other statements' are in stmt.cc
// and stmt_hopper.cc).
#include <memory>
#include <string_view>

#include "codegen/ir/ir.h"
#include "codegen/ir/node_util.h"
#include "common/status.h"

namespace tune::ir {

namespace {

void CheckTile(int tile, std::string_view what) {
  TUNE_CHECK(tile >= 0 && tile < kAmxTiles)
      << "AmxTileOp: " << what << " " << tile << " is not a tile register (0.." << kAmxTiles - 1
      << ")";
}

std::shared_ptr<AmxTileOp> NewTileOp(AmxTileOpKind op) {
  auto node = std::make_shared<AmxTileOp>();
  node->op = op;
  return node;
}

Stmt MakeTileMove(AmxTileOpKind op, int tile, Buffer buffer, Expr index, int64_t stride) {
  CheckTile(tile, "tile");
  TUNE_CHECK(buffer.defined() && buffer.scope() != MemoryScope::kGpuShared &&
             buffer.scope() != MemoryScope::kGpuLocal)
      << "AmxTileOp: a tile moves to or from a CPU buffer";
  TUNE_CHECK(index.defined() && index.type().is_int() && index.type().is_scalar())
      << "AmxTileOp " << buffer.name() << ": the index must be a scalar integer";
  TUNE_CHECK(stride >= 1) << "AmxTileOp " << buffer.name() << ": stride " << stride << " < 1";
  auto node = NewTileOp(op);
  node->tile = tile;
  node->buffer = std::move(buffer);
  node->index = std::move(index);
  node->stride = stride;
  return WrapStmt(std::move(node));
}

}  // namespace

Stmt AmxTileOp::Configure(std::vector<AmxTileShape> shapes) {
  TUNE_CHECK(!shapes.empty() && shapes.size() <= kAmxTiles)
      << "AmxTileOp: configure 1.." << kAmxTiles << " tiles, not " << shapes.size();
  for (const AmxTileShape& shape : shapes) {
    TUNE_CHECK(shape.rows >= 1 && shape.rows <= 16 && shape.colsb >= 4 && shape.colsb <= 64 &&
               shape.colsb % 4 == 0)
        << "AmxTileOp: a tile of " << shape.rows << " rows of " << shape.colsb
        << " bytes (1..16 rows of 4..64 bytes, a multiple of 4)";
  }
  auto node = NewTileOp(AmxTileOpKind::kConfigure);
  node->shapes = std::move(shapes);
  return WrapStmt(std::move(node));
}

Stmt AmxTileOp::Zero(int tile) {
  CheckTile(tile, "tile");
  auto node = NewTileOp(AmxTileOpKind::kZero);
  node->tile = tile;
  return WrapStmt(std::move(node));
}

Stmt AmxTileOp::Load(int tile, Buffer buffer, Expr index, int64_t stride) {
  return MakeTileMove(AmxTileOpKind::kLoad, tile, std::move(buffer), std::move(index), stride);
}

Stmt AmxTileOp::Store(int tile, Buffer buffer, Expr index, int64_t stride) {
  return MakeTileMove(AmxTileOpKind::kStore, tile, std::move(buffer), std::move(index), stride);
}

Stmt AmxTileOp::Dot(Dtype dtype, int c_tile, int a_tile, int b_tile) {
  TUNE_CHECK(dtype == Dtype::kBf16 || dtype == Dtype::kI8 || dtype == Dtype::kU8I8)
      << "AmxTileOp: AMX multiplies bf16, i8 and u8i8, not " << DtypeName(dtype);
  CheckTile(c_tile, "accumulator");
  CheckTile(a_tile, "A tile");
  CheckTile(b_tile, "B tile");
  TUNE_CHECK(c_tile != a_tile && c_tile != b_tile && a_tile != b_tile)
      << "AmxTileOp: the accumulator and the operands are three different tiles (" << c_tile << ", "
      << a_tile << ", " << b_tile << ")";
  auto node = NewTileOp(AmxTileOpKind::kDot);
  node->dtype = dtype;
  node->tile = c_tile;
  node->a_tile = a_tile;
  node->b_tile = b_tile;
  return WrapStmt(std::move(node));
}

Stmt AmxTileOp::Release() { return WrapStmt(NewTileOp(AmxTileOpKind::kRelease)); }

}  // namespace tune::ir
