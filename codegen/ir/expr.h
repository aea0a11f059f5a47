// The IR's expression nodes (see codegen/ir/ir.h for the semantics and the coercion rules).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/ir/node.h"

namespace tune::ir {

struct IntImm final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  IntImm() : ExprNode(kKind) {}
  int64_t value = 0;
  /// `type` is int64, int32 (value must fit) or bool (value 0 or 1), scalar.
  static Expr Make(int64_t value, Type type = Type::Int64());
};

struct FloatImm final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  FloatImm() : ExprNode(kKind) {}
  double value = 0;  // rounded to float32
  /// `type` must be scalar float32.
  static Expr Make(double value, Type type = Type::Float32());
};

struct Variable final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  Variable() : ExprNode(kKind) {}
  std::string name;
  /// A fresh variable; `type` is a scalar int32/int64/float32/bool or a vector of them.
  static Var Make(std::string name, Type type = Type::Int64());
};

/// Common layout of the two-operand nodes: `a op b`.
struct BinaryExprNode : ExprNode {
  explicit BinaryExprNode(ExprKind k) : ExprNode(k) {}
  Expr a, b;
};

/// Arithmetic: operands of one int or float type; the result has that type.
struct Add final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kAdd;
  Add() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Sub final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kSub;
  Sub() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Mul final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kMul;
  Mul() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
/// Floor division for integers, IEEE division for floats.
struct Div final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kDiv;
  Div() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
/// Floor modulo for integers (result has the sign of b); integers only.
struct Mod final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kMod;
  Mod() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Min final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kMin;
  Min() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Max final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kMax;
  Max() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};

/// Comparisons: operands of one int or float type; the result is bool with their lanes.
struct EQ final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kEQ;
  EQ() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct NE final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kNE;
  NE() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct LT final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kLT;
  LT() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct LE final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kLE;
  LE() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct GT final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kGT;
  GT() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct GE final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kGE;
  GE() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};

/// Logic on bool operands (scalar or vector).
struct And final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kAnd;
  And() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Or final : BinaryExprNode {
  static constexpr ExprKind kKind = ExprKind::kOr;
  Or() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Not final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  Not() : ExprNode(kKind) {}
  Expr a;
  static Expr Make(Expr a);
};

/// `condition ? true_value : false_value`, lane-wise for vectors. Both values are evaluated.
/// The condition is bool, scalar or with the lanes of the values.
struct Select final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  Select() : ExprNode(kKind) {}
  Expr condition, true_value, false_value;
  static Expr Make(Expr condition, Expr true_value, Expr false_value);
};

/// Numeric conversion between int32/int64/float32/bool with equal lanes (float to int
/// truncates toward zero; x to bool is x != 0).
struct Cast final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  Cast() : ExprNode(kKind) {}
  Expr value;
  static Expr Make(Type type, Expr value);
};

/// The bits of `value` read as `type` (a bitcast): <16 x int32> from the 64 bytes of an
/// <64 x int8>, say. Both types are integers or float32 (no bool, handle or storage float), of
/// the same total bits; lanes are laid out little-endian, lane 0 first.
struct Reinterpret final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kReinterpret;
  Reinterpret() : ExprNode(kKind) {}
  Expr value;
  static Expr Make(Type type, Expr value);
};

/// A vector of `lanes` copies of a scalar.
struct Broadcast final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBroadcast;
  Broadcast() : ExprNode(kKind) {}
  Expr value;
  int lanes = 0;
  /// `value` scalar, lanes >= 2.
  static Expr Make(Expr value, int lanes);
};

/// The integer vector base + stride * [0, 1, ..., lanes-1].
struct Ramp final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kRamp;
  Ramp() : ExprNode(kKind) {}
  Expr base, stride;
  int lanes = 0;
  /// `base` and `stride` scalar integers of one type (coerced), lanes >= 2.
  static Expr Make(Expr base, Expr stride, int lanes);
};

