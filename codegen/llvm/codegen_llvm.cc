// Functions and the statements every target emits alike: blocks, lets, ifs, counted loops and
// stores; the rest goes to the backend's hooks (codegen_llvm.h).
#include "codegen/llvm/codegen_llvm.h"

#include "common/strings.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"

namespace tune::llvm_backend {

using ir::StmtKind;

CodeGenLlvm::CodeGenLlvm(llvm::Module* module, std::string target_name, std::string cpu,
                         std::string features)
    : module_(module),
      ctx_(module->getContext()),
      builder_(module->getContext()),
      target_name_(std::move(target_name)),
      cpu_(std::move(cpu)),
      features_(std::move(features)) {
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  builder_.setFastMathFlags(fmf);
}

void CodeGenLlvm::AddTargetAttributes(llvm::Function* f) {
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr("target-cpu", cpu_);
  if (!features_.empty()) {
    f->addFnAttr("target-features", features_);
  }
}

llvm::BasicBlock* CodeGenLlvm::BeginFunction(llvm::Function* f, const ir::LoweredFunc& func) {
  status_ = absl::OkStatus();
  vars_.clear();
  buffers_.clear();
  function_ = f;
  func_name_ = func.name;
  max_vector_bits_ = 0;
  for (size_t i = 0; i < func.params.size(); ++i) {
    llvm::Argument* arg = f->getArg(static_cast<unsigned>(i));
    arg->setName(func.params[i].name());
    arg->addAttr(llvm::Attribute::NoAlias);
    buffers_[func.params[i].get()] = arg;
  }
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx_, "entry", f);
  builder_.SetInsertPoint(entry);
  return entry;
}

void CodeGenLlvm::Fail(absl::Status status) {
  if (status_.ok()) {
    status_ = std::move(status);
  }
}

void CodeGenLlvm::Emit(const ir::Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kStore:
      EmitStore(s.As<ir::Store>());
      return;
    case StmtKind::kFor:
      EmitFor(s.As<ir::For>());
      return;
    case StmtKind::kBlock:
      for (const ir::Stmt& child : s.As<ir::Block>()->stmts) {
        Emit(child);
      }
      return;
    case StmtKind::kIfThenElse:
      EmitIfThenElse(s.As<ir::IfThenElse>());
      return;
    case StmtKind::kLetStmt:
      EmitLetStmt(s.As<ir::LetStmt>());
      return;
    case StmtKind::kAllocate:
      EmitAllocate(s.As<ir::Allocate>());
      return;
    case StmtKind::kEvaluate:
      EmitEvaluate(s.As<ir::Evaluate>());
      return;
    case StmtKind::kBarrier:
      EmitBarrier(s.As<ir::Barrier>());
      return;
    case StmtKind::kWarpMma:
      EmitWarpMma(s.As<ir::WarpMma>());
      return;
    case StmtKind::kWarpGroupMma:
      EmitWarpGroupMma(s.As<ir::WarpGroupMma>());
      return;
    case StmtKind::kWaveMma:
      EmitWaveMma(s.As<ir::WaveMma>());
      return;
    case StmtKind::kTensorCopy:
      EmitTensorCopy(s.As<ir::TensorCopy>());
      return;
    case StmtKind::kMBarrierOp:
      EmitMBarrierOp(s.As<ir::MBarrierOp>());
      return;
    case StmtKind::kSetMaxRegisters:
      EmitSetMaxRegisters(s.As<ir::SetMaxRegisters>());
      return;
    case StmtKind::kFetchAdd:
      EmitFetchAdd(s.As<ir::FetchAdd>());
      return;
    case StmtKind::kAmxTileOp:
      EmitAmxTileOp(s.As<ir::AmxTileOp>());
      return;
  }
  Fail(absl::InternalError(
      StrCat(target_name_, ": unknown statement kind ", ir::StmtKindName(s.kind()))));
}

void CodeGenLlvm::EmitAmxTileOp(const ir::AmxTileOp* op) {
  Fail(absl::UnimplementedError(
      StrCat(target_name_, ": AMX tile instructions are x86-64 CPU instructions")));
}

void CodeGenLlvm::EmitWarpMma(const ir::WarpMma* op) {
  Fail(absl::UnimplementedError(
      StrCat(target_name_, ": warp_mma is a tensor-core instruction of NVPTX kernels")));
}

void CodeGenLlvm::EmitWarpGroupMma(const ir::WarpGroupMma* op) {
  Fail(absl::UnimplementedError(StrCat(
      target_name_, ": warpgroup_mma is a tensor-core instruction of NVPTX kernels (sm_90a)")));
}

void CodeGenLlvm::EmitWaveMma(const ir::WaveMma* op) {
  Fail(absl::UnimplementedError(
      StrCat(target_name_, ": wave_mma is a matrix instruction of AMDGPU kernels")));
}

void CodeGenLlvm::EmitTensorCopy(const ir::TensorCopy* op) {
  Fail(absl::UnimplementedError(
      StrCat(target_name_, ": tensor_copy is a TMA copy of NVPTX kernels (sm_90a)")));
}

