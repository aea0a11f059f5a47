// What the GEMM templates of the CPU's matrix instructions share (gemm.cpu.dot: AVX512-BF16 and
// VNNI dot products; gemm.cpu.amx: AMX tiles): their element types, B packed into VNNI panels,
// and the epilogue that writes C.
//
// VNNI panels: B cut into panels of `width` columns; in a panel, the G = group consecutive
// reduction elements of one column lie together (the operand layout of vdpbf16ps, vpdpbusd and
// of AMX's B tiles), K padded with zeros to `kp` and the last panel's missing columns zero:
//   (k, n) at (n / width) * kp * width + ((k / G) * width + n % width) * G + k % G
//
// i8 x i8 has no VNNI instruction: its panels hold B as it is (s8, vpdpbusd's signed operand),
// A is read as a + 128 (u8, the unsigned one), and each column's compensation -128 x sum_k b,
// written after the panels when they are packed, starts the column's sum:
// sum (a + 128) b - 128 sum b = sum a b.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "common/target.h"
#include "common/workload.h"

namespace tune {

/// The dtypes these templates build: bf16 (f32 accumulation), i8 and u8i8 (i32), with every
/// output their dtype accepts; gemm.cpu.dot builds f16 too (f32 accumulation; AMX tiles of f16
/// arrive with Granite Rapids' AMX-FP16, which tune does not target).
inline constexpr DtypeSet kCpuMatrixDtypes = DtypeSet{Dtype::kBf16, Dtype::kI8, Dtype::kU8I8};
inline constexpr DtypeSet kCpuDotDtypes = kCpuMatrixDtypes | DtypeSet{Dtype::kF16};

/// The CPU features (common/host_cpu.h's names) that gemm.cpu.dot's kernels of the workload's
/// dtype use on `target` (KernelTemplate::worker_features): "avx512bf16" for bf16 and
/// "avx512vnni" for i8 and u8i8 where the target has them (the CPU backend emits vdpbf16ps and
/// vpdpbusd then, plain vector code otherwise: nothing is needed), and "avx512fp16" for f16 where
/// the target has it (its conversions may use AVX512-FP16's instructions).
std::vector<std::string> DotWorkerFeatures(const Workload& workload, const Target& target);

/// The ones gemm.cpu.amx's and conv2d.cpu.amx's kernels use: "amx-tile" with "amx-bf16" (bf16)
/// or "amx-int8".
std::vector<std::string> AmxWorkerFeatures(const Workload& workload, const Target& target);
/// The AMX tiles the templates configure: 16 rows of 64 bytes, each a tile step of AmxStep
/// reduction elements (32 bf16, 64 of the 8-bit dtypes).
inline constexpr int64_t kAmxTileRows = 16;
inline constexpr int64_t kAmxTileBytes = 64;
inline int64_t AmxStep(const Workload& workload) {
  return workload.dtype() == Dtype::kBf16 ? 32 : 64;
}
/// Whether `target` has the AMX tiles of the workload's dtype (KernelTemplate::applies of the
/// AMX templates).
bool HasAmxFor(const Workload& workload, const Target& target);
/// OK where HasAmxFor; else InvalidArgument naming `template_name`, what it needs, the target
/// and the CPUs that have it.
absl::Status CheckAmx(std::string_view template_name, const Workload& workload,
                      const Target& target);

struct CpuMatrixTypes {
  Dtype dtype = Dtype::kBf16;
  ir::Type a, b;  // storage of A and B
  ir::Type acc;   // float32, or int32 for the integer dtypes
  ir::Type out;   // C
  int group = 2;  // 2 for bf16, 4 for the 8-bit dtypes
  bool scales = false;
  bool requant = false;  // epilogue=requant: C is i8 from scale and zero_point
};
CpuMatrixTypes CpuMatrixTypesOf(const Workload& workload);

struct VnniPanels {
  int64_t width = 16;  // columns of a panel
  int64_t kp = 0;      // K padded (a multiple of the group)
  int group = 2;
  /// i8: where (the element of `packed`) the columns' compensations begin, -1 for none: column
  /// n of the packed panels (n from the first packed panel's first column) has its int32 at
  /// sums_at + 4 n, written with the panels.
  int64_t sums_at = -1;
  /// Panels are written up to this many columns (0: N), zero beyond N: a kernel that reads
  /// whole groups of panels finds zeros in the last group.
  int64_t columns = 0;
  int64_t Panels(int64_t n) const { return (std::max(n, columns) + width - 1) / width; }
  int64_t Elements(int64_t n) const { return Panels(n) * width * kp; }
  /// The bytes of the compensations of `panels` panels (none without sums_at).
  int64_t SumsBytes(int64_t panels) const { return sums_at < 0 ? 0 : panels * width * 4; }
  /// The elements of a packed buffer of `panels` panels and their compensations (those exist for
  /// the 1-byte i8 alone, so compensations' bytes are elements there).
  int64_t Storage(int64_t panels) const { return panels * width * kp + SumsBytes(panels); }
};

/// `s8` (int8, any lanes) as vpdpbusd's unsigned operand: s8 + 128 as uint8 (the top bit of each
/// byte flipped), the shift that i8 x i8 compensates.
ir::Expr ShiftedToU8(ir::Expr s8);

/// Panel `panel` of `packed` (int8 panels of `panels`' layout) summed per column: for each vector
/// v of 16 columns (v < width / 16), `store(v, sums)` with the int32 sums over all of kp, a dot
/// product of every quad with ones (vpdpbusd, the panel read from cache). i8 x i8's
/// compensations are built from them.
ir::Stmt PanelColumnSums(const VnniPanels& panels, const ir::Buffer& packed, const ir::Expr& panel,
                         const std::function<ir::Stmt(int64_t, ir::Expr)>& store);

/// The int32 compensations of `lanes` columns from `col` (counted from the first packed panel's
/// first column; `lanes` a multiple of 16), read from the bytes of `packed` at panels.sums_at.
ir::Expr LoadCompensation(const VnniPanels& panels, const ir::Buffer& packed, const ir::Expr& col,
                          int lanes);

/// Writes every panel of `packed` from `b` (the workload's B, [K][N] or, layout=NT, [N][K]).
ir::Stmt PackVnniPanels(const GemmShape& shape, GemmLayout layout, const VnniPanels& panels,
                        const ir::Buffer& b, const ir::Buffer& packed);
/// Writes `count` panels of B from panel `first` on (panels past the last are zero) into
/// `packed` from its start: a column block packed where it is used. The loop over the panels
/// inside N is of `kind` (kParallel to share the packing among threads).
ir::Stmt PackVnniPanelRange(const GemmShape& shape, GemmLayout layout, const VnniPanels& panels,
                            const ir::Buffer& b, const ir::Buffer& packed, const ir::Expr& first,
                            const ir::Expr& count, ir::LoopKind kind);

/// `acc` plus the dot products of the groups of `a` (A's) and `b` (B's), for the types' dtype:
/// bf16 pairs, or u8 x s8 quads with A unsigned, or B unsigned where `b_unsigned`. Either of a
/// and b may be one group (ir::DotAccumulate).
ir::Expr MatrixDot(const CpuMatrixTypes& types, bool b_unsigned, ir::Expr acc, ir::Expr a,
                   ir::Expr b);

/// A kernel's parameters (Workload::Arguments(), of their element types) and how it writes C: a
/// GEMM's, or a conv2d's seen as one (A the input, B the weights, C the output, its columns the
/// output channels).
class CpuMatrixOperands {
 public:
  explicit CpuMatrixOperands(const Workload& workload);

