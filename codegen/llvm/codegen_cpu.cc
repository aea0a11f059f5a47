// The x86-64 emitter: functions of the C ABI, parallel loops -> libgomp, stack and heap
// allocations, external calls, returned statuses, masked gathers and scatters.
#include "codegen/llvm/codegen_cpu.h"

#include <set>

#include "codegen/ir/printer.h"
#include "codegen/ir/visitor.h"
#include "codegen/llvm/thread_binding.h"
#include "common/strings.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Intrinsics.h"

namespace tune::llvm_backend {

namespace {

// The variables and buffers a statement uses, in order of first use.
class UseCollector final : public ir::IrVisitor {
 public:
  std::vector<const ir::Variable*> vars;
  std::vector<ir::Buffer> buffers;

 protected:
  void Visit(const ir::Variable* op) override {
    if (seen_vars_.insert(op).second) {
      vars.push_back(op);
    }
  }
  void Visit(const ir::Load* op) override {
    Use(op->buffer);
    IrVisitor::Visit(op);
  }
  void Visit(const ir::Store* op) override {
    Use(op->buffer);
    IrVisitor::Visit(op);
  }
  void Visit(const ir::AddressOf* op) override {
    Use(op->buffer);
    IrVisitor::Visit(op);
  }
  void Visit(const ir::AmxTileOp* op) override {
    if (op->buffer.defined()) {
      Use(op->buffer);
    }
    IrVisitor::Visit(op);
  }

