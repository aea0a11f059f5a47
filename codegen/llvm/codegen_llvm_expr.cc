// Expressions: IR expression -> LLVM value, for every target. What an operator means does not
// depend on the target; loads differ only in alignment and in how a gather is done.
#include <algorithm>
#include <bit>
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

// `v` (of IR type `from`) converted to IR type `to` (LLVM type `type`) as ir::Cast defines it;
// nullptr for a pair of types the IR has no cast for.
llvm::Value* EmitCastValue(llvm::IRBuilder<>& builder, llvm::Value* v, ir::Type from, ir::Type to,
                           llvm::Type* type) {
  if (from == to) {
    return v;
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
      elem = builder_.getFloatTy();
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
    case ExprKind::kBroadcast: {
      const auto* op = e.As<ir::Broadcast>();
      LlvmType(op->type);  // records the vector width
      return builder_.CreateVectorSplat(static_cast<unsigned>(op->lanes), Emit(op->value));
    }
    case ExprKind::kRamp:
      return EmitRamp(e.As<ir::Ramp>());
    case ExprKind::kLoad:
      return EmitLoad(e.As<ir::Load>());
    case ExprKind::kFma: {
      const auto* op = e.As<ir::Fma>();
      llvm::Value* a = Emit(op->a);
      llvm::Value* b = Emit(op->b);
      llvm::Value* c = Emit(op->c);
      return builder_.CreateIntrinsic(llvm::Intrinsic::fma, {LlvmType(op->type)}, {a, b, c});
    }
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

llvm::Value* CodeGenLlvm::EmitCast(ir::Type to, const ir::Expr& value) {
  ir::Type from = value.type();
  llvm::Type* type = LlvmType(to);
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

// A scalar index is a scalar access, a Ramp of stride 1 a dense vector access, any other vector
// index a gather.
llvm::Value* CodeGenLlvm::EmitLoad(const ir::Load* op) {
  llvm::Type* type = LlvmType(op->type);
  llvm::Value* base = BufferBase(op->buffer);
  if (op->index.type().is_scalar()) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(builder_.getFloatTy(), base, Emit(op->index));
    return builder_.CreateAlignedLoad(type, ptr, llvm::Align(4));
  }
  const auto* ramp = op->index.As<ir::Ramp>();
  if (ramp != nullptr && ir::IsConst(ramp->stride, 1)) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(builder_.getFloatTy(), base, Emit(ramp->base));
    return builder_.CreateAlignedLoad(type, ptr, DenseAlignment(op->buffer, ramp->base));
  }
  return EmitGather(type, base, Emit(op->index), op->type.lanes());
}

}  // namespace tune::llvm_backend
