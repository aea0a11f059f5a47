#include "codegen/llvm/thread_binding.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

namespace tune::llvm_backend {
namespace {

// cpu_set_t: 1024 bits as 16 64-bit words.
constexpr int kMaskWords = 16;
constexpr int kMaskBytes = kMaskWords * 8;

llvm::ArrayType* MaskType(llvm::LLVMContext& ctx) {
  return llvm::ArrayType::get(llvm::Type::getInt64Ty(ctx), kMaskWords);
}

llvm::GlobalVariable* Global(llvm::Module* module, const char* name, llvm::Type* type,
                             bool thread_local_value, llvm::Constant* init) {
  if (llvm::GlobalVariable* g = module->getGlobalVariable(name, /*AllowInternal=*/true)) {
    return g;
  }
  auto* g = new llvm::GlobalVariable(*module, type, false, llvm::GlobalValue::InternalLinkage, init,
                                     name);
  if (thread_local_value) {
    g->setThreadLocalMode(llvm::GlobalValue::GeneralDynamicTLSModel);
  }
  return g;
}

llvm::FunctionCallee Affinity(llvm::Module* module, const char* name) {
  llvm::LLVMContext& ctx = module->getContext();
  return module->getOrInsertFunction(
      name, llvm::FunctionType::get(llvm::Type::getInt32Ty(ctx),
                                    {llvm::Type::getInt32Ty(ctx), llvm::Type::getInt64Ty(ctx),
                                     llvm::PointerType::getUnqual(ctx)},
                                    false));
}

llvm::GlobalVariable* Mask(llvm::Module* module) {
  return Global(module, "tune_bind_mask", MaskType(module->getContext()), false,
                llvm::ConstantAggregateZero::get(MaskType(module->getContext())));
}

llvm::GlobalVariable* Ready(llvm::Module* module) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(module->getContext());
  return Global(module, "tune_bind_ready", i32, false, llvm::ConstantInt::get(i32, 0));
}

}  // namespace

llvm::Function* ThreadBindingCapture(llvm::Module* module) {
  constexpr char kName[] = "tune_bind_capture";
  if (llvm::Function* f = module->getFunction(kName)) {
    return f;
  }
  llvm::LLVMContext& ctx = module->getContext();
  llvm::Function* f =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                             llvm::Function::InternalLinkage, kName, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::BasicBlock* capture = llvm::BasicBlock::Create(ctx, "capture", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "done", f);
  llvm::GlobalVariable* ready = Ready(module);
  llvm::LoadInst* seen = b.CreateLoad(b.getInt32Ty(), ready);
  seen->setAtomic(llvm::AtomicOrdering::Acquire);
  b.CreateCondBr(b.CreateICmpEQ(seen, b.getInt32(0)), capture, done);
  b.SetInsertPoint(capture);
  b.CreateCall(Affinity(module, "sched_getaffinity"),
               {b.getInt32(0), b.getInt64(kMaskBytes), Mask(module)});
  b.CreateStore(b.getInt32(1), ready)->setAtomic(llvm::AtomicOrdering::Release);
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return f;
}

