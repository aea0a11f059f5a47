#include "codegen/llvm/cpu_backend.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <set>

#include "codegen/llvm/codegen_cpu.h"
#include "codegen/llvm/cpu_names.h"
#include "codegen/llvm/x86_object.h"
#include "common/host_cpu.h"
#include "common/status.h"
#include "common/strings.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

namespace tune {
namespace {

constexpr const char* kTriple = kX86Triple;

struct ResolvedCpu {
  std::string name;
  std::string features;  // "+avx2,+fma,-avx512f,..." for the host; empty for a named CPU
};

// "native" is named by common/host_cpu.h (CPUID), the single source of truth for the host CPU's
// name: a worker's device key, a resolved `-mcpu=native` target and the code generated for
// "native" then name the same CPU even where LLVM's own detection would differ (the test
// CpuBackendTest.HostCpuNameAgreesWithCommonHostCpu checks that they agree on known models).
// LLVM supplies only the feature flags, which it needs in its own spelling and which also
// reflect what the OS enables (e.g. AVX-512 state).
ResolvedCpu ResolveCpu(const std::string& cpu) {
  if (cpu != "native" && !cpu.empty()) {
    return {cpu, ""};
  }
  std::vector<std::string> features;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    features.push_back(StrCat(entry.second ? "+" : "-", entry.first().str()));
  }
  std::sort(features.begin(), features.end());
  return {GetHostCpu().name, Join(features, ",")};
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> MakeTargetMachine(
    const ResolvedCpu& cpu, const CpuCodegenOptions& options) {
  InitializeX86Target();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (target == nullptr) {
    return absl::InternalError(StrCat("LLVM has no x86-64 target: ", error));
  }
  llvm::TargetOptions target_options;
  target_options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive;
  switch (options.opt_level) {
    case 0:
      level = llvm::CodeGenOptLevel::None;
      break;
    case 1:
      level = llvm::CodeGenOptLevel::Less;
      break;
    case 2:
      level = llvm::CodeGenOptLevel::Default;
      break;
    default:
      break;
  }
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(kTriple, cpu.name, cpu.features, target_options,
                                  llvm::Reloc::PIC_, llvm::CodeModel::Small, level));
  if (machine == nullptr) {
    return absl::InternalError(StrCat("LLVM could not create a target machine for ", cpu.name));
  }
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpu.name)) {
    return absl::InvalidArgumentError(
        StrCat("cpu: unknown x86-64 CPU '", cpu.name,
               "'; expected an LLVM -mcpu name such as haswell, skylake-avx512, znver4 or "
               "native"));
  }
  return machine;
}

void Optimize(llvm::Module& module, llvm::TargetMachine& machine, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
  if (opt_level == 1) {
    level = llvm::OptimizationLevel::O1;
  } else if (opt_level == 2) {
    level = llvm::OptimizationLevel::O2;
  }
  llvm::ModulePassManager passes = opt_level == 0
                                       ? builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                       : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

// Builds, verifies and optimises the module, then emits it as `file_type`.
absl::StatusOr<std::string> Emit(const std::vector<ir::LoweredFunc>& funcs,
                                 const std::vector<ExportedConstant>& constants,
                                 const CpuCodegenOptions& options, llvm::CodeGenFileType file_type,
                                 std::string* llvm_ir) {
  if (funcs.empty()) {
    return absl::InvalidArgumentError("EmitCpuObject: no functions to emit");
  }
  if (options.threads < 1) {
    return absl::InvalidArgumentError(StrCat("threads: must be >= 1, got ", options.threads));
  }
  if (options.opt_level < 0 || options.opt_level > 3) {
    return absl::InvalidArgumentError(StrCat("opt_level: must be 0..3, got ", options.opt_level));
  }
  ResolvedCpu cpu = ResolveCpu(options.cpu);
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, MakeTargetMachine(cpu, options));

  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>("tune", context);
  module->setTargetTriple(kTriple);
  module->setDataLayout(machine->createDataLayout());
  llvm_backend::CodeGenCpu codegen(module.get(), options.threads, cpu.name, cpu.features,
                                   options.bind);
  for (const ir::LoweredFunc& func : funcs) {
    RETURN_IF_ERROR(codegen.AddFunction(func));
  }
  for (const ExportedConstant& constant : constants) {
    if (module->getNamedValue(constant.name) != nullptr) {
      return absl::InvalidArgumentError(
          StrCat("CPU codegen: ", constant.name, " is defined twice (a constant and a function)"));
    }
    llvm::Type* i64 = llvm::Type::getInt64Ty(context);
    new llvm::GlobalVariable(*module, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                             llvm::ConstantInt::get(i64, constant.value), constant.name);
  }
  std::string verify_errors;
  llvm::raw_string_ostream verify_stream(verify_errors);
  if (llvm::verifyModule(*module, &verify_stream)) {
    return absl::InternalError(StrCat("CPU codegen produced invalid LLVM IR: ", verify_errors));
  }
  Optimize(*module, *machine, options.opt_level);
  if (llvm_ir != nullptr) {
    llvm_ir->clear();
    llvm::raw_string_ostream ir_stream(*llvm_ir);
    module->print(ir_stream, nullptr);
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager emit;
  if (machine->addPassesToEmitFile(emit, out, nullptr, file_type)) {
    return absl::InternalError("LLVM x86-64 target cannot emit this file type");
  }
  emit.run(*module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace

absl::StatusOr<std::string> EmitCpuObject(const std::vector<ir::LoweredFunc>& funcs,
                                          const CpuCodegenOptions& options, std::string* llvm_ir,
                                          const std::vector<ExportedConstant>& constants) {
  return Emit(funcs, constants, options, llvm::CodeGenFileType::ObjectFile, llvm_ir);
}

absl::StatusOr<std::string> EmitCpuAssembly(const std::vector<ir::LoweredFunc>& funcs,
                                            const CpuCodegenOptions& options) {
  return Emit(funcs, {}, options, llvm::CodeGenFileType::AssemblyFile, nullptr);
}

absl::Status CheckX86CpuName(std::string_view cpu) {
  if (cpu == "native") {
    return absl::OkStatus();
  }
  const bool printable =
      !cpu.empty() && cpu.size() <= 64 && std::all_of(cpu.begin(), cpu.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (printable) {
    InitializeX86Target();
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
    if (target == nullptr) {
      return absl::InternalError(StrCat("LLVM has no x86-64 target: ", error));
    }
    std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(kTriple, "", ""));
    if (info != nullptr && info->isCPUStringValid(cpu)) {
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(
      StrCat("-mcpu=", printable ? cpu : "(a value with characters no CPU name has)",
             " is not an x86-64 CPU that LLVM ", LLVM_VERSION_STRING,
             " knows; accepted form: native or an LLVM x86-64 CPU name such as haswell, "
             "skylake-avx512, sapphirerapids, znver4 (llc -mtriple=x86_64 -mcpu=help lists them)"));
}

bool X86CpuHasFeature(std::string_view cpu, std::string_view feature) {
  InitializeX86Target();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (target == nullptr) {
    return false;
  }
  const llvm::StringRef name(cpu.data(), cpu.size());
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(kTriple, "", ""));
  if (generic == nullptr || !generic->isCPUStringValid(name)) {
    return false;  // (creating the info of an unknown name would print a warning)
  }
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(kTriple, name, ""));
  return info != nullptr && info->checkFeatures(StrCat("+", feature));
}

std::string LlvmHostCpuName() { return llvm::sys::getHostCPUName().str(); }

}  // namespace tune
