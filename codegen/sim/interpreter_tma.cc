// The simulator's copy engine and shared-memory barriers (ir::TensorCopy, ir::MBarrierOp).
//
// A TensorCopy lands at once, when its thread issues it: it reads the box from global memory
// (zeros outside the tensor), writes it into shared memory in the map's swizzle, and completes
// its bytes on the mbarrier; a multicast one does so in every block of its mask, and a remote
// arrival (MBarrierOp::cta) arrives at a peer block's barrier (ExecHooks::ClusterPeer). Its writes
// are marked as the copy engine's (SimBuffer::kAsyncWrite): they are ordered by the mbarrier, not
// by barriers, so the epoch race checks skip them, and a protocol error (a stage overwritten before
// its readers are done) shows as a wrong result instead: the threads run as fibers switched only
// where they wait, so a producer runs as far ahead as its waits let it. A wait that can never pass
// (every other thread finished or waits too) is reported as a deadlock by the scheduler
// (gpu_sim.cc).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/sim/interpreter.h"

namespace tune::sim {

MBarrierState& Interpreter::LookupMBarrier(const ir::Buffer& buffer, int64_t index,
                                           bool initialising) {
  SimBuffer& b = *LookupBuffer(buffer.get());
  CheckedIndex(b, index, "mbarrier in");
  if (b.mbarriers.empty()) {
    b.mbarriers.resize(static_cast<size_t>(b.size));
  }
  MBarrierState& state = b.mbarriers[static_cast<size_t>(index)];
  if (!initialising && state.count == 0) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("mbarrier %s[%d] is used before mbarrier_init", b.name, index));
  }
  return state;
}

namespace {

// Moves `state` to its next phase when the current one is complete.
void MaybeComplete(MBarrierState& state) {
  if (state.pending == 0 && state.tx == 0) {
    ++state.phase;
    state.pending = state.count;
  }
}

}  // namespace

void Interpreter::ExecMBarrierOp(const ir::MBarrierOp* op) {
  if (!in_threads_) {
    Fail(absl::StatusCode::kInvalidArgument, "an mbarrier operation outside gpu_thread loops");
  }
  const int64_t index = Eval(op->index).lanes[0].i;
  const int64_t value = op->value.defined() ? Eval(op->value).lanes[0].i : 0;
  std::string name = absl::StrFormat("%s[%d]", op->barrier.name(), index);
  Interpreter* owner = this;
  if (op->cta.defined()) {  // the barrier at the same place in a peer block of the cluster
    const int64_t rank = Eval(op->cta).lanes[0].i;
    name = absl::StrFormat("%s of cluster rank %d", name, rank);
    owner = &hooks_->ClusterPeer(*this, rank, absl::StrCat("mbarrier_arrive(", name, ")"));
  }
  MBarrierState& state =
      owner->LookupMBarrier(op->barrier, index, op->op == ir::MBarrierOpKind::kInit);
  switch (op->op) {
    case ir::MBarrierOpKind::kInit:
      if (value < 1) {
        Fail(absl::StatusCode::kFailedPrecondition,
             absl::StrFormat("mbarrier_init(%s, %d): the arrival count must be >= 1", name, value));
      }
      state = MBarrierState{.count = value, .pending = value, .tx = 0, .phase = 0};
      return;
    case ir::MBarrierOpKind::kArriveExpectTx:
      if (value < 0) {
        Fail(absl::StatusCode::kFailedPrecondition,
             absl::StrFormat("mbarrier_arrive_expect_tx(%s, %d): negative bytes", name, value));
      }
      state.tx += value;
      [[fallthrough]];
    case ir::MBarrierOpKind::kArrive:
      if (state.pending == 0) {
        Fail(absl::StatusCode::kFailedPrecondition,
             absl::StrFormat("mbarrier %s gets more arrivals in a phase than its count (%d)", name,
                             state.count));
      }
      --state.pending;
      MaybeComplete(state);
      return;
    case ir::MBarrierOpKind::kWait:
      if (value != 0 && value != 1) {
        Fail(absl::StatusCode::kFailedPrecondition,
             absl::StrFormat("mbarrier_wait(%s, %d): the parity must be 0 or 1", name, value));
      }
      if (!state.Passes(value)) {
        hooks_->WaitMBarrier(*this, &state, value,
                             absl::StrFormat("mbarrier_wait(%s, parity %d)", name, value));
      } else if (options_->schedule_seed != 0) {
        hooks_->Yield(*this);  // passed: the hand-off happened, the others may run first
      }
      return;
  }
}

namespace {

// The index into the map's buffer of the element at `element` (innermost first), or -1 where it
// lies outside the tensor (the copy engine reads zeros there).
int64_t SourceIndex(const ir::TensorMap& map, const std::vector<int64_t>& element) {
  int64_t source = 0;
  for (size_t d = 0; d < element.size(); ++d) {
    if (element[d] < 0 || element[d] >= map.dims[d]) {
      return -1;
    }
    source += element[d] * (d == 0 ? 1 : map.strides[d - 1]);
  }
  return source;
}

}  // namespace

