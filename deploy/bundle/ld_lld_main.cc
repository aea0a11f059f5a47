// ld.lld of tune's bundles: LLVM's ELF linker driver, the same command line as ld.lld-19.
#include "lld/Common/Driver.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

int main(int argc, const char** argv) {
  llvm::InitLLVM init(argc, argv);
  lld::Result result = lld::lldMain(llvm::ArrayRef<const char*>(argv, argc), llvm::outs(),
                                    llvm::errs(), {{lld::Gnu, &lld::elf::link}});
  return result.retCode;
}
