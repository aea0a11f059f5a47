// Expressions: IR expression -> LLVM value, for every target. What an operator means does not
// depend on the target; loads differ only in alignment and in how a gather is done.
#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "codegen/llvm/codegen_llvm.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace tune::llvm_backend {
namespace {

using ir::ExprKind;

// The value of an integer immediate or a broadcast of one.
std::optional<int64_t> ConstantDivisor(const ir::Expr& e) {
  if (const auto* b = e.As<ir::Broadcast>()) {
    return ConstantDivisor(b->value);
  }
  if (const auto* i = e.As<ir::IntImm>()) {
    return i->value;
  }
  return std::nullopt;
}

// An integer constant of `bits` bits, splat to `lanes` lanes.
llvm::Constant* IntSplat(llvm::IRBuilder<>& builder, int bits, int lanes, uint64_t value) {
  llvm::Constant* c = llvm::ConstantInt::get(builder.getIntNTy(static_cast<unsigned>(bits)), value);
  return lanes == 1 ? c
                    : llvm::ConstantVector::getSplat(
                          llvm::ElementCount::getFixed(static_cast<unsigned>(lanes)), c);
}

llvm::Type* WithLanes(llvm::Type* scalar, int lanes) {
  return lanes == 1 ? scalar : llvm::FixedVectorType::get(scalar, static_cast<unsigned>(lanes));
}

// float32 -> bfloat16 bits (i16), to nearest even, a NaN kept a quiet NaN of its sign: integer
// arithmetic, alike on every target (an fptrunc to bfloat may become a call to __truncsfbf2 on
// x86-64, which the libgcc of Debian 12 lacks: a kernel needs nothing but libc).
llvm::Value* EmitF32ToBf16(llvm::IRBuilder<>& builder, llvm::Value* v, int lanes) {
  llvm::Value* bits = builder.CreateBitCast(v, WithLanes(builder.getInt32Ty(), lanes));
  llvm::Value* lsb = builder.CreateAnd(builder.CreateLShr(bits, IntSplat(builder, 32, lanes, 16)),
                                       IntSplat(builder, 32, lanes, 1));
  llvm::Value* rounded =
      builder.CreateAdd(builder.CreateAdd(bits, IntSplat(builder, 32, lanes, 0x7fff)), lsb);
  llvm::Value* quiet = builder.CreateOr(bits, IntSplat(builder, 32, lanes, 0x400000));
  llvm::Value* chosen = builder.CreateSelect(builder.CreateFCmpUNO(v, v), quiet, rounded);
  return builder.CreateTrunc(builder.CreateLShr(chosen, IntSplat(builder, 32, lanes, 16)),
                             WithLanes(builder.getInt16Ty(), lanes));
}

// bfloat16 bits (i16) -> float32: the high half of its bits.
llvm::Value* EmitBf16ToF32(llvm::IRBuilder<>& builder, llvm::Value* v, int lanes) {
  llvm::Value* wide = builder.CreateZExt(v, WithLanes(builder.getInt32Ty(), lanes));
  return builder.CreateBitCast(builder.CreateShl(wide, IntSplat(builder, 32, lanes, 16)),
                               WithLanes(builder.getFloatTy(), lanes));
}

// 8-bit float bits (i8) of `code` -> float32, exactly, by arithmetic alike on every target:
// normal numbers rebias their exponent, subnormals are mantissa x 2^(1 - bias - mantissa bits),
// and each encoding's NaN and infinity codes (common/element_type.h) are chosen by selects.
llvm::Value* EmitFp8ToF32(llvm::IRBuilder<>& builder, llvm::Value* v, ir::TypeCode code,
                          int lanes) {
  const bool e4m3 = code == ir::TypeCode::kFp8E4m3 || code == ir::TypeCode::kFp8E4m3Fnuz;
  const bool fnuz = code == ir::TypeCode::kFp8E4m3Fnuz || code == ir::TypeCode::kFp8E5m2Fnuz;
  const int mantissa_bits = e4m3 ? 3 : 2;
  const int exponent_mask = e4m3 ? 0xf : 0x1f;
  const int bias = (e4m3 ? 7 : 15) + (fnuz ? 1 : 0);
  llvm::Type* i32 = WithLanes(builder.getInt32Ty(), lanes);
  llvm::Type* f32 = WithLanes(builder.getFloatTy(), lanes);
  auto k = [&](uint64_t value) { return IntSplat(builder, 32, lanes, value); };
  llvm::Value* b = builder.CreateZExt(v, i32);
  llvm::Value* sign = builder.CreateShl(builder.CreateAnd(b, k(0x80)), k(24));
  llvm::Value* exponent =
      builder.CreateAnd(builder.CreateLShr(b, k(mantissa_bits)), k(exponent_mask));
  llvm::Value* mantissa = builder.CreateAnd(b, k((1u << mantissa_bits) - 1));
  llvm::Value* normal =
      builder.CreateOr(builder.CreateShl(builder.CreateAdd(exponent, k(127 - bias)), k(23)),
                       builder.CreateShl(mantissa, k(23 - mantissa_bits)));
  // Subnormal: an exact float product, signed by or-ing the sign bit into its bits.
  llvm::Value* subnormal_magnitude =
      builder.CreateFMul(builder.CreateUIToFP(mantissa, f32),
                         llvm::ConstantFP::get(f32, std::ldexp(1.0, 1 - bias - mantissa_bits)));
  llvm::Value* subnormal = builder.CreateBitCast(subnormal_magnitude, i32);
  llvm::Value* magnitude =
      builder.CreateSelect(builder.CreateICmpEQ(exponent, k(0)), subnormal, normal);
  llvm::Value* value = builder.CreateOr(sign, magnitude);
  const uint64_t nan_bits = 0x7fc00000;
  llvm::Value* special = nullptr;  // the code is NaN (or, E5M2, infinity)
  if (fnuz) {
    special = builder.CreateICmpEQ(b, k(0x80));
  } else if (e4m3) {
    special = builder.CreateICmpEQ(builder.CreateAnd(b, k(0x7f)), k(0x7f));
  } else {
    special = builder.CreateICmpEQ(exponent, k(0x1f));
    llvm::Value* infinity = builder.CreateOr(sign, k(0x7f800000));
    llvm::Value* nan = builder.CreateOr(sign, k(nan_bits));
    llvm::Value* inf_or_nan =
        builder.CreateSelect(builder.CreateICmpEQ(mantissa, k(0)), infinity, nan);
    return builder.CreateBitCast(builder.CreateSelect(special, inf_or_nan, value), f32);
  }
  llvm::Value* nan = fnuz ? k(nan_bits) : builder.CreateOr(sign, k(nan_bits));
  return builder.CreateBitCast(builder.CreateSelect(special, nan, value), f32);
}

// A cast to or from a storage type (ir::Cast allows each with its compute type only).
llvm::Value* EmitStorageCast(llvm::IRBuilder<>& builder, llvm::Value* v, ir::Type from, ir::Type to,
                             llvm::Type* type) {
  const int lanes = to.lanes();
  if (from.is_storage_only()) {
    switch (from.code()) {
      case ir::TypeCode::kInt:
        return builder.CreateSExt(v, type);
      case ir::TypeCode::kUInt:
        return builder.CreateZExt(v, type);
      case ir::TypeCode::kFloat:  // float16
        return builder.CreateFPExt(v, type);
      case ir::TypeCode::kBFloat:
        return EmitBf16ToF32(builder, v, lanes);
      case ir::TypeCode::kFp8E4m3:
      case ir::TypeCode::kFp8E5m2:
      case ir::TypeCode::kFp8E4m3Fnuz:
      case ir::TypeCode::kFp8E5m2Fnuz:
        return EmitFp8ToF32(builder, v, from.code(), lanes);
      case ir::TypeCode::kHandle:
        return nullptr;
    }
    return nullptr;
  }
  switch (to.code()) {
    case ir::TypeCode::kInt:
    case ir::TypeCode::kUInt:
      return builder.CreateTrunc(v, type);  // int32 -> int8 / uint8: wraps
    case ir::TypeCode::kFloat:              // float32 -> float16, to nearest even
      return builder.CreateFPTrunc(v, type);
    default:
      return nullptr;  // bfloat16: CodeGenLlvm::EmitFloatToBf16; no cast writes an 8-bit float
  }
}

// `v` (of IR type `from`) converted to IR type `to` (LLVM type `type`) as ir::Cast defines it;
// nullptr for a pair of types the IR has no cast for.
llvm::Value* EmitCastValue(llvm::IRBuilder<>& builder, llvm::Value* v, ir::Type from, ir::Type to,
                           llvm::Type* type) {
  if (from == to) {
    return v;
  }
  if (from.is_storage_only() || to.is_storage_only()) {
    return EmitStorageCast(builder, v, from, to, type);
  }
  if (to.is_bool()) {
    llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
    return from.is_float() ? builder.CreateFCmpUNE(v, zero) : builder.CreateICmpNE(v, zero);
  }
  if (from.is_bool()) {
    return to.is_float() ? builder.CreateUIToFP(v, type) : builder.CreateZExt(v, type);
  }
  if (from.is_int() && to.is_int()) {
    return builder.CreateSExtOrTrunc(v, type);
  }
  if (from.is_int() && to.is_float()) {
    return builder.CreateSIToFP(v, type);
  }
  if (from.is_float() && to.is_int()) {
    return builder.CreateFPToSI(v, type);
  }
  return nullptr;
}

}  // namespace

