// The NVPTX / AMDGPU emitter: kernels, GPU loops -> block/thread index reads, gpu_shared ->
// addrspace(3) arrays, gpu_local -> entry-block allocas, Barrier -> the target's block barrier,
// asynchronous copies, device-scope atomic adds, lane-by-lane gathers and scatters, and the
// alignment of dense accesses that KnownMultiple proves.
#include "codegen/llvm/codegen_gpu.h"

#include <algorithm>
#include <bit>

#include "codegen/ir/printer.h"
#include "codegen/llvm/gpu_launch.h"
#include "common/strings.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"

namespace tune::llvm_backend {

namespace {

using ir::ExprKind;

constexpr unsigned kGlobalAddressSpace = 1;  // NVPTX and AMDGPU agree on 1 (global), 3 (shared)
constexpr unsigned kSharedAddressSpace = 3;

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
    case ExprKind::kReinterpret:
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
    case ExprKind::kShuffle:
    case ExprKind::kLoad:
    case ExprKind::kFma:
    case ExprKind::kDotAccumulate:
    case ExprKind::kCallExtern:
    case ExprKind::kAddressOf:
      return 1;
  }
  return 1;
}

CodeGenGpu::CodeGenGpu(llvm::Module* module, const GpuArch& arch)
    : CodeGenLlvm(module, "GPU codegen", std::string(arch.llvm_cpu),
                  std::string(arch.llvm_features)),
      arch_(arch) {}

absl::Status CodeGenGpu::AddKernel(const ir::LoweredFunc& func, const GpuLaunch& launch) {
  if (module_->getFunction(func.name) != nullptr) {
    return absl::InvalidArgumentError(
        StrCat("GPU codegen: kernel ", func.name, " is defined twice"));
  }
  std::vector<llvm::Type*> params(func.params.size(),
                                  llvm::PointerType::get(ctx_, kGlobalAddressSpace));
  // The tensor maps follow the buffers, passed by value (codegen_gpu_tma.cc).
  tensor_maps_ = TensorMapsOf(func.body);
  if (!tensor_maps_.empty() && !nvptx()) {
    return absl::UnimplementedError(StrCat("GPU codegen: kernel ", func.name,
                                           " copies through TMA tensor maps, which only NVPTX "
                                           "kernels (cuda -arch=sm_90, sm_90a) have"));
  }
  params.resize(func.params.size() + tensor_maps_.size(), builder_.getPtrTy());
  llvm::FunctionType* type = llvm::FunctionType::get(builder_.getVoidTy(), params, false);
  llvm::Function* f =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, func.name, module_);
  tensor_map_args_.clear();
  for (size_t m = 0; m < tensor_maps_.size(); ++m) {
    llvm::Argument* arg = f->getArg(static_cast<unsigned>(func.params.size() + m));
    arg->addAttr(llvm::Attribute::getWithByValType(ctx_, TensorMapType()));
    arg->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    arg->setName(StrCat("tensor_map", m, "_", tensor_maps_[m].buffer.name()));
    tensor_map_args_.push_back(arg);
  }
  AddTargetAttributes(f);
  AnnotateKernel(f, launch, func.min_blocks_per_multiprocessor);
  AnnotateGridConstants(f, static_cast<unsigned>(func.params.size()),
                        static_cast<unsigned>(tensor_maps_.size()));
  AnnotateRegisterBudget(f, func, launch);

  multiples_.clear();
  dynamic_shared_ = launch.dynamic_shared_bytes > 0;
  shared_offset_ = 0;
  shared_alignment_ = GpuSharedAlignment(func.body);
  entry_ = BeginFunction(f, func);
  Emit(func.body);
  builder_.CreateRetVoid();
  return status_;
}

// NVPTX: !nvvm.annotations marks the kernel, its maximum block size (.maxntid) and the blocks
// that must fit on a multiprocessor together (.minnctapersm, where more than one). AMDGPU: the
// amdgpu_kernel calling convention and the flat work-group size bound the register budget.
void CodeGenGpu::AnnotateKernel(llvm::Function* f, const GpuLaunch& launch, int64_t min_blocks) {
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
    if (min_blocks > 1) {
      add("minctasm", static_cast<uint32_t>(min_blocks));
    }
    return;
  }
  f->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  f->addFnAttr("amdgpu-flat-work-group-size", StrCat("1,", launch.ThreadsPerBlock()));
  f->addFnAttr("uniform-work-group-size", "true");
}

void CodeGenGpu::EmitLetStmt(const ir::LetStmt* op) {
  if (op->value.type().is_int() && op->value.type().is_scalar()) {
    multiples_[op->var.get()] = KnownMultiple(op->value, multiples_);
  }
  CodeGenLlvm::EmitLetStmt(op);
  multiples_.erase(op->var.get());
}

