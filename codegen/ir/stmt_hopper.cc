// Hopper's statements: the copy engine's tensor maps and copies (TensorCopy), shared-memory
// barriers (MBarrierOp) and the register split (SetMaxRegisters); the other statements'
// constructors are in stmt.cc.
#include <string_view>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/ir/node_util.h"
#include "common/status.h"

namespace tune::ir {

int64_t TensorMap::BoxBytes() const {
  int64_t bytes = buffer.defined() ? buffer.element_type().Bytes() : 0;
  for (int64_t b : box) {
    bytes *= b;
  }
  return bytes;
}

namespace {

void CheckMBarrierArray(const Buffer& barrier, const Expr& index, std::string_view what) {
  TUNE_CHECK(barrier.defined() && barrier.scope() == MemoryScope::kGpuShared &&
             barrier.element_type() == Type::Int64())
      << what << ": the barrier must be a gpu_shared int64 array";
  TUNE_CHECK(index.defined() && index.type().is_int() && index.type().is_scalar())
      << what << ": the barrier index must be a scalar integer";
}

// The im2col parts of a TensorCopy: the map's corners and element strides, and the offsets.
void CheckIm2col(const TensorMap& map, std::vector<Expr>& offsets) {
  const size_t rank = map.dims.size();
  if (!map.im2col()) {
    TUNE_CHECK(map.upper_corner.empty() && offsets.empty())
        << "TensorCopy: im2col offsets or an upper corner without a lower corner (a tiled map "
           "has neither)";
    TUNE_CHECK(map.element_strides.empty() || map.element_strides.size() == rank)
        << "TensorCopy: " << map.element_strides.size() << " element strides for rank " << rank;
    return;
  }
  TUNE_CHECK(rank >= 3 && rank <= 5)
      << "TensorCopy: an im2col map of rank " << rank << " (3..5: C, the spatial dims, N)";
  const size_t spatial = rank - 2;
  TUNE_CHECK(map.lower_corner.size() == spatial && map.upper_corner.size() == spatial)
      << "TensorCopy: an im2col map of rank " << rank << " with " << map.lower_corner.size()
      << " lower and " << map.upper_corner.size() << " upper corner entries (rank - 2 each)";
  const int64_t limit = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
  for (size_t d = 0; d < spatial; ++d) {
    for (int64_t corner : {map.lower_corner[d], map.upper_corner[d]}) {
      TUNE_CHECK(corner >= -limit && corner < limit)
          << "TensorCopy: im2col corner " << corner << " of a rank-" << rank << " map (-" << limit
          << ".." << limit - 1 << ")";
    }
    TUNE_CHECK(map.lower_corner[d] <= map.dims[d + 1] - 1 + map.upper_corner[d])
        << "TensorCopy: the im2col corners of spatial dimension " << d << " bound no window";
  }
  TUNE_CHECK(map.element_strides.empty() || map.element_strides.size() == rank)
      << "TensorCopy: " << map.element_strides.size() << " element strides for rank " << rank;
  for (int64_t s : map.element_strides) {
    TUNE_CHECK(s >= 1 && s <= 8) << "TensorCopy: element stride " << s << " (1..8)";
  }
  for (size_t d = 2; d < rank; ++d) {
    TUNE_CHECK(map.box[d] == 1) << "TensorCopy: an im2col box is [channels, pixels, 1...]";
  }
  TUNE_CHECK(offsets.size() == spatial)
      << "TensorCopy: " << offsets.size() << " im2col offsets for a rank-" << rank
      << " map (rank - 2)";
  for (Expr& o : offsets) {
    TUNE_CHECK(o.defined() && o.type().is_int() && o.type().is_scalar())
        << "TensorCopy: im2col offsets must be scalar integers";
  }
}

}  // namespace

Stmt TensorCopy::Make(TensorMap map, std::vector<Expr> coords, Buffer dst, Expr dst_index,
                      Buffer barrier, Expr barrier_index, int64_t multicast,
                      std::vector<Expr> offsets) {
  TUNE_CHECK(multicast == 0 ||
             (multicast > 0 && multicast < (1 << 16) && (multicast & (multicast - 1)) != 0))
      << "TensorCopy: multicast mask " << multicast
      << " (0, or two or more of the 16 ranks of a cluster)";
  const size_t rank = map.dims.size();
  TUNE_CHECK(map.buffer.defined() && map.buffer.scope() == MemoryScope::kGlobal)
      << "TensorCopy: the tensor map must describe a global buffer";
  TUNE_CHECK(rank >= 1 && rank <= 5 && map.box.size() == rank && map.strides.size() == rank - 1)
      << "TensorCopy: a tensor map of rank " << rank << " with " << map.box.size()
      << " box entries and " << map.strides.size()
      << " strides (rank 1..5, one box entry per dimension, one stride per dimension after the "
         "first)";
  const int64_t element_bytes = map.buffer.element_type().Bytes();
  for (size_t d = 0; d < rank; ++d) {
    TUNE_CHECK(map.dims[d] >= 1 && map.box[d] >= 1 && map.box[d] <= 256)
        << "TensorCopy: dimension " << d << " of " << map.dims[d] << " elements, box " << map.box[d]
        << " (dims >= 1, box entries 1..256)";
    if (d > 0) {
      TUNE_CHECK(map.strides[d - 1] >= 1 && map.strides[d - 1] * element_bytes % 16 == 0)
          << "TensorCopy: the stride of dimension " << d << " is " << map.strides[d - 1]
          << " elements of " << element_bytes << " bytes (a positive multiple of 16 bytes)";
    }
  }
  TUNE_CHECK(map.swizzle_bytes == 0 ||
             (map.swizzle_bytes == 128 && map.box[0] * element_bytes == 128))
      << "TensorCopy: swizzle " << map.swizzle_bytes << " with a box row of "
      << map.box[0] * element_bytes << " bytes (0, or 128 with rows of exactly 128 bytes)";
  TUNE_CHECK(map.swizzle_bytes != 0 || map.box[0] * element_bytes % 16 == 0)
      << "TensorCopy: a box row of " << map.box[0] * element_bytes << " bytes (a multiple of 16)";
  TUNE_CHECK(coords.size() == rank)
      << "TensorCopy: " << coords.size() << " coordinates for a " << rank << "-dimensional map";
  for (Expr& c : coords) {
    TUNE_CHECK(c.defined() && c.type().is_int() && c.type().is_scalar())
        << "TensorCopy: coordinates must be scalar integers";
  }
  TUNE_CHECK(dst.defined() && dst.scope() == MemoryScope::kGpuShared &&
             dst.element_type() == map.buffer.element_type())
      << "TensorCopy: the destination must be gpu_shared " << map.buffer.element_type().ToString();
  TUNE_CHECK(dst_index.defined() && dst_index.type().is_int() && dst_index.type().is_scalar())
      << "TensorCopy: the destination index must be a scalar integer";
  CheckMBarrierArray(barrier, barrier_index, "TensorCopy");
  CheckIm2col(map, offsets);
  auto node = std::make_shared<TensorCopy>();
  node->map = std::move(map);
  node->coords = std::move(coords);
  node->dst = std::move(dst);
  node->dst_index = std::move(dst_index);
  node->barrier = std::move(barrier);
  node->barrier_index = std::move(barrier_index);
  node->multicast = multicast;
  node->offsets = std::move(offsets);
  return WrapStmt(std::move(node));
}

std::string_view MBarrierOpKindName(MBarrierOpKind kind) {
  switch (kind) {
    case MBarrierOpKind::kInit:
      return "init";
    case MBarrierOpKind::kArrive:
      return "arrive";
    case MBarrierOpKind::kArriveExpectTx:
      return "arrive_expect_tx";
    case MBarrierOpKind::kWait:
      return "wait";
  }
  return "?";
}

Stmt MBarrierOp::Make(MBarrierOpKind op, Buffer barrier, Expr index, Expr value, Expr cta) {
  TUNE_CHECK(!cta.defined() ||
             (op == MBarrierOpKind::kArrive && cta.type().is_int() && cta.type().is_scalar()))
      << "MBarrierOp " << MBarrierOpKindName(op)
      << ": only an arrive may name a cluster rank, a scalar integer";
  CheckMBarrierArray(barrier, index, "MBarrierOp");
  const bool takes_value = op != MBarrierOpKind::kArrive;
  TUNE_CHECK(takes_value == value.defined())
      << "MBarrierOp " << MBarrierOpKindName(op)
      << (takes_value ? " needs a value" : " takes no value");
  TUNE_CHECK(!value.defined() || (value.type().is_int() && value.type().is_scalar()))
      << "MBarrierOp " << MBarrierOpKindName(op) << ": the value must be a scalar integer";
  auto node = std::make_shared<MBarrierOp>();
  node->op = op;
  node->barrier = std::move(barrier);
  node->index = std::move(index);
  node->value = std::move(value);
  node->cta = std::move(cta);
  return WrapStmt(std::move(node));
}

Stmt SetMaxRegisters::Make(int registers, bool increase) {
  TUNE_CHECK(registers >= 24 && registers <= 256 && registers % 8 == 0)
      << "SetMaxRegisters: " << registers << " registers (a multiple of 8 in [24, 256])";
  auto node = std::make_shared<SetMaxRegisters>();
  node->registers = registers;
  node->increase = increase;
  return WrapStmt(std::move(node));
}

}  // namespace tune::ir
