#include "codegen/ir/type.h"

#include "common/status.h"
#include "common/strings.h"

namespace tune::ir {

Type Type::Of(ElementType type, int lanes) {
  switch (type) {
    case ElementType::kF32:
      return Float32(lanes);
    case ElementType::kF16:
      return Float16(lanes);
    case ElementType::kBf16:
      return BFloat16(lanes);
    case ElementType::kI8:
      return Int8(lanes);
    case ElementType::kU8:
      return UInt8(lanes);
    case ElementType::kI32:
      return Int32(lanes);
    case ElementType::kFp8E4m3:
      return Type(TypeCode::kFp8E4m3, 8, lanes);
    case ElementType::kFp8E5m2:
      return Type(TypeCode::kFp8E5m2, 8, lanes);
    case ElementType::kFp8E4m3Fnuz:
      return Type(TypeCode::kFp8E4m3Fnuz, 8, lanes);
    case ElementType::kFp8E5m2Fnuz:
      return Type(TypeCode::kFp8E5m2Fnuz, 8, lanes);
  }
  TUNE_CHECK(false) << "unknown element type";
  return Float32(lanes);
}

ElementType Type::AsElementType() const {
  switch (code_) {
    case TypeCode::kInt:
      if (bits_ == 8) {
        return ElementType::kI8;
      }
      if (bits_ == 32) {
        return ElementType::kI32;
      }
      break;
    case TypeCode::kUInt:
      if (bits_ == 8) {
        return ElementType::kU8;
      }
      break;
    case TypeCode::kFloat:
      return bits_ == 16 ? ElementType::kF16 : ElementType::kF32;
    case TypeCode::kBFloat:
      return ElementType::kBf16;
    case TypeCode::kFp8E4m3:
      return ElementType::kFp8E4m3;
    case TypeCode::kFp8E5m2:
      return ElementType::kFp8E5m2;
    case TypeCode::kFp8E4m3Fnuz:
      return ElementType::kFp8E4m3Fnuz;
    case TypeCode::kFp8E5m2Fnuz:
      return ElementType::kFp8E5m2Fnuz;
    case TypeCode::kHandle:
      break;
  }
  TUNE_CHECK(false) << ToString() << " is no element type of common/element_type.h";
  return ElementType::kF32;
}

bool Type::IsSupported() const {
  if (lanes_ < 1) {
    return false;
  }
  switch (code_) {
    case TypeCode::kInt:
      return bits_ == 8 || bits_ == 32 || bits_ == 64;
    case TypeCode::kUInt:
      return bits_ == 1 || bits_ == 8;
    case TypeCode::kFloat:
      return bits_ == 16 || bits_ == 32;
    case TypeCode::kBFloat:
      return bits_ == 16;
    case TypeCode::kFp8E4m3:
    case TypeCode::kFp8E5m2:
    case TypeCode::kFp8E4m3Fnuz:
    case TypeCode::kFp8E5m2Fnuz:
      return bits_ == 8;
    case TypeCode::kHandle:
      return bits_ == 64 && lanes_ == 1;
  }
  return false;
}

std::string Type::ToString() const {
  std::string base;
  switch (code_) {
    case TypeCode::kInt:
      base = StrCat("int", bits_);
      break;
    case TypeCode::kUInt:
      base = bits_ == 1 ? std::string("bool") : StrCat("uint", bits_);
      break;
    case TypeCode::kFloat:
      base = StrCat("float", bits_);
      break;
    case TypeCode::kBFloat:
      base = "bfloat16";
      break;
    case TypeCode::kFp8E4m3:
      base = "float8_e4m3fn";
      break;
    case TypeCode::kFp8E5m2:
      base = "float8_e5m2";
      break;
    case TypeCode::kFp8E4m3Fnuz:
      base = "float8_e4m3fnuz";
      break;
    case TypeCode::kFp8E5m2Fnuz:
      base = "float8_e5m2fnuz";
      break;
    case TypeCode::kHandle:
      return lanes_ == 1 ? std::string("float32*") : StrCat("float32*x", lanes_);
  }
  if (lanes_ != 1) {
    StrAppend(&base, "x", lanes_);
  }
  return base;
}

}  // namespace tune::ir