void CodeGenGpu::EmitEvaluate(const ir::Evaluate* op) {
  Fail(absl::UnimplementedError(StrCat("GPU codegen: kernel ", func_name_, " evaluates `",
                                       ir::ToText(op->value),
                                       "`; GPU kernels cannot call host code")));
}

llvm::Value* CodeGenGpu::EmitCallExtern(const ir::CallExtern* op) {
  Fail(absl::UnimplementedError(StrCat("GPU codegen: kernel ", func_name_,
                                       " calls the external function ", op->symbol,
                                       "; GPU kernels cannot call host code")));
  return llvm::PoisonValue::get(LlvmType(op->type));
}

llvm::Value* CodeGenGpu::EmitAddressOf(const ir::AddressOf* op) {
  Fail(absl::UnimplementedError(StrCat("GPU codegen: kernel ", func_name_, " takes the address of ",
                                       op->buffer.name(), " (only external calls use addresses)")));
  return llvm::PoisonValue::get(builder_.getPtrTy());
}

llvm::Align CodeGenGpu::DenseAlignment(const ir::Buffer& buffer, const ir::Expr& base) {
  int64_t buffer_align =
      buffer.scope() == ir::MemoryScope::kGlobal ? kGpuParamAlignment : kGpuArrayAlignment;
  const int64_t element = buffer.element_type().Bytes();
  int64_t bytes = std::min(buffer_align, element * KnownMultiple(base, multiples_));
  return llvm::Align(static_cast<uint64_t>(std::max<int64_t>(element, bytes)));
}

// GPUs gather lane by lane.
llvm::Value* CodeGenGpu::EmitGather(llvm::Type* type, llvm::Value* base, llvm::Value* index,
                                    int lanes) {
  llvm::Value* result = llvm::PoisonValue::get(type);
  llvm::Type* element = type->getScalarType();
  for (int i = 0; i < lanes; ++i) {
    llvm::Value* lane = builder_.CreateExtractElement(index, static_cast<uint64_t>(i));
    llvm::Value* ptr = builder_.CreateInBoundsGEP(element, base, lane);
    llvm::Value* value = builder_.CreateAlignedLoad(element, ptr, ScalarAlign(element));
    result = builder_.CreateInsertElement(result, value, static_cast<uint64_t>(i));
  }
  return result;
}

// And scatter lane by lane.
void CodeGenGpu::EmitScatter(llvm::Value* base, llvm::Value* index, llvm::Value* value, int lanes) {
  llvm::Type* element = value->getType()->getScalarType();
  for (int i = 0; i < lanes; ++i) {
    llvm::Value* lane = builder_.CreateExtractElement(index, static_cast<uint64_t>(i));
    llvm::Value* ptr = builder_.CreateInBoundsGEP(element, base, lane);
    builder_.CreateAlignedStore(builder_.CreateExtractElement(value, static_cast<uint64_t>(i)), ptr,
                                ScalarAlign(element));
  }
}

void CodeGenGpu::EmitStore(const ir::Store* op) {
  if (op->async_copy && nvptx() && !ir::IsConst(op->value, 0.0)) {
    EmitAsyncCopy(op);
    return;
  }
  // Elsewhere an asynchronous copy is a plain store: it is complete before any barrier (so is
  // one that simplification reduced to zeros).
  CodeGenLlvm::EmitStore(op);
}

// cp.async.ca.shared.global of 4, 8 or 16 bytes (cg for 16: past L1, as the data is staged in
// shared memory anyway), the .s form with a source size of 0 where the copy is not valid: the
// destination is zero-filled and nothing is read. The verifier checked the form
// (Store::MakeAsyncCopy): value Load(src, i), zeros where op->valid is false.
void CodeGenGpu::EmitAsyncCopy(const ir::Store* op) {
  const ir::Expr& valid = op->valid;
  const auto* load = op->value.As<ir::Load>();
  const int lanes = op->index.type().lanes();
  auto base_of = [](const ir::Expr& index) {
    const auto* ramp = index.As<ir::Ramp>();
    return ramp != nullptr ? ramp->base : index;
  };
  llvm::Value* dst = builder_.CreateInBoundsGEP(ElementType(op->buffer), BufferBase(op->buffer),
                                                Emit(base_of(op->index)));
  llvm::Value* src = builder_.CreateInBoundsGEP(ElementType(load->buffer), BufferBase(load->buffer),
                                                Emit(base_of(load->index)));
  static constexpr llvm::Intrinsic::ID kCopy[3][2] = {
      {llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4,
       llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s},
      {llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8,
       llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s},
      {llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16,
       llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s}};
  const int copy_bytes = lanes * op->buffer.element_type().Bytes();
  const int row = copy_bytes == 16 ? 2 : copy_bytes / 4 - 1;
  if (!valid.defined()) {
    builder_.CreateIntrinsic(kCopy[row][0], {}, {dst, src});
    return;
  }
  llvm::Value* source_bytes =
      builder_.CreateSelect(Emit(valid), builder_.getInt32(copy_bytes), builder_.getInt32(0));
  builder_.CreateIntrinsic(kCopy[row][1], {}, {dst, src, source_bytes});
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
      EmitAtomicAdds(base, Emit(index_expr), value, index_expr.type().lanes(), scope);
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
  EmitCountedLoop(op);
}