 private:
  void Use(const ir::Buffer& b) {
    if (seen_buffers_.insert(b.get()).second) {
      buffers.push_back(b);
    }
  }
  std::set<const ir::Variable*> seen_vars_;
  std::set<const ir::BufferNode*> seen_buffers_;
};

}  // namespace

CodeGenCpu::CodeGenCpu(llvm::Module* module, int threads, std::string cpu, std::string features,
                       ThreadBinding bind)
    : CodeGenLlvm(module, "CPU codegen", std::move(cpu), std::move(features)),
      threads_(threads),
      bind_(bind) {}

llvm::Function* CodeGenCpu::NewFunction(const std::string& name, llvm::FunctionType* type,
                                        bool external) {
  llvm::Function* f = llvm::Function::Create(
      type, external ? llvm::Function::ExternalLinkage : llvm::Function::InternalLinkage, name,
      module_);
  AddTargetAttributes(f);
  created_.push_back(f);
  return f;
}

absl::Status CodeGenCpu::AddFunction(const ir::LoweredFunc& func) {
  std::vector<llvm::Type*> params(func.params.size(), builder_.getPtrTy());
  if (func.stream_param.defined()) {
    params.push_back(builder_.getPtrTy());  // the GPU stream of the host ABI
  }
  llvm::FunctionType* type = llvm::FunctionType::get(builder_.getInt32Ty(), params, false);
  llvm::Function* f = module_->getFunction(func.name);
  if (f != nullptr) {
    if (!f->isDeclaration()) {
      return absl::InvalidArgumentError(
          StrCat("CPU codegen: function ", func.name, " is defined twice"));
    }
    if (f->getFunctionType() != type) {
      return absl::InvalidArgumentError(StrCat("CPU codegen: ", func.name,
                                               " is also called as an external function with "
                                               "another signature"));
    }
    AddTargetAttributes(f);
    created_.push_back(f);
  } else {
    f = NewFunction(func.name, type, /*external=*/true);
  }
  parallel_count_ = 0;
  BeginFunction(f, func);
  EmitAmxPermission(func);
  if (func.stream_param.defined()) {
    llvm::Argument* stream = f->getArg(static_cast<unsigned>(func.params.size()));
    stream->setName(func.stream_param.name());
    vars_[func.stream_param.get()] = builder_.CreatePtrToInt(stream, builder_.getInt64Ty());
  }
  Emit(func.body);
  builder_.CreateRet(builder_.getInt32(0));
  if (max_vector_bits_ > 0) {
    // Without it, targets that prefer 256-bit vectors (skylake-avx512) split wider vectors.
    for (llvm::Function* g : created_) {
      g->addFnAttr("min-legal-vector-width", std::to_string(max_vector_bits_));
    }
  }
  created_.clear();
  return status_;
}

void CodeGenCpu::EmitFor(const ir::For* op) {
  switch (op->loop_kind) {
    case ir::LoopKind::kGpuBlock:
    case ir::LoopKind::kGpuThread:
      Fail(absl::UnimplementedError(StrCat("CPU codegen: ", ir::LoopKindName(op->loop_kind),
                                           " loop over ", op->var.name(), " needs a GPU backend")));
      return;
    case ir::LoopKind::kParallel:
      if (threads_ > 1) {
        EmitParallelFor(op);
        return;
      }
      break;
    case ir::LoopKind::kSerial:
    case ir::LoopKind::kVectorized:  // left serial by VectorizeLoops (or not lowered)
    case ir::LoopKind::kUnrolled:
      break;
  }
  EmitCountedLoop(op);
}

// A parallel loop becomes three pieces:
//   <f>_parN_body(ptr noalias buffers..., captured scalars..., lo, hi): the loop over [lo, hi);
//   <f>_parN(ptr closure): libgomp's task; splits [0, extent) statically by
//     omp_get_thread_num() / omp_get_num_threads() and calls the body on its chunk;
//   in the caller: the closure {buffers..., scalars..., min, extent} on the stack and
//     GOMP_parallel(<f>_parN, &closure, threads, 0).
void CodeGenCpu::EmitParallelFor(const ir::For* op) {
  llvm::Value* min = Emit(op->min);
  llvm::Value* extent = Emit(op->extent);
  llvm::Type* index_type = min->getType();

  UseCollector uses;
  uses.VisitStmt(op->body);
  std::vector<const ir::Variable*> cap_vars;
  for (const ir::Variable* v : uses.vars) {
    if (vars_.count(v) != 0) {
      cap_vars.push_back(v);
    }
  }
  std::vector<ir::Buffer> cap_buffers;
  for (const ir::Buffer& b : uses.buffers) {
    if (buffers_.count(b.get()) != 0) {
      cap_buffers.push_back(b);
    }
  }

  std::vector<llvm::Type*> fields(cap_buffers.size(), builder_.getPtrTy());
  for (const ir::Variable* v : cap_vars) {
    fields.push_back(vars_[v]->getType());
  }
  std::vector<llvm::Type*> body_params = fields;
  body_params.push_back(index_type);  // lo
  body_params.push_back(index_type);  // hi
  fields.push_back(index_type);       // min
  fields.push_back(index_type);       // extent
  llvm::StructType* closure_type = llvm::StructType::get(ctx_, fields);

  std::string name = StrCat(func_name_, "_par", parallel_count_++);
  llvm::Function* body_fn = NewFunction(
      name + "_body", llvm::FunctionType::get(builder_.getVoidTy(), body_params, false), false);
  llvm::Function* task_fn = NewFunction(
      name, llvm::FunctionType::get(builder_.getVoidTy(), {builder_.getPtrTy()}, false), false);

  // Save the caller's state.
  llvm::IRBuilderBase::InsertPoint caller_ip = builder_.saveIP();
  llvm::Function* caller = function_;
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
  for (const ir::Buffer& b : cap_buffers) {
    llvm::Argument* a = body_fn->getArg(arg++);
    a->setName(b.name());
    a->addAttr(llvm::Attribute::NoAlias);
    buffers_[b.get()] = a;
  }
  for (const ir::Variable* v : cap_vars) {
    llvm::Argument* a = body_fn->getArg(arg++);
    a->setName(v->name);
    vars_[v] = a;
  }
  llvm::Value* lo = body_fn->getArg(arg++);
  llvm::Value* hi = body_fn->getArg(arg++);
  EmitSerialLoop(op->var, lo, hi, op->body);
  builder_.CreateRetVoid();

  // The task function.
  function_ = task_fn;
  vars_.clear();
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", task_fn));
  llvm::Value* closure = task_fn->getArg(0);
  std::vector<llvm::Value*> values;
  for (unsigned i = 0; i < fields.size(); ++i) {
    llvm::Value* ptr = builder_.CreateStructGEP(closure_type, closure, i);
    values.push_back(builder_.CreateLoad(fields[i], ptr));
  }
  llvm::Value* task_extent = values.back();
  values.pop_back();
  llvm::Value* task_min = values.back();
  values.pop_back();
  llvm::FunctionCallee thread_num = module_->getOrInsertFunction(
      "omp_get_thread_num", llvm::FunctionType::get(builder_.getInt32Ty(), false));
  llvm::FunctionCallee num_threads = module_->getOrInsertFunction(
      "omp_get_num_threads", llvm::FunctionType::get(builder_.getInt32Ty(), false));
  llvm::Value* tid32 = builder_.CreateCall(thread_num);
  llvm::Value* nt32 = builder_.CreateCall(num_threads);
  if (bind_ != ThreadBinding::kNone) {
    builder_.CreateCall(ThreadBindingBind(module_, bind_), {tid32, nt32});
  }
  llvm::Value* tid = builder_.CreateSExt(tid32, index_type);
  llvm::Value* nt = builder_.CreateSExt(nt32, index_type);
  llvm::Value* one = llvm::ConstantInt::get(index_type, 1);
  llvm::Value* chunk =
      builder_.CreateSDiv(builder_.CreateAdd(task_extent, builder_.CreateSub(nt, one)), nt);
  llvm::Value* begin = builder_.CreateMul(tid, chunk);
  llvm::Value* end = builder_.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                                    builder_.CreateAdd(begin, chunk), task_extent);
  llvm::BasicBlock* run = llvm::BasicBlock::Create(ctx_, "run", task_fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "done", task_fn);
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
  llvm::AllocaInst* closure_slot = EntryAlloca(closure_type, name + ".closure");
  std::vector<llvm::Value*> field_values;
  for (const ir::Buffer& b : cap_buffers) {
    field_values.push_back(buffers_[b.get()]);
  }
  for (const ir::Variable* v : cap_vars) {
    field_values.push_back(vars_[v]);
  }
  field_values.push_back(min);
  field_values.push_back(extent);
  for (unsigned i = 0; i < field_values.size(); ++i) {
    builder_.CreateStore(field_values[i], builder_.CreateStructGEP(closure_type, closure_slot, i));
  }
  int threads = threads_;
  if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(extent)) {
    threads = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, c->getSExtValue())));
  }
  if (bind_ != ThreadBinding::kNone) {
    builder_.CreateCall(ThreadBindingCapture(module_));  // while this thread is still unbound
  }
  llvm::FunctionCallee gomp_parallel = module_->getOrInsertFunction(
      "GOMP_parallel", llvm::FunctionType::get(builder_.getVoidTy(),
                                               {builder_.getPtrTy(), builder_.getPtrTy(),
                                                builder_.getInt32Ty(), builder_.getInt32Ty()},
                                               false));
  builder_.CreateCall(gomp_parallel,
                      {task_fn, closure_slot, builder_.getInt32(static_cast<uint32_t>(threads)),
                       builder_.getInt32(0)});
}

