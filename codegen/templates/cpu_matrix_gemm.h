// What the GEMM templates of the CPU's matrix instructions share (gemm.cpu.dot: AVX512-BF16 and
// VNNI dot products; gemm.cpu.amx: AMX tiles): their element types, B packed into VNNI panels,
// and the epilogue that writes C.
//
// VNNI panels: B cut into panels of `width` columns; in a panel, the G = group consecutive
// reduction elements of one column lie together (the operand layout of vdpbf16ps, vpdpbusd and
// of AMX's B tiles), K padded with zeros to `kp` and the last panel's missing columns zero:
//   (k, n) at (n / width) * kp * width + ((k / G) * width + n % width) * G + k % G
#pragma once

#include <algorithm>
#include <cstdint>

#include "codegen/ir/ir.h"
#include "common/workload.h"

namespace tune {

/// The dtypes these templates build: bf16 (f32 accumulation), i8 and u8i8 (i32), with every
/// output their dtype accepts.
inline constexpr DtypeSet kCpuMatrixDtypes = DtypeSet{Dtype::kBf16, Dtype::kI8, Dtype::kU8I8};

struct CpuMatrixTypes {
  Dtype dtype = Dtype::kBf16;
  ir::Type a, b;  // storage of A and B
  ir::Type acc;   // float32, or int32 for the integer dtypes
  ir::Type out;   // C
  int group = 2;  // 2 for bf16, 4 for the 8-bit dtypes
  bool scales = false;
};
CpuMatrixTypes CpuMatrixTypesOf(const Workload& workload);

struct VnniPanels {
  int64_t width = 16;  // columns of a panel
  int64_t kp = 0;      // K padded (a multiple of the group)
  int group = 2;
  /// Whether the packed B holds b + 128 as uint8 (i8 B read as vpdpbusd's unsigned operand).
  bool shift_to_u8 = false;
  /// Panels are written up to this many columns (0: N), zero beyond N: a kernel that reads
  /// whole groups of panels finds zeros in the last group.
  int64_t columns = 0;
  int64_t Panels(int64_t n) const { return (std::max(n, columns) + width - 1) / width; }
  int64_t Elements(int64_t n) const { return Panels(n) * width * kp; }
  ir::Type ElementType(const CpuMatrixTypes& types) const {
    return shift_to_u8 ? ir::Type::UInt8() : types.b;
  }
};

/// Writes every panel of `packed` from `b` (the workload's B, [K][N] or, layout=NT, [N][K]).
ir::Stmt PackVnniPanels(const GemmShape& shape, GemmLayout layout, const VnniPanels& panels,
                        const ir::Buffer& b, const ir::Buffer& packed);

/// C's value of an accumulator `acc` (types.acc, any lanes) of column `col` (scalar or ramp): the
/// scales' product applied (float outputs of the integer dtypes), the bias of the column added
/// and ReLU (as the epilogue says), converted to types.out. `scale` is the product of the two
/// scales (scalar float32) when types.scales, `bias` the workload's bias buffer.
ir::Expr FinishOutput(const CpuMatrixTypes& types, Epilogue epilogue, ir::Expr acc,
                      const ir::Buffer& bias, const ir::Expr& col, const ir::Expr& scale);

}  // namespace tune
