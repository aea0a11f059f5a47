// Statements and functions: IR statement -> LLVM control flow, parallel loops
// -> libgomp.
#include "codegen/llvm/codegen_cpu.h"

#include <set>

#include "codegen/ir/printer.h"
#include "codegen/ir/visitor.h"
#include "codegen/llvm/emit_scalar.h"
#include "codegen/llvm/thread_binding.h"
#include "common/strings.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Intrinsics.h"

namespace tune::llvm_backend {

using ir::ExprKind;
using ir::StmtKind;

namespace {

// The variables and buffers a statement uses, in order of first use.
class UseCollector final : public ir::IrVisitor {
public:
  std::vector<const ir::Variable *> vars;
  std::vector<ir::Buffer> buffers;

protected:
  void Visit(const ir::Variable *op) override {
    if (seen_vars_.insert(op).second) {
      vars.push_back(op);
    }
  }
  void Visit(const ir::Load *op) override {
    Use(op->buffer);
    IrVisitor::Visit(op);
  }
  void Visit(const ir::Store *op) override {
    Use(op->buffer);
    IrVisitor::Visit(op);
  }
  void Visit(const ir::AddressOf *op) override {
    Use(op->buffer);
    IrVisitor::Visit(op);
  }

private:
  void Use(const ir::Buffer &b) {
    if (seen_buffers_.insert(b.get()).second) {
      buffers.push_back(b);
    }
  }
  std::set<const ir::Variable *> seen_vars_;
  std::set<const ir::BufferNode *> seen_buffers_;
};

} // namespace

CodeGenCpu::CodeGenCpu(llvm::Module *module, int threads, std::string cpu,
                       std::string features, ThreadBinding bind)
    : module_(module), ctx_(module->getContext()),
      builder_(module->getContext()), threads_(threads), bind_(bind),
      cpu_(std::move(cpu)), features_(std::move(features)) {
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  builder_.setFastMathFlags(fmf);
}

llvm::Function *CodeGenCpu::NewFunction(const std::string &name,
                                        llvm::FunctionType *type,
                                        bool external) {
  llvm::Function *f =
      llvm::Function::Create(type,
                             external ? llvm::Function::ExternalLinkage
                                      : llvm::Function::InternalLinkage,
                             name, module_);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr("target-cpu", cpu_);
  if (!features_.empty()) {
    f->addFnAttr("target-features", features_);
  }
  created_.push_back(f);
  return f;
}

absl::Status CodeGenCpu::AddFunction(const ir::LoweredFunc &func) {
  std::vector<llvm::Type *> params(func.params.size(), builder_.getPtrTy());
  if (func.stream_param.defined()) {
    params.push_back(builder_.getPtrTy()); // the GPU stream of the host ABI
  }
  llvm::FunctionType *type =
      llvm::FunctionType::get(builder_.getInt32Ty(), params, false);
  llvm::Function *f = module_->getFunction(func.name);
  if (f != nullptr) {
    if (!f->isDeclaration()) {
      return absl::InvalidArgumentError(
          StrCat("CPU codegen: function ", func.name, " is defined twice"));
    }
    if (f->getFunctionType() != type) {
      return absl::InvalidArgumentError(
          StrCat("CPU codegen: ", func.name,
                 " is also called as an external function with "
                 "another signature"));
    }
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr("target-cpu", cpu_);
    if (!features_.empty()) {
      f->addFnAttr("target-features", features_);
    }
    created_.push_back(f);
  } else {
    f = NewFunction(func.name, type, /*external=*/true);
  }
  status_ = absl::OkStatus();
  vars_.clear();
  buffers_.clear();
  function_ = f;
  func_name_ = func.name;
  parallel_count_ = 0;
  max_vector_bits_ = 0;
  for (size_t i = 0; i < func.params.size(); ++i) {
    llvm::Argument *arg = f->getArg(static_cast<unsigned>(i));
    arg->setName(func.params[i].name());
    arg->addAttr(llvm::Attribute::NoAlias);
    buffers_[func.params[i].get()] = arg;
  }
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f));
  if (func.stream_param.defined()) {
    llvm::Argument *stream =
        f->getArg(static_cast<unsigned>(func.params.size()));
    stream->setName(func.stream_param.name());
    vars_[func.stream_param.get()] =
        builder_.CreatePtrToInt(stream, builder_.getInt64Ty());
  }
  Emit(func.body);
  builder_.CreateRet(builder_.getInt32(0));
  if (max_vector_bits_ > 0) {
    // Without it, targets that prefer 256-bit vectors (skylake-avx512) split
    // wider vectors.
    for (llvm::Function *g : created_) {
      g->addFnAttr("min-legal-vector-width", std::to_string(max_vector_bits_));
    }
  }
  created_.clear();
  return status_;
}

