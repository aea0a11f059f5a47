// The simulator's AMX tile instructions (ir::AmxTileOp), so that the CPU templates built on them
// (gemm.cpu.amx, conv2d.cpu.amx) can be checked, with the simulator's bounds checks, on machines
// without AMX. Each interpreter has its own eight tile registers, as each CPU thread has: a tile
// holds rows of bytes exactly as tileloadd reads them from memory, and the products read those
// bytes as the dtype's elements (bf16 pairs, int8 or uint8 quads) and the accumulators as float32
// or int32. What the hardware faults on is a fault here: a tile instruction before ldtilecfg, a
// tile outside the configuration, shapes that do not chain (C rows = A rows, A's bytes per row =
// 4 x B's rows, C's bytes per row = B's), and rows outside their buffer. Sums: bf16 products in
// float32 as tdpbf16ps adds each pair (its rounding of the pair's sum is not modelled: the exact
// pair sum rounded once); the integer dtypes in wrapping int32.
#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"
#include "codegen/sim/interpreter.h"

namespace tune::sim {
namespace {

float Bf16ToFloat(const uint8_t* bytes) {
  uint16_t half;
  std::memcpy(&half, bytes, sizeof half);
  const uint32_t bits = uint32_t{half} << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace

void Interpreter::ExecAmxTileOp(const ir::AmxTileOp* op) {
  using Kind = ir::AmxTileOpKind;
  if (op->op == Kind::kConfigure) {
    amx_ = std::make_shared<AmxTiles>();
    for (size_t t = 0; t < op->shapes.size(); ++t) {
      amx_->shapes[t] = op->shapes[t];
    }
    return;
  }
  if (op->op == Kind::kRelease) {
    amx_.reset();
    return;
  }
  if (amx_ == nullptr) {
    Fail(absl::StatusCode::kFailedPrecondition,
         "an AMX tile instruction before the tiles were configured (ldtilecfg)");
  }
  auto tile = [&](int t) -> AmxTiles::Tile& {
    if (t < 0 || t >= ir::kAmxTiles || amx_->shapes[t].rows == 0) {
      Fail(absl::StatusCode::kFailedPrecondition,
           absl::StrFormat("AMX tile %d is not configured", t));
    }
    return amx_->tiles[t];
  };
  const ir::AmxTileShape* shapes = amx_->shapes.data();
  switch (op->op) {
    case Kind::kZero:
      tile(op->tile).fill(0);
      return;
    case Kind::kLoad:
    case Kind::kStore: {
      AmxTiles::Tile& data = tile(op->tile);
      SimBuffer& b = *LookupBuffer(op->buffer.get());
      const int64_t bytes = b.element.Bytes();
      const ir::AmxTileShape shape = shapes[op->tile];
      const int64_t base = Eval(op->index).lanes[0].i;
      const bool load = op->op == Kind::kLoad;
      for (int r = 0; r < shape.rows; ++r) {
        for (int64_t e = 0; e < shape.colsb / bytes; ++e) {
          const int64_t k = CheckedIndex(b, base + r * op->stride + e,
                                         load ? "AMX tile load from" : "AMX tile store to");
          uint8_t* cell = data.data() + r * 64 + e * bytes;
          std::byte* element = b.data + k * bytes;
          if (load) {
            std::memcpy(cell, element, static_cast<size_t>(bytes));
          } else {
            std::memcpy(element, cell, static_cast<size_t>(bytes));
          }
        }
      }
      return;
    }
    case Kind::kDot: {
      const ir::AmxTileShape c = shapes[op->tile], a = shapes[op->a_tile], b = shapes[op->b_tile];
      AmxTiles::Tile& acc = tile(op->tile);
      const AmxTiles::Tile& at = tile(op->a_tile);
      const AmxTiles::Tile& bt = tile(op->b_tile);
      if (c.rows != a.rows || a.colsb != 4 * b.rows || c.colsb != b.colsb) {
        Fail(absl::StatusCode::kFailedPrecondition,
             absl::StrFormat("AMX tile product of mismatched shapes: C %dx%d bytes, A %dx%d, B "
                             "%dx%d (C rows = A rows, A's row bytes = 4 x B's rows, C's row "
                             "bytes = B's)",
                             c.rows, c.colsb, a.rows, a.colsb, b.rows, b.colsb));
      }
      const bool bf16 = op->dtype == Dtype::kBf16;
      const bool a_unsigned = op->dtype == Dtype::kU8I8;
      for (int m = 0; m < c.rows; ++m) {
        for (int n = 0; n < c.colsb / 4; ++n) {
          uint8_t* slot = acc.data() + m * 64 + n * 4;
          if (bf16) {
            float sum;
            std::memcpy(&sum, slot, sizeof sum);
            for (int q = 0; q < b.rows; ++q) {  // pairs
              const uint8_t* x = at.data() + m * 64 + q * 4;
              const uint8_t* y = bt.data() + q * 64 + n * 4;
              const double pair = double(Bf16ToFloat(x)) * Bf16ToFloat(y) +
                                  double(Bf16ToFloat(x + 2)) * Bf16ToFloat(y + 2);
              sum = static_cast<float>(double(sum) + pair);
            }
            std::memcpy(slot, &sum, sizeof sum);
          } else {
            uint32_t sum;
            std::memcpy(&sum, slot, sizeof sum);
            for (int q = 0; q < b.rows; ++q) {  // quads
              for (int e = 0; e < 4; ++e) {
                const uint8_t x = at[m * 64 + q * 4 + e];
                const int32_t xv = a_unsigned ? int32_t{x} : int32_t{static_cast<int8_t>(x)};
                const int32_t yv = static_cast<int8_t>(bt[q * 64 + n * 4 + e]);
                sum += static_cast<uint32_t>(xv * yv);
              }
            }
            std::memcpy(slot, &sum, sizeof sum);
          }
        }
      }
      return;
    }
    case Kind::kConfigure:
    case Kind::kRelease:
      return;
  }
}

}  // namespace tune::sim
