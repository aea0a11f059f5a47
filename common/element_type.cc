#include "common/element_type.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/status.h"

namespace tune {
namespace {

// One row per element type: its name, size and, for the small float formats, its encoding.
enum class NanStyle : uint8_t {
  kIeee,  // exponent all ones: infinity (mantissa 0) or NaN
  kFn,    // no infinity; exponent and mantissa all ones is NaN (OCP E4M3FN)
  kFnuz,  // no infinity, no negative zero; 0x80 is the only NaN
};

struct SmallFloat {
  int exponent_bits = 0;
  int mantissa_bits = 0;
  int bias = 0;
  NanStyle nan = NanStyle::kIeee;
  bool saturate = false;  // overflow to the largest finite value rather than infinity
};

struct ElementInfo {
  ElementType type;
  std::string_view name;
  int bytes;
  SmallFloat format;  // exponent_bits == 0: not a small float
};

constexpr ElementInfo kElements[] = {
    {ElementType::kF32, "f32", 4, {}},
    {ElementType::kF16, "f16", 2, {5, 10, 15, NanStyle::kIeee, false}},
    {ElementType::kBf16, "bf16", 2, {}},
    {ElementType::kI8, "i8", 1, {}},
    {ElementType::kU8, "u8", 1, {}},
    {ElementType::kI32, "i32", 4, {}},
    {ElementType::kFp8E4m3, "fp8e4m3", 1, {4, 3, 7, NanStyle::kFn, true}},
    {ElementType::kFp8E5m2, "fp8e5m2", 1, {5, 2, 15, NanStyle::kIeee, true}},
    {ElementType::kFp8E4m3Fnuz, "fp8e4m3fnuz", 1, {4, 3, 8, NanStyle::kFnuz, true}},
    {ElementType::kFp8E5m2Fnuz, "fp8e5m2fnuz", 1, {5, 2, 16, NanStyle::kFnuz, true}},
};

const ElementInfo& Info(ElementType type) {
  for (const ElementInfo& e : kElements) {
    if (e.type == type) {
      return e;
    }
  }
  TUNE_CHECK(false) << "unknown element type " << static_cast<int>(type);
  return kElements[0];
}

// One row per dtype: the types of its tensors (the table in element_type.h).
struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  ElementType activation;
  ElementType weight;
  ElementType accumulator;
  std::vector<ElementType> outputs;  // default first
};

const std::vector<DtypeInfo>& DtypeTable() {
  using E = ElementType;
  static const auto* table = new std::vector<DtypeInfo>{
      {Dtype::kF32, "f32", E::kF32, E::kF32, E::kF32, {E::kF32}},
      {Dtype::kTf32, "tf32", E::kF32, E::kF32, E::kF32, {E::kF32}},
      {Dtype::kF16, "f16", E::kF16, E::kF16, E::kF32, {E::kF16, E::kF32}},
      {Dtype::kBf16, "bf16", E::kBf16, E::kBf16, E::kF32, {E::kBf16, E::kF32}},
      {Dtype::kI8, "i8", E::kI8, E::kI8, E::kI32, {E::kI32, E::kF32}},
      {Dtype::kU8I8, "u8i8", E::kU8, E::kI8, E::kI32, {E::kI32, E::kF32}},
      {Dtype::kFp8E4m3, "fp8e4m3", E::kFp8E4m3, E::kFp8E4m3, E::kF32, {E::kBf16, E::kF32}},
      {Dtype::kFp8E5m2, "fp8e5m2", E::kFp8E5m2, E::kFp8E5m2, E::kF32, {E::kBf16, E::kF32}},
      {Dtype::kFp8E4m3Fnuz,
       "fp8e4m3fnuz",
       E::kFp8E4m3Fnuz,
       E::kFp8E4m3Fnuz,
       E::kF32,
       {E::kBf16, E::kF32}},
      {Dtype::kFp8E5m2Fnuz,
       "fp8e5m2fnuz",
       E::kFp8E5m2Fnuz,
       E::kFp8E5m2Fnuz,
       E::kF32,
       {E::kBf16, E::kF32}},
  };
  return *table;
}

const DtypeInfo& Info(Dtype dtype) {
  const DtypeInfo& row = DtypeTable()[static_cast<size_t>(dtype)];
  TUNE_CHECK(row.dtype == dtype) << "dtype table out of order";
  return row;
}

// Rounds `a` (finite, >= 0) to the nearest even multiple of 2^(e - mantissa_bits), where e is
// its exponent clamped below at the smallest normal exponent: the value the format holds, or a
// value above its range (the caller saturates or overflows).
double RoundToFormat(const SmallFloat& f, double a) {
  if (a == 0) {
    return 0;
  }
  const int min_exponent = 1 - f.bias;
  int e = std::ilogb(a);
  if (e < min_exponent) {
    e = min_exponent;
  }
  const double quantum = std::ldexp(1.0, e - f.mantissa_bits);
  const double n = a / quantum;  // exact: a has at most 53 significant bits, quantum is 2^k
  double r = std::floor(n);
  const double rest = n - r;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(r, 2.0) != 0)) {
    r += 1;
  }
  return r * quantum;
}

