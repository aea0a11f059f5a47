// Workload: one operator instance, with the canonical text form that keys the tuning log.
//
//   gemm:M=512,N=3072,K=768
//   conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1
//
// Optional fields: `epilogue=bias|bias_relu|relu|requant`, `weights=canonical|prepared`
// (WeightForm), `dtype=` (the inputs' element type, default f32; common/element_type.h lists them)
// and `out=` (the output's, default the dtype's: f16 for f16, bf16 for bf16 and fp8, i32 for i8 and
// u8i8, f32 otherwise); for GEMM `layout=NN|NT` (default NN; NT keeps B as [N][K]); for conv2d
// `dilation=D` (default 1), `groups=1` and `layout=NCHW|NCHW4c|NCHW8c|NCHW16c|NHWC` (default
// NCHW; the blocked layouts keep channels in blocks of 4, 8 or 16, as a compiler does between
// layers whose kernels vectorise over channels; NHWC keeps channels innermost with KRSC
// weights). `epilogue=requant` (dtype=i8 or u8i8 only) writes an i8 output (out=i8, implied and
// left out of the canonical text):
//   C = saturate_i8(round_to_nearest_even(scale * acc + zero_point))
// with a per-tensor f32 scale and an i32 zero point passed by pointer after the output (the
// arguments `scale` and `zero_point`); out=i8 is accepted with it only. Defaults are omitted from
// the canonical form, so every text of an f32 workload reads as it did before dtypes existed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/element_type.h"

namespace tune {

enum class OpKind : uint8_t { kGemm, kConv2d };
enum class Epilogue : uint8_t { kNone, kBias, kBiasRelu, kRelu, kRequant };

/// How a kernel takes its weights (B of a GEMM, the filters of a conv2d).
///   kCanonical (the default): in the workload's layout, on every call.
///   kPrepared: rewritten once, for weights that stay the same from call to call (a trained
///     model's). The kernel `f` of a CPU library then comes with
///       extern const int64_t f_prepared_floats;                    // size of the prepared form
///       int32_t f_prepare(const float* weight, float* prepared);  // canonical -> prepared
///     and `f` takes `prepared` where the weights go. The size counts 4-byte units whatever the
///     dtype (the weights' own element type for a typed workload: `const tune_bf16* weight`, ...
///     in the generated header). What the prepared form holds is the
///     kernel's own business (a Winograd kernel's transformed filters; a plain copy for
///     kernels that read the canonical layout): only f_prepare writes it and only f reads it.
enum class WeightForm : uint8_t { kCanonical, kPrepared };

std::string_view OpKindName(OpKind op);
std::string_view EpilogueName(Epilogue e);
std::string_view WeightFormName(WeightForm form);
/// The symbols that come with kernel `kernel_name` when it takes prepared weights (WeightForm):
/// `<kernel>_prepare` and `<kernel>_prepared_floats`.
std::string PrepareFunctionName(std::string_view kernel_name);
std::string PreparedFloatsName(std::string_view kernel_name);
bool EpilogueHasBias(Epilogue e);
bool EpilogueHasRelu(Epilogue e);

/// How a GEMM keeps B. kNN: B[K][N] (row-major A x B). kNT: B[N][K] (A x B^T), as PyTorch's
/// Linear and ONNX's Gemm with transB=1 keep weights.
enum class GemmLayout : uint8_t { kNN, kNT };
std::string_view GemmLayoutName(GemmLayout layout);  // "NN", "NT"

/// Row-major A[M][K] x B -> C[M][N], B as `layout` says.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  GemmLayout layout = GemmLayout::kNN;
};

/// NCHW input [N][C][H][W], KCRS weight [K][C][R][S] -> NKPQ output [N][K][P][Q]; or, with a
/// channel block b > 1 (layout=NCHW<b>c), input [N][C/b][H][W][b], weight [K/b][C/b][R][S][b][b]
/// (input channel, then output channel innermost: oneDNN's OIhw<b>i<b>o) -> output
/// [N][K/b][P][Q][b]; or, with nhwc (layout=NHWC), input [N][H][W][C], weight [K][R][S][C] (KRSC)
/// -> output [N][P][Q][K]. The bias is [K] in all three.
struct Conv2dShape {
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0;
  int64_t stride = 1, pad = 0, dilation = 1;
  /// Channels per block of the blocked layout; 1: plain NCHW (or NHWC).
  int64_t block = 1;
  /// Channels innermost (layout=NHWC); never together with a block.
  bool nhwc = false;
  bool blocked() const { return block > 1; }
  /// 1x1, stride 1, unpadded: each output pixel reads its own input pixel (an im2col that is the
  /// input itself).
  bool pointwise() const { return r == 1 && s == 1 && stride == 1 && pad == 0; }
  int64_t p() const { return (h + 2 * pad - dilation * (r - 1) - 1) / stride + 1; }
  int64_t q() const { return (w + 2 * pad - dilation * (s - 1) - 1) / stride + 1; }
};

