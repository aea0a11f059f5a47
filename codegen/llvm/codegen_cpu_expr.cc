// Expressions: IR expression -> LLVM value.
#include <algorithm>
#include <bit>
#include <optional>

#include "codegen/ir/printer.h"
#include "codegen/llvm/codegen_cpu.h"
#include "codegen/llvm/emit_scalar.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace tune::llvm_backend {

using ir::ExprKind;

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
        Fail(absl::InternalError(StrCat("CPU codegen: variable ", op->name, " is not in scope")));
        return llvm::PoisonValue::get(LlvmType(op->type));
      }
      return it->second;
    }
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kMin:
    case ExprKind::kMax:
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE:
    case ExprKind::kAnd:
    case ExprKind::kOr:
      return EmitBinary(e);
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
      return EmitCall(e.As<ir::CallExtern>());
    case ExprKind::kAddressOf: {
      const auto* op = e.As<ir::AddressOf>();
      return builder_.CreateInBoundsGEP(builder_.getFloatTy(), BufferBase(op->buffer),
                                        Emit(op->index));
    }
  }
  Fail(absl::InternalError(StrCat("CPU codegen: statement kind ", ir::ExprKindName(e.kind()),
                                  " used as an expression")));
  return llvm::PoisonValue::get(builder_.getInt32Ty());
}

llvm::Value* CodeGenCpu::EmitBinary(const ir::Expr& e) {
  const auto* op = static_cast<const ir::BinaryExprNode*>(e.get());
  llvm::Value* a = Emit(op->a);
  llvm::Value* b = Emit(op->b);
  if (llvm::Value* v = EmitBinaryOp(builder_, e.kind(), a, b, op->b, op->a.type().is_float())) {
    return v;
  }
  Fail(absl::InternalError("CPU codegen: not a binary node"));
  return a;
}

llvm::Value* CodeGenCpu::EmitCast(ir::Type to, const ir::Expr& value) {
  ir::Type from = value.type();
  llvm::Type* type = LlvmType(to);
  if (llvm::Value* v = EmitCastValue(builder_, Emit(value), from, to, type)) {
    return v;
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