// gpu_shared: a module-level addrspace(3) array per allocation (static shared memory, aligned
// as GpuSharedAlignment says), named <kernel>_<buffer>; with dynamic shared memory, the next
// offset so aligned of the module's one dynamic region (GpuLaunchOf summed the sizes the same
// way). gpu_local:
// an alloca in the entry block (addrspace 5 on AMDGPU), which SROA / mem2reg turn into registers
// when every index is a constant.
void CodeGenGpu::EmitAllocate(const ir::Allocate* op) {
  llvm::Type* type = llvm::ArrayType::get(ElementType(op->buffer), static_cast<uint64_t>(op->size));
  llvm::Value* storage = nullptr;
  switch (op->buffer.scope()) {
    case ir::MemoryScope::kGpuShared: {
      if (dynamic_shared_) {
        storage = builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), DynamicShared(),
                                                      static_cast<uint64_t>(shared_offset_));
        shared_offset_ += (static_cast<int64_t>(module_->getDataLayout().getTypeAllocSize(type)) +
                           shared_alignment_ - 1) /
                          shared_alignment_ * shared_alignment_;
        break;
      }
      auto* global = new llvm::GlobalVariable(
          *module_, type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
          llvm::UndefValue::get(type), StrCat(func_name_, "_", op->buffer.name()), nullptr,
          llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
      global->setAlignment(llvm::Align(static_cast<uint64_t>(shared_alignment_)));
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
    case ir::MemoryScope::kGlobal: {
      // A workspace: zero when the module loads (.bss), kept between launches.
      auto* global = new llvm::GlobalVariable(
          *module_, type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
          llvm::ConstantAggregateZero::get(type), StrCat(func_name_, "_", op->buffer.name()),
          nullptr, llvm::GlobalValue::NotThreadLocal, kGlobalAddressSpace);
      global->setAlignment(llvm::Align(16));
      storage = global;
      break;
    }
    case ir::MemoryScope::kStack:
      Fail(absl::InvalidArgumentError(StrCat("GPU codegen: cannot allocate ", op->buffer.name(),
                                             " in stack memory (use gpu_shared, gpu_local or "
                                             "a global workspace)")));
      return;
  }
  buffers_[op->buffer.get()] = storage;
  Emit(op->body);
  buffers_.erase(op->buffer.get());
}

