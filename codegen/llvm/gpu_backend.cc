#include "codegen/llvm/gpu_backend.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>

#include "codegen/ir/visitor.h"
#include "codegen/llvm/codegen_gpu.h"
#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace tune {
namespace {

void InitializeGpuTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> MakeTargetMachine(const GpuArch& arch,
                                                                       std::string_view features,
                                                                       int opt_level) {
  InitializeGpuTargets();
  std::string triple(arch.llvm_triple);
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) {
    return absl::InternalError(StrCat("LLVM has no target for ", triple, ": ", error));
  }
  llvm::TargetOptions target_options;
  target_options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  llvm::CodeGenOptLevel level = opt_level == 0   ? llvm::CodeGenOptLevel::None
                                : opt_level == 1 ? llvm::CodeGenOptLevel::Less
                                : opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                                 : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, std::string(arch.llvm_cpu), std::string(features),
                                  target_options, llvm::Reloc::PIC_, std::nullopt, level));
  if (machine == nullptr) {
    return absl::InternalError(
        StrCat("LLVM could not create a target machine for ", triple, " ", arch.llvm_cpu));
  }
  return machine;
}

bool HasFp8WarpMma(const ir::Stmt& body) {
  class Finder final : public ir::IrVisitor {
   public:
    bool found = false;
    void Visit(const ir::WarpMma* op) override { found = found || IsFp8Dtype(op->dtype); }
  } finder;
  finder.VisitStmt(body);
  return finder.found;
}

// The O3 (or opt_level) pipeline with the target machine's own passes registered (NVVM
// reflection, AMDGPU attribute inference, address-space inference, ...).
void Optimize(llvm::Module& module, llvm::TargetMachine& machine, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level == 1   ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = opt_level == 0
                                       ? builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                       : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

absl::StatusOr<std::string> EmitFile(llvm::Module& module, llvm::TargetMachine& machine,
                                     llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager emit;
  if (machine.addPassesToEmitFile(emit, out, nullptr, type)) {
    return absl::InternalError(
        StrCat("LLVM ", machine.getTargetTriple().str(), " cannot emit this file type"));
  }
  emit.run(module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace

absl::StatusOr<GpuModule> EmitGpuModule(const std::vector<ir::LoweredFunc>& funcs,
                                        const GpuCodegenOptions& options) {
  if (funcs.empty()) {
    return absl::InvalidArgumentError("EmitGpuModule: no kernels to emit");
  }
  if (options.opt_level < 0 || options.opt_level > 3) {
    return absl::InvalidArgumentError(StrCat("opt_level: must be 0..3, got ", options.opt_level));
  }
  ASSIGN_OR_RETURN(GpuArch arch, GpuArchFor(options.target));
  const bool cuda = arch.kind == TargetKind::kCuda;
  const int cov = options.target.code_object_version;
  if (!cuda && cov != 4 && cov != 5) {
    return absl::InvalidArgumentError(
        StrCat("code_object_version: ", cov, " is not a supported HSA code object version (4, 5)"));
  }
  GpuModule result;
  result.format = cuda ? CodeFormat::kPtx : CodeFormat::kHsaco;
  std::set<std::string> names;
  for (const ir::LoweredFunc& func : funcs) {
    if (!names.insert(func.name).second) {
      return absl::InvalidArgumentError(
          StrCat("GPU codegen: kernel ", func.name, " is defined twice"));
    }
    ASSIGN_OR_RETURN(GpuLaunch launch, GpuLaunchOf(func, &arch));
    result.kernels.push_back({func.name, launch});
  }

  // mma.sync with 8-bit float operands is PTX ISA 8.4: only modules that issue it ask drivers
  // for that version.
  const bool fp8_mma = std::any_of(funcs.begin(), funcs.end(),
                                   [](const ir::LoweredFunc& f) { return HasFp8WarpMma(f.body); });
  if (fp8_mma && arch.name != "sm_89" && arch.name != "sm_90" && arch.name != "sm_90a") {
    return absl::InvalidArgumentError(
        StrCat("GPU codegen: mma.sync on 8-bit floats needs sm_89 or later, not ", arch.name));
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<llvm::TargetMachine> machine,
      MakeTargetMachine(arch, fp8_mma ? "+ptx84" : arch.llvm_features, options.opt_level));
  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>("tune", context);
  module->setTargetTriple(std::string(arch.llvm_triple));
  module->setDataLayout(machine->createDataLayout());
  if (!cuda) {
    // LLVM 19 reads the code object version from this flag as version * 100 (500 for v5); it
    // decides the kernel descriptor's layout, the implicit kernel arguments and the metadata
    // note (amdhsa.version). No device library (ocml/ockl) is linked: the kernels call none,
    // so there is no oclc_abi_version to keep in step with it.
    module->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", cov * 100);
  }
  llvm_backend::CodeGenGpu codegen(module.get(), arch);
  for (size_t i = 0; i < funcs.size(); ++i) {
    RETURN_IF_ERROR(codegen.AddKernel(funcs[i], result.kernels[i].launch));
  }
  std::string verify_errors;
  llvm::raw_string_ostream verify_stream(verify_errors);
  if (llvm::verifyModule(*module, &verify_stream)) {
    return absl::InternalError(StrCat("GPU codegen produced invalid LLVM IR: ", verify_errors));
  }
  Optimize(*module, *machine, options.opt_level);
  {
    llvm::raw_string_ostream ir_stream(result.llvm_ir);
    module->print(ir_stream, nullptr);
  }

  if (cuda) {
    ASSIGN_OR_RETURN(result.assembly,
                     EmitFile(*module, *machine, llvm::CodeGenFileType::AssemblyFile));
    result.code = result.assembly;
    return result;
  }
  // Code generation changes the module: the assembly comes from a copy.
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*module);
  ASSIGN_OR_RETURN(result.assembly, EmitFile(*copy, *machine, llvm::CodeGenFileType::AssemblyFile));
  ASSIGN_OR_RETURN(std::string object,
                   EmitFile(*module, *machine, llvm::CodeGenFileType::ObjectFile));
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("tune-hsaco-"));
  const std::string object_path = dir.File("kernels.o");
  const std::string hsaco_path = dir.File("kernels.hsaco");
  RETURN_IF_ERROR(WriteFileAtomically(object_path, object));
  RETURN_IF_ERROR(llvm_backend::LinkHsaCodeObject(object_path, hsaco_path));
  ASSIGN_OR_RETURN(result.code, ReadFile(hsaco_path));
  return result;
}

}  // namespace tune
