#include "codegen/llvm/range_entry.h"

#include <set>

#include "codegen/llvm/c_identifier.h"
#include "codegen/llvm/x86_object.h"
#include "common/status.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "runtime/tune_gpurt.h"
#include "runtime/tune_range.h"

namespace tune {
namespace {

absl::Status Check(const std::vector<RangeEntry>& entries) {
  std::set<std::string> names;
  for (const RangeEntry& e : entries) {
    auto bad = [&](std::string_view what) {
      return absl::InvalidArgumentError(StrCat("range entry '", e.func_name, "': ", what));
    };
    if (!IsCIdentifier(e.func_name) || !names.insert(e.func_name).second) {
      return bad("the name must be a C identifier used once");
    }
    if (e.num_args < 1 || e.num_args > 16) {
      return bad(StrCat(e.num_args, " arguments; expected 1 to 16"));
    }
    if (e.lo < 1 || e.lo >= e.hi) {
      return bad(StrCat("bounds ", e.lo, "..", e.hi, "; expected 1 <= lo < hi"));
    }
    if (e.kernels.empty() || e.kernels.back().size != e.hi) {
      return bad(StrCat("its kernels must end with one at ", e.hi));
    }
    int64_t last = 0;
    for (const RangeEntryKernel& k : e.kernels) {
      if (k.size < e.lo || k.size <= last || !IsCIdentifier(k.symbol)) {
        return bad(StrCat("kernel '", k.symbol, "' at ", k.size,
                          ": sizes must ascend within the range, symbols be C identifiers"));
      }
      last = k.size;
    }
    for (const RangeEntryTensor& t : e.tensors) {
      if (t.arg < 0 || t.arg >= e.num_args || t.outer < 1 || t.inner_bytes < 1 ||
          (e.splittable && t.outer != 1)) {
        return bad(StrCat("tensor of argument ", t.arg, " (outer ", t.outer, ", inner bytes ",
                          t.inner_bytes, ") does not fit the plan"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> EmitRangeEntryObject(const std::vector<RangeEntry>& entries,
                                                 RangeMemory memory, std::string* llvm_ir) {
  if (entries.empty()) {
    return absl::InvalidArgumentError("no range entries to emit");
  }
  RETURN_IF_ERROR(Check(entries));
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, GenericX86Machine());
  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>("tune_range_entries", context);
  module->setTargetTriple(kX86Triple);
  module->setDataLayout(machine->createDataLayout());
  llvm::Type* i32 = llvm::Type::getInt32Ty(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::Type* f64 = llvm::Type::getDoubleTy(context);
  llvm::PointerType* ptr = llvm::PointerType::getUnqual(context);
  const bool gpu = memory != RangeMemory::kHost;
  auto i32c = [&](int64_t v) { return llvm::ConstantInt::get(i32, v); };
  auto i64c = [&](int64_t v) { return llvm::ConstantInt::get(i64, v); };
  auto constant = [&](llvm::Constant* init, const std::string& name) {
    auto* g = new llvm::GlobalVariable(*module, init->getType(), /*isConstant=*/true,
                                       llvm::GlobalValue::PrivateLinkage, init, name);
    g->setAlignment(llvm::Align(8));
    return g;
  };

  // The C structs of runtime/tune_range.h (natural alignment, as the C compiler lays them out).
  llvm::StructType* kernel_type =
      llvm::StructType::create(context, {i64, f64, ptr, i32}, "tune_range_kernel");
  llvm::StructType* tensor_type =
      llvm::StructType::create(context, {i32, i32, i64, i64}, "tune_range_tensor");
  llvm::StructType* plan_type = llvm::StructType::create(
      context, {i32, ptr, ptr, i64, i64, i32, i32, i32, ptr, i32, ptr, ptr, ptr},
      "tune_range_plan");
  llvm::FunctionCallee range_call = module->getOrInsertFunction(
      kRangeCallSymbol, llvm::FunctionType::get(i32, {ptr, i64, ptr, ptr}, false));
  llvm::FunctionCallee range_pieces = module->getOrInsertFunction(
      kRangePiecesSymbol, llvm::FunctionType::get(i32, {ptr, i64, ptr, i32}, false));

  // GPU entries copy through the GPU runtime, with a module of their own (no image) as the
  // context that names the API.
  llvm::Constant* memory_ops = llvm::ConstantPointerNull::get(ptr);
  llvm::Constant* memory_ctx = llvm::ConstantPointerNull::get(ptr);
  if (gpu) {
    memory_ops = module->getOrInsertGlobal(kGpuDeviceMemorySymbol, llvm::Type::getInt8Ty(context));
    llvm::StructType* gpurt_module = llvm::StructType::create(context, {i32, i32, ptr, i64, ptr});
    auto* ctx = new llvm::GlobalVariable(
        *module, gpurt_module, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
        llvm::ConstantStruct::get(
            gpurt_module,
            {i32c(TUNE_GPURT_ABI_VERSION),
             i32c(memory == RangeMemory::kCuda ? TUNE_GPURT_API_CUDA : TUNE_GPURT_API_HIP),
             llvm::ConstantPointerNull::get(ptr), i64c(0), llvm::ConstantPointerNull::get(ptr)}),
        "tune_range_gpu_module");
    ctx->setAlignment(llvm::Align(8));
    memory_ctx = ctx;
  }

  for (const RangeEntry& e : entries) {
    // The adapters: int32_t adapter(void* const* args, void* stream) -> kernel(args..., [stream])
    std::vector<llvm::Type*> kernel_params(e.num_args + (gpu ? 1 : 0), ptr);
    llvm::FunctionType* kernel_fn = llvm::FunctionType::get(i32, kernel_params, false);
    llvm::FunctionType* adapter_fn = llvm::FunctionType::get(i32, {ptr, ptr}, false);
    std::vector<llvm::Constant*> kernels;
    for (const RangeEntryKernel& k : e.kernels) {
      llvm::FunctionCallee callee = module->getOrInsertFunction(k.symbol, kernel_fn);
      llvm::Function* adapter =
          llvm::Function::Create(adapter_fn, llvm::GlobalValue::InternalLinkage,
                                 StrCat(e.func_name, "__call_", k.size), *module);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", adapter));
      std::vector<llvm::Value*> args;
      for (int a = 0; a < e.num_args; ++a) {
        args.push_back(
            b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, adapter->getArg(0), a), StrCat("p", a)));
      }
      if (gpu) {
        args.push_back(adapter->getArg(1));
      }
      b.CreateRet(b.CreateCall(callee, args));
      kernels.push_back(llvm::ConstantStruct::get(
          kernel_type,
          {i64c(k.size), llvm::ConstantFP::get(f64, k.seconds), adapter, i32c(k.measured)}));
    }
    std::vector<llvm::Constant*> tensors;
    for (const RangeEntryTensor& t : e.tensors) {
      tensors.push_back(llvm::ConstantStruct::get(
          tensor_type, {i32c(t.arg), i32c(t.is_output), i64c(t.outer), i64c(t.inner_bytes)}));
    }
    auto array = [&](llvm::StructType* type, const std::vector<llvm::Constant*>& items,
                     const std::string& name) -> llvm::Constant* {
      if (items.empty()) {
        return llvm::ConstantPointerNull::get(ptr);
      }
      return constant(llvm::ConstantArray::get(llvm::ArrayType::get(type, items.size()), items),
                      name);
    };
    auto text = [&](const std::string& s, const std::string& name) {
      return constant(llvm::ConstantDataArray::getString(context, s), name);
    };
    llvm::Constant* plan = constant(
        llvm::ConstantStruct::get(
            plan_type,
            {i32c(TUNE_RANGE_ABI_VERSION), text(e.text_before, e.func_name + "_before"),
             text(e.text_after, e.func_name + "_after"), i64c(e.lo), i64c(e.hi), i32c(e.splittable),
             i32c(e.num_args), i32c(e.tensors.size()),
             array(tensor_type, tensors, e.func_name + "_tensors"), i32c(e.kernels.size()),
             array(kernel_type, kernels, e.func_name + "_kernels"), memory_ops, memory_ctx}),
        e.func_name + "_plan");

    // int32_t NAME(int64_t size, ptr p0, ..., [ptr stream])
    std::vector<llvm::Type*> entry_params = {i64};
    entry_params.insert(entry_params.end(), kernel_params.begin(), kernel_params.end());
    llvm::Function* entry =
        llvm::Function::Create(llvm::FunctionType::get(i32, entry_params, false),
                               llvm::GlobalValue::ExternalLinkage, e.func_name, *module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", entry));
    llvm::Value* args = b.CreateAlloca(llvm::ArrayType::get(ptr, e.num_args), nullptr, "args");
    for (int a = 0; a < e.num_args; ++a) {
      b.CreateStore(entry->getArg(1 + a),
                    b.CreateConstGEP2_32(llvm::ArrayType::get(ptr, e.num_args), args, 0, a));
    }
    llvm::Value* stream = gpu ? static_cast<llvm::Value*>(entry->getArg(1 + e.num_args))
                              : static_cast<llvm::Value*>(llvm::ConstantPointerNull::get(ptr));
    b.CreateRet(b.CreateCall(range_call, {plan, entry->getArg(0), args, stream}));

    // int32_t NAME_pieces(int64_t size, int64_t* sizes, int32_t capacity): how NAME runs a size.
    llvm::Function* pieces = llvm::Function::Create(
        llvm::FunctionType::get(i32, {i64, ptr, i32}, false), llvm::GlobalValue::ExternalLinkage,
        e.func_name + kRangePiecesSuffix, *module);
    llvm::IRBuilder<> p(llvm::BasicBlock::Create(context, "entry", pieces));
    p.CreateRet(p.CreateCall(range_pieces,
                             {plan, pieces->getArg(0), pieces->getArg(1), pieces->getArg(2)}));
  }
  if (llvm_ir != nullptr) {
    llvm_ir->clear();
    llvm::raw_string_ostream out(*llvm_ir);
    module->print(out, nullptr);
  }
  return EmitX86Object(*machine, *module, "range entries");
}

}  // namespace tune
