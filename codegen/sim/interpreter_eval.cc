// Expression evaluation of the GPU IR simulator's interpreter: lane-wise arithmetic as the IR
// defines it (int32/int64 wrap-around, floor Div/Mod, float32, Fma as std::fma).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "codegen/sim/interpreter.h"

namespace tune::sim {
namespace {

using ir::ExprKind;

// Lane `i` of `v`, a scalar standing for every lane.
inline const Lane& LaneOf(const Value& v, int i) { return v.lanes[v.lanes.size() == 1 ? 0 : i]; }

inline int64_t Wrap(int64_t v, const ir::Type& t) {
  return t.bits() == 32 ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))) : v;
}

// Two's-complement arithmetic on int64 (Wrap then narrows to the type).
inline int64_t WrappingAdd(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
inline int64_t WrappingSub(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
inline int64_t WrappingMul(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}

inline float FloatMin(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  return b < a ? b : a;
}
inline float FloatMax(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  return a < b ? b : a;
}

const ir::BinaryExprNode* Binary(const ir::ExprNode* n) {
  return static_cast<const ir::BinaryExprNode*>(n);
}

}  // namespace

Value Interpreter::Eval(const ir::Expr& e) {
  const ir::ExprNode* n = e.get();
  if (in_threads_ && ++depth_ > kMaxThreadExprDepth) {
    Fail(absl::StatusCode::kResourceExhausted,
         absl::StrCat("expression nested deeper than ", kMaxThreadExprDepth,
                      " levels in thread code (the simulator's fiber stack limit)"));
  }
  struct DepthGuard {
    int* depth;
    bool on;
    ~DepthGuard() {
      if (on) {
        --*depth;
      }
    }
  } guard{&depth_, in_threads_};
  switch (n->kind) {
    case ExprKind::kIntImm:
      return IntValue(n->type, static_cast<const ir::IntImm*>(n)->value);
    case ExprKind::kFloatImm: {
      Value v;
      v.type = n->type;
      v.lanes.push_back(Lane{.f = static_cast<float>(static_cast<const ir::FloatImm*>(n)->value)});
      return v;
    }
    case ExprKind::kVar:
      return LookupVar(static_cast<const ir::Variable*>(n));
    case ExprKind::kAdd:
      return EvalArith(Binary(n), [](float x, float y) { return x + y; }, WrappingAdd);
    case ExprKind::kSub:
      return EvalArith(Binary(n), [](float x, float y) { return x - y; }, WrappingSub);
    case ExprKind::kMul:
      return EvalArith(Binary(n), [](float x, float y) { return x * y; }, WrappingMul);
    case ExprKind::kDiv:
      return EvalArith(
          Binary(n), [](float x, float y) { return x / y; },
          [this](int64_t x, int64_t y) { return IntDivMod(x, y, /*div=*/true); });
    case ExprKind::kMod:
      return EvalArith(
          Binary(n),
          [this](float, float) -> float {
            Fail(absl::StatusCode::kInvalidArgument, "Mod of float32 values (Mod is integer)");
          },
          [this](int64_t x, int64_t y) { return IntDivMod(x, y, /*div=*/false); });
    case ExprKind::kMin:
      return EvalArith(Binary(n), FloatMin, [](int64_t x, int64_t y) { return y < x ? y : x; });
    case ExprKind::kMax:
      return EvalArith(Binary(n), FloatMax, [](int64_t x, int64_t y) { return x < y ? y : x; });
    // float32 lanes compare exactly as doubles.
    case ExprKind::kEQ:
      return EvalCompare(Binary(n), [](auto x, auto y) { return x == y; });
    case ExprKind::kNE:
      return EvalCompare(Binary(n), [](auto x, auto y) { return x != y; });
    case ExprKind::kLT:
      return EvalCompare(Binary(n), [](auto x, auto y) { return x < y; });
    case ExprKind::kLE:
      return EvalCompare(Binary(n), [](auto x, auto y) { return x <= y; });
    case ExprKind::kGT:
      return EvalCompare(Binary(n), [](auto x, auto y) { return x > y; });
    case ExprKind::kGE:
      return EvalCompare(Binary(n), [](auto x, auto y) { return x >= y; });
    case ExprKind::kAnd:
      return EvalLogic(Binary(n), [](bool x, bool y) { return x && y; });
    case ExprKind::kOr:
      return EvalLogic(Binary(n), [](bool x, bool y) { return x || y; });
    case ExprKind::kNot:
      return EvalNot(static_cast<const ir::Not*>(n));
    case ExprKind::kSelect:
      return EvalSelect(static_cast<const ir::Select*>(n));
    case ExprKind::kCast:
      return EvalCast(static_cast<const ir::Cast*>(n));
    case ExprKind::kReinterpret:
      return EvalReinterpret(static_cast<const ir::Reinterpret*>(n));
    case ExprKind::kBroadcast:
      return EvalBroadcast(static_cast<const ir::Broadcast*>(n));
    case ExprKind::kRamp:
      return EvalRamp(static_cast<const ir::Ramp*>(n));
    case ExprKind::kShuffle:
      return EvalShuffle(static_cast<const ir::Shuffle*>(n));
    case ExprKind::kLoad:
      return EvalLoad(static_cast<const ir::Load*>(n));
    case ExprKind::kFma:
      return EvalFma(static_cast<const ir::Fma*>(n));
    case ExprKind::kDotAccumulate:
      return EvalDotAccumulate(static_cast<const ir::DotAccumulate*>(n));
    case ExprKind::kCallExtern:
      Fail(absl::StatusCode::kUnimplemented,
           absl::StrCat("call of the external function `",
                        static_cast<const ir::CallExtern*>(n)->symbol,
                        "` (the GPU simulator does not run external code)"));
    case ExprKind::kAddressOf:
      Fail(absl::StatusCode::kUnimplemented,
           absl::StrCat("address of buffer `", static_cast<const ir::AddressOf*>(n)->buffer.name(),
                        "` (the GPU simulator does not run external code)"));
  }
  Fail(absl::StatusCode::kInternal,
       absl::StrCat("unexpected expression kind ", std::string(ir::ExprKindName(n->kind))));
}

template <typename FloatOp, typename IntOp>
Value Interpreter::EvalArith(const ir::BinaryExprNode* op, FloatOp float_op, IntOp int_op) {
  const ir::Type t = op->type;
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  Value r = MakeValue(t);
  const int lanes = t.lanes();
  if (t.is_float()) {
    for (int i = 0; i < lanes; ++i) {
      r.lanes[i].f = float_op(LaneOf(a, i).f, LaneOf(b, i).f);
    }
    return r;
  }
  for (int i = 0; i < lanes; ++i) {
    r.lanes[i].i = Wrap(int_op(LaneOf(a, i).i, LaneOf(b, i).i), t);
  }
  return r;
}

int64_t Interpreter::IntDivMod(int64_t x, int64_t y, bool div) const {
  if (y == 0) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrCat("integer division by zero (", x, div ? " / " : " % ", y, ")"));
  }
  if (y == -1) {
    return div ? WrappingSub(0, x) : 0;
  }
  return div ? ir::FloorDiv(x, y) : ir::FloorMod(x, y);
}

