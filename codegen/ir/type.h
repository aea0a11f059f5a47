// The value types of the loop-nest IR: scalars (int32, int64, float32, bool, float32*) and
// vectors of the non-pointer scalars, plus the storage types that buffers may hold besides
// float32 (float16, bfloat16, int8, uint8 and four 8-bit float encodings).
//
// Arithmetic, comparisons and immediates take the compute types (int32, int64, float32, bool).
// A storage type is only loaded, stored, broadcast, selected, and cast to or from its compute
// type: float16, bfloat16 and the 8-bit floats to and from float32 (the 8-bit floats only to it:
// kernels read them and never write them), int8 and uint8 to and from int32.
#pragma once

#include <cstdint>
#include <string>

#include "common/element_type.h"

namespace tune::ir {

enum class TypeCode : uint8_t {
  kInt,          // signed integer: 8 (storage), 32 or 64 bits
  kUInt,         // unsigned integer: bool (1 bit) or uint8 (storage)
  kFloat,        // IEEE float: 16 (storage) or 32 bits
  kBFloat,       // bfloat16 (16 bits, storage)
  kFp8E4m3,      // OCP FP8 E4M3FN (8 bits, storage)
  kFp8E5m2,      // OCP FP8 E5M2
  kFp8E4m3Fnuz,  // FP8 E4M3 FNUZ (AMD)
  kFp8E5m2Fnuz,  // FP8 E5M2 FNUZ (AMD)
  kHandle,       // pointer to a buffer (a buffer address), scalar only
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
  static constexpr Type Float16(int lanes = 1) { return Type(TypeCode::kFloat, 16, lanes); }
  static constexpr Type BFloat16(int lanes = 1) { return Type(TypeCode::kBFloat, 16, lanes); }
  static constexpr Type Int8(int lanes = 1) { return Type(TypeCode::kInt, 8, lanes); }
  static constexpr Type UInt8(int lanes = 1) { return Type(TypeCode::kUInt, 8, lanes); }
  /// Pointer to a buffer (the type of a buffer address passed to an external function).
  static constexpr Type FloatPtr() { return Type(TypeCode::kHandle, 64, 1); }
  /// The IR type that holds elements of `type` (common/element_type.h), and back (a number
  /// type other than int64 and bool; checked).
  static Type Of(ElementType type, int lanes = 1);
  ElementType AsElementType() const;

  constexpr TypeCode code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }

  constexpr bool is_int() const { return code_ == TypeCode::kInt; }
  constexpr bool is_bool() const { return code_ == TypeCode::kUInt && bits_ == 1; }
  constexpr bool is_float() const { return code_ == TypeCode::kFloat; }
  constexpr bool is_handle() const { return code_ == TypeCode::kHandle; }
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }
  constexpr bool is_fp8() const {
    return code_ == TypeCode::kFp8E4m3 || code_ == TypeCode::kFp8E5m2 ||
           code_ == TypeCode::kFp8E4m3Fnuz || code_ == TypeCode::kFp8E5m2Fnuz;
  }
  /// int32, int64, float32 and bool: the types of arithmetic, comparisons and immediates.
  constexpr bool is_compute() const {
    return (code_ == TypeCode::kInt && bits_ >= 32) || (code_ == TypeCode::kFloat && bits_ == 32) ||
           is_bool();
  }
  /// float16, bfloat16, int8, uint8 and the 8-bit floats: held in buffers, read through casts.
  constexpr bool is_storage_only() const { return !is_compute() && !is_handle(); }
  /// The compute type a storage type is read as (float32, or int32 for int8 and uint8); the
  /// type itself for a compute type.
  constexpr Type ComputeType() const {
    if (is_compute() || is_handle()) {
      return *this;
    }
    return (code_ == TypeCode::kInt || code_ == TypeCode::kUInt) ? Int32(lanes_) : Float32(lanes_);
  }
  /// Bytes of one element (1 for bool, as LLVM stores an i1).
  constexpr int Bytes() const { return bits_ <= 8 ? 1 : bits_ / 8; }

  /// The same element type with `lanes` lanes.
  constexpr Type WithLanes(int lanes) const { return Type(code_, bits_, lanes); }
  /// The scalar element type.
  constexpr Type Element() const { return Type(code_, bits_, 1); }

  /// True for the types the IR supports: int8 (storage), int32, int64, uint8 (storage), bool,
  /// float16 (storage), float32, bfloat16 and the 8-bit floats (storage), with any lanes >= 1,
  /// and the scalar pointer.
  bool IsSupported() const;

  /// "int32", "int64x4", "float32x16", "bool", "boolx8", "float16", "bfloat16x8", "int8",
  /// "uint8", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float32*".
  std::string ToString() const;

  friend constexpr bool operator==(const Type& a, const Type& b) = default;

 private:
  TypeCode code_ = TypeCode::kInt;
  int bits_ = 64;
  int lanes_ = 1;
};

}  // namespace tune::ir
