// GPU expressions: IR expression -> LLVM value (the CPU backend's semantics; gathers and
// scatters are per-lane accesses, dense accesses get the alignment KnownMultiple proves).
#include <algorithm>
#include <bit>
#include <numeric>
#include <optional>

#include "codegen/ir/printer.h"
#include "codegen/llvm/codegen_gpu.h"
#include "codegen/llvm/emit_scalar.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace tune::llvm_backend {

using ir::ExprKind;

namespace {

constexpr int64_t kMaxKnownMultiple = int64_t{1} << 20;

// The largest power of two dividing v (v != 0), capped.
int64_t PowerOfTwoPart(int64_t v) {
  if (v == 0) {
    return kMaxKnownMultiple;
  }
  auto u = static_cast<uint64_t>(v < 0 ? -v : v);
  return std::min<int64_t>(kMaxKnownMultiple, int64_t{1} << std::countr_zero(u));
}

}  // namespace

int64_t KnownMultiple(const ir::Expr& e, const std::map<const ir::Variable*, int64_t>& vars) {
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return PowerOfTwoPart(e.As<ir::IntImm>()->value);
    case ExprKind::kVar: {
      auto it = vars.find(e.As<ir::Variable>());
      return it != vars.end() ? it->second : 1;
    }
    case ExprKind::kAdd: {
      const auto* op = e.As<ir::Add>();
      return std::min(KnownMultiple(op->a, vars), KnownMultiple(op->b, vars));
    }
    case ExprKind::kSub: {
      const auto* op = e.As<ir::Sub>();
      return std::min(KnownMultiple(op->a, vars), KnownMultiple(op->b, vars));
    }
    case ExprKind::kMul: {
      const auto* op = e.As<ir::Mul>();
      return std::min(kMaxKnownMultiple, KnownMultiple(op->a, vars) * KnownMultiple(op->b, vars));
    }
    case ExprKind::kMin: {  // either operand: a multiple of both operands' common part
      const auto* op = e.As<ir::Min>();
      return std::min(KnownMultiple(op->a, vars), KnownMultiple(op->b, vars));
    }
    case ExprKind::kMax: {
      const auto* op = e.As<ir::Max>();
      return std::min(KnownMultiple(op->a, vars), KnownMultiple(op->b, vars));
    }
    case ExprKind::kMod: {  // a - b * floor(a / b)
      const auto* op = e.As<ir::Mod>();
      return e.type().is_int() ? std::min(KnownMultiple(op->a, vars), KnownMultiple(op->b, vars))
                               : 1;
    }
    case ExprKind::kSelect: {
      const auto* op = e.As<ir::Select>();
      return e.type().is_int() && e.type().is_scalar()
                 ? std::min(KnownMultiple(op->true_value, vars),
                            KnownMultiple(op->false_value, vars))
                 : 1;
    }
    case ExprKind::kCast: {
      const auto* op = e.As<ir::Cast>();
      return op->value.type().is_int() && e.type().is_int() ? KnownMultiple(op->value, vars) : 1;
    }
    case ExprKind::kFloatImm:
    case ExprKind::kDiv:
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE:
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kNot:
    case ExprKind::kBroadcast:
    case ExprKind::kRamp:
    case ExprKind::kLoad:
    case ExprKind::kFma:
    case ExprKind::kCallExtern:
    case ExprKind::kAddressOf:
      return 1;
  }
  return 1;
}

void CodeGenGpu::Fail(absl::Status status) {
  if (status_.ok()) {
    status_ = std::move(status);
  }
}

llvm::Type* CodeGenGpu::LlvmType(ir::Type t) {
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
  return llvm::FixedVectorType::get(elem, static_cast<unsigned>(t.lanes()));
}

llvm::Value* CodeGenGpu::BufferBase(const ir::Buffer& buffer) {
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end()) {
    Fail(absl::InternalError(StrCat("GPU codegen: buffer ", buffer.name(), " is not in scope")));
    return llvm::PoisonValue::get(builder_.getPtrTy());
  }
  return it->second;
}

