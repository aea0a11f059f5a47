// The target registration hooks lld's ELF driver calls before LTO, defined empty: the bundle's
// ld.lld links ELF objects only, so it carries none of LLVM's code generators (they would make it
// ten times larger). Every target LLVM was built with is listed by LLVM's own .def files.
#define TUNE_EMPTY(name) \
  extern "C" void name() {}

#define LLVM_TARGET(T)                      \
  TUNE_EMPTY(LLVMInitialize##T##TargetInfo) \
  TUNE_EMPTY(LLVMInitialize##T##Target)     \
  TUNE_EMPTY(LLVMInitialize##T##TargetMC)
#include "llvm/Config/Targets.def"

#define LLVM_ASM_PRINTER(T) TUNE_EMPTY(LLVMInitialize##T##AsmPrinter)
#include "llvm/Config/AsmPrinters.def"

#define LLVM_ASM_PARSER(T) TUNE_EMPTY(LLVMInitialize##T##AsmParser)
#include "llvm/Config/AsmParsers.def"

#define LLVM_DISASSEMBLER(T) TUNE_EMPTY(LLVMInitialize##T##Disassembler)
#include "llvm/Config/Disassemblers.def"

// Debian's LLVM is built with Polly linked into its tools, so LTO's pass pipeline asks for
// Polly's plugin; Debian ships no static Polly. An empty plugin: the pipeline runs without it.
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly", "none", [](llvm::PassBuilder&) {}};
}