void CodeGenCpu::Emit(const ir::Stmt &s) {
  switch (s.kind()) {
  case StmtKind::kStore:
    EmitStore(s.As<ir::Store>());
    return;
  case StmtKind::kFor:
    EmitFor(s.As<ir::For>());
    return;
  case StmtKind::kBlock:
    for (const ir::Stmt &child : s.As<ir::Block>()->stmts) {
      Emit(child);
    }
    return;
  case StmtKind::kIfThenElse:
    EmitIfThenElse(s.As<ir::IfThenElse>());
    return;
  case StmtKind::kLetStmt: {
    const auto *op = s.As<ir::LetStmt>();
    vars_[op->var.get()] = Emit(op->value);
    Emit(op->body);
    vars_.erase(op->var.get());
    return;
  }
  case StmtKind::kAllocate:
    EmitAllocate(s.As<ir::Allocate>());
    return;
  case StmtKind::kEvaluate:
    EmitEvaluate(s.As<ir::Evaluate>());
    return;
  case StmtKind::kBarrier:
    Fail(
        absl::UnimplementedError("CPU codegen: barrier() needs a GPU backend"));
    return;
  }
  Fail(absl::InternalError(StrCat("CPU codegen: expression kind ",
                                  ir::StmtKindName(s.kind()),
                                  " used as a statement")));
}

void CodeGenCpu::EmitStore(const ir::Store *op) {
  llvm::Value *value = Emit(op->value);
  if (op->atomic_add) { // a compare-and-swap loop per lane on x86-64
    EmitAtomicAdds(builder_, BufferBase(op->buffer), Emit(op->index), value,
                   op->index.type().lanes(), llvm::SyncScope::System);
    return;
  }
  if (llvm::Value *ptr = DenseAddress(op->buffer, op->index)) {
    builder_.CreateAlignedStore(value, ptr, llvm::Align(4));
    return;
  }
  llvm::Value *ptrs = builder_.CreateInBoundsGEP(
      builder_.getFloatTy(), BufferBase(op->buffer), Emit(op->index));
  builder_.CreateMaskedScatter(value, ptrs, llvm::Align(4));
}

void CodeGenCpu::EmitFor(const ir::For *op) {
  switch (op->loop_kind) {
  case ir::LoopKind::kGpuBlock:
  case ir::LoopKind::kGpuThread:
    Fail(absl::UnimplementedError(
        StrCat("CPU codegen: ", ir::LoopKindName(op->loop_kind), " loop over ",
               op->var.name(), " needs a GPU backend")));
    return;
  case ir::LoopKind::kParallel:
    if (threads_ > 1) {
      EmitParallelFor(op);
      return;
    }
    break;
  case ir::LoopKind::kSerial:
  case ir::LoopKind::kVectorized: // left serial by VectorizeLoops (or not
                                  // lowered)
  case ir::LoopKind::kUnrolled:
    break;
  }
  llvm::Value *min = Emit(op->min);
  llvm::Value *extent = Emit(op->extent);
  EmitSerialLoop(op->var, min, builder_.CreateAdd(min, extent), op->body);
}

void CodeGenCpu::EmitSerialLoop(const ir::Var &var, llvm::Value *begin,
                                llvm::Value *end, const ir::Stmt &body) {
  llvm::BasicBlock *preheader = builder_.GetInsertBlock();
  llvm::BasicBlock *loop =
      llvm::BasicBlock::Create(ctx_, var.name() + ".loop", function_);
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(ctx_, var.name() + ".exit");
  builder_.CreateCondBr(builder_.CreateICmpSLT(begin, end), loop, exit);
  builder_.SetInsertPoint(loop);
  llvm::PHINode *phi = builder_.CreatePHI(begin->getType(), 2, var.name());
  phi->addIncoming(begin, preheader);
  vars_[var.get()] = phi;
  Emit(body);
  vars_.erase(var.get());
  llvm::Value *next =
      builder_.CreateAdd(phi, llvm::ConstantInt::get(begin->getType(), 1),
                         var.name() + ".next", /*HasNUW=*/false,
                         /*HasNSW=*/true);
  builder_.CreateCondBr(builder_.CreateICmpSLT(next, end), loop, exit);
  phi->addIncoming(next, builder_.GetInsertBlock());
  exit->insertInto(function_);
  builder_.SetInsertPoint(exit);
}