double LargestFinite(const SmallFloat& f) {
  const int top_field = (1 << f.exponent_bits) - 1;
  const int max_field = f.nan == NanStyle::kIeee ? top_field - 1 : top_field;
  // E4M3FN's top mantissa code of the top exponent is NaN; FNUZ keeps all codes finite.
  const int max_mantissa = (1 << f.mantissa_bits) - 1 - (f.nan == NanStyle::kFn ? 1 : 0);
  return std::ldexp(1.0 + std::ldexp(max_mantissa, -f.mantissa_bits), max_field - f.bias);
}

uint32_t NanCode(const SmallFloat& f, bool negative) {
  const int total = 1 + f.exponent_bits + f.mantissa_bits;
  if (f.nan == NanStyle::kFnuz) {
    return 1u << (total - 1);
  }
  const uint32_t sign = negative ? 1u << (total - 1) : 0;
  const uint32_t exponent = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  if (f.nan == NanStyle::kFn) {
    return sign | exponent | ((1u << f.mantissa_bits) - 1);
  }
  return sign | exponent | (1u << (f.mantissa_bits - 1));  // IEEE quiet NaN
}

// Encodes `value` (a float, any value) in the small float format `f`.
uint32_t EncodeSmallFloat(const SmallFloat& f, float value) {
  const int total = 1 + f.exponent_bits + f.mantissa_bits;
  const bool negative = std::signbit(value);
  if (std::isnan(value)) {
    return NanCode(f, negative);
  }
  const uint32_t sign = negative ? 1u << (total - 1) : 0;
  const uint32_t exponent_mask = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  if (std::isinf(value) && !f.saturate) {
    return sign | exponent_mask;
  }
  double a = std::isinf(value) ? HUGE_VAL : RoundToFormat(f, std::fabs(static_cast<double>(value)));
  const double largest = LargestFinite(f);
  if (a > largest) {
    if (f.saturate) {
      a = largest;
    } else {
      return sign | exponent_mask;  // infinity (only IEEE formats overflow)
    }
  }
  if (a == 0) {
    return f.nan == NanStyle::kFnuz ? 0 : sign;
  }
  const int min_exponent = 1 - f.bias;
  int e = std::ilogb(a);
  uint32_t field = 0;
  double mantissa = 0;
  if (e < min_exponent) {  // subnormal
    mantissa = std::ldexp(a, f.mantissa_bits - min_exponent);
  } else {
    field = static_cast<uint32_t>(e + f.bias);
    mantissa = std::ldexp(a, f.mantissa_bits - e) - std::ldexp(1.0, f.mantissa_bits);
  }
  return sign | (field << f.mantissa_bits) | static_cast<uint32_t>(mantissa);
}