llvm::Align CodeGenGpu::DenseAlignment(const ir::Buffer& buffer, const ir::Expr& base) {
  int64_t buffer_align =
      buffer.scope() == ir::MemoryScope::kGlobal ? kGpuParamAlignment : kGpuArrayAlignment;
  int64_t bytes = std::min(buffer_align, 4 * KnownMultiple(base, multiples_));
  return llvm::Align(static_cast<uint64_t>(std::max<int64_t>(4, bytes)));
}

llvm::Value* CodeGenGpu::Emit(const ir::Expr& e) {
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
        Fail(absl::InternalError(StrCat("GPU codegen: variable ", op->name, " is not in scope")));
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
      Fail(absl::UnimplementedError(
          StrCat("GPU codegen: kernel ", func_name_, " calls the external function ",
                 e.As<ir::CallExtern>()->symbol, "; GPU kernels cannot call host code")));
      return llvm::PoisonValue::get(LlvmType(e.type()));
    case ExprKind::kAddressOf:
      Fail(absl::UnimplementedError(
          StrCat("GPU codegen: kernel ", func_name_, " takes the address of ",
                 e.As<ir::AddressOf>()->buffer.name(), " (only external calls use addresses)")));
      return llvm::PoisonValue::get(builder_.getPtrTy());
  }
  Fail(absl::InternalError(StrCat("GPU codegen: statement kind ", ir::ExprKindName(e.kind()),
                                  " used as an expression")));
  return llvm::PoisonValue::get(builder_.getInt32Ty());
}

llvm::Value* CodeGenGpu::EmitBinary(const ir::Expr& e) {
  const auto* op = static_cast<const ir::BinaryExprNode*>(e.get());
  llvm::Value* a = Emit(op->a);
  llvm::Value* b = Emit(op->b);
  if (llvm::Value* v = EmitBinaryOp(builder_, e.kind(), a, b, op->b, op->a.type().is_float())) {
    return v;
  }
  Fail(absl::InternalError("GPU codegen: not a binary node"));
  return a;
}

llvm::Value* CodeGenGpu::EmitCast(ir::Type to, const ir::Expr& value) {
  ir::Type from = value.type();
  llvm::Type* type = LlvmType(to);
  if (llvm::Value* v = EmitCastValue(builder_, Emit(value), from, to, type)) {
    return v;
  }
  Fail(absl::InternalError(
      StrCat("GPU codegen: cannot cast ", from.ToString(), " to ", to.ToString())));
  return llvm::PoisonValue::get(type);
}

llvm::Value* CodeGenGpu::EmitRamp(const ir::Ramp* op) {
  llvm::Type* elem = LlvmType(op->type.Element());
  std::vector<llvm::Constant*> steps;
  for (int i = 0; i < op->lanes; ++i) {
    steps.push_back(llvm::ConstantInt::get(elem, static_cast<uint64_t>(i)));
  }
  auto lanes = static_cast<unsigned>(op->lanes);
  llvm::Value* base = builder_.CreateVectorSplat(lanes, Emit(op->base));
  llvm::Value* stride = builder_.CreateVectorSplat(lanes, Emit(op->stride));
  return builder_.CreateAdd(base, builder_.CreateMul(stride, llvm::ConstantVector::get(steps)));
}

llvm::Value* CodeGenGpu::EmitLoad(const ir::Load* op) {
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
  // A gather: GPUs load lane by lane.
  llvm::Value* index = Emit(op->index);
  llvm::Value* result = llvm::PoisonValue::get(type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    llvm::Value* lane = builder_.CreateExtractElement(index, static_cast<uint64_t>(i));
    llvm::Value* ptr = builder_.CreateInBoundsGEP(builder_.getFloatTy(), base, lane);
    llvm::Value* value = builder_.CreateAlignedLoad(builder_.getFloatTy(), ptr, llvm::Align(4));
    result = builder_.CreateInsertElement(result, value, static_cast<uint64_t>(i));
  }
  return result;
}

}  // namespace tune::llvm_backend