llvm::Type* CodeGenLlvm::LlvmType(ir::Type t) {
  llvm::Type* elem = nullptr;
  switch (t.code()) {
    case ir::TypeCode::kInt:
    case ir::TypeCode::kUInt:
      elem = builder_.getIntNTy(static_cast<unsigned>(t.bits()));
      break;
    case ir::TypeCode::kFloat:
      elem = t.bits() == 16 ? builder_.getHalfTy() : builder_.getFloatTy();
      break;
    case ir::TypeCode::kBFloat:  // its bits: converted by casts (EmitF32ToBf16, EmitBf16ToF32)
      elem = builder_.getInt16Ty();
      break;
    case ir::TypeCode::kFp8E4m3:
    case ir::TypeCode::kFp8E5m2:
    case ir::TypeCode::kFp8E4m3Fnuz:
    case ir::TypeCode::kFp8E5m2Fnuz:
      elem = builder_.getInt8Ty();
      break;
    case ir::TypeCode::kHandle:
      elem = builder_.getPtrTy();
      break;
  }
  if (t.is_scalar()) {
    return elem;
  }
  max_vector_bits_ = std::max(max_vector_bits_, t.lanes() * t.bits());
  return llvm::FixedVectorType::get(elem, static_cast<unsigned>(t.lanes()));
}