// A parallel loop becomes three pieces:
//   <f>_parN_body(ptr noalias buffers..., captured scalars..., lo, hi): the
//   loop over [lo, hi); <f>_parN(ptr closure): libgomp's task; splits [0,
//   extent) statically by
//     omp_get_thread_num() / omp_get_num_threads() and calls the body on its
//     chunk;
//   in the caller: the closure {buffers..., scalars..., min, extent} on the
//   stack and
//     GOMP_parallel(<f>_parN, &closure, threads, 0).
void CodeGenCpu::EmitParallelFor(const ir::For *op) {
  llvm::Value *min = Emit(op->min);
  llvm::Value *extent = Emit(op->extent);
  llvm::Type *index_type = min->getType();

  UseCollector uses;
  uses.VisitStmt(op->body);
  std::vector<const ir::Variable *> cap_vars;
  for (const ir::Variable *v : uses.vars) {
    if (vars_.count(v) != 0) {
      cap_vars.push_back(v);
    }
  }
  std::vector<ir::Buffer> cap_buffers;
  for (const ir::Buffer &b : uses.buffers) {
    if (buffers_.count(b.get()) != 0) {
      cap_buffers.push_back(b);
    }
  }

  std::vector<llvm::Type *> fields(cap_buffers.size(), builder_.getPtrTy());
  for (const ir::Variable *v : cap_vars) {
    fields.push_back(vars_[v]->getType());
  }
  std::vector<llvm::Type *> body_params = fields;
  body_params.push_back(index_type); // lo
  body_params.push_back(index_type); // hi
  fields.push_back(index_type);      // min
  fields.push_back(index_type);      // extent
  llvm::StructType *closure_type = llvm::StructType::get(ctx_, fields);

  std::string name = StrCat(func_name_, "_par", parallel_count_++);
  llvm::Function *body_fn = NewFunction(
      name + "_body",
      llvm::FunctionType::get(builder_.getVoidTy(), body_params, false), false);
  llvm::Function *task_fn =
      NewFunction(name,
                  llvm::FunctionType::get(builder_.getVoidTy(),
                                          {builder_.getPtrTy()}, false),
                  false);

  // Save the caller's state.
  llvm::IRBuilderBase::InsertPoint caller_ip = builder_.saveIP();
  llvm::Function *caller = function_;
  auto caller_vars = std::move(vars_);
  auto caller_buffers = std::move(buffers_);
  auto caller_heap_buffers = std::move(heap_buffers_);
  heap_buffers_.clear();

  // The body function.
  function_ = body_fn;
  vars_.clear();
  buffers_.clear();
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body_fn));
  unsigned arg = 0;
  for (const ir::Buffer &b : cap_buffers) {
    llvm::Argument *a = body_fn->getArg(arg++);
    a->setName(b.name());
    a->addAttr(llvm::Attribute::NoAlias);
    buffers_[b.get()] = a;
  }
  for (const ir::Variable *v : cap_vars) {
    llvm::Argument *a = body_fn->getArg(arg++);
    a->setName(v->name);
    vars_[v] = a;
  }
  llvm::Value *lo = body_fn->getArg(arg++);
  llvm::Value *hi = body_fn->getArg(arg++);
  EmitSerialLoop(op->var, lo, hi, op->body);
  builder_.CreateRetVoid();

  // The task function.
  function_ = task_fn;
  vars_.clear();
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", task_fn));
  llvm::Value *closure = task_fn->getArg(0);
  std::vector<llvm::Value *> values;
  for (unsigned i = 0; i < fields.size(); ++i) {
    llvm::Value *ptr = builder_.CreateStructGEP(closure_type, closure, i);
    values.push_back(builder_.CreateLoad(fields[i], ptr));
  }
  llvm::Value *task_extent = values.back();
  values.pop_back();
  llvm::Value *task_min = values.back();
  values.pop_back();
  llvm::FunctionCallee thread_num = module_->getOrInsertFunction(
      "omp_get_thread_num",
      llvm::FunctionType::get(builder_.getInt32Ty(), false));
  llvm::FunctionCallee num_threads = module_->getOrInsertFunction(
      "omp_get_num_threads",
      llvm::FunctionType::get(builder_.getInt32Ty(), false));
  llvm::Value *tid32 = builder_.CreateCall(thread_num);
  llvm::Value *nt32 = builder_.CreateCall(num_threads);
  if (bind_ != ThreadBinding::kNone) {
    builder_.CreateCall(ThreadBindingBind(module_, bind_), {tid32, nt32});
  }
  llvm::Value *tid = builder_.CreateSExt(tid32, index_type);
  llvm::Value *nt = builder_.CreateSExt(nt32, index_type);
  llvm::Value *one = llvm::ConstantInt::get(index_type, 1);
  llvm::Value *chunk = builder_.CreateSDiv(
      builder_.CreateAdd(task_extent, builder_.CreateSub(nt, one)), nt);
  llvm::Value *begin = builder_.CreateMul(tid, chunk);
  llvm::Value *end = builder_.CreateBinaryIntrinsic(
      llvm::Intrinsic::smin, builder_.CreateAdd(begin, chunk), task_extent);
  llvm::BasicBlock *run = llvm::BasicBlock::Create(ctx_, "run", task_fn);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "done", task_fn);
  builder_.CreateCondBr(builder_.CreateICmpSLT(begin, end), run, done);
  builder_.SetInsertPoint(run);
  values.push_back(builder_.CreateAdd(task_min, begin));
  values.push_back(builder_.CreateAdd(task_min, end));
  builder_.CreateCall(body_fn, values);
  builder_.CreateBr(done);
  builder_.SetInsertPoint(done);
  builder_.CreateRetVoid();

  // Back in the caller: fill the closure and fork.
  function_ = caller;
  vars_ = std::move(caller_vars);
  buffers_ = std::move(caller_buffers);
  heap_buffers_ = std::move(caller_heap_buffers);
  builder_.restoreIP(caller_ip);
  llvm::AllocaInst *closure_slot = EntryAlloca(closure_type, name + ".closure");
  std::vector<llvm::Value *> field_values;
  for (const ir::Buffer &b : cap_buffers) {
    field_values.push_back(buffers_[b.get()]);
  }
  for (const ir::Variable *v : cap_vars) {
    field_values.push_back(vars_[v]);
  }
  field_values.push_back(min);
  field_values.push_back(extent);
  for (unsigned i = 0; i < field_values.size(); ++i) {
    builder_.CreateStore(field_values[i], builder_.CreateStructGEP(
                                              closure_type, closure_slot, i));
  }
  int threads = threads_;
  if (const auto *c = llvm::dyn_cast<llvm::ConstantInt>(extent)) {
    threads = static_cast<int>(
        std::max<int64_t>(1, std::min<int64_t>(threads, c->getSExtValue())));
  }
  if (bind_ != ThreadBinding::kNone) {
    builder_.CreateCall(
        ThreadBindingCapture(module_)); // while this thread is still unbound
  }
  llvm::FunctionCallee gomp_parallel = module_->getOrInsertFunction(
      "GOMP_parallel",
      llvm::FunctionType::get(builder_.getVoidTy(),
                              {builder_.getPtrTy(), builder_.getPtrTy(),
                               builder_.getInt32Ty(), builder_.getInt32Ty()},
                              false));
  builder_.CreateCall(gomp_parallel,
                      {task_fn, closure_slot,
                       builder_.getInt32(static_cast<uint32_t>(threads)),
                       builder_.getInt32(0)});
}