void CodeGenLlvm::EmitSetMaxRegisters(const ir::SetMaxRegisters* op) {
  Fail(absl::UnimplementedError(
      StrCat(target_name_, ": set_max_registers is an NVPTX instruction (sm_90a)")));
}

void CodeGenLlvm::EmitFetchAdd(const ir::FetchAdd* op) {
  Fail(absl::UnimplementedError(
      StrCat(target_name_, ": fetch_add hands results between the blocks of GPU kernels")));
}

void CodeGenLlvm::EmitMBarrierOp(const ir::MBarrierOp* op) {
  Fail(absl::UnimplementedError(
      StrCat(target_name_, ": mbarrier operations are NVPTX instructions (sm_90)")));
}

void CodeGenLlvm::EmitStore(const ir::Store* op) {
  llvm::Value* value = Emit(op->value);
  if (op->valid.defined()) {  // an asynchronous copy stored plainly: zeros where not valid
    value = builder_.CreateSelect(Emit(op->valid), value,
                                  llvm::Constant::getNullValue(value->getType()));
  }
  llvm::Value* base = BufferBase(op->buffer);
  if (op->atomic_add) {
    EmitAtomicAdd(base, op->index, value);
    return;
  }
  if (op->index.type().is_scalar()) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(ElementType(op->buffer), base, Emit(op->index));
    builder_.CreateAlignedStore(value, ptr, ElementAlign(op->buffer));
    return;
  }
  const auto* ramp = op->index.As<ir::Ramp>();
  if (ramp != nullptr && ir::IsConst(ramp->stride, 1)) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(ElementType(op->buffer), base, Emit(ramp->base));
    builder_.CreateAlignedStore(value, ptr, DenseAlignment(op->buffer, ramp->base));
    return;
  }
  EmitScatter(base, Emit(op->index), value, op->index.type().lanes());
}

std::vector<llvm::AtomicRMWInst*> CodeGenLlvm::EmitAtomicAdds(llvm::Value* base, llvm::Value* index,
                                                              llvm::Value* value, int lanes,
                                                              llvm::SyncScope::ID scope) {
  std::vector<llvm::AtomicRMWInst*> adds;
  for (int i = 0; i < lanes; ++i) {
    llvm::Value* at =
        lanes == 1 ? index : builder_.CreateExtractElement(index, static_cast<uint64_t>(i));
    llvm::Value* addend =
        lanes == 1 ? value : builder_.CreateExtractElement(value, static_cast<uint64_t>(i));
    llvm::Value* ptr = builder_.CreateInBoundsGEP(builder_.getFloatTy(), base, at);
    adds.push_back(builder_.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd, ptr, addend, llvm::Align(4),
                                            llvm::AtomicOrdering::Monotonic, scope));
  }
  return adds;
}

void CodeGenLlvm::EmitLetStmt(const ir::LetStmt* op) {
  vars_[op->var.get()] = Emit(op->value);
  Emit(op->body);
  vars_.erase(op->var.get());
}

void CodeGenLlvm::EmitIfThenElse(const ir::IfThenElse* op) {
  llvm::Value* cond = Emit(op->condition);
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "then", function_);
  llvm::BasicBlock* else_bb =
      op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "else") : nullptr;
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "endif");
  builder_.CreateCondBr(cond, then_bb, else_bb != nullptr ? else_bb : merge);
  builder_.SetInsertPoint(then_bb);
  Emit(op->then_case);
  builder_.CreateBr(merge);
  if (else_bb != nullptr) {
    else_bb->insertInto(function_);
    builder_.SetInsertPoint(else_bb);
    Emit(op->else_case);
    builder_.CreateBr(merge);
  }
  merge->insertInto(function_);
  builder_.SetInsertPoint(merge);
}

void CodeGenLlvm::EmitCountedLoop(const ir::For* op) {
  llvm::Value* min = Emit(op->min);
  llvm::Value* extent = Emit(op->extent);
  EmitSerialLoop(op->var, min, builder_.CreateAdd(min, extent), op->body);
}

void CodeGenLlvm::EmitSerialLoop(const ir::Var& var, llvm::Value* begin, llvm::Value* end,
                                 const ir::Stmt& body) {
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, var.name() + ".loop", function_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, var.name() + ".exit");
  builder_.CreateCondBr(builder_.CreateICmpSLT(begin, end), loop, exit);
  builder_.SetInsertPoint(loop);
  llvm::PHINode* phi = builder_.CreatePHI(begin->getType(), 2, var.name());
  phi->addIncoming(begin, preheader);
  vars_[var.get()] = phi;
  Emit(body);
  vars_.erase(var.get());
  llvm::Value* next = builder_.CreateAdd(phi, llvm::ConstantInt::get(begin->getType(), 1),
                                         var.name() + ".next", /*HasNUW=*/false,
                                         /*HasNSW=*/true);
  builder_.CreateCondBr(builder_.CreateICmpSLT(next, end), loop, exit);
  phi->addIncoming(next, builder_.GetInsertBlock());
  exit->insertInto(function_);
  builder_.SetInsertPoint(exit);
}

}  // namespace tune::llvm_backend