llvm::Type* CodeGenLlvm::ElementType(const ir::Buffer& buffer) {
  return LlvmType(buffer.element_type());
}

llvm::Align CodeGenLlvm::ScalarAlign(llvm::Type* type) {
  return llvm::Align(std::max<uint64_t>(1, type->getPrimitiveSizeInBits().getFixedValue() / 8));
}

llvm::Align CodeGenLlvm::ElementAlign(const ir::Buffer& buffer) {
  return ScalarAlign(ElementType(buffer));
}

llvm::Value* CodeGenLlvm::BufferBase(const ir::Buffer& buffer) {
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end()) {
    Fail(absl::InternalError(StrCat(target_name_, ": buffer ", buffer.name(), " is not in scope")));
    return llvm::PoisonValue::get(builder_.getPtrTy());
  }
  return it->second;
}

llvm::Value* CodeGenLlvm::Emit(const ir::Expr& e) {
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      const auto* op = e.As<ir::IntImm>();
      return llvm::ConstantInt::get(LlvmType(op->type), static_cast<uint64_t>(op->value),
                                    !op->type.is_bool());
    }
    case ExprKind::kFloatImm:
      return llvm::ConstantFP::get(builder_.getFloatTy(), e.As<ir::FloatImm>()->value);
    case ExprKind::kVar: {
      const auto* op = e.As<ir::Variable>();
      auto it = vars_.find(op);
      if (it == vars_.end()) {
        Fail(
            absl::InternalError(StrCat(target_name_, ": variable ", op->name, " is not in scope")));
        return llvm::PoisonValue::get(LlvmType(op->type));
      }
      return it->second;
    }
    case ExprKind::kAdd:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b);
      });
    case ExprKind::kSub:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFSub(a, b) : builder_.CreateSub(a, b);
      });
    case ExprKind::kMul:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFMul(a, b) : builder_.CreateMul(a, b);
      });
    case ExprKind::kDiv:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFDiv(a, b)
                  : EmitFloorDivMod(a, b, e.As<ir::Div>()->b, /*is_div=*/true);
      });
    case ExprKind::kMod:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool) {
        return EmitFloorDivMod(a, b, e.As<ir::Mod>()->b, /*is_div=*/false);
      });
    case ExprKind::kMin:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateSelect(builder_.CreateFCmpOLT(a, b), a, b)
                  : builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
      });
    case ExprKind::kMax:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateSelect(builder_.CreateFCmpOGT(a, b), a, b)
                  : builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
      });
    case ExprKind::kEQ:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFCmpOEQ(a, b) : builder_.CreateICmpEQ(a, b);
      });
    case ExprKind::kNE:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFCmpUNE(a, b) : builder_.CreateICmpNE(a, b);
      });
    case ExprKind::kLT:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFCmpOLT(a, b) : builder_.CreateICmpSLT(a, b);
      });
    case ExprKind::kLE:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFCmpOLE(a, b) : builder_.CreateICmpSLE(a, b);
      });
    case ExprKind::kGT:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFCmpOGT(a, b) : builder_.CreateICmpSGT(a, b);
      });
    case ExprKind::kGE:
      return EmitBinary(e, [&](llvm::Value* a, llvm::Value* b, bool fl) {
        return fl ? builder_.CreateFCmpOGE(a, b) : builder_.CreateICmpSGE(a, b);
      });
    case ExprKind::kAnd:
      return EmitBinary(
          e, [&](llvm::Value* a, llvm::Value* b, bool) { return builder_.CreateAnd(a, b); });
    case ExprKind::kOr:
      return EmitBinary(
          e, [&](llvm::Value* a, llvm::Value* b, bool) { return builder_.CreateOr(a, b); });
    case ExprKind::kNot:
      return builder_.CreateNot(Emit(e.As<ir::Not>()->a));
    case ExprKind::kSelect: {
      const auto* op = e.As<ir::Select>();
      llvm::Value* c = Emit(op->condition);
      llvm::Value* t = Emit(op->true_value);
      llvm::Value* f = Emit(op->false_value);
      return builder_.CreateSelect(c, t, f);
    }
    case ExprKind::kCast:
      return EmitCast(e.type(), e.As<ir::Cast>()->value);
    case ExprKind::kReinterpret:
      return builder_.CreateBitCast(Emit(e.As<ir::Reinterpret>()->value), LlvmType(e.type()));
    case ExprKind::kBroadcast: {
      const auto* op = e.As<ir::Broadcast>();
      LlvmType(op->type);  // records the vector width
      return builder_.CreateVectorSplat(static_cast<unsigned>(op->lanes), Emit(op->value));
    }
    case ExprKind::kRamp:
      return EmitRamp(e.As<ir::Ramp>());
    case ExprKind::kShuffle:
      return EmitShuffle(e.As<ir::Shuffle>());
    case ExprKind::kLoad:
      return EmitLoad(e.As<ir::Load>());
    case ExprKind::kFma: {
      const auto* op = e.As<ir::Fma>();
      llvm::Value* a = Emit(op->a);
      llvm::Value* b = Emit(op->b);
      llvm::Value* c = Emit(op->c);
      return builder_.CreateIntrinsic(llvm::Intrinsic::fma, {LlvmType(op->type)}, {a, b, c});
    }
    case ExprKind::kDotAccumulate:
      return EmitDotAccumulate(e.As<ir::DotAccumulate>());
    case ExprKind::kCallExtern:
      return EmitCallExtern(e.As<ir::CallExtern>());
    case ExprKind::kAddressOf:
      return EmitAddressOf(e.As<ir::AddressOf>());
  }
  Fail(absl::InternalError(
      StrCat(target_name_, ": unknown expression kind ", ir::ExprKindName(e.kind()))));
  return llvm::PoisonValue::get(builder_.getInt32Ty());
}