/// Lanes picked from the concatenation of `vectors` (vectors of one type):
/// lane i of the result is lane indices[i] of vectors[0] ++ vectors[1] ++ ... (a shufflevector).
struct Shuffle final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kShuffle;
  Shuffle() : ExprNode(kKind) {}
  std::vector<Expr> vectors;
  std::vector<int> indices;
  /// `vectors` non-empty, of one vector type; every index inside their lanes; two or more
  /// indices.
  static Expr Make(std::vector<Expr> vectors, std::vector<int> indices);
  /// The lanes of `vectors` (each of the same lanes) interleaved: v0[0], v1[0], ..., v0[1], ...
  static Expr Interleave(std::vector<Expr> vectors);
};

/// buffer[index]: a scalar load for a scalar index, a vector load (lanes = index lanes) for a
/// vector index.
struct Load final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kLoad;
  Load() : ExprNode(kKind) {}
  Buffer buffer;
  Expr index;
  /// `index` an int32/int64 scalar or vector.
  static Expr Make(Buffer buffer, Expr index);
  /// A dense load of `lanes` elements starting at the scalar `base` (a scalar load when
  /// lanes == 1).
  static Expr Make(Buffer buffer, Expr base, int lanes);
};

/// Fused multiply-add a * b + c (one rounding), float32 scalar or vector, one type.
struct Fma final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFma;
  Fma() : ExprNode(kKind) {}
  Expr a, b, c;
  static Expr Make(Expr a, Expr b, Expr c);
};

/// How DotAccumulate groups its operands: the groups of x86's AVX512-BF16 `vdpbf16ps` and
/// AVX512-VNNI `vpdpbusd`, and the same pairs of float16 (no x86 instruction before AVX10.2:
/// converted to float32 and fused multiply-added).
enum class DotKind : uint8_t {
  kBf16Pairs,  // bfloat16 x bfloat16, pairs summed into float32
  kU8S8Quads,  // uint8 x int8, quads summed into int32 (wrapping)
  kF16Pairs,   // float16 x float16, pairs summed into float32
};

/// Whether the kind's groups are float pairs (kBf16Pairs, kF16Pairs).
bool DotPairs(DotKind kind);
/// Elements of one group: 2 (the pairs) or 4 (kU8S8Quads).
int DotGroup(DotKind kind);

/// Dot products of small groups added to lanes: with G = DotGroup(kind) and N the lanes of acc,
///   result[i] = acc[i] + sum_{j < G} a[G i + j] * b[G i + j]
/// acc is float32 (the pairs) or int32 (kU8S8Quads) with N lanes; a holds bfloat16, float16 (uint8)
/// and b bfloat16, float16 (int8), each N G lanes or G lanes: one group read by every lane (the
/// broadcast row element of a GEMM's register tile; at most one of the two). The products are
/// exact; the pairs add them in float32 (the order and the rounding of the partial sums are the
/// instruction's), kU8S8Quads in int32 exactly, wrapping. Code for CPUs without the instruction
/// computes the same sums.
struct DotAccumulate final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kDotAccumulate;
  DotAccumulate() : ExprNode(kKind) {}
  DotKind kind = DotKind::kBf16Pairs;
  Expr acc, a, b;
  static Expr Make(DotKind kind, Expr acc, Expr a, Expr b);
};

/// A call of the external C function `symbol` (declared from the argument types: int32 →
/// int32_t, int64 → int64_t, float32 → float, float32* → float*). The result type is a scalar
/// int32, int64 or float32; a `void` function is called as returning int32 and its value
/// ignored (wrap the call in Evaluate).
struct CallExtern final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCallExtern;
  CallExtern() : ExprNode(kKind) {}
  std::string symbol;
  std::vector<Expr> args;
  /// `symbol` a C identifier; every arg a scalar int32/int64/float32/float32*.
  static Expr Make(Type type, std::string symbol, std::vector<Expr> args);
};

/// &buffer[index]: the float32* address of one element (to pass a buffer to CallExtern).
struct AddressOf final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kAddressOf;
  AddressOf() : ExprNode(kKind) {}
  Buffer buffer;
  Expr index;
  /// `index` a scalar integer.
  static Expr Make(Buffer buffer, Expr index);
};

}  // namespace tune::ir
