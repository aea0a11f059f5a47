// Translation of lowered GPU kernels into an LLVM module for NVPTX or AMDGPU (internal to
// codegen/llvm). The kernel ABI and the lowering rules are described in codegen/README.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "common/gpu_arch.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace tune::llvm_backend {

/// Alignment in bytes of the start of a kernel parameter buffer (cuMemAlloc / hipMalloc give at
/// least 256) and of a gpu_shared / gpu_local array.
inline constexpr int64_t kGpuParamAlignment = 256;
inline constexpr int64_t kGpuArrayAlignment = 16;

/// The largest power of two (capped at 2^20) known to divide the integer expression `e`, given
/// the known multiples of let-bound variables (other variables count as multiples of 1).
int64_t KnownMultiple(const ir::Expr& e, const std::map<const ir::Variable*, int64_t>& vars);

/// Links an AMDGPU relocatable object into an HSA code object at `out_path` with
/// `ld.lld -shared` (the linker LinkSharedObject finds). Defined in linker.cc.
absl::Status LinkHsaCodeObject(const std::string& object_path, const std::string& out_path);

/// Emits one kernel per LoweredFunc into a module for `arch`. Not thread-safe; one per module.
class CodeGenGpu {
 public:
  CodeGenGpu(llvm::Module* module, const GpuArch& arch);

  /// Adds the kernel `void name(ptr addrspace(1) noalias ...)` with its launch bounds. Returns
  /// the first error met (CallExtern, AddressOf, Evaluate: Unimplemented; a name defined twice:
  /// InvalidArgument).
  absl::Status AddKernel(const ir::LoweredFunc& func, const GpuLaunch& launch);

 private:
  bool nvptx() const { return arch_.kind == TargetKind::kCuda; }

  // Expressions (codegen_gpu_expr.cc).
  llvm::Value* Emit(const ir::Expr& e);
  llvm::Value* EmitBinary(const ir::Expr& e);
  llvm::Value* EmitCast(ir::Type to, const ir::Expr& value);
  llvm::Value* EmitRamp(const ir::Ramp* op);
  llvm::Value* EmitLoad(const ir::Load* op);
  llvm::Value* BufferBase(const ir::Buffer& buffer);
  /// Alignment of a dense access at element offset `base` of `buffer`.
  llvm::Align DenseAlignment(const ir::Buffer& buffer, const ir::Expr& base);
  llvm::Type* LlvmType(ir::Type t);

  // Statements (codegen_gpu.cc).
  void Emit(const ir::Stmt& s);
  void EmitStore(const ir::Store* op);
  void EmitAtomicAdd(llvm::Value* base, const ir::Expr& index, llvm::Value* value);
  void EmitFor(const ir::For* op);
  void EmitIfThenElse(const ir::IfThenElse* op);
  void EmitAllocate(const ir::Allocate* op);
  void EmitBarrier(const ir::Barrier* op);
  void EmitAsyncCopy(const ir::Store* op);
  llvm::Value* GpuIndex(bool block, int axis);
  void AnnotateKernel(llvm::Function* f, const GpuLaunch& launch);

  void Fail(absl::Status status);

  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> builder_;
  GpuArch arch_;

  llvm::Function* function_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;  // allocas go here
  std::string func_name_;
  std::map<const ir::Variable*, llvm::Value*> vars_;
  std::map<const ir::Variable*, int64_t> multiples_;  // let-bound variables' known multiples
  std::map<const ir::BufferNode*, llvm::Value*> buffers_;
  absl::Status status_;
};

}  // namespace tune::llvm_backend
