// Element types: what a workload's `dtype=` and `out=` fields name, the storage type of each of
// its tensors, and bit-exact conversions between them and f32.
//
//   dtype (the inputs)  A / input   B / weight  accumulation  out= (default first)
//   f32                 f32         f32         f32           f32
//   tf32                f32 (*)     f32 (*)     f32           f32
//   f16                 f16         f16         f32           f16, f32
//   bf16                bf16        bf16        f32           bf16, f32
//   i8                  i8          i8          i32           i32, f32 (+)
//   u8i8                u8          i8          i32           i32, f32 (+)
//   fp8e4m3, fp8e5m2    fp8         fp8         f32           bf16, f32 (+)
//   fp8e4m3fnuz, ...    fp8 (FNUZ)  fp8 (FNUZ)  f32           bf16, f32 (+)
//
// (*) tf32 keeps f32 storage; its inputs are read as the tensor cores read them, rounded to 10
//     mantissa bits (RoundToTf32): the reference rounds them the same way.
// (+) With a floating-point output these kernels take per-tensor scales (TakesScales): two
//     pointers to one f32 each, after the output, and the result is scale_A * scale_B * (A x B).
//     An i32 output is the raw accumulator and has nothing to scale.
//
// The 8-bit float encodings are the OCP ones that NVIDIA runs (E4M3FN: bias 7, no infinity, NaN
// 0x7f/0xff, largest 448; E5M2: IEEE-like, bias 15, largest 57344) and AMD gfx942's FNUZ ones
// (E4M3FNUZ: bias 8, largest 240; E5M2FNUZ: bias 16, largest 57344; both without infinity or
// negative zero, 0x80 the only NaN). Conversions to them round to nearest even and saturate to
// the largest finite value (PTX's .satfinite); conversions to f16 and bf16 round to nearest even
// and overflow to infinity, as the hardware's cvt.rn does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tune {

/// The storage type of one tensor.
enum class ElementType : uint8_t {
  kF32,
  kF16,
  kBf16,
  kI8,
  kU8,
  kI32,
  kFp8E4m3,
  kFp8E5m2,
  kFp8E4m3Fnuz,
  kFp8E5m2Fnuz,
};

/// What a workload's `dtype=` names: its inputs' types and how they are read.
enum class Dtype : uint8_t {
  kF32,
  kTf32,
  kF16,
  kBf16,
  kI8,
  kU8I8,
  kFp8E4m3,
  kFp8E5m2,
  kFp8E4m3Fnuz,
  kFp8E5m2Fnuz,
};

inline constexpr int kNumDtypes = 10;

/// Every dtype in the order of the enum (the order of DtypeSet::Names and of the docs).
const std::vector<Dtype>& AllDtypes();

std::string_view DtypeName(Dtype dtype);  // "f32", "tf32", ..., "u8i8", "fp8e4m3fnuz"
std::optional<Dtype> ParseDtype(std::string_view name);
/// "f32|tf32|f16|..." : the accepted dtype names, for error messages.
std::string DtypeNames();

std::string_view ElementTypeName(ElementType type);  // "f32", "bf16", "u8", "i32", "fp8e4m3", ...
std::optional<ElementType> ParseElementType(std::string_view name);
int ElementBytes(ElementType type);
bool IsIntegerElement(ElementType type);
bool IsFp8(ElementType type);

ElementType ActivationType(Dtype dtype);   // A of a GEMM, the input of a conv2d
ElementType WeightType(Dtype dtype);       // B of a GEMM, the weight of a conv2d
ElementType AccumulatorType(Dtype dtype);  // f32, or i32 for i8 and u8i8
bool IsIntegerDtype(Dtype dtype);
bool IsFp8Dtype(Dtype dtype);
/// The output type when `out=` is not given.
ElementType DefaultOutputType(Dtype dtype);
/// The output types `out=` accepts for `dtype`, the default first.
const std::vector<ElementType>& AcceptedOutputTypes(Dtype dtype);
bool AcceptsOutput(Dtype dtype, ElementType out);
/// Whether kernels of this dtype and output take the two per-tensor scales (see the table).
bool TakesScales(Dtype dtype, ElementType out);

/// A set of dtypes (what a template builds, what a worker measures).
class DtypeSet {
 public:
  constexpr DtypeSet() = default;
  constexpr DtypeSet(std::initializer_list<Dtype> dtypes) {
    for (Dtype d : dtypes) {
      bits_ |= Bit(d);
    }
  }
  static DtypeSet All();

  constexpr bool Has(Dtype d) const { return (bits_ & Bit(d)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DtypeSet operator|(DtypeSet other) const { return FromBits(bits_ | other.bits_); }
  constexpr DtypeSet operator&(DtypeSet other) const { return FromBits(bits_ & other.bits_); }
  constexpr bool operator==(const DtypeSet&) const = default;
  std::vector<Dtype> ToVector() const;
  /// "f32|bf16|f16", in the enum's order; "" when empty.
  std::string Names() const;

 private:
  static constexpr uint32_t Bit(Dtype d) { return uint32_t{1} << static_cast<int>(d); }
  static constexpr DtypeSet FromBits(uint32_t bits) {
    DtypeSet s;
    s.bits_ = bits;
    return s;
  }
  uint32_t bits_ = 0;
};

// Bit-exact conversions, done with integer and double arithmetic only (no hardware conversion
// instruction, no library call), so that the reference, the simulator and the tests round alike
// on every host.
uint16_t RoundToBf16(float value);  // nearest even; NaN stays a quiet NaN of the same sign
float Bf16ToFloat(uint16_t bits);
uint16_t RoundToF16(float value);  // nearest even, subnormals, overflow to infinity
float F16ToFloat(uint16_t bits);
float RoundToTf32(float value);  // nearest even to 10 mantissa bits, kept in f32
/// `format` is one of the four fp8 element types; nearest even, saturating to the largest finite
/// value; NaN to the format's NaN; -0 to +0 in the FNUZ formats.
uint8_t RoundToFp8(ElementType format, float value);
float Fp8ToFloat(ElementType format, uint8_t bits);
/// The value an input of `type` holds after a `dtype`'s reading (RoundToTf32 for tf32).
float RoundForInput(Dtype dtype, ElementType type, float value);

/// Element `i` of an array of `type` at `base`, exactly (every element type fits in a double).
double DecodeElement(ElementType type, const void* base, int64_t i);
/// Stores `value` as element `i`: floats rounded to nearest even (f32 through float, then as
/// above); integers rounded to nearest and wrapped modulo 2^bits, as a C cast of an int64 does.
void EncodeElement(ElementType type, double value, void* base, int64_t i);

/// The spacing of `type`'s values around magnitude `m` (its ulp there; the subnormal spacing
/// below the smallest normal; 1 for integers).
double UlpOf(ElementType type, double m);

}  // namespace tune
