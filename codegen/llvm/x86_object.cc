#include "codegen/llvm/x86_object.h"

#include <mutex>

#include "common/strings.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetOptions.h"

namespace tune {

void InitializeX86Target() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
  });
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> GenericX86Machine() {
  InitializeX86Target();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kX86Triple, error);
  if (target == nullptr) {
    return absl::InternalError(StrCat("LLVM has no x86-64 target: ", error));
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      kX86Triple, "x86-64", "", llvm::TargetOptions(), llvm::Reloc::PIC_, llvm::CodeModel::Small,
      llvm::CodeGenOptLevel::Default));
  if (machine == nullptr) {
    return absl::InternalError("LLVM could not create an x86-64 target machine");
  }
  return machine;
}

absl::StatusOr<std::string> EmitX86Object(llvm::TargetMachine& machine, llvm::Module& module,
                                          std::string_view what) {
  std::string verify_errors;
  llvm::raw_string_ostream verify_stream(verify_errors);
  if (llvm::verifyModule(module, &verify_stream)) {
    return absl::InternalError(StrCat(what, ": invalid LLVM IR: ", verify_errors));
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager emit;
  if (machine.addPassesToEmitFile(emit, out, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return absl::InternalError("LLVM x86-64 target cannot emit an object file");
  }
  emit.run(module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace tune