float DecodeSmallFloat(const SmallFloat& f, uint32_t bits) {
  const int total = 1 + f.exponent_bits + f.mantissa_bits;
  const bool negative = (bits >> (total - 1)) & 1;
  const uint32_t field = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1);
  const uint32_t top_field = (1u << f.exponent_bits) - 1;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  switch (f.nan) {
    case NanStyle::kIeee:
      if (field == top_field) {
        return mantissa == 0 ? (negative ? -HUGE_VALF : HUGE_VALF) : (negative ? -nan : nan);
      }
      break;
    case NanStyle::kFn:
      if (field == top_field && mantissa == (1u << f.mantissa_bits) - 1) {
        return negative ? -nan : nan;
      }
      break;
    case NanStyle::kFnuz:
      if (bits == 1u << (total - 1)) {
        return nan;
      }
      break;
  }
  double a = 0;
  if (field == 0) {
    a = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    a = std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -f.mantissa_bits),
                   static_cast<int>(field) - f.bias);
  }
  return static_cast<float>(negative ? -a : a);
}

}  // namespace

const std::vector<Dtype>& AllDtypes() {
  static const auto* all = [] {
    auto* v = new std::vector<Dtype>;
    for (const DtypeInfo& row : DtypeTable()) {
      v->push_back(row.dtype);
    }
    return v;
  }();
  return *all;
}

std::string_view DtypeName(Dtype dtype) { return Info(dtype).name; }

std::optional<Dtype> ParseDtype(std::string_view name) {
  for (const DtypeInfo& row : DtypeTable()) {
    if (row.name == name) {
      return row.dtype;
    }
  }
  return std::nullopt;
}

std::string DtypeNames() { return DtypeSet::All().Names(); }

std::string_view ElementTypeName(ElementType type) { return Info(type).name; }

std::optional<ElementType> ParseElementType(std::string_view name) {
  for (const ElementInfo& e : kElements) {
    if (e.name == name) {
      return e.type;
    }
  }
  return std::nullopt;
}

int ElementBytes(ElementType type) { return Info(type).bytes; }

bool IsIntegerElement(ElementType type) {
  return type == ElementType::kI8 || type == ElementType::kU8 || type == ElementType::kI32;
}

bool IsFp8(ElementType type) {
  return type == ElementType::kFp8E4m3 || type == ElementType::kFp8E5m2 ||
         type == ElementType::kFp8E4m3Fnuz || type == ElementType::kFp8E5m2Fnuz;
}

ElementType ActivationType(Dtype dtype) { return Info(dtype).activation; }
ElementType WeightType(Dtype dtype) { return Info(dtype).weight; }
ElementType AccumulatorType(Dtype dtype) { return Info(dtype).accumulator; }
bool IsIntegerDtype(Dtype dtype) { return AccumulatorType(dtype) == ElementType::kI32; }
bool IsFp8Dtype(Dtype dtype) { return IsFp8(ActivationType(dtype)); }
ElementType DefaultOutputType(Dtype dtype) { return Info(dtype).outputs.front(); }

const std::vector<ElementType>& AcceptedOutputTypes(Dtype dtype) { return Info(dtype).outputs; }

bool AcceptsOutput(Dtype dtype, ElementType out) {
  for (ElementType t : AcceptedOutputTypes(dtype)) {
    if (t == out) {
      return true;
    }
  }
  return false;
}

bool TakesScales(Dtype dtype, ElementType out) {
  return IsFp8Dtype(dtype) || (IsIntegerDtype(dtype) && !IsIntegerElement(out));
}

DtypeSet DtypeSet::All() {
  DtypeSet s;
  for (Dtype d : AllDtypes()) {
    s = s | DtypeSet{d};
  }
  return s;
}

std::vector<Dtype> DtypeSet::ToVector() const {
  std::vector<Dtype> out;
  for (Dtype d : AllDtypes()) {
    if (Has(d)) {
      out.push_back(d);
    }
  }
  return out;
}

std::string DtypeSet::Names() const {
  std::string out;
  for (Dtype d : ToVector()) {
    if (!out.empty()) {
      out += '|';
    }
    out += DtypeName(d);
  }
  return out;
}

uint16_t RoundToBf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040);
  }
  const uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float Bf16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

uint16_t RoundToF16(float value) {
  return static_cast<uint16_t>(EncodeSmallFloat(Info(ElementType::kF16).format, value));
}

float F16ToFloat(uint16_t bits) { return DecodeSmallFloat(Info(ElementType::kF16).format, bits); }

