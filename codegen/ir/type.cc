#include "codegen/ir/type.h"

#include "common/strings.h"

namespace tune::ir {

bool Type::IsSupported() const {
  if (lanes_ < 1) {
    return false;
  }
  switch (code_) {
    case TypeCode::kInt:
      return bits_ == 32 || bits_ == 64;
    case TypeCode::kUInt:
      return bits_ == 1;
    case TypeCode::kFloat:
      return bits_ == 32;
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
    case TypeCode::kHandle:
      return lanes_ == 1 ? std::string("float32*") : StrCat("float32*x", lanes_);
  }
  if (lanes_ != 1) {
    StrAppend(&base, "x", lanes_);
  }
  return base;
}

}  // namespace tune::ir