// The module's dynamic shared memory (CUDA's `extern __shared__`): an external addrspace(3)
// array of no size, which the launch sizes, aligned for every kernel of the module.
llvm::Value* CodeGenGpu::DynamicShared() {
  constexpr const char* kName = "tune_dynamic_shared";
  if (llvm::GlobalVariable* existing = module_->getNamedGlobal(kName)) {
    if (existing->getAlign().valueOrOne().value() < static_cast<uint64_t>(shared_alignment_)) {
      existing->setAlignment(llvm::Align(static_cast<uint64_t>(shared_alignment_)));
    }
    return existing;
  }
  llvm::Type* type = llvm::ArrayType::get(builder_.getInt8Ty(), 0);
  auto* global = new llvm::GlobalVariable(
      *module_, type, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage, nullptr, kName,
      nullptr, llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  global->setAlignment(llvm::Align(static_cast<uint64_t>(shared_alignment_)));
  return global;
}

// NVPTX: bar.sync 0, preceded in kernels with warpgroup_mma by fence.proxy.async.shared::cta
// (so that the generic proxy's shared writes before the barrier, cp.async's included, are seen
// by wgmma, which reads through the async proxy). AMDGPU: a workgroup-scope release fence,
// s_barrier, an acquire fence (what HIP's __syncthreads() is), so that shared-memory writes before
// it are seen after it. A cluster barrier (sm_90): barrier.cluster.arrive.release and
// barrier.cluster.wait.acquire, after the same async-proxy fence. A named barrier: bar.sync id,
// threads after the same fence, as inline PTX (LLVM 19's llvm.nvvm.barrier.sync.cnt prints
// barrier.sync, the form for threads of a warp that may reach it apart; the warps here reach it
// whole, which bar.sync, i.e. barrier.sync.aligned, lets the hardware rely on), marked convergent
// so that no pass duplicates or sinks it into code that only some of its threads run.
void CodeGenGpu::EmitBarrier(const ir::Barrier* op) {
  if (op->named()) {
    if (!nvptx()) {
      Fail(absl::UnimplementedError(StrCat(
          "GPU codegen: a named barrier (barrier(id ", op->id, ", ", op->threads,
          " threads)) is an NVPTX instruction (bar.sync id, threads), not one of ", arch_.name)));
      return;
    }
    if (shared_alignment_ == kSwizzledSharedAlignment) {
      EmitAsyncProxyFence();
    }
    llvm::FunctionType* fn = llvm::FunctionType::get(builder_.getVoidTy(), {}, false);
    llvm::CallInst* call = builder_.CreateCall(
        fn, llvm::InlineAsm::get(fn, StrCat("bar.sync ", op->id, ", ", op->threads, ";"),
                                 "~{memory}", /*hasSideEffects=*/true));
    call->addFnAttr(llvm::Attribute::Convergent);
    return;
  }
  if (op->cluster) {
    if (!nvptx() || !arch_.name.starts_with("sm_90")) {
      Fail(absl::UnimplementedError(StrCat(
          "GPU codegen: a cluster barrier is an instruction of cuda -arch=sm_90 and sm_90a, not ",
          arch_.name)));
      return;
    }
    if (shared_alignment_ == kSwizzledSharedAlignment) {
      EmitAsyncProxyFence();
    }
    llvm::FunctionType* fn = llvm::FunctionType::get(builder_.getVoidTy(), {}, false);
    builder_.CreateCall(
        fn,
        llvm::InlineAsm::get(
            fn, "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;",
            "~{memory}", /*hasSideEffects=*/true));
    return;
  }
  if (nvptx()) {
    if (op->commit_async) {
      builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
    }
    if (op->wait_async >= 0) {
      builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                               {builder_.getInt32(op->wait_async)});
    }
    if (shared_alignment_ == kSwizzledSharedAlignment) {
      EmitAsyncProxyFence();
    }
    builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    return;
  }
  llvm::SyncScope::ID workgroup = ctx_.getOrInsertSyncScopeID("workgroup");
  builder_.CreateFence(llvm::AtomicOrdering::Release, workgroup);
  builder_.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
  builder_.CreateFence(llvm::AtomicOrdering::Acquire, workgroup);
}

// A fence at device scope: NVPTX fence.acq_rel.gpu (inline PTX with a memory clobber, so that no
// access moves across it: LLVM 19's NVPTX backend selects no scoped fence, and membar.gl is
// fence.sc.gpu, a sequentially consistent fence that costs more); AMDGPU an agent-scope fence.
void CodeGenGpu::EmitDeviceFence(llvm::AtomicOrdering ordering) {
  if (nvptx()) {
    llvm::FunctionType* fn = llvm::FunctionType::get(builder_.getVoidTy(), {}, false);
    builder_.CreateCall(fn, llvm::InlineAsm::get(fn, "fence.acq_rel.gpu;", "~{memory}",
                                                 /*hasSideEffects=*/true));
    return;
  }
  builder_.CreateFence(ordering, ctx_.getOrInsertSyncScopeID("agent"));
}

// result[result_index] = atomicrmw add of a global int32, between a release and an acquire fence
// at device scope.
void CodeGenGpu::EmitFetchAdd(const ir::FetchAdd* op) {
  llvm::Value* ptr =
      builder_.CreateInBoundsGEP(builder_.getInt32Ty(), BufferBase(op->buffer), Emit(op->index));
  llvm::Value* add = Emit(op->value);
  EmitDeviceFence(llvm::AtomicOrdering::Release);
  llvm::Value* old = builder_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, ptr, add, llvm::Align(4),
                                              llvm::AtomicOrdering::Monotonic,
                                              nvptx() ? llvm::SyncScope::ID{llvm::SyncScope::System}
                                                      : ctx_.getOrInsertSyncScopeID("agent"));
  EmitDeviceFence(llvm::AtomicOrdering::Acquire);
  llvm::Value* at = builder_.CreateInBoundsGEP(builder_.getInt32Ty(), BufferBase(op->result),
                                               Emit(op->result_index));
  builder_.CreateAlignedStore(old, at, llvm::Align(4));
}

}  // namespace tune::llvm_backend