std::vector<int64_t> Interpreter::Im2colSources(const ir::TensorCopy* op,
                                                const std::vector<int64_t>& origin) {
  // A column of box[1] pixels: the window corners walk the corner bounds from `origin` (W
  // fastest, wrapping to the lower corner and stepping the next dimension), each pixel reading
  // box[0] channels at its corner plus the offsets.
  const ir::TensorMap& map = op->map;
  const size_t rank = map.dims.size(), spatial = rank - 2;
  std::vector<int64_t> offsets(spatial);
  for (size_t d = 0; d < spatial; ++d) {
    offsets[d] = Eval(op->offsets[d]).lanes[0].i;
    if (offsets[d] < 0 || offsets[d] > 65535) {
      Fail(
          absl::StatusCode::kFailedPrecondition,
          absl::StrFormat("tensor_copy im2col offset %d of %d is outside 0..65535", d, offsets[d]));
    }
  }
  std::vector<int64_t> corner(origin.begin() + 1, origin.end());  // spatial..., image
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t upper = map.dims[d + 1] - 1 + map.upper_corner[d];
    if (corner[d] < map.lower_corner[d] || corner[d] > upper) {
      Fail(absl::StatusCode::kFailedPrecondition,
           absl::StrFormat("tensor_copy im2col from %s: the first window corner %d of spatial "
                           "dimension %d is outside the map's corner bounds %d..%d",
                           map.buffer.name(), corner[d], d, map.lower_corner[d], upper));
    }
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(map.box[0] * map.box[1]));
  std::vector<int64_t> element(rank);
  for (int64_t pixel = 0; pixel < map.box[1]; ++pixel) {
    for (size_t d = 0; d < spatial; ++d) {
      element[d + 1] = corner[d] + offsets[d];
    }
    element[rank - 1] = corner[spatial];
    for (int64_t c = 0; c < map.box[0]; ++c) {
      element[0] = origin[0] + c;
      out.push_back(SourceIndex(map, element));
    }
    for (size_t d = 0; d <= spatial; ++d) {  // the next corner: W, then H, D and the image
      corner[d] += map.ElementStride(d + 1);
      if (d == spatial || corner[d] <= map.dims[d + 1] - 1 + map.upper_corner[d]) {
        break;
      }
      corner[d] = map.lower_corner[d];
    }
  }
  return out;
}

void Interpreter::ExecTensorCopy(const ir::TensorCopy* op) {
  if (!in_threads_) {
    Fail(absl::StatusCode::kInvalidArgument, "tensor_copy outside gpu_thread loops");
  }
  const ir::TensorMap& map = op->map;
  SimBuffer& src = *LookupBuffer(map.buffer.get());
  const SimBuffer& own_dst = *LookupBuffer(op->dst.get());
  const int64_t element_bytes = src.element.Bytes();
  const int64_t dst_index = Eval(op->dst_index).lanes[0].i;
  const int64_t align = map.swizzle_bytes != 0 ? 1024 : 128;
  if (dst_index * element_bytes % align != 0) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("tensor_copy into %s[%d]: the destination is byte %d of the array, not "
                         "a multiple of %d (the copy engine's alignment%s)",
                         own_dst.name, dst_index, dst_index * element_bytes, align,
                         map.swizzle_bytes != 0 ? " for the 128-byte swizzle" : ""));
  }
  const size_t rank = map.dims.size();
  std::vector<int64_t> origin(rank);
  for (size_t d = 0; d < rank; ++d) {
    origin[d] = Eval(op->coords[d]).lanes[0].i;
  }
  const std::vector<int64_t> sources = map.im2col() ? Im2colSources(op, origin) : [&] {
    // A tiled box: element e at origin + its position in the box, innermost first.
    int64_t elements = 1;
    for (int64_t b : map.box) {
      elements *= b;
    }
    std::vector<int64_t> at(rank, 0), out;
    for (int64_t e = 0; e < elements; ++e) {
      std::vector<int64_t> element(rank);
      for (size_t d = 0; d < rank; ++d) {
        element[d] = origin[d] + at[d];
      }
      out.push_back(SourceIndex(map, element));
      for (size_t d = 0; d < rank && ++at[d] == map.box[d]; ++d) {
        at[d] = 0;
      }
    }
    return out;
  }();
  const auto elements = static_cast<int64_t>(sources.size());
  // The box as it lands: each element's place after dst_index, and its bits.
  std::vector<std::pair<int64_t, Lane>> box;
  box.reserve(sources.size());
  for (int64_t e = 0; e < elements; ++e) {
    Lane lane{.i = 0};  // zero bits: +0 of every element type
    if (sources[e] >= 0) {
      lane = src.Read(CheckedIndex(src, sources[e], "tensor_copy from"));
    }
    int64_t byte = e * element_bytes;
    if (map.swizzle_bytes != 0) {
      byte ^= ((byte >> 7) & 7) << 4;  // 16-byte chunk c of 128-byte row r to c ^ (r % 8)
    }
    box.emplace_back(byte / element_bytes, lane);
  }
  const int64_t barrier_index = Eval(op->barrier_index).lanes[0].i;
  // Lands the box in `target`'s shared memory and completes its bytes on its barrier.
  auto land = [&](Interpreter& target) {
    SimBuffer& dst = *target.LookupBuffer(op->dst.get());
    for (const auto& [offset, lane] : box) {
      const int64_t k = CheckedIndex(dst, dst_index + offset, "tensor_copy to");
      dst.Write(k, lane);
      if (!dst.cells.empty()) {
        dst.cells[static_cast<size_t>(k)].write_epoch = SimBuffer::kAsyncWrite;
      }
    }
    MBarrierState& state = target.LookupMBarrier(op->barrier, barrier_index, false);
    state.tx -= elements * element_bytes;
    MaybeComplete(state);
  };
  if (op->multicast == 0) {
    land(*this);
    return;
  }
  for (int64_t r = 0; r < 16; ++r) {
    if ((op->multicast >> r & 1) != 0) {
      land(hooks_->ClusterPeer(
          *this, r,
          absl::StrFormat("tensor_copy into %s multicast to cluster rank %d", own_dst.name, r)));
    }
  }
}

}  // namespace tune::sim