template <typename Op>
llvm::Value* CodeGenLlvm::EmitBinary(const ir::Expr& e, Op op) {
  const auto* node = static_cast<const ir::BinaryExprNode*>(e.get());
  llvm::Value* a = Emit(node->a);
  llvm::Value* b = Emit(node->b);
  return op(a, b, node->a.type().is_float());
}

llvm::Value* CodeGenLlvm::EmitFloorDivMod(llvm::Value* a, llvm::Value* b, const ir::Expr& divisor,
                                          bool is_div) {
  llvm::Type* type = a->getType();
  std::optional<int64_t> c = ConstantDivisor(divisor);
  if (c && *c > 0 && (*c & (*c - 1)) == 0) {
    // Floor semantics of a positive power of two: an arithmetic shift, a mask.
    int shift = std::countr_zero(static_cast<uint64_t>(*c));
    return is_div ? builder_.CreateAShr(a, llvm::ConstantInt::get(type, shift))
                  : builder_.CreateAnd(a, llvm::ConstantInt::get(type, *c - 1));
  }
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  llvm::Value* q = builder_.CreateSDiv(a, b);
  llvm::Value* r = builder_.CreateSRem(a, b);
  // Truncated division rounds toward zero; floor differs when the remainder is non-zero and
  // its sign differs from the divisor's.
  llvm::Value* adjust = builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                                           builder_.CreateICmpSLT(builder_.CreateXor(r, b), zero));
  if (is_div) {
    return builder_.CreateSub(q, builder_.CreateZExt(adjust, type));
  }
  return builder_.CreateAdd(r, builder_.CreateSelect(adjust, b, zero));
}

