#include "codegen/llvm/emit_scalar.h"

#include <bit>
#include <optional>

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

}  // namespace

llvm::Value* EmitBinaryOp(llvm::IRBuilder<>& builder, ir::ExprKind kind, llvm::Value* a,
                          llvm::Value* b, const ir::Expr& divisor, bool is_float) {
  switch (kind) {
    case ExprKind::kAdd:
      return is_float ? builder.CreateFAdd(a, b) : builder.CreateAdd(a, b);
    case ExprKind::kSub:
      return is_float ? builder.CreateFSub(a, b) : builder.CreateSub(a, b);
    case ExprKind::kMul:
      return is_float ? builder.CreateFMul(a, b) : builder.CreateMul(a, b);
    case ExprKind::kDiv:
      return is_float ? builder.CreateFDiv(a, b) : EmitFloorDivMod(builder, a, b, divisor, true);
    case ExprKind::kMod:
      return EmitFloorDivMod(builder, a, b, divisor, false);
    case ExprKind::kMin:
      return is_float ? builder.CreateSelect(builder.CreateFCmpOLT(a, b), a, b)
                      : builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
    case ExprKind::kMax:
      return is_float ? builder.CreateSelect(builder.CreateFCmpOGT(a, b), a, b)
                      : builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
    case ExprKind::kEQ:
      return is_float ? builder.CreateFCmpOEQ(a, b) : builder.CreateICmpEQ(a, b);
    case ExprKind::kNE:
      return is_float ? builder.CreateFCmpUNE(a, b) : builder.CreateICmpNE(a, b);
    case ExprKind::kLT:
      return is_float ? builder.CreateFCmpOLT(a, b) : builder.CreateICmpSLT(a, b);
    case ExprKind::kLE:
      return is_float ? builder.CreateFCmpOLE(a, b) : builder.CreateICmpSLE(a, b);
    case ExprKind::kGT:
      return is_float ? builder.CreateFCmpOGT(a, b) : builder.CreateICmpSGT(a, b);
    case ExprKind::kGE:
      return is_float ? builder.CreateFCmpOGE(a, b) : builder.CreateICmpSGE(a, b);
    case ExprKind::kAnd:
      return builder.CreateAnd(a, b);
    case ExprKind::kOr:
      return builder.CreateOr(a, b);
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar:
    case ExprKind::kNot:
    case ExprKind::kSelect:
    case ExprKind::kCast:
    case ExprKind::kBroadcast:
    case ExprKind::kRamp:
    case ExprKind::kLoad:
    case ExprKind::kFma:
    case ExprKind::kCallExtern:
    case ExprKind::kAddressOf:
      return nullptr;
  }
  return nullptr;
}

llvm::Value* EmitFloorDivMod(llvm::IRBuilder<>& builder, llvm::Value* a, llvm::Value* b,
                             const ir::Expr& divisor, bool is_div) {
  llvm::Type* type = a->getType();
  std::optional<int64_t> c = ConstantDivisor(divisor);
  if (c && *c > 0 && (*c & (*c - 1)) == 0) {
    // Floor semantics of a positive power of two: an arithmetic shift, a mask.
    int shift = std::countr_zero(static_cast<uint64_t>(*c));
    return is_div ? builder.CreateAShr(a, llvm::ConstantInt::get(type, shift))
                  : builder.CreateAnd(a, llvm::ConstantInt::get(type, *c - 1));
  }
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  llvm::Value* q = builder.CreateSDiv(a, b);
  llvm::Value* r = builder.CreateSRem(a, b);
  // Truncated division rounds toward zero; floor differs when the remainder is non-zero and
  // its sign differs from the divisor's.
  llvm::Value* adjust = builder.CreateAnd(builder.CreateICmpNE(r, zero),
                                          builder.CreateICmpSLT(builder.CreateXor(r, b), zero));
  if (is_div) {
    return builder.CreateSub(q, builder.CreateZExt(adjust, type));
  }
  return builder.CreateAdd(r, builder.CreateSelect(adjust, b, zero));
}

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

std::vector<llvm::AtomicRMWInst*> EmitAtomicAdds(llvm::IRBuilder<>& builder, llvm::Value* base,
                                                 llvm::Value* index, llvm::Value* value, int lanes,
                                                 llvm::SyncScope::ID scope) {
  std::vector<llvm::AtomicRMWInst*> adds;
  for (int i = 0; i < lanes; ++i) {
    llvm::Value* at =
        lanes == 1 ? index : builder.CreateExtractElement(index, static_cast<uint64_t>(i));
    llvm::Value* addend =
        lanes == 1 ? value : builder.CreateExtractElement(value, static_cast<uint64_t>(i));
    llvm::Value* ptr = builder.CreateInBoundsGEP(builder.getFloatTy(), base, at);
    adds.push_back(builder.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd, ptr, addend, llvm::Align(4),
                                           llvm::AtomicOrdering::Monotonic, scope));
  }
  return adds;
}

}  // namespace tune::llvm_backend