template <typename Op>
Value Interpreter::EvalCompare(const ir::BinaryExprNode* op, Op compare) {
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  Value r = MakeValue(op->type);
  const bool fl = a.type.is_float();
  for (int i = 0; i < op->type.lanes(); ++i) {
    const bool z =
        fl ? compare(static_cast<double>(LaneOf(a, i).f), static_cast<double>(LaneOf(b, i).f))
           : compare(LaneOf(a, i).i, LaneOf(b, i).i);
    r.lanes[i].i = z ? 1 : 0;
  }
  return r;
}

template <typename Op>
Value Interpreter::EvalLogic(const ir::BinaryExprNode* op, Op logic) {
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  Value r = MakeValue(op->type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    r.lanes[i].i = logic(LaneOf(a, i).i != 0, LaneOf(b, i).i != 0) ? 1 : 0;
  }
  return r;
}

Value Interpreter::EvalNot(const ir::Not* op) {
  Value a = Eval(op->a);
  Value r = MakeValue(op->type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    r.lanes[i].i = LaneOf(a, i).i != 0 ? 0 : 1;
  }
  return r;
}

Value Interpreter::EvalSelect(const ir::Select* op) {
  Value c = Eval(op->condition);
  Value x = Eval(op->true_value);
  Value y = Eval(op->false_value);
  Value r = MakeValue(op->type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    r.lanes[i] = LaneOf(c, i).i != 0 ? LaneOf(x, i) : LaneOf(y, i);
  }
  return r;
}

// The lanes' bits laid end to end, lane 0 first (little-endian), and read back as op->type.
Value Interpreter::EvalReinterpret(const ir::Reinterpret* op) {
  Value a = Eval(op->value);
  const int from_bytes = a.type.bits() / 8;
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<size_t>(from_bytes) * a.type.lanes());
  for (int i = 0; i < a.type.lanes(); ++i) {
    const Lane& l = LaneOf(a, i);
    uint64_t bits = 0;
    if (a.type.is_float()) {
      uint32_t f = 0;
      std::memcpy(&f, &l.f, sizeof f);
      bits = f;
    } else {
      bits = static_cast<uint64_t>(l.i);
    }
    for (int b = 0; b < from_bytes; ++b) {
      bytes.push_back(static_cast<uint8_t>(bits >> (8 * b)));
    }
  }
  const ir::Type t = op->type;
  const int to_bytes = t.bits() / 8;
  Value r = MakeValue(t);
  for (int i = 0; i < t.lanes(); ++i) {
    uint64_t bits = 0;
    for (int b = 0; b < to_bytes; ++b) {
      bits |= uint64_t{bytes[static_cast<size_t>(i) * to_bytes + b]} << (8 * b);
    }
    if (t.is_float()) {
      const auto f = static_cast<uint32_t>(bits);
      std::memcpy(&r.lanes[i].f, &f, sizeof f);
    } else if (t.is_int()) {  // sign-extended from the type's width
      const int shift = 64 - t.bits();
      r.lanes[i].i = static_cast<int64_t>(bits << shift) >> shift;
    } else {  // uint8
      r.lanes[i].i = static_cast<int64_t>(bits);
    }
  }
  return r;
}