/// What an argument is to the kernel.
enum class ArgRole : uint8_t { kInput, kWeight, kBias, kOutput, kScale, kZeroPoint };

/// One argument of a kernel's C ABI, in call order.
struct TensorArg {
  std::string name;            // "A", "B", "bias", "C", "scale_A", "scale_B" / "input", "weight",
                               // "bias", "output", "scale_input", "scale_weight"; "scale",
                               // "zero_point" (epilogue=requant)
  std::vector<int64_t> shape;  // in the workload's layout
  bool is_output = false;
  ElementType type = ElementType::kF32;
  ArgRole role = ArgRole::kInput;
  int64_t NumElements() const;
  int64_t NumBytes() const { return NumElements() * ElementBytes(type); }
};

/// The most elements one tensor of a workload may have (4 TiB of f32): far beyond any machine,
/// and small enough that element and byte counts never overflow.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

class Workload {
 public:
  /// Parses the canonical text form (fields in any order). Malformed text, unknown ops or
  /// fields, missing fields, sizes < 1, a filter that does not fit the padded input and a tensor
  /// of more than kMaxTensorElements are InvalidArgument naming the field and the form.
  static absl::StatusOr<Workload> Parse(std::string_view text);

  static Workload Gemm(GemmShape shape, Epilogue epilogue = Epilogue::kNone);
  static Workload Conv2d(Conv2dShape shape, Epilogue epilogue = Epilogue::kNone);

  OpKind op() const { return op_; }
  /// The inputs' element type (dtype=) and the output's (out=).
  Dtype dtype() const { return dtype_; }
  ElementType out_type() const { return out_; }
  ElementType input_type() const { return ActivationType(dtype_); }
  ElementType weight_type() const { return WeightType(dtype_); }
  ElementType accumulator_type() const { return AccumulatorType(dtype_); }
  /// Whether the kernel takes the two per-tensor scales after its output (TakesScales).
  bool has_scales() const { return TakesScales(dtype_, out_); }
  /// Whether it requantises its output to i8 (epilogue=requant): it takes `scale` (f32) and
  /// `zero_point` (i32) after its output.
  bool requantizes() const { return epilogue_ == Epilogue::kRequant; }

  Epilogue epilogue() const { return epilogue_; }
  WeightForm weight_form() const { return weight_form_; }
  bool prepared_weights() const { return weight_form_ == WeightForm::kPrepared; }
  const GemmShape& gemm() const { return gemm_; }
  const Conv2dShape& conv2d() const { return conv2d_; }

  /// The same operator with its weights taken in `form`.
  Workload WithWeightForm(WeightForm form) const;
  /// The same operator in the plain layout: a blocked conv2d in NCHW; itself otherwise.
  Workload InPlainLayout() const;
  /// The same operator on other element types; `out` must be one AcceptedOutputTypes(dtype)
  /// lists (checked), nullopt for the dtype's default.
  Workload WithTypes(Dtype dtype, std::optional<ElementType> out = std::nullopt) const;

  /// The canonical text form; Parse(ToString()) == *this.
  std::string ToString() const;
  /// Operations of one call (2 per multiply-add; epilogue not counted): floating-point ones, or
  /// integer ones for the integer dtypes (CountsIntegerOps).
  double Flops() const;
  bool CountsIntegerOps() const { return IsIntegerDtype(dtype_); }
  /// The kernel's arguments in C ABI order: inputs, optional bias, the output, then the scales
  /// when has_scales(), or the requantisation's scale and zero point when requantizes(). With
  /// prepared weights the weight argument is the canonical tensor that
  /// `_prepare` reads.
  std::vector<TensorArg> Arguments() const;
  /// The index of the output in Arguments().
  int OutputIndex() const;

  friend bool operator==(const Workload& a, const Workload& b) {
    return a.ToString() == b.ToString();
  }

 private:
  OpKind op_ = OpKind::kGemm;
  Epilogue epilogue_ = Epilogue::kNone;
  WeightForm weight_form_ = WeightForm::kCanonical;
  Dtype dtype_ = Dtype::kF32;
  ElementType out_ = ElementType::kF32;
  GemmShape gemm_;
  Conv2dShape conv2d_;
};

}  // namespace tune
