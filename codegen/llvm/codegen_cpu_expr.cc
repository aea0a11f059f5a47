// Expressions: IR expression -> LLVM value.
#include <algorithm>
#include <bit>
#include <optional>

#include "codegen/ir/printer.h"
#include "codegen/llvm/codegen_cpu.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace tune::llvm_backend {

using ir::NodeKind;

namespace {

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

void CodeGenCpu::Fail(absl::Status status) {
  if (status_.ok()) {
    status_ = std::move(status);
  }
}

llvm::Type* CodeGenCpu::LlvmType(ir::Type t) {
  llvm::Type* elem = nullptr;
  switch (t.code()) {
    case ir::TypeCode::kInt:
      elem = builder_.getIntNTy(static_cast<unsigned>(t.bits()));
      break;
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

llvm::Value* CodeGenCpu::BufferBase(const ir::Buffer& buffer) {
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end()) {
    Fail(absl::InternalError(StrCat("CPU codegen: buffer ", buffer.name(), " is not in scope")));
    return llvm::PoisonValue::get(builder_.getPtrTy());
  }
  return it->second;
}

llvm::Value* CodeGenCpu::DenseAddress(const ir::Buffer& buffer, const ir::Expr& index) {
  if (index.type().is_scalar()) {
    return builder_.CreateInBoundsGEP(builder_.getFloatTy(), BufferBase(buffer), Emit(index));
  }
  const auto* ramp = index.As<ir::Ramp>();
  if (ramp != nullptr && ir::IsConst(ramp->stride, 1)) {
    return builder_.CreateInBoundsGEP(builder_.getFloatTy(), BufferBase(buffer), Emit(ramp->base));
  }
  return nullptr;
}

llvm::Value* CodeGenCpu::Emit(const ir::Expr& e) {
  switch (e.kind()) {
    case NodeKind::kIntImm: {
      const auto* op = e.As<ir::IntImm>();
      return llvm::ConstantInt::get(LlvmType(op->type), static_cast<uint64_t>(op->value),
                                    !op->type.is_bool());
    }
    case NodeKind::kFloatImm:
      return llvm::ConstantFP::get(builder_.getFloatTy(), e.As<ir::FloatImm>()->value);
    case NodeKind::kVar: {
      const auto* op = e.As<ir::Variable>();
      auto it = vars_.find(op);
      if (it == vars_.end()) {
        Fail(absl::InternalError(StrCat("CPU codegen: variable ", op->name, " is not in scope")));
        return llvm::PoisonValue::get(LlvmType(op->type));
      }
      return it->second;
    }
    case NodeKind::kAdd:
    case NodeKind::kSub:
    case NodeKind::kMul:
    case NodeKind::kDiv:
    case NodeKind::kMod:
    case NodeKind::kMin:
    case NodeKind::kMax:
    case NodeKind::kEQ:
    case NodeKind::kNE:
    case NodeKind::kLT:
    case NodeKind::kLE:
    case NodeKind::kGT:
    case NodeKind::kGE:
    case NodeKind::kAnd:
    case NodeKind::kOr:
      return EmitBinary(e);
    case NodeKind::kNot:
      return builder_.CreateNot(Emit(e.As<ir::Not>()->a));
    case NodeKind::kSelect: {
      const auto* op = e.As<ir::Select>();
      llvm::Value* c = Emit(op->condition);
      llvm::Value* t = Emit(op->true_value);
      llvm::Value* f = Emit(op->false_value);
      return builder_.CreateSelect(c, t, f);
    }
    case NodeKind::kCast:
      return EmitCast(e.type(), e.As<ir::Cast>()->value);
    case NodeKind::kBroadcast: {
      const auto* op = e.As<ir::Broadcast>();
      LlvmType(op->type);  // records the vector width
      return builder_.CreateVectorSplat(static_cast<unsigned>(op->lanes), Emit(op->value));
    }
    case NodeKind::kRamp:
      return EmitRamp(e.As<ir::Ramp>());
    case NodeKind::kLoad:
      return EmitLoad(e.As<ir::Load>());
    case NodeKind::kFma: {
      const auto* op = e.As<ir::Fma>();
      llvm::Value* a = Emit(op->a);
      llvm::Value* b = Emit(op->b);
      llvm::Value* c = Emit(op->c);
      return builder_.CreateIntrinsic(llvm::Intrinsic::fma, {LlvmType(op->type)}, {a, b, c});
    }
    case NodeKind::kCallExtern:
      return EmitCall(e.As<ir::CallExtern>());
    case NodeKind::kAddressOf: {
      const auto* op = e.As<ir::AddressOf>();
      return builder_.CreateInBoundsGEP(builder_.getFloatTy(), BufferBase(op->buffer),
                                        Emit(op->index));
    }
    case NodeKind::kStore:
    case NodeKind::kFor:
    case NodeKind::kBlock:
    case NodeKind::kIfThenElse:
    case NodeKind::kLetStmt:
    case NodeKind::kAllocate:
    case NodeKind::kEvaluate:
    case NodeKind::kBarrier:
      break;
  }
  Fail(absl::InternalError(StrCat("CPU codegen: statement kind ", ir::NodeKindName(e.kind()),
                                  " used as an expression")));
  return llvm::PoisonValue::get(builder_.getInt32Ty());
}

llvm::Value* CodeGenCpu::EmitBinary(const ir::Expr& e) {
  const auto* op = static_cast<const ir::BinaryExprNode*>(e.get());
  llvm::Value* a = Emit(op->a);
  llvm::Value* b = Emit(op->b);
  bool is_float = op->a.type().is_float();
  switch (e.kind()) {
    case NodeKind::kAdd:
      return is_float ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b);
    case NodeKind::kSub:
      return is_float ? builder_.CreateFSub(a, b) : builder_.CreateSub(a, b);
    case NodeKind::kMul:
      return is_float ? builder_.CreateFMul(a, b) : builder_.CreateMul(a, b);
    case NodeKind::kDiv:
      return is_float ? builder_.CreateFDiv(a, b) : EmitFloorDivMod(a, b, op->b, true);
    case NodeKind::kMod:
      return EmitFloorDivMod(a, b, op->b, false);
    case NodeKind::kMin:
      return is_float ? builder_.CreateSelect(builder_.CreateFCmpOLT(a, b), a, b)
                      : builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
    case NodeKind::kMax:
      return is_float ? builder_.CreateSelect(builder_.CreateFCmpOGT(a, b), a, b)
                      : builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
    case NodeKind::kEQ:
      return is_float ? builder_.CreateFCmpOEQ(a, b) : builder_.CreateICmpEQ(a, b);
    case NodeKind::kNE:
      return is_float ? builder_.CreateFCmpUNE(a, b) : builder_.CreateICmpNE(a, b);
    case NodeKind::kLT:
      return is_float ? builder_.CreateFCmpOLT(a, b) : builder_.CreateICmpSLT(a, b);
    case NodeKind::kLE:
      return is_float ? builder_.CreateFCmpOLE(a, b) : builder_.CreateICmpSLE(a, b);
    case NodeKind::kGT:
      return is_float ? builder_.CreateFCmpOGT(a, b) : builder_.CreateICmpSGT(a, b);
    case NodeKind::kGE:
      return is_float ? builder_.CreateFCmpOGE(a, b) : builder_.CreateICmpSGE(a, b);
    case NodeKind::kAnd:
      return builder_.CreateAnd(a, b);
    case NodeKind::kOr:
      return builder_.CreateOr(a, b);
    case NodeKind::kIntImm:
    case NodeKind::kFloatImm:
    case NodeKind::kVar:
    case NodeKind::kNot:
    case NodeKind::kSelect:
    case NodeKind::kCast:
    case NodeKind::kBroadcast:
    case NodeKind::kRamp:
    case NodeKind::kLoad:
    case NodeKind::kFma:
    case NodeKind::kCallExtern:
    case NodeKind::kAddressOf:
    case NodeKind::kStore:
    case NodeKind::kFor:
    case NodeKind::kBlock:
    case NodeKind::kIfThenElse:
    case NodeKind::kLetStmt:
    case NodeKind::kAllocate:
    case NodeKind::kEvaluate:
    case NodeKind::kBarrier:
      break;
  }
  Fail(absl::InternalError("CPU codegen: not a binary node"));
  return a;
}

llvm::Value* CodeGenCpu::EmitFloorDivMod(llvm::Value* a, llvm::Value* b, const ir::Expr& divisor,
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

llvm::Value* CodeGenCpu::EmitCast(ir::Type to, const ir::Expr& value) {
  ir::Type from = value.type();
  llvm::Value* v = Emit(value);
  llvm::Type* type = LlvmType(to);
  if (from == to) {
    return v;
  }
  if (to.is_bool()) {
    llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
    return from.is_float() ? builder_.CreateFCmpUNE(v, zero) : builder_.CreateICmpNE(v, zero);
  }
  if (from.is_bool()) {
    return to.is_float() ? builder_.CreateUIToFP(v, type) : builder_.CreateZExt(v, type);
  }
  if (from.is_int() && to.is_int()) {
    return builder_.CreateSExtOrTrunc(v, type);
  }
  if (from.is_int() && to.is_float()) {
    return builder_.CreateSIToFP(v, type);
  }
  if (from.is_float() && to.is_int()) {
    return builder_.CreateFPToSI(v, type);
  }
  Fail(absl::InternalError(
      StrCat("CPU codegen: cannot cast ", from.ToString(), " to ", to.ToString())));
  return llvm::PoisonValue::get(type);
}

llvm::Value* CodeGenCpu::EmitRamp(const ir::Ramp* op) {
  llvm::Type* elem = LlvmType(op->type.Element());
  LlvmType(op->type);
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

llvm::Value* CodeGenCpu::EmitLoad(const ir::Load* op) {
  llvm::Type* type = LlvmType(op->type);
  if (llvm::Value* ptr = DenseAddress(op->buffer, op->index)) {
    return builder_.CreateAlignedLoad(type, ptr, llvm::Align(4));
  }
  llvm::Value* ptrs =
      builder_.CreateInBoundsGEP(builder_.getFloatTy(), BufferBase(op->buffer), Emit(op->index));
  return builder_.CreateMaskedGather(type, ptrs, llvm::Align(4));
}

llvm::Value* CodeGenCpu::EmitCall(const ir::CallExtern* op) {
  std::vector<llvm::Type*> arg_types;
  std::vector<llvm::Value*> args;
  for (const ir::Expr& arg : op->args) {
    args.push_back(Emit(arg));
    arg_types.push_back(LlvmType(arg.type()));
  }
  llvm::FunctionType* type = llvm::FunctionType::get(LlvmType(op->type), arg_types, false);
  llvm::Function* callee = module_->getFunction(op->symbol);
  if (callee == nullptr) {
    callee = llvm::Function::Create(type, llvm::Function::ExternalLinkage, op->symbol, module_);
  } else if (callee->getFunctionType() != type) {
    Fail(absl::InvalidArgumentError(StrCat("CPU codegen: external function ", op->symbol,
                                           " is called with two different signatures (last: `",
                                           ir::ToText(ir::Expr(op)), "`)")));
    return llvm::PoisonValue::get(LlvmType(op->type));
  }
  return builder_.CreateCall(type, callee, args);
}

}  // namespace tune::llvm_backend