Value Interpreter::EvalCast(const ir::Cast* op) {
  const ir::Type t = op->type;
  Value a = Eval(op->value);
  Value r = MakeValue(t);
  for (int i = 0; i < t.lanes(); ++i) {
    const Lane& l = LaneOf(a, i);
    if (t.is_storage_only()) {  // from its compute type: round (floats) or wrap (integers)
      switch (t.code()) {
        case ir::TypeCode::kInt:
          r.lanes[i].i = static_cast<int8_t>(l.i);
          break;
        case ir::TypeCode::kUInt:
          r.lanes[i].i = static_cast<uint8_t>(l.i);
          break;
        case ir::TypeCode::kFloat:
          r.lanes[i].f = F16ToFloat(RoundToF16(l.f));
          break;
        case ir::TypeCode::kBFloat:
          r.lanes[i].f = Bf16ToFloat(RoundToBf16(l.f));
          break;
        default:
          Fail(absl::StatusCode::kInvalidArgument,
               absl::StrCat("cast to ", t.ToString(), " (nothing writes 8-bit floats)"));
      }
    } else if (a.type.is_storage_only()) {  // to its compute type: the lane's value, exact
      r.lanes[i] = l;
    } else if (t.is_float()) {
      r.lanes[i].f = a.type.is_float() ? l.f : static_cast<float>(l.i);
    } else if (t.is_bool()) {
      r.lanes[i].i = (a.type.is_float() ? l.f != 0 : l.i != 0) ? 1 : 0;
    } else if (a.type.is_float()) {
      const double limit = t.bits() == 32 ? 2147483648.0 : 9223372036854775808.0;
      if (!(std::fabs(static_cast<double>(l.f)) < limit)) {
        Fail(absl::StatusCode::kFailedPrecondition,
             absl::StrCat("cast of float32 ", l.f, " to ", t.ToString(), " (NaN or out of range)"));
      }
      r.lanes[i].i = static_cast<int64_t>(l.f);
    } else {
      r.lanes[i].i = Wrap(l.i, t);
    }
  }
  return r;
}

Value Interpreter::EvalBroadcast(const ir::Broadcast* op) {
  Value a = Eval(op->value);
  Value r = MakeValue(op->type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    r.lanes[i] = a.lanes[0];
  }
  return r;
}

Value Interpreter::EvalShuffle(const ir::Shuffle* op) {
  std::vector<Lane> all;
  for (const ir::Expr& v : op->vectors) {
    const Value value = Eval(v);
    all.insert(all.end(), value.lanes.begin(), value.lanes.end());
  }
  Value r = MakeValue(op->type);
  for (size_t i = 0; i < op->indices.size(); ++i) {
    r.lanes[i] = all[static_cast<size_t>(op->indices[i])];
  }
  return r;
}

Value Interpreter::EvalRamp(const ir::Ramp* op) {
  const ir::Type t = op->type;
  Value r = MakeValue(t);
  const int64_t base = Eval(op->base).lanes[0].i;
  const int64_t stride = Eval(op->stride).lanes[0].i;
  for (int i = 0; i < t.lanes(); ++i) {
    r.lanes[i].i = Wrap(WrappingAdd(base, WrappingMul(stride, i)), t);
  }
  return r;
}

Value Interpreter::EvalFma(const ir::Fma* op) {
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  Value c = Eval(op->c);
  Value r = MakeValue(op->type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    r.lanes[i].f = std::fma(LaneOf(a, i).f, LaneOf(b, i).f, LaneOf(c, i).f);
  }
  return r;
}

Value Interpreter::EvalDotAccumulate(const ir::DotAccumulate* op) {
  Value acc = Eval(op->acc);
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  const int group = ir::DotGroup(op->kind);
  const bool a_group = a.type.lanes() == group;
  const bool b_group = b.type.lanes() == group;
  Value r = MakeValue(op->type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    Lane sum = LaneOf(acc, i);
    for (int j = 0; j < group; ++j) {
      const Lane x = LaneOf(a, a_group ? j : group * i + j);
      const Lane y = LaneOf(b, b_group ? j : group * i + j);
      if (ir::DotPairs(op->kind)) {
        sum.f += x.f * y.f;  // the product of two bfloat16 or float16 values is exact in float32
      } else {
        sum.i = Wrap(WrappingAdd(sum.i, x.i * y.i), op->type);
      }
    }
    r.lanes[i] = sum;
  }
  return r;
}

Value Interpreter::EvalLoad(const ir::Load* op) {
  SimBuffer* b = LookupBuffer(op->buffer.get());
  Value index = Eval(op->index);
  Value v = MakeValue(op->type);
  const bool shared = !b->cells.empty();
  for (int i = 0; i < op->type.lanes(); ++i) {
    int64_t k = CheckedIndex(*b, LaneOf(index, i).i, "load from");
    if (shared) {
      TrackShared(*b, k, /*write=*/false);
    }
    v.lanes[i] = b->Read(k);
  }
  return v;
}

}  // namespace tune::sim
