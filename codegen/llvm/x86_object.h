// Small host-code modules (GPU host stubs, shape-range entry points) as x86-64 ELF objects for
// the generic x86-64 CPU: the target machine and the object emission they share.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace tune {

inline constexpr char kX86Triple[] = "x86_64-unknown-linux-gnu";

/// Initialises LLVM's X86 target (info, target, MC, assembly printer and parser) once per
/// process.
void InitializeX86Target();

/// A PIC target machine for generic x86-64 (LLVM's X86 target initialised once per process).
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> GenericX86Machine();

/// Verifies `module` (Internal naming `what` and the verifier's message when invalid) and emits
/// it as an object with `machine`.
absl::StatusOr<std::string> EmitX86Object(llvm::TargetMachine& machine, llvm::Module& module,
                                          std::string_view what);

}  // namespace tune
