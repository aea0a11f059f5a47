#include "codegen/llvm/host_stub.h"

#include <algorithm>
#include <memory>
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
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "runtime/tune_gpurt.h"
#include "runtime/tune_launch_ex.h"

namespace tune {
namespace {

constexpr const char* kImageSection = ".tune_gpu_image";

bool NeedsLaunchEx(const GpuLaunch& launch) {
  return !launch.tensor_maps.empty() || launch.cluster != std::array<uint32_t, 3>{1, 1, 1};
}

// libtune_gpurt.so's descriptor of a tensor map (runtime/tune_gpurt.h).
tune_gpurt_tensor_map RuntimeTensorMap(const GpuTensorMap& map) {
  return ToTensorMapDescriptor<tune_gpurt_tensor_map>(map);
}

// What the runtime would refuse at every call is refused here, once: the cluster's shape and
// each map's descriptor (checked as over a 16-byte aligned buffer; the real address is the
// runtime's to check).
absl::Status CheckLaunchEx(GpuApi api, const HostStub& stub) {
  if (!NeedsLaunchEx(stub.launch)) {
    return absl::OkStatus();
  }
  if (api != GpuApi::kCuda) {
    return absl::InvalidArgumentError(
        StrCat("host stub '", stub.func_name, "': launch ", ToString(stub.launch),
               " has tensor maps or a thread-block cluster, which are CUDA-only"));
  }
  char error[2048] = "";
  if (!tune_cluster_check(stub.launch.grid.data(), stub.launch.cluster.data(), error,
                          sizeof error)) {
    return absl::InvalidArgumentError(StrCat("host stub '", stub.func_name, "': ", error));
  }
  for (const GpuTensorMap& map : stub.launch.tensor_maps) {
    const tune_gpurt_tensor_map descriptor = RuntimeTensorMap(map);
    tune_tensor_map_encoding encoding;
    if (!tune_tensor_map_prepare(&descriptor, static_cast<uint32_t>(stub.num_args), 0, &encoding,
                                 error, sizeof error)) {
      return absl::InvalidArgumentError(StrCat("host stub '", stub.func_name, "': ", error));
    }
  }
  return absl::OkStatus();
}

absl::Status Check(const HostStubModule& module) {
  if (module.stubs.empty()) {
    return absl::InvalidArgumentError("EmitHostStubObject: no kernels");
  }
  if (module.image.empty()) {
    return absl::InvalidArgumentError("EmitHostStubObject: the device code image is empty");
  }
  std::set<std::string> names;
  for (const HostStub& stub : module.stubs) {
    if (!IsCIdentifier(stub.func_name) || !names.insert(stub.func_name).second) {
      return absl::InvalidArgumentError(
          StrCat("host stub '", stub.func_name,
                 "': the name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*) used once"));
    }
    if (stub.kernel_name.empty()) {
      return absl::InvalidArgumentError(StrCat("host stub '", stub.func_name, "': no kernel name"));
    }
    if (stub.num_args < 1) {
      return absl::InvalidArgumentError(
          StrCat("host stub '", stub.func_name, "': a kernel takes at least one pointer"));
    }
    if (stub.zeroed_bytes.size() != stub.launch.zeroed_args.size()) {
      return absl::InvalidArgumentError(
          StrCat("host stub '", stub.func_name, "': ", stub.launch.zeroed_args.size(),
                 " zeroed arguments but ", stub.zeroed_bytes.size(), " sizes"));
    }
    for (uint32_t arg : stub.launch.zeroed_args) {
      if (arg >= static_cast<uint32_t>(stub.num_args)) {
        return absl::InvalidArgumentError(StrCat("host stub '", stub.func_name,
                                                 "': zeroed argument ", arg, " of a kernel with ",
                                                 stub.num_args, " arguments"));
      }
    }
    for (int a = 0; a < 3; ++a) {
      if (stub.launch.grid[a] == 0 || stub.launch.block[a] == 0) {
        return absl::InvalidArgumentError(StrCat("host stub '", stub.func_name, "': launch ",
                                                 ToString(stub.launch),
                                                 " has a zero dimension (each must be >= 1)"));
      }
    }
    RETURN_IF_ERROR(CheckLaunchEx(module.api, stub));
  }
  return absl::OkStatus();
}

llvm::Constant* Dims(llvm::LLVMContext& context, const std::array<uint32_t, 3>& dims) {
  return llvm::ConstantDataArray::get(context, llvm::ArrayRef<uint32_t>(dims.data(), 3));
}

}  // namespace

absl::StatusOr<std::string> EmitHostStubObject(const HostStubModule& spec, std::string* llvm_ir) {
  RETURN_IF_ERROR(Check(spec));
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, GenericX86Machine());

  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>("tune_gpu_host", context);
  module->setTargetTriple(kX86Triple);
  module->setDataLayout(machine->createDataLayout());
  llvm::Type* i8 = llvm::Type::getInt8Ty(context);
  llvm::Type* i32 = llvm::Type::getInt32Ty(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::PointerType* ptr = llvm::PointerType::getUnqual(context);

  // The image; PTX is handed to the driver as a C string, so it keeps a terminating NUL.
  std::string image = spec.image;
  if (spec.api == GpuApi::kCuda && image.back() != '\0') {
    image.push_back('\0');
  }
  llvm::Constant* image_data = llvm::ConstantDataArray::getRaw(image, image.size(), i8);
  auto* image_global =
      new llvm::GlobalVariable(*module, image_data->getType(), /*isConstant=*/true,
                               llvm::GlobalValue::PrivateLinkage, image_data, "tune_gpu_image");
  image_global->setAlignment(llvm::Align(16));
  image_global->setSection(kImageSection);

  // struct tune_gpurt_module { i32 abi_version; i32 api; ptr image; i64 image_size; ptr state; }
  llvm::StructType* module_type =
      llvm::StructType::create(context, {i32, i32, ptr, i64, ptr}, "tune_gpurt_module");
  llvm::Constant* module_init = llvm::ConstantStruct::get(
      module_type,
      {llvm::ConstantInt::get(i32, TUNE_GPURT_ABI_VERSION),
       llvm::ConstantInt::get(i32, static_cast<int>(spec.api)), image_global,
       llvm::ConstantInt::get(i64, image.size()), llvm::ConstantPointerNull::get(ptr)});
  auto* module_global =
      new llvm::GlobalVariable(*module, module_type, /*isConstant=*/false,
                               llvm::GlobalValue::InternalLinkage, module_init, "tune_gpu_module");
  module_global->setAlignment(llvm::Align(8));

  // int32_t tune_gpurt_launch(module*, const char*, const uint32_t grid[3], const uint32_t
  //                           block[3], uint32_t shared, void* stream, void** args, int32_t n)
  llvm::FunctionType* launch_type =
      llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, i32, ptr, ptr, i32}, false);
  llvm::FunctionCallee launch = module->getOrInsertFunction(kGpuLaunchSymbol, launch_type);
  // int32_t tune_gpurt_zero(module*, void* device_ptr, uint64_t bytes, void* stream)
  llvm::FunctionCallee zero = module->getOrInsertFunction(
      kGpuZeroSymbol, llvm::FunctionType::get(i32, {ptr, ptr, i64, ptr}, false));
  // struct tune_gpurt_tensor_map { i32 struct_bytes, arg, element_bytes, rank; i64 dims[5];
  //                                i64 strides[4]; i32 box[5]; i32 swizzle_bytes; i32 im2col;
  //                                i32 lower_corner[3], upper_corner[3];
  //                                i32 element_strides[5]; } (160 bytes)
  llvm::ArrayType* i32x5 = llvm::ArrayType::get(i32, 5);
  llvm::ArrayType* i32x3 = llvm::ArrayType::get(i32, 3);
  llvm::StructType* map_type =
      llvm::StructType::create(context,
                               {i32, i32, i32, i32, llvm::ArrayType::get(i64, 5),
                                llvm::ArrayType::get(i64, 4), i32x5, i32, i32, i32x3, i32x3, i32x5},
                               "tune_gpurt_tensor_map");
  static_assert(sizeof(tune_gpurt_tensor_map) == 160, "the struct above is tune_gpurt.h's");
  // int32_t tune_gpurt_launch_ex(module*, const char*, const uint32_t grid[3], const uint32_t
  //                              block[3], const uint32_t cluster[3], uint32_t shared,
  //                              void* stream, void** args, int32_t n,
  //                              const tune_gpurt_tensor_map* maps, int32_t num_maps)
  auto launch_ex = [&] {
    return module->getOrInsertFunction(
        kGpuLaunchExSymbol,
        llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr, i32, ptr, ptr, i32, ptr, i32},
                                false));
  };
  auto map_constant = [&](const GpuTensorMap& map) {
    const tune_gpurt_tensor_map d = RuntimeTensorMap(map);
    return llvm::ConstantStruct::get(
        map_type,
        {llvm::ConstantInt::get(i32, d.struct_bytes), llvm::ConstantInt::get(i32, d.arg),
         llvm::ConstantInt::get(i32, d.element_bytes), llvm::ConstantInt::get(i32, d.rank),
         llvm::ConstantDataArray::get(context, llvm::ArrayRef<uint64_t>(d.dims, 5)),
         llvm::ConstantDataArray::get(context, llvm::ArrayRef<uint64_t>(d.strides, 4)),
         llvm::ConstantDataArray::get(context, llvm::ArrayRef<uint32_t>(d.box, 5)),
         llvm::ConstantInt::get(i32, d.swizzle_bytes), llvm::ConstantInt::get(i32, d.im2col),
         llvm::ConstantDataArray::get(
             context,
             llvm::ArrayRef<uint32_t>(reinterpret_cast<const uint32_t*>(d.lower_corner), 3)),
         llvm::ConstantDataArray::get(
             context,
             llvm::ArrayRef<uint32_t>(reinterpret_cast<const uint32_t*>(d.upper_corner), 3)),
         llvm::ConstantDataArray::get(context, llvm::ArrayRef<uint32_t>(d.element_strides, 5))});
  };

  llvm::IRBuilder<> b(context);
  for (const HostStub& stub : spec.stubs) {
    std::vector<llvm::Type*> params(stub.num_args + 1, ptr);
    auto* fn = llvm::Function::Create(llvm::FunctionType::get(i32, params, false),
                                      llvm::GlobalValue::ExternalLinkage, stub.func_name, *module);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    for (int i = 0; i < stub.num_args; ++i) {
      fn->getArg(i)->setName(StrCat("p", i));
    }
    fn->getArg(stub.num_args)->setName("stream");

    auto* name =
        b.CreateGlobalString(stub.kernel_name, StrCat(stub.func_name, ".kernel"), 0, module.get());
    auto make_dims = [&](const std::array<uint32_t, 3>& dims, const char* what) {
      llvm::Constant* init = Dims(context, dims);
      auto* g = new llvm::GlobalVariable(*module, init->getType(), true,
                                         llvm::GlobalValue::PrivateLinkage, init,
                                         StrCat(stub.func_name, ".", what));
      g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
      return g;
    };
    llvm::GlobalVariable* grid = make_dims(stub.launch.grid, "grid");
    llvm::GlobalVariable* block = make_dims(stub.launch.block, "block");

    b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
    // kernelParams: args[i] points at a slot holding the i-th pointer argument.
    llvm::ArrayType* slots_type = llvm::ArrayType::get(ptr, stub.num_args);
    llvm::Value* slots = b.CreateAlloca(slots_type, nullptr, "slots");
    llvm::Value* args = b.CreateAlloca(slots_type, nullptr, "args");
    for (int i = 0; i < stub.num_args; ++i) {
      llvm::Value* slot = b.CreateConstInBoundsGEP2_32(slots_type, slots, 0, i);
      b.CreateStore(fn->getArg(i), slot);
      b.CreateStore(slot, b.CreateConstInBoundsGEP2_32(slots_type, args, 0, i));
    }
    // Outputs the kernel accumulates into start at zero; a failure returns its code.
    for (size_t z = 0; z < stub.launch.zeroed_args.size(); ++z) {
      llvm::Value* zrc = b.CreateCall(
          zero, {module_global, fn->getArg(stub.launch.zeroed_args[z]),
                 llvm::ConstantInt::get(i64, stub.zeroed_bytes[z]), fn->getArg(stub.num_args)});
      auto* failed = llvm::BasicBlock::Create(context, StrCat("zero", z, ".failed"), fn);
      auto* next = llvm::BasicBlock::Create(context, StrCat("zero", z, ".ok"), fn);
      b.CreateCondBr(b.CreateICmpNE(zrc, llvm::ConstantInt::get(i32, 0)), failed, next);
      b.SetInsertPoint(failed);
      b.CreateRet(zrc);
      b.SetInsertPoint(next);
    }
    llvm::Value* shared = llvm::ConstantInt::get(i32, stub.launch.dynamic_shared_bytes);
    llvm::Value* num_args = llvm::ConstantInt::get(i32, stub.num_args);
    if (!NeedsLaunchEx(stub.launch)) {
      b.CreateRet(b.CreateCall(launch, {module_global, name, grid, block, shared,
                                        fn->getArg(stub.num_args), args, num_args}));
      continue;
    }
    llvm::GlobalVariable* cluster = make_dims(stub.launch.cluster, "cluster");
    llvm::Constant* maps = llvm::ConstantPointerNull::get(ptr);
    if (!stub.launch.tensor_maps.empty()) {
      std::vector<llvm::Constant*> entries;
      for (const GpuTensorMap& map : stub.launch.tensor_maps) {
        entries.push_back(map_constant(map));
      }
      llvm::ArrayType* maps_type = llvm::ArrayType::get(map_type, entries.size());
      auto* g = new llvm::GlobalVariable(
          *module, maps_type, true, llvm::GlobalValue::PrivateLinkage,
          llvm::ConstantArray::get(maps_type, entries), StrCat(stub.func_name, ".tensor_maps"));
      g->setAlignment(llvm::Align(8));
      g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
      maps = g;
    }
    b.CreateRet(b.CreateCall(
        launch_ex(),
        {module_global, name, grid, block, cluster, shared, fn->getArg(stub.num_args), args,
         num_args, maps, llvm::ConstantInt::get(i32, stub.launch.tensor_maps.size())}));
  }

  if (llvm_ir != nullptr) {
    // Everything but the image's bytes.
    llvm_ir->clear();
    llvm::raw_string_ostream out(*llvm_ir);
    out << "; host stubs for " << (spec.api == GpuApi::kCuda ? "CUDA" : "HIP") << ", image of "
        << image.size() << " bytes in section " << kImageSection << "\n";
    for (const llvm::GlobalVariable& g : module->globals()) {
      if (&g != image_global) {
        g.print(out);
        out << "\n";
      }
    }
    for (const llvm::Function& f : module->functions()) {
      f.print(out);
    }
  }
  return EmitX86Object(*machine, *module, "host stubs");
}

}  // namespace tune
