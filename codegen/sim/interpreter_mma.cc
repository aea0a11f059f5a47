// The simulator's warp- and warpgroup-level tensor-core steps (ir::WarpMma, ir::WarpGroupMma). Each
// lane computes its own accumulators from shared memory, as the fragments it would receive from
// ldmatrix define them: no exchange between lanes is needed, so the lanes of a warp run as
// independent fibers like any other code. What the hardware requires is checked: whole warps,
// in-bounds rows, 16-byte aligned rows, and shared elements written before the barrier that
// precedes the step. A warpgroup step reads its operands through the 128-byte swizzle of their
// descriptors, as the hardware does (relative to the array's start, which the backend aligns to
// 1024 bytes), and is complete at the statement: programs that keep its asynchronous rule see the
// same result. A warpgroup step is issued when all 128 threads of the warpgroup have reached it
// (ExecHooks::WarpGroupStep), as the hardware issues it for the warpgroup as one: one thread's
// completed step stands for the warpgroup's, as pipelines that release a stage from one thread
// per warpgroup rely on.
#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"
#include "codegen/sim/interpreter.h"

namespace tune::sim {
namespace {

// tf32 operands: the tensor cores read the top 19 bits of each float32.
float TruncateToTf32(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits &= 0xffffe000u;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

// Adds a step's sum into accumulator `slot`: wrapping int32 for the integer dtypes (`isum`), the
// float32 rounding of the exact sum otherwise (`sum`).
void Accumulate(SimBuffer& acc, int64_t slot, bool integer, double sum, int64_t isum) {
  Lane c = acc.Read(slot);
  if (integer) {
    c.i = static_cast<int32_t>(static_cast<uint32_t>(c.i) + static_cast<uint32_t>(isum));
  } else {
    c.f = static_cast<float>(double(c.f) + sum);
  }
  acc.Write(slot, c);
}

}  // namespace

void Interpreter::ExecWarpMma(const ir::WarpMma* op) {
  if (!in_threads_) {
    Fail(absl::StatusCode::kInvalidArgument, "warp_mma outside gpu_thread loops");
  }
  if (block_threads_ % 32 != 0) {
    Fail(absl::StatusCode::kInvalidArgument,
         absl::StrFormat("warp_mma needs whole warps; the block has %d threads", block_threads_));
  }
  SimBuffer& a = *LookupBuffer(op->a.get());
  SimBuffer& b = *LookupBuffer(op->b.get());
  SimBuffer& acc = *LookupBuffer(op->acc.get());
  const int64_t a_index = Eval(op->a_index).lanes[0].i;
  const int64_t b_index = Eval(op->b_index).lanes[0].i;
  const int64_t a_bytes = a.element.Bytes();
  const int64_t b_bytes = b.element.Bytes();
  auto misaligned = [](int64_t elements, int64_t bytes) { return elements * bytes % 16 != 0; };
  if (misaligned(a_index, a_bytes) || misaligned(op->a_stride, a_bytes) ||
      misaligned(b_index, b_bytes) || misaligned(op->b_stride, b_bytes)) {
    Fail(
        absl::StatusCode::kFailedPrecondition,
        absl::StrFormat("warp_mma rows are not 16-byte aligned: %s[%d] stride %d, %s[%d] stride %d",
                        a.name, a_index, op->a_stride, b.name, b_index, op->b_stride));
  }
  const int64_t k_step = ir::WarpMmaK(op->dtype);
  const bool tf32 = op->dtype == Dtype::kTf32;
  const bool integer = IsIntegerDtype(op->dtype);
  const int64_t lane = thread_id_ % 32;
  auto read = [&](SimBuffer& buffer, int64_t index) {
    CheckedIndex(buffer, index, "warp_mma read of");
    TrackShared(buffer, index, /*write=*/false);
    return buffer.Read(index);
  };
  for (int mi = 0; mi < op->m_tiles; ++mi) {
    for (int ni = 0; ni < op->n_tiles; ++ni) {
      for (int j = 0; j < 4; ++j) {
        const int64_t row = 16 * mi + lane / 4 + 8 * (j / 2);
        const int64_t col = 8 * ni + 2 * (lane % 4) + j % 2;
        double sum = 0;
        int64_t isum = 0;
        for (int64_t k = 0; k < k_step; ++k) {
          const Lane x = read(a, a_index + row * op->a_stride + k);
          const Lane y = read(
              b, b_index + (op->b_k_contiguous ? col * op->b_stride + k : k * op->b_stride + col));
          if (integer) {
            isum += x.i * y.i;
          } else if (tf32) {
            sum += double(TruncateToTf32(x.f)) * double(TruncateToTf32(y.f));
          } else {
            sum += double(x.f) * double(y.f);
          }
        }
        const int64_t slot = CheckedIndex(
            acc, op->acc_offset + 4 * (int64_t{mi} * op->n_tiles + ni) + j, "warp_mma access of");
        Accumulate(acc, slot, integer, sum, isum);
      }
    }
  }
}

void Interpreter::ExecWarpGroupMma(const ir::WarpGroupMma* op) {
  if (!in_threads_) {
    Fail(absl::StatusCode::kInvalidArgument, "warpgroup_mma outside gpu_thread loops");
  }
  if (block_threads_ % 128 != 0) {
    Fail(absl::StatusCode::kInvalidArgument,
         absl::StrFormat("warpgroup_mma needs whole warpgroups; the block has %d threads",
                         block_threads_));
  }
  hooks_->WarpGroupStep(*this, [&] { IssueWarpGroupMma(op); });
}

void Interpreter::IssueWarpGroupMma(const ir::WarpGroupMma* op) {
  SimBuffer& a = *LookupBuffer(op->a.get());
  SimBuffer& b = *LookupBuffer(op->b.get());
  SimBuffer& acc = *LookupBuffer(op->acc.get());
  const int64_t a_start = Eval(op->a_index).lanes[0].i * a.element.Bytes();
  const int64_t b_start = Eval(op->b_index).lanes[0].i * b.element.Bytes();
  const bool b_mn = op->b_mn_atom_stride > 0;
  if (b_mn && b_start % 1024 != 0) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("warpgroup_mma operand %s stored N-major starts at byte %d, not on a "
                         "1024-byte swizzle atom",
                         b.name, b_start));
  }
  for (const auto& [buffer, start] : {std::pair{&a, a_start}, std::pair{&b, b_start}}) {
    if (buffer == &b && b_mn) {
      continue;
    }
    const int64_t k_offset = start % 1024;
    if (k_offset % 32 != 0 || k_offset + 32 * op->k_steps > 128) {
      Fail(
          absl::StatusCode::kFailedPrecondition,
          absl::StrFormat("warpgroup_mma operand %s starts at byte %d: %d bytes into its 1024-byte "
                          "swizzle atom, where a multiple of 32 up to %d is needed",
                          buffer->name, start, k_offset, 128 - 32 * op->k_steps));
    }
  }
  const int64_t k_step = ir::WarpMmaK(op->dtype);
  const bool tf32 = op->dtype == Dtype::kTf32;
  const bool integer = IsIntegerDtype(op->dtype);
  const int64_t t = thread_id_ % 128;
  const int64_t warp = t / 32;
  const int64_t lane = t % 32;
  // Element k of row r of step s, through the 128-byte swizzle (chunk bits 4-6 ^= row bits 7-9).
  auto read = [&](SimBuffer& buffer, int64_t start, int64_t r, int s, int64_t k) {
    const int64_t bytes = buffer.element.Bytes();
    int64_t address = start + r / 8 * 1024 + r % 8 * 128 + 32 * s + k * bytes;
    address ^= ((address >> 7) & 7) << 4;
    const int64_t index = CheckedIndex(buffer, address / bytes, "warpgroup_mma read of");
    TrackShared(buffer, index, /*write=*/false);
    return buffer.Read(index);
  };
  // Element k of column c of step s of an N-major B: row 16 s + k (K_step rows of 128 bytes per
  // step for the 16-bit dtypes), 64 columns per atom.
  auto read_mn = [&](SimBuffer& buffer, int64_t start, int64_t c, int s, int64_t k) {
    const int64_t bytes = buffer.element.Bytes();
    const int64_t r = k_step * s + k;
    int64_t address =
        start + c / 64 * op->b_mn_atom_stride + r / 8 * 1024 + r % 8 * 128 + c % 64 * bytes;
    address ^= ((address >> 7) & 7) << 4;
    const int64_t index = CheckedIndex(buffer, address / bytes, "warpgroup_mma read of");
    TrackShared(buffer, index, /*write=*/false);
    return buffer.Read(index);
  };
  for (int j = 0; j < op->n / 2; ++j) {
    const int64_t row = 16 * warp + lane / 4 + 8 * ((j / 2) % 2);
    const int64_t col = 8 * (j / 4) + 2 * (lane % 4) + j % 2;
    double sum = 0;
    int64_t isum = 0;
    for (int s = 0; s < op->k_steps; ++s) {
      for (int64_t k = 0; k < k_step; ++k) {
        const Lane x = read(a, a_start, row, s, k);
        const Lane y = b_mn ? read_mn(b, b_start, col, s, k) : read(b, b_start, col, s, k);
        if (integer) {
          isum += x.i * y.i;
        } else if (tf32) {
          sum += double(TruncateToTf32(x.f)) * double(TruncateToTf32(y.f));
        } else {
          sum += double(x.f) * double(y.f);
        }
      }
    }
    const int64_t slot = CheckedIndex(acc, op->acc_offset + j, "warpgroup_mma access of");
    if (op->overwrite) {
      acc.Write(slot, Lane{});
    }
    Accumulate(acc, slot, integer, sum, isum);
  }
}

}  // namespace tune::sim