llvm::AllocaInst* CodeGenCpu::EntryAlloca(llvm::Type* type, const std::string& name) {
  llvm::BasicBlock& entry = function_->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  llvm::AllocaInst* slot = at_entry.CreateAlloca(type, nullptr, name);
  slot->setAlignment(llvm::Align(64));
  return slot;
}

// Stack (and gpu_local) buffers up to kMaxStackAllocationBytes are allocas in the entry block of
// the enclosing function, so an allocation inside a loop reuses one slot and one inside a
// parallel body is private to each thread (the body is its own function). Larger buffers are
// aligned_alloc(64, ...) before the body and free()d after it; a failed allocation traps.
void CodeGenCpu::EmitAllocate(const ir::Allocate* op) {
  if (op->buffer.scope() == ir::MemoryScope::kGpuShared ||
      op->buffer.scope() == ir::MemoryScope::kGlobal) {
    Fail(absl::UnimplementedError(StrCat("CPU codegen: cannot allocate ", op->buffer.name(), " in ",
                                         ir::MemoryScopeName(op->buffer.scope()), " memory")));
    return;
  }
  int64_t bytes = op->size * op->buffer.element_type().Bytes();
  if (bytes <= kMaxStackAllocationBytes) {
    buffers_[op->buffer.get()] =
        EntryAlloca(llvm::ArrayType::get(ElementType(op->buffer), static_cast<uint64_t>(op->size)),
                    op->buffer.name());
    Emit(op->body);
    buffers_.erase(op->buffer.get());
    return;
  }
  llvm::FunctionCallee aligned_alloc = module_->getOrInsertFunction(
      "aligned_alloc",
      llvm::FunctionType::get(builder_.getPtrTy(), {builder_.getInt64Ty(), builder_.getInt64Ty()},
                              false));
  llvm::FunctionCallee free_fn = module_->getOrInsertFunction(
      "free", llvm::FunctionType::get(builder_.getVoidTy(), {builder_.getPtrTy()}, false));
  int64_t rounded = (bytes + 63) / 64 * 64;
  llvm::Value* ptr = builder_.CreateCall(
      aligned_alloc, {builder_.getInt64(64), builder_.getInt64(static_cast<uint64_t>(rounded))},
      op->buffer.name());
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(ctx_, op->buffer.name() + ".oom", function_);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_, op->buffer.name() + ".ok", function_);
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

