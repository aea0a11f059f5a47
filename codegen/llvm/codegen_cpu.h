// Translation of lowered IR into an LLVM module for x86-64 (internal to codegen/llvm).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "codegen/llvm/codegen_llvm.h"
#include "common/target.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace tune::llvm_backend {

/// Stack allocations up to this many bytes live in the function's entry block (alloca);
/// larger ones are malloc'ed and freed around their body.
inline constexpr int64_t kMaxStackAllocationBytes = 64 * 1024;

/// Emits one LLVM function per LoweredFunc into a module. Not thread-safe; one per module.
/// The expressions and the shared statements are CodeGenLlvm's; this adds the C ABI, parallel
/// loops through libgomp, stack and heap allocations, external calls, returned statuses, and
/// x86-64's masked gathers and scatters.
class CodeGenCpu final : public CodeGenLlvm {
 public:
  /// `threads` > 1 turns parallel loops into GOMP_parallel calls, whose threads `bind` pins
  /// (thread_binding.h); `cpu` and `features` become the functions' target-cpu /
  /// target-features attributes.
  CodeGenCpu(llvm::Module* module, int threads, std::string cpu, std::string features,
             ThreadBinding bind = ThreadBinding::kNone);

  /// Adds `int32_t name(float* noalias ...)`. Returns the first error met (GPU constructs,
  /// conflicting extern declarations, a name already defined).
  absl::Status AddFunction(const ir::LoweredFunc& func);

 private:
  // Hooks of CodeGenLlvm.
  llvm::Value* EmitCallExtern(const ir::CallExtern* op) override;
  llvm::Value* EmitAddressOf(const ir::AddressOf* op) override;
  llvm::Align DenseAlignment(const ir::Buffer& buffer, const ir::Expr& base) override;
  llvm::Value* EmitGather(llvm::Type* type, llvm::Value* base, llvm::Value* index,
                          int lanes) override;
  void EmitFor(const ir::For* op) override;
  void EmitAllocate(const ir::Allocate* op) override;
  void EmitEvaluate(const ir::Evaluate* op) override;
  void EmitBarrier(const ir::Barrier* op) override;
  void EmitAtomicAdd(llvm::Value* base, const ir::Expr& index, llvm::Value* value) override;
  void EmitScatter(llvm::Value* base, llvm::Value* index, llvm::Value* value, int lanes) override;
  // x86's matrix instructions (codegen_cpu_matrix.cc).
  llvm::Value* EmitDotAccumulate(const ir::DotAccumulate* op) override;
  void EmitAmxTileOp(const ir::AmxTileOp* op) override;
  llvm::Value* EmitFloatToBf16(llvm::Value* v, int lanes) override;
  // Whether the functions' target has `feature` (an LLVM name such as "avx512bf16").
  bool HasFeature(std::string_view feature) const;
  // At the entry of a function whose body uses AMX tiles: the first call asks Linux for the
  // tile data (once per module: a flag), and returns kAmxDeniedStatus where it is refused.
  void EmitAmxPermission(const ir::LoweredFunc& func);

  void EmitParallelFor(const ir::For* op);
  llvm::AllocaInst* EntryAlloca(llvm::Type* type, const std::string& name);
  llvm::Function* NewFunction(const std::string& name, llvm::FunctionType* type, bool external);

  int threads_;
  ThreadBinding bind_;
  // HasFeature's answers (a named CPU's take building LLVM's subtarget information).
  mutable std::map<std::string, bool, std::less<>> features_known_;

  int parallel_count_ = 0;
  std::vector<llvm::Function*> created_;    // functions emitted for the current LoweredFunc
  std::vector<llvm::Value*> heap_buffers_;  // live aligned_alloc()s, outermost first: freed
                                            // before an early return
};

}  // namespace tune::llvm_backend
