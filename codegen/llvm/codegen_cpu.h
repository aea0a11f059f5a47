// Translation of lowered IR into an LLVM module for x86-64 (internal to codegen/llvm).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "common/target.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace tune::llvm_backend {

/// Stack allocations up to this many bytes live in the function's entry block (alloca);
/// larger ones are malloc'ed and freed around their body.
inline constexpr int64_t kMaxStackAllocationBytes = 64 * 1024;

/// Emits one LLVM function per LoweredFunc into a module. Not thread-safe; one per module.
class CodeGenCpu {
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
  // Expressions (codegen_cpu_expr.cc).
  llvm::Value* Emit(const ir::Expr& e);
  llvm::Value* EmitBinary(const ir::Expr& e);
  llvm::Value* EmitCast(ir::Type to, const ir::Expr& value);
  llvm::Value* EmitRamp(const ir::Ramp* op);
  llvm::Value* EmitLoad(const ir::Load* op);
  llvm::Value* EmitCall(const ir::CallExtern* op);
  llvm::Value* BufferBase(const ir::Buffer& buffer);
  /// Pointer for a dense access (index a ramp of stride 1 or a scalar), or nullptr.
  llvm::Value* DenseAddress(const ir::Buffer& buffer, const ir::Expr& index);
  llvm::Type* LlvmType(ir::Type t);

  // Statements (codegen_cpu.cc).
  void Emit(const ir::Stmt& s);
  void EmitStore(const ir::Store* op);
  void EmitFor(const ir::For* op);
  void EmitSerialLoop(const ir::Var& var, llvm::Value* begin, llvm::Value* end,
                      const ir::Stmt& body);
  void EmitParallelFor(const ir::For* op);
  void EmitIfThenElse(const ir::IfThenElse* op);
  void EmitAllocate(const ir::Allocate* op);
  void EmitEvaluate(const ir::Evaluate* op);
  llvm::AllocaInst* EntryAlloca(llvm::Type* type, const std::string& name);
  llvm::Function* NewFunction(const std::string& name, llvm::FunctionType* type, bool external);

  void Fail(absl::Status status);

  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> builder_;
  int threads_;
  ThreadBinding bind_;
  std::string cpu_;
  std::string features_;
  int max_vector_bits_ = 0;

  llvm::Function* function_ = nullptr;  // the function being emitted into
  std::string func_name_;
  int parallel_count_ = 0;
  std::vector<llvm::Function*> created_;  // functions emitted for the current LoweredFunc
  std::map<const ir::Variable*, llvm::Value*> vars_;
  std::map<const ir::BufferNode*, llvm::Value*> buffers_;
  std::vector<llvm::Value*> heap_buffers_;  // live aligned_alloc()s, outermost first: freed
                                            // before an early return
  absl::Status status_;
};

}  // namespace tune::llvm_backend