// A status that is returned on error: non-zero frees the live heap buffers and returns it (the
// verifier keeps such statements out of parallel bodies, so this is the kernel's own frame).
void CodeGenCpu::EmitEvaluate(const ir::Evaluate* op) {
  llvm::Value* value = Emit(op->value);
  if (!op->return_on_error) {
    return;
  }
  llvm::BasicBlock* failed = llvm::BasicBlock::Create(ctx_, "status.failed", function_);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_, "status.ok", function_);
  builder_.CreateCondBr(builder_.CreateICmpNE(value, builder_.getInt32(0)), failed, ok);
  builder_.SetInsertPoint(failed);
  llvm::FunctionCallee free_fn = module_->getOrInsertFunction(
      "free", llvm::FunctionType::get(builder_.getVoidTy(), {builder_.getPtrTy()}, false));
  for (auto it = heap_buffers_.rbegin(); it != heap_buffers_.rend(); ++it) {
    builder_.CreateCall(free_fn, {*it});
  }
  builder_.CreateRet(value);
  builder_.SetInsertPoint(ok);
}

void CodeGenCpu::EmitBarrier(const ir::Barrier* op) {
  Fail(absl::UnimplementedError("CPU codegen: barrier() needs a GPU backend"));
}

// A compare-and-swap loop per lane on x86-64.
void CodeGenCpu::EmitAtomicAdd(llvm::Value* base, const ir::Expr& index, llvm::Value* value) {
  EmitAtomicAdds(base, Emit(index), value, index.type().lanes(), llvm::SyncScope::System);
}

// Dense accesses assume only the element's own alignment.
llvm::Align CodeGenCpu::DenseAlignment(const ir::Buffer& buffer, const ir::Expr& base) {
  return ElementAlign(buffer);
}

llvm::Value* CodeGenCpu::EmitGather(llvm::Type* type, llvm::Value* base, llvm::Value* index,
                                    int lanes) {
  llvm::Type* element = type->getScalarType();
  llvm::Value* ptrs = builder_.CreateInBoundsGEP(element, base, index);
  return builder_.CreateMaskedGather(type, ptrs, ScalarAlign(element));
}

void CodeGenCpu::EmitScatter(llvm::Value* base, llvm::Value* index, llvm::Value* value, int lanes) {
  llvm::Type* element = value->getType()->getScalarType();
  llvm::Value* ptrs = builder_.CreateInBoundsGEP(element, base, index);
  builder_.CreateMaskedScatter(value, ptrs, ScalarAlign(element));
}

llvm::Value* CodeGenCpu::EmitAddressOf(const ir::AddressOf* op) {
  return builder_.CreateInBoundsGEP(ElementType(op->buffer), BufferBase(op->buffer),
                                    Emit(op->index));
}

llvm::Value* CodeGenCpu::EmitCallExtern(const ir::CallExtern* op) {
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