void CodeGenCpu::EmitIfThenElse(const ir::IfThenElse *op) {
  llvm::Value *cond = Emit(op->condition);
  llvm::BasicBlock *then_bb = llvm::BasicBlock::Create(ctx_, "then", function_);
  llvm::BasicBlock *else_bb = op->else_case.defined()
                                  ? llvm::BasicBlock::Create(ctx_, "else")
                                  : nullptr;
  llvm::BasicBlock *merge = llvm::BasicBlock::Create(ctx_, "endif");
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

llvm::AllocaInst *CodeGenCpu::EntryAlloca(llvm::Type *type,
                                          const std::string &name) {
  llvm::BasicBlock &entry = function_->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  llvm::AllocaInst *slot = at_entry.CreateAlloca(type, nullptr, name);
  slot->setAlignment(llvm::Align(64));
  return slot;
}

// Stack (and gpu_local) buffers up to kMaxStackAllocationBytes are allocas in
// the entry block of the enclosing function, so an allocation inside a loop
// reuses one slot and one inside a parallel body is private to each thread (the
// body is its own function). Larger buffers are aligned_alloc(64, ...) before
// the body and free()d after it; a failed allocation traps.
void CodeGenCpu::EmitAllocate(const ir::Allocate *op) {
  if (op->buffer.scope() == ir::MemoryScope::kGpuShared ||
      op->buffer.scope() == ir::MemoryScope::kGlobal) {
    Fail(absl::UnimplementedError(
        StrCat("CPU codegen: cannot allocate ", op->buffer.name(), " in ",
               ir::MemoryScopeName(op->buffer.scope()), " memory")));
    return;
  }
  int64_t bytes = op->size * 4;
  if (bytes <= kMaxStackAllocationBytes) {
    buffers_[op->buffer.get()] =
        EntryAlloca(llvm::ArrayType::get(builder_.getFloatTy(),
                                         static_cast<uint64_t>(op->size)),
                    op->buffer.name());
    Emit(op->body);
    buffers_.erase(op->buffer.get());
    return;
  }
  llvm::FunctionCallee aligned_alloc = module_->getOrInsertFunction(
      "aligned_alloc",
      llvm::FunctionType::get(builder_.getPtrTy(),
                              {builder_.getInt64Ty(), builder_.getInt64Ty()},
                              false));
  llvm::FunctionCallee free_fn = module_->getOrInsertFunction(
      "free", llvm::FunctionType::get(builder_.getVoidTy(),
                                      {builder_.getPtrTy()}, false));
  int64_t rounded = (bytes + 63) / 64 * 64;
  llvm::Value *ptr =
      builder_.CreateCall(aligned_alloc,
                          {builder_.getInt64(64),
                           builder_.getInt64(static_cast<uint64_t>(rounded))},
                          op->buffer.name());
  llvm::BasicBlock *fail =
      llvm::BasicBlock::Create(ctx_, op->buffer.name() + ".oom", function_);
  llvm::BasicBlock *ok =
      llvm::BasicBlock::Create(ctx_, op->buffer.name() + ".ok", function_);
  builder_.CreateCondBr(builder_.CreateIsNull(ptr), fail, ok);
  builder_.SetInsertPoint(fail);
  builder_.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
  builder_.CreateUnreachable();
  builder_.SetInsertPoint(ok);
  buffers_[op->buffer.get()] = ptr;
  heap_buffers_.push_back(ptr);
  Emit(op->body);
  heap_buffers_.pop_back();
  buffers_.erase(op->buffer.get());
  builder_.CreateCall(free_fn, {ptr});
}

// A status that is returned on error: non-zero frees the live heap buffers and
// returns it (the verifier keeps such statements out of parallel bodies, so
// this is the kernel's own frame).
void CodeGenCpu::EmitEvaluate(const ir::Evaluate *op) {
  llvm::Value *value = Emit(op->value);
  if (!op->return_on_error) {
    return;
  }
  llvm::BasicBlock *failed =
      llvm::BasicBlock::Create(ctx_, "status.failed", function_);
  llvm::BasicBlock *ok = llvm::BasicBlock::Create(ctx_, "status.ok", function_);
  builder_.CreateCondBr(builder_.CreateICmpNE(value, builder_.getInt32(0)),
                        failed, ok);
  builder_.SetInsertPoint(failed);
  llvm::FunctionCallee free_fn = module_->getOrInsertFunction(
      "free", llvm::FunctionType::get(builder_.getVoidTy(),
                                      {builder_.getPtrTy()}, false));
  for (auto it = heap_buffers_.rbegin(); it != heap_buffers_.rend(); ++it) {
    builder_.CreateCall(free_fn, {*it});
  }
  builder_.CreateRet(value);
  builder_.SetInsertPoint(ok);
}

} // namespace tune::llvm_backend
