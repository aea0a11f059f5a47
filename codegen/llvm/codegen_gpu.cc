// GPU statements and kernels: GPU loops -> block/thread index reads, gpu_shared -> addrspace(3)
// arrays, gpu_local -> entry-block allocas, Barrier -> the target's block barrier.
#include "codegen/llvm/codegen_gpu.h"

#include "codegen/ir/printer.h"
#include "codegen/llvm/emit_scalar.h"
#include "common/strings.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"

namespace tune::llvm_backend {

using ir::ExprKind;
using ir::StmtKind;

namespace {

constexpr unsigned kGlobalAddressSpace = 1;  // NVPTX and AMDGPU agree on 1 (global), 3 (shared)
constexpr unsigned kSharedAddressSpace = 3;

}  // namespace

CodeGenGpu::CodeGenGpu(llvm::Module* module, const GpuArch& arch)
    : module_(module), ctx_(module->getContext()), builder_(module->getContext()), arch_(arch) {
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  builder_.setFastMathFlags(fmf);
}

absl::Status CodeGenGpu::AddKernel(const ir::LoweredFunc& func, const GpuLaunch& launch) {
  if (module_->getFunction(func.name) != nullptr) {
    return absl::InvalidArgumentError(
        StrCat("GPU codegen: kernel ", func.name, " is defined twice"));
  }
  std::vector<llvm::Type*> params(func.params.size(),
                                  llvm::PointerType::get(ctx_, kGlobalAddressSpace));
  llvm::FunctionType* type = llvm::FunctionType::get(builder_.getVoidTy(), params, false);
  llvm::Function* f =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, func.name, module_);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr("target-cpu", arch_.llvm_cpu);
  if (!arch_.llvm_features.empty()) {
    f->addFnAttr("target-features", arch_.llvm_features);
  }
  AnnotateKernel(f, launch);

  status_ = absl::OkStatus();
  vars_.clear();
  multiples_.clear();
  buffers_.clear();
  function_ = f;
  func_name_ = func.name;
  for (size_t i = 0; i < func.params.size(); ++i) {
    llvm::Argument* arg = f->getArg(static_cast<unsigned>(i));
    arg->setName(func.params[i].name());
    arg->addAttr(llvm::Attribute::NoAlias);
    buffers_[func.params[i].get()] = arg;
  }
  entry_ = llvm::BasicBlock::Create(ctx_, "entry", f);
  builder_.SetInsertPoint(entry_);
  Emit(func.body);
  builder_.CreateRetVoid();
  return status_;
}

// NVPTX: !nvvm.annotations marks the kernel and its maximum block size (.maxntid). AMDGPU: the
// amdgpu_kernel calling convention and the flat work-group size bound the register budget.
void CodeGenGpu::AnnotateKernel(llvm::Function* f, const GpuLaunch& launch) {
  if (nvptx()) {
    llvm::NamedMDNode* annotations = module_->getOrInsertNamedMetadata("nvvm.annotations");
    auto add = [&](const char* key, uint32_t value) {
      llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx_, key),
                               llvm::ValueAsMetadata::get(builder_.getInt32(value))};
      annotations->addOperand(llvm::MDNode::get(ctx_, ops));
    };
    add("kernel", 1);
    add("maxntidx", launch.block[0]);
    add("maxntidy", launch.block[1]);
    add("maxntidz", launch.block[2]);
    return;
  }
  f->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  f->addFnAttr("amdgpu-flat-work-group-size", StrCat("1,", launch.ThreadsPerBlock()));
  f->addFnAttr("uniform-work-group-size", "true");
}

void CodeGenGpu::Emit(const ir::Stmt& s) {
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
    case StmtKind::kLetStmt: {
      const auto* op = s.As<ir::LetStmt>();
      vars_[op->var.get()] = Emit(op->value);
      if (op->value.type().is_int() && op->value.type().is_scalar()) {
        multiples_[op->var.get()] = KnownMultiple(op->value, multiples_);
      }
      Emit(op->body);
      vars_.erase(op->var.get());
      multiples_.erase(op->var.get());
      return;
    }
    case StmtKind::kAllocate:
      EmitAllocate(s.As<ir::Allocate>());
      return;
    case StmtKind::kEvaluate:
      Fail(absl::UnimplementedError(StrCat("GPU codegen: kernel ", func_name_, " evaluates `",
                                           ir::ToText(s.As<ir::Evaluate>()->value),
                                           "`; GPU kernels cannot call host code")));
      return;
    case StmtKind::kBarrier:
      EmitBarrier(s.As<ir::Barrier>());
      return;
  }
  Fail(absl::InternalError(
      StrCat("GPU codegen: expression kind ", ir::StmtKindName(s.kind()), " used as a statement")));
}