  const CpuMatrixTypes& types() const { return types_; }
  const ir::Buffer& a() const { return a_; }
  const ir::Buffer& b() const { return b_; }
  const ir::Buffer& c() const { return c_; }

  /// The parameters in ABI order with `weights` (B, or the prepared form) in B's place.
  std::vector<ir::Buffer> Params(const ir::Buffer& weights) const;
  /// `body` with the scale variable bound to *scale_A * *scale_B (or, requantising, to *scale,
  /// and the zero point's to *zero_point; the body unchanged without either); every Finish of a
  /// kernel lies inside it.
  ir::Stmt BindScale(ir::Stmt body) const;

  /// C's value of an accumulator `acc` (types.acc, any lanes) of column `col` (scalar or ramp):
  /// the scales' product applied (float outputs of the integer dtypes), the bias of the column
  /// added and ReLU (as the epilogue says), converted to types.out; or requantised to i8.
  ir::Expr Finish(ir::Expr acc, const ir::Expr& col) const;

  /// C's `lanes` columns from `col0` in `row` of a GEMM's C[M][N], finished from `acc(offset, n)`
  /// (the accumulators of columns col0 + offset ..., n of them): one vector where they lie inside
  /// N (always when `inside`), else column by column up to N.
  ir::Stmt StoreColumns(const ir::Expr& row, const ir::Expr& col0, int lanes, bool inside,
                        const std::function<ir::Expr(ir::Expr, int)>& acc) const;
  /// The same for any layout of C: the element of column `col` lies at `index_of(col)`. One vector
  /// store where the columns are `contiguous` in C (index_of(col0) + 0, 1, ...) and lie inside,
  /// else column by column.
  ir::Stmt StoreColumnsAt(const std::function<ir::Expr(ir::Expr)>& index_of, const ir::Expr& col0,
                          int lanes, bool inside, bool contiguous,
                          const std::function<ir::Expr(ir::Expr, int)>& acc) const;

 private:
  int64_t columns_ = 0;  // N, or a conv2d's output channels
  CpuMatrixTypes types_;
  Epilogue epilogue_;
  ir::Buffer a_, b_, bias_, c_, scale_a_, scale_b_, requant_scale_, zero_point_;
  ir::Var scale_{"scale", ir::Type::Float32()};
  ir::Var zero_{"zero", ir::Type::Float32()};
};

}  // namespace tune