llvm::Function* ThreadBindingBind(llvm::Module* module, ThreadBinding binding) {
  const std::string name =
      std::string("tune_bind_thread_") + std::string(ThreadBindingName(binding));
  if (llvm::Function* f = module->getFunction(name)) {
    return f;
  }
  llvm::LLVMContext& ctx = module->getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Function* f =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {i32, i32}, false),
                             llvm::Function::InternalLinkage, name, module);
  llvm::Value* tid = f->getArg(0);
  llvm::Value* threads = f->getArg(1);
  llvm::GlobalVariable* mask = Mask(module);
  llvm::GlobalVariable* bound =
      Global(module, "tune_bound_cpu", i32, true, llvm::ConstantInt::get(i32, -1));

  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  llvm::BasicBlock* search = llvm::BasicBlock::Create(ctx, "search", f);
  llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx, "next", f);
  llvm::BasicBlock* found = llvm::BasicBlock::Create(ctx, "found", f);
  llvm::BasicBlock* bind = llvm::BasicBlock::Create(ctx, "bind", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "done", f);
  llvm::IRBuilder<> b(entry);
  // A = the CPUs recorded; none recorded (capture failed): leave the thread alone.
  llvm::Value* count = b.getInt64(0);
  for (int w = 0; w < kMaskWords; ++w) {
    llvm::Value* word = b.CreateLoad(i64, b.CreateConstGEP2_32(MaskType(ctx), mask, 0, w));
    count = b.CreateAdd(count, b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, word));
  }
  llvm::Value* tid64 = b.CreateSExt(tid, i64);
  llvm::Value* wanted =
      binding == ThreadBinding::kSpread
          ? b.CreateUDiv(
                b.CreateMul(tid64, count),
                b.CreateSExt(b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, threads, b.getInt32(1)),
                             i64))
          : b.CreateURem(tid64,
                         b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, count, b.getInt64(1)));
  b.CreateCondBr(b.CreateICmpEQ(count, b.getInt64(0)), done, search);

  // The wanted-th set bit of the mask: CPU `cpu`.
  b.SetInsertPoint(search);
  llvm::PHINode* cpu = b.CreatePHI(i64, 2, "cpu");
  llvm::PHINode* seen = b.CreatePHI(i64, 2, "seen");
  cpu->addIncoming(b.getInt64(0), entry);
  seen->addIncoming(b.getInt64(0), entry);
  llvm::Value* word =
      b.CreateLoad(i64, b.CreateGEP(MaskType(ctx), mask, {b.getInt64(0), b.CreateLShr(cpu, 6)}));
  llvm::Value* bit = b.CreateAnd(b.CreateLShr(word, b.CreateAnd(cpu, 63)), 1);
  llvm::Value* hit = b.CreateAnd(b.CreateICmpNE(bit, b.getInt64(0)), b.CreateICmpEQ(seen, wanted));
  b.CreateCondBr(hit, found, next);
  b.SetInsertPoint(next);
  llvm::Value* cpu_next = b.CreateAdd(cpu, b.getInt64(1));
  cpu->addIncoming(cpu_next, next);
  seen->addIncoming(b.CreateAdd(seen, bit), next);
  b.CreateCondBr(b.CreateICmpULT(cpu_next, b.getInt64(kMaskWords * 64)), search, done);

  // Already there (this thread bound itself on an earlier call): nothing to do.
  b.SetInsertPoint(found);
  llvm::Value* cpu32 = b.CreateTrunc(cpu, i32);
  llvm::Value* tls = b.CreateThreadLocalAddress(bound);
  b.CreateCondBr(b.CreateICmpEQ(b.CreateLoad(i32, tls), cpu32), done, bind);

  b.SetInsertPoint(bind);
  llvm::AllocaInst* set = nullptr;
  {
    llvm::IRBuilder<> at_entry(entry, entry->begin());
    set = at_entry.CreateAlloca(MaskType(ctx), nullptr, "cpu_set");
  }
  b.CreateMemSet(set, b.getInt8(0), kMaskBytes, llvm::MaybeAlign(8));
  llvm::Value* slot = b.CreateGEP(MaskType(ctx), set, {b.getInt64(0), b.CreateLShr(cpu, 6)});
  b.CreateStore(b.CreateShl(b.getInt64(1), b.CreateAnd(cpu, 63)), slot);
  llvm::Value* rc = b.CreateCall(Affinity(module, "sched_setaffinity"),
                                 {b.getInt32(0), b.getInt64(kMaskBytes), set});
  b.CreateStore(b.CreateSelect(b.CreateICmpEQ(rc, b.getInt32(0)), cpu32, b.getInt32(-1)), tls);
  b.CreateBr(done);

  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return f;
}

}  // namespace tune::llvm_backend