llvm::Value* CodeGenLlvm::EmitFloatToBf16(llvm::Value* v, int lanes) {
  return EmitF32ToBf16(builder_, v, lanes);
}

llvm::Value* CodeGenLlvm::EmitCast(ir::Type to, const ir::Expr& value) {
  ir::Type from = value.type();
  llvm::Type* type = LlvmType(to);
  if (to.code() == ir::TypeCode::kBFloat && from.is_float() && from.bits() == 32) {
    return EmitFloatToBf16(Emit(value), to.lanes());
  }
  if (llvm::Value* v = EmitCastValue(builder_, Emit(value), from, to, type)) {
    return v;
  }
  Fail(absl::InternalError(
      StrCat(target_name_, ": cannot cast ", from.ToString(), " to ", to.ToString())));
  return llvm::PoisonValue::get(type);
}

llvm::Value* CodeGenLlvm::EmitRamp(const ir::Ramp* op) {
  llvm::Type* elem = LlvmType(op->type.Element());
  LlvmType(op->type);  // records the vector width
  std::vector<llvm::Constant*> steps;
  steps.reserve(static_cast<size_t>(op->lanes));
  for (int i = 0; i < op->lanes; ++i) {
    steps.push_back(llvm::ConstantInt::get(elem, static_cast<uint64_t>(i)));
  }
  auto lanes = static_cast<unsigned>(op->lanes);
  llvm::Value* base = builder_.CreateVectorSplat(lanes, Emit(op->base));
  llvm::Value* stride = builder_.CreateVectorSplat(lanes, Emit(op->stride));
  return builder_.CreateAdd(base, builder_.CreateMul(stride, llvm::ConstantVector::get(steps)));
}

// The vectors concatenated pairwise (an odd one out padded with poison after its lanes, so that
// every lane keeps its position) until at most two remain, then one shufflevector of those.
llvm::Value* CodeGenLlvm::EmitShuffle(const ir::Shuffle* op) {
  LlvmType(op->type);  // records the vector width
  std::vector<llvm::Value*> parts;
  for (const ir::Expr& v : op->vectors) {
    parts.push_back(Emit(v));
  }
  auto concat = [&](llvm::Value* a, llvm::Value* b) {
    const auto n = llvm::cast<llvm::FixedVectorType>(a->getType())->getNumElements();
    std::vector<int> mask(2 * n);
    for (unsigned i = 0; i < 2 * n; ++i) {
      mask[i] = static_cast<int>(i);
    }
    return builder_.CreateShuffleVector(a, b, mask);
  };
  while (parts.size() > 2) {
    std::vector<llvm::Value*> next;
    for (size_t i = 0; i < parts.size(); i += 2) {
      llvm::Value* b =
          i + 1 < parts.size() ? parts[i + 1] : llvm::PoisonValue::get(parts[i]->getType());
      next.push_back(concat(parts[i], b));
    }
    parts = std::move(next);
  }
  llvm::Value* second = parts.size() == 2 ? parts[1] : llvm::PoisonValue::get(parts[0]->getType());
  return builder_.CreateShuffleVector(parts[0], second, op->indices);
}