void CodeGenGpu::EmitStore(const ir::Store* op) {
  if (op->async_copy && nvptx() && !ir::IsConst(op->value, 0.0)) {
    EmitAsyncCopy(op);
    return;
  }
  // Elsewhere an asynchronous copy is a plain store: it is complete before any barrier (so is
  // one that simplification reduced to zeros).
  llvm::Value* value = Emit(op->value);
  llvm::Value* base = BufferBase(op->buffer);
  if (op->atomic_add) {
    EmitAtomicAdd(base, op->index, value);
    return;
  }
  if (op->index.type().is_scalar()) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(builder_.getFloatTy(), base, Emit(op->index));
    builder_.CreateAlignedStore(value, ptr, llvm::Align(4));
    return;
  }
  const auto* ramp = op->index.As<ir::Ramp>();
  if (ramp != nullptr && ir::IsConst(ramp->stride, 1)) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(builder_.getFloatTy(), base, Emit(ramp->base));
    builder_.CreateAlignedStore(value, ptr, DenseAlignment(op->buffer, ramp->base));
    return;
  }
  // A scatter: lane by lane.
  llvm::Value* index = Emit(op->index);
  for (int i = 0; i < op->index.type().lanes(); ++i) {
    llvm::Value* lane = builder_.CreateExtractElement(index, static_cast<uint64_t>(i));
    llvm::Value* ptr = builder_.CreateInBoundsGEP(builder_.getFloatTy(), base, lane);
    builder_.CreateAlignedStore(builder_.CreateExtractElement(value, static_cast<uint64_t>(i)), ptr,
                                llvm::Align(4));
  }
}

// cp.async.ca.shared.global of 4, 8 or 16 bytes (cg for 16: past L1, as the data is staged in
// shared memory anyway), the .s form with a source size of 0 where the copy is not valid: the
// destination is zero-filled and nothing is read. The verifier checked the form
// (Store::MakeAsyncCopy): value Load(src, i) or Select(valid, Load(src, i), 0).
void CodeGenGpu::EmitAsyncCopy(const ir::Store* op) {
  const ir::Expr* value = &op->value;
  ir::Expr valid;
  if (const auto* select = value->As<ir::Select>()) {
    valid = select->condition;
    value = &select->true_value;
  }
  const auto* load = value->As<ir::Load>();
  const int lanes = op->index.type().lanes();
  auto base_of = [](const ir::Expr& index) {
    const auto* ramp = index.As<ir::Ramp>();
    return ramp != nullptr ? ramp->base : index;
  };
  llvm::Value* dst = builder_.CreateInBoundsGEP(builder_.getFloatTy(), BufferBase(op->buffer),
                                                Emit(base_of(op->index)));
  llvm::Value* src = builder_.CreateInBoundsGEP(builder_.getFloatTy(), BufferBase(load->buffer),
                                                Emit(base_of(load->index)));
  static constexpr llvm::Intrinsic::ID kCopy[3][2] = {
      {llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4,
       llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s},
      {llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8,
       llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s},
      {llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16,
       llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s}};
  const int row = lanes == 4 ? 2 : lanes - 1;
  if (!valid.defined()) {
    builder_.CreateIntrinsic(kCopy[row][0], {}, {dst, src});
    return;
  }
  llvm::Value* bytes =
      builder_.CreateSelect(Emit(valid), builder_.getInt32(4 * lanes), builder_.getInt32(0));
  builder_.CreateIntrinsic(kCopy[row][1], {}, {dst, src, bytes});
}

// One relaxed atomicrmw fadd per lane (red.global.add.f32 on NVPTX, global_atomic_add_f32 on
// AMDGPU). Device buffers come from cuMemAlloc / hipMalloc, which are not fine-grained host
// memory, and a partial sum may lose a denormal (gfx90a's float atomics flush them): AMDGPU's
// metadata says both, which lets it use the hardware instruction instead of a compare-and-swap
// loop.
void CodeGenGpu::EmitAtomicAdd(llvm::Value* base, const ir::Expr& index_expr, llvm::Value* value) {
  // The adds only need to agree within the device (the blocks of one kernel).
  const llvm::SyncScope::ID scope =
      nvptx() ? llvm::SyncScope::ID{llvm::SyncScope::System} : ctx_.getOrInsertSyncScopeID("agent");
  std::vector<llvm::AtomicRMWInst*> adds =
      EmitAtomicAdds(builder_, base, Emit(index_expr), value, index_expr.type().lanes(), scope);
  if (nvptx()) {
    return;
  }
  for (llvm::AtomicRMWInst* rmw : adds) {
    rmw->setMetadata("amdgpu.no.fine.grained.memory", llvm::MDNode::get(ctx_, {}));
    rmw->setMetadata("amdgpu.ignore.denormal.mode", llvm::MDNode::get(ctx_, {}));
  }
  // gfx90a's backend still wants the function-level permission.
  function_->addFnAttr("amdgpu-unsafe-fp-atomics", "true");
}