float RoundToTf32(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value) || std::isinf(value)) {
    return value;
  }
  const uint32_t rounding = 0xfff + ((bits >> 13) & 1);
  return std::bit_cast<float>((bits + rounding) & ~uint32_t{0x1fff});
}

uint8_t RoundToFp8(ElementType format, float value) {
  TUNE_CHECK(IsFp8(format)) << ElementTypeName(format) << " is not an fp8 format";
  return static_cast<uint8_t>(EncodeSmallFloat(Info(format).format, value));
}

float Fp8ToFloat(ElementType format, uint8_t bits) {
  TUNE_CHECK(IsFp8(format)) << ElementTypeName(format) << " is not an fp8 format";
  return DecodeSmallFloat(Info(format).format, bits);
}

float RoundForInput(Dtype dtype, ElementType type, float value) {
  switch (type) {
    case ElementType::kF32:
      return dtype == Dtype::kTf32 ? RoundToTf32(value) : value;
    case ElementType::kF16:
      return F16ToFloat(RoundToF16(value));
    case ElementType::kBf16:
      return Bf16ToFloat(RoundToBf16(value));
    default:
      if (IsFp8(type)) {
        return Fp8ToFloat(type, RoundToFp8(type, value));
      }
      return value;
  }
}

double DecodeElement(ElementType type, const void* base, int64_t i) {
  switch (type) {
    case ElementType::kF32:
      return static_cast<const float*>(base)[i];
    case ElementType::kF16:
      return F16ToFloat(static_cast<const uint16_t*>(base)[i]);
    case ElementType::kBf16:
      return Bf16ToFloat(static_cast<const uint16_t*>(base)[i]);
    case ElementType::kI8:
      return static_cast<const int8_t*>(base)[i];
    case ElementType::kU8:
      return static_cast<const uint8_t*>(base)[i];
    case ElementType::kI32:
      return static_cast<const int32_t*>(base)[i];
    case ElementType::kFp8E4m3:
    case ElementType::kFp8E5m2:
    case ElementType::kFp8E4m3Fnuz:
    case ElementType::kFp8E5m2Fnuz:
      return Fp8ToFloat(type, static_cast<const uint8_t*>(base)[i]);
  }
  return 0;
}

void EncodeElement(ElementType type, double value, void* base, int64_t i) {
  // Integers: nearest, then modulo 2^bits (two's complement), through int64.
  auto wrapped = [value] { return static_cast<uint64_t>(std::llround(value)); };
  switch (type) {
    case ElementType::kF32:
      static_cast<float*>(base)[i] = static_cast<float>(value);
      return;
    case ElementType::kF16:
      static_cast<uint16_t*>(base)[i] = RoundToF16(static_cast<float>(value));
      return;
    case ElementType::kBf16:
      static_cast<uint16_t*>(base)[i] = RoundToBf16(static_cast<float>(value));
      return;
    case ElementType::kI8:
    case ElementType::kU8:
      static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(wrapped());
      return;
    case ElementType::kI32:
      static_cast<uint32_t*>(base)[i] = static_cast<uint32_t>(wrapped());
      return;
    case ElementType::kFp8E4m3:
    case ElementType::kFp8E5m2:
    case ElementType::kFp8E4m3Fnuz:
    case ElementType::kFp8E5m2Fnuz:
      static_cast<uint8_t*>(base)[i] = RoundToFp8(type, static_cast<float>(value));
      return;
  }
}

double UlpOf(ElementType type, double m) {
  if (IsIntegerElement(type)) {
    return 1;
  }
  SmallFloat f;
  switch (type) {
    case ElementType::kF32:
      f = {8, 23, 127, NanStyle::kIeee, false};
      break;
    case ElementType::kBf16:
      f = {8, 7, 127, NanStyle::kIeee, false};
      break;
    default:
      f = Info(type).format;
      break;
  }
  const int min_exponent = 1 - f.bias;
  int e = m > 0 && std::isfinite(m) ? std::ilogb(m) : min_exponent;
  if (e < min_exponent) {
    e = min_exponent;
  }
  return std::ldexp(1.0, e - f.mantissa_bits);
}

}  // namespace tune