// A scalar index is a scalar access, a Ramp of stride 1 a dense vector access, any other vector
// index a gather.
llvm::Value* CodeGenLlvm::EmitLoad(const ir::Load* op) {
  llvm::Type* type = LlvmType(op->type);
  llvm::Value* base = BufferBase(op->buffer);
  if (op->index.type().is_scalar()) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(ElementType(op->buffer), base, Emit(op->index));
    return builder_.CreateAlignedLoad(type, ptr, ElementAlign(op->buffer));
  }
  const auto* ramp = op->index.As<ir::Ramp>();
  if (ramp != nullptr && ir::IsConst(ramp->stride, 1)) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(ElementType(op->buffer), base, Emit(ramp->base));
    return builder_.CreateAlignedLoad(type, ptr, DenseAlignment(op->buffer, ramp->base));
  }
  return EmitGather(type, base, Emit(op->index), op->type.lanes());
}

llvm::Value* CodeGenLlvm::EmitDotAccumulate(const ir::DotAccumulate* op) {
  const int lanes = op->type.lanes();
  const int group = ir::DotGroup(op->kind);
  const bool pairs = ir::DotPairs(op->kind);
  llvm::Value* acc = Emit(op->acc);
  llvm::Value* a = Emit(op->a);
  llvm::Value* b = Emit(op->b);
  llvm::SmallVector<int, 64> repeat;  // one group for every lane
  for (int i = 0; i < lanes * group; ++i) {
    repeat.push_back(i % group);
  }
  if (op->a.type().lanes() == group) {
    a = builder_.CreateShuffleVector(a, repeat);
  }
  if (op->b.type().lanes() == group) {
    b = builder_.CreateShuffleVector(b, repeat);
  }
  // The operands in their compute type, then element j of every group multiplied and added in
  // turn (a fused multiply-add for the pairs: their products are exact in float32, so it sums
  // what a multiply then an add would).
  llvm::Type* f32s = WithLanes(builder_.getFloatTy(), lanes * group);
  auto widen = [&](llvm::Value* v, bool is_unsigned) -> llvm::Value* {
    switch (op->kind) {
      case ir::DotKind::kBf16Pairs:
        return EmitBf16ToF32(builder_, v, lanes * group);
      case ir::DotKind::kF16Pairs:
        return builder_.CreateFPExt(v, f32s);
      case ir::DotKind::kU8S8Quads:
        break;
    }
    llvm::Type* i32s = WithLanes(builder_.getInt32Ty(), lanes * group);
    return is_unsigned ? builder_.CreateZExt(v, i32s) : builder_.CreateSExt(v, i32s);
  };
  llvm::Value* wide_a = widen(a, /*is_unsigned=*/true);
  llvm::Value* wide_b = widen(b, /*is_unsigned=*/false);
  llvm::Value* sum = acc;
  for (int j = 0; j < group; ++j) {
    llvm::SmallVector<int, 16> mask;
    for (int i = 0; i < lanes; ++i) {
      mask.push_back(group * i + j);
    }
    auto part = [&](llvm::Value* v) -> llvm::Value* {
      return lanes == 1 ? builder_.CreateExtractElement(v, uint64_t(j))
                        : builder_.CreateShuffleVector(v, mask);
    };
    llvm::Value* x = part(wide_a);
    llvm::Value* y = part(wide_b);
    sum = pairs ? builder_.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, sum})
                : builder_.CreateAdd(sum, builder_.CreateMul(x, y));
  }
  return sum;
}

}  // namespace tune::llvm_backend
