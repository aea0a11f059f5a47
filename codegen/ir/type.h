// The value types of the loop-nest IR: scalars (int32, int64, float32, bool, float32*) and
// vectors of the non-pointer scalars.
#pragma once

#include <cstdint>
#include <string>

namespace tune::ir {

enum class TypeCode : uint8_t {
  kInt,     // signed integer: 32 or 64 bits
  kUInt,    // unsigned integer: only bool (1 bit)
  kFloat,   // IEEE float: 32 bits
  kHandle,  // pointer to float32 (a buffer address), scalar only
};

/// A value type: (code, bits, lanes). lanes == 1 is a scalar, lanes > 1 a vector.
class Type {
 public:
  constexpr Type() = default;  // int64 scalar
  constexpr Type(TypeCode code, int bits, int lanes = 1)
      : code_(code), bits_(bits), lanes_(lanes) {}

  static constexpr Type Int32(int lanes = 1) { return Type(TypeCode::kInt, 32, lanes); }
  static constexpr Type Int64(int lanes = 1) { return Type(TypeCode::kInt, 64, lanes); }
  static constexpr Type Float32(int lanes = 1) { return Type(TypeCode::kFloat, 32, lanes); }
  static constexpr Type Bool(int lanes = 1) { return Type(TypeCode::kUInt, 1, lanes); }
  /// Pointer to float32 (the type of a buffer address passed to an external function).
  static constexpr Type FloatPtr() { return Type(TypeCode::kHandle, 64, 1); }

  constexpr TypeCode code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }

  constexpr bool is_int() const { return code_ == TypeCode::kInt; }
  constexpr bool is_bool() const { return code_ == TypeCode::kUInt && bits_ == 1; }
  constexpr bool is_float() const { return code_ == TypeCode::kFloat; }
  constexpr bool is_handle() const { return code_ == TypeCode::kHandle; }
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }

  /// The same element type with `lanes` lanes.
  constexpr Type WithLanes(int lanes) const { return Type(code_, bits_, lanes); }
  /// The scalar element type.
  constexpr Type Element() const { return Type(code_, bits_, 1); }

  /// True for the types the IR supports: int32, int64, float32, bool (any lanes >= 1) and the
  /// scalar float32 pointer.
  bool IsSupported() const;

  /// "int32", "int64x4", "float32x16", "bool", "boolx8", "float32*".
  std::string ToString() const;

  friend constexpr bool operator==(const Type& a, const Type& b) = default;

 private:
  TypeCode code_ = TypeCode::kInt;
  int bits_ = 64;
  int lanes_ = 1;
};

}  // namespace tune::ir
