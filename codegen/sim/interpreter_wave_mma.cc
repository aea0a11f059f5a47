// The simulator's wavefront-level matrix step on AMD GPUs (ir::WaveMma: MFMA on 64 lanes, WMMA on
// 32). Each lane computes its own accumulators from shared memory at the rows and columns that
// ir::WaveMmaAccRow / WaveMmaAccCol assign them, the same formulas the kernels' epilogues are
// built from; its products read A and B through the operand layout (ir::WaveMmaOperandK), so a
// lane reads exactly the shared elements that some lane of the wavefront loads into its
// registers for that row and column. No exchange between lanes is needed, so the lanes run as
// independent fibers like any other code. What the hardware requires is checked: whole
// wavefronts, in-bounds reads, operand runs aligned to their own size (one vector read from
// LDS), and shared elements written before the barrier that precedes the step.
#include <cstdint>

#include "absl/strings/str_format.h"
#include "codegen/sim/interpreter.h"

namespace tune::sim {

void Interpreter::ExecWaveMma(const ir::WaveMma* op) {
  const int lanes = ir::WaveMmaLanes(op->shape);
  if (!in_threads_) {
    Fail(absl::StatusCode::kInvalidArgument, "wave_mma outside gpu_thread loops");
  }
  if (block_threads_ % lanes != 0) {
    Fail(absl::StatusCode::kInvalidArgument,
         absl::StrFormat("wave_mma %s needs whole wavefronts of %d lanes; the block has %d threads",
                         ir::WaveMmaShapeName(op->shape), lanes, block_threads_));
  }
  SimBuffer& a = *LookupBuffer(op->a.get());
  SimBuffer& b = *LookupBuffer(op->b.get());
  SimBuffer& acc = *LookupBuffer(op->acc.get());
  const int64_t a_index = Eval(op->a_index).lanes[0].i;
  const int64_t b_index = Eval(op->b_index).lanes[0].i;
  // Each lane reads its run of K as one vector: the run's start must be aligned to the run.
  const int64_t run = ir::WaveMmaKPerLane(op->shape, op->k);
  const int64_t align = std::min<int64_t>(run, 16 / a.element.Bytes());
  auto misaligned = [&](int64_t elements) { return elements % align != 0; };
  if (misaligned(a_index) || misaligned(op->a_stride) ||
      (op->b_k_contiguous && (misaligned(b_index) || misaligned(op->b_stride)))) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("wave_mma operand runs of %d elements are not aligned: %s[%d] stride %d, "
                         "%s[%d] stride %d",
                         align, a.name, a_index, op->a_stride, b.name, b_index, op->b_stride));
  }
  const bool integer = IsIntegerDtype(op->dtype);
  const int64_t tile = ir::WaveMmaTile(op->shape);
  const int64_t lane = thread_id_ % lanes;
  const int accs = ir::WaveMmaAccumulators(op->shape);
  auto read = [&](SimBuffer& buffer, int64_t index) {
    CheckedIndex(buffer, index, "wave_mma read of");
    TrackShared(buffer, index, /*write=*/false);
    return buffer.Read(index);
  };
  // The lanes whose operand registers hold k: lane group g holds [run g, run (g + 1)).
  const int64_t groups = op->k / run;
  for (int mi = 0; mi < op->m_tiles; ++mi) {
    for (int ni = 0; ni < op->n_tiles; ++ni) {
      for (int r = 0; r < accs; ++r) {
        const int64_t row = tile * mi + ir::WaveMmaAccRow<int64_t>(op->shape, lane, r);
        const int64_t col = tile * ni + ir::WaveMmaAccCol<int64_t>(op->shape, lane);
        double sum = 0;
        int64_t isum = 0;
        for (int64_t g = 0; g < groups; ++g) {
          // The lane of group g that holds this row of A (and this column of B).
          const int64_t holder = (row % tile) + tile * g;
          const int64_t k0 = ir::WaveMmaOperandK<int64_t>(op->shape, op->k, holder);
          for (int64_t e = 0; e < run; ++e) {
            const int64_t k = k0 + e;
            const Lane x = read(a, a_index + row * op->a_stride + k);
            const Lane y = read(b, b_index + (op->b_k_contiguous ? col * op->b_stride + k
                                                                 : k * op->b_stride + col));
            if (integer) {
              isum += x.i * y.i;
            } else {
              sum += double(x.f) * double(y.f);
            }
          }
        }
        const int64_t slot =
            CheckedIndex(acc, op->acc_offset + accs * (int64_t{mi} * op->n_tiles + ni) + r,
                         "wave_mma access of");
        Lane c = acc.Read(slot);
        if (integer) {
          c.i = static_cast<int32_t>(static_cast<uint32_t>(c.i) + static_cast<uint32_t>(isum));
        } else {
          c.f = static_cast<float>(double(c.f) + sum);
        }
        acc.Write(slot, c);
      }
    }
  }
}

}  // namespace tune::sim