// The block index (ctaid / workgroup.id) or thread index (tid / workitem.id) on one axis, as an
// int64. GpuLaunchOf made every GPU loop start at 0 with the launch's extent, so the loop
// variable is the index itself.
llvm::Value* CodeGenGpu::GpuIndex(bool block, int axis) {
  static constexpr llvm::Intrinsic::ID kNvptx[2][3] = {
      {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z}};
  static constexpr llvm::Intrinsic::ID kAmdgpu[2][3] = {
      {llvm::Intrinsic::amdgcn_workitem_id_x, llvm::Intrinsic::amdgcn_workitem_id_y,
       llvm::Intrinsic::amdgcn_workitem_id_z},
      {llvm::Intrinsic::amdgcn_workgroup_id_x, llvm::Intrinsic::amdgcn_workgroup_id_y,
       llvm::Intrinsic::amdgcn_workgroup_id_z}};
  llvm::Intrinsic::ID id = nvptx() ? kNvptx[block ? 1 : 0][axis] : kAmdgpu[block ? 1 : 0][axis];
  llvm::Value* index = builder_.CreateIntrinsic(id, {}, {});
  return builder_.CreateZExt(index, builder_.getInt64Ty());
}

void CodeGenGpu::EmitFor(const ir::For* op) {
  if (ir::IsGpuLoop(op->loop_kind)) {
    llvm::Value* index = GpuIndex(op->loop_kind == ir::LoopKind::kGpuBlock, op->thread_axis);
    index->setName(op->var.name());
    vars_[op->var.get()] = index;
    Emit(op->body);
    vars_.erase(op->var.get());
    return;
  }
  // Serial, unrolled and vectorized loops that the passes left: a counted loop.
  llvm::Value* begin = Emit(op->min);
  llvm::Value* end = builder_.CreateAdd(begin, Emit(op->extent));
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, op->var.name() + ".loop", function_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, op->var.name() + ".exit");
  builder_.CreateCondBr(builder_.CreateICmpSLT(begin, end), loop, exit);
  builder_.SetInsertPoint(loop);
  llvm::PHINode* phi = builder_.CreatePHI(begin->getType(), 2, op->var.name());
  phi->addIncoming(begin, preheader);
  vars_[op->var.get()] = phi;
  Emit(op->body);
  vars_.erase(op->var.get());
  llvm::Value* next = builder_.CreateAdd(phi, llvm::ConstantInt::get(begin->getType(), 1),
                                         op->var.name() + ".next", /*HasNUW=*/false,
                                         /*HasNSW=*/true);
  builder_.CreateCondBr(builder_.CreateICmpSLT(next, end), loop, exit);
  phi->addIncoming(next, builder_.GetInsertBlock());
  exit->insertInto(function_);
  builder_.SetInsertPoint(exit);
}

void CodeGenGpu::EmitIfThenElse(const ir::IfThenElse* op) {
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

// gpu_shared: a module-level addrspace(3) array per allocation (static shared memory, 16-byte
// aligned), named <kernel>_<buffer>. gpu_local: an alloca in the entry block (addrspace 5 on
// AMDGPU), which SROA / mem2reg turn into registers when every index is a constant.
void CodeGenGpu::EmitAllocate(const ir::Allocate* op) {
  llvm::Type* type = llvm::ArrayType::get(builder_.getFloatTy(), static_cast<uint64_t>(op->size));
  llvm::Value* storage = nullptr;
  switch (op->buffer.scope()) {
    case ir::MemoryScope::kGpuShared: {
      auto* global = new llvm::GlobalVariable(
          *module_, type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
          llvm::UndefValue::get(type), StrCat(func_name_, "_", op->buffer.name()), nullptr,
          llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
      global->setAlignment(llvm::Align(kGpuArrayAlignment));
      storage = global;
      break;
    }
    case ir::MemoryScope::kGpuLocal: {
      llvm::IRBuilder<> at_entry(entry_, entry_->begin());
      llvm::AllocaInst* slot = at_entry.CreateAlloca(
          type, module_->getDataLayout().getAllocaAddrSpace(), nullptr, op->buffer.name());
      slot->setAlignment(llvm::Align(kGpuArrayAlignment));
      storage = slot;
      break;
    }
    case ir::MemoryScope::kGlobal:
    case ir::MemoryScope::kStack:
      Fail(absl::InvalidArgumentError(StrCat("GPU codegen: cannot allocate ", op->buffer.name(),
                                             " in ", ir::MemoryScopeName(op->buffer.scope()),
                                             " memory (use gpu_shared or gpu_local)")));
      return;
  }
  buffers_[op->buffer.get()] = storage;
  Emit(op->body);
  buffers_.erase(op->buffer.get());
}

// NVPTX: bar.sync 0. AMDGPU: a workgroup-scope release fence, s_barrier, an acquire fence (what
// HIP's __syncthreads() is), so that shared-memory writes before it are seen after it.
void CodeGenGpu::EmitBarrier(const ir::Barrier* op) {
  if (nvptx()) {
    if (op->commit_async) {
      builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
    }
    if (op->wait_async >= 0) {
      builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                               {builder_.getInt32(op->wait_async)});
    }
    builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    return;
  }
  llvm::SyncScope::ID workgroup = ctx_.getOrInsertSyncScopeID("workgroup");
  builder_.CreateFence(llvm::AtomicOrdering::Release, workgroup);
  builder_.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
  builder_.CreateFence(llvm::AtomicOrdering::Acquire, workgroup);
}

}  // namespace tune::llvm_backend
