// Translation of lowered GPU kernels into an LLVM module for NVPTX or AMDGPU (internal to
// codegen/llvm). The kernel ABI and the lowering rules are described in codegen/README.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "codegen/llvm/codegen_llvm.h"
#include "common/gpu_arch.h"
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
/// The expressions and the shared statements are CodeGenLlvm's; this adds the kernel ABI, GPU
/// loops as block / thread indices, gpu_shared and gpu_local arrays, barriers, asynchronous
/// copies, device-scope atomic adds, lane-by-lane gathers and scatters, and the alignment of
/// dense accesses that KnownMultiple proves.
class CodeGenGpu final : public CodeGenLlvm {
 public:
  CodeGenGpu(llvm::Module* module, const GpuArch& arch);

  /// Adds the kernel `void name(ptr addrspace(1) noalias ...)` with its launch bounds. Returns
  /// the first error met (CallExtern, AddressOf, Evaluate: Unimplemented; a name defined twice:
  /// InvalidArgument).
  absl::Status AddKernel(const ir::LoweredFunc& func, const GpuLaunch& launch);

 private:
  bool nvptx() const { return arch_.kind == TargetKind::kCuda; }

  // Hooks of CodeGenLlvm.
  llvm::Value* EmitCallExtern(const ir::CallExtern* op) override;
  llvm::Value* EmitAddressOf(const ir::AddressOf* op) override;
  llvm::Align DenseAlignment(const ir::Buffer& buffer, const ir::Expr& base) override;
  llvm::Value* EmitGather(llvm::Type* type, llvm::Value* base, llvm::Value* index,
                          int lanes) override;
  void EmitStore(const ir::Store* op) override;
  void EmitLetStmt(const ir::LetStmt* op) override;
  void EmitFor(const ir::For* op) override;
  void EmitAllocate(const ir::Allocate* op) override;
  void EmitEvaluate(const ir::Evaluate* op) override;
  void EmitBarrier(const ir::Barrier* op) override;
  void EmitFetchAdd(const ir::FetchAdd* op) override;
  void EmitDeviceFence(llvm::AtomicOrdering ordering);
  void EmitWarpMma(const ir::WarpMma* op) override;                  // codegen_gpu_mma.cc
  void EmitWarpGroupMma(const ir::WarpGroupMma* op) override;        // codegen_gpu_wgmma.cc
  void EmitAsyncProxyFence();                                        // codegen_gpu_wgmma.cc
  void EmitWaveMma(const ir::WaveMma* op) override;                  // codegen_gpu_wave_mma.cc
  void EmitTensorCopy(const ir::TensorCopy* op) override;            // codegen_gpu_tma.cc
  void EmitMBarrierOp(const ir::MBarrierOp* op) override;            // codegen_gpu_tma.cc
  void EmitSetMaxRegisters(const ir::SetMaxRegisters* op) override;  // codegen_gpu_tma.cc
  llvm::Type* TensorMapType();                                       // codegen_gpu_tma.cc
  void AnnotateGridConstants(llvm::Function* f, unsigned first, unsigned count);
  void AnnotateRegisterBudget(llvm::Function* f, const ir::LoweredFunc& func,
                              const GpuLaunch& launch);
  llvm::Value* SharedAddress32(const ir::Buffer& buffer, const ir::Expr& index);
  void InlinePtx(const std::string& text, const std::string& constraints,
                 const std::vector<llvm::Value*>& operands);
  void EmitAtomicAdd(llvm::Value* base, const ir::Expr& index, llvm::Value* value) override;
  void EmitScatter(llvm::Value* base, llvm::Value* index, llvm::Value* value, int lanes) override;

  void EmitAsyncCopy(const ir::Store* op);
  llvm::Value* GpuIndex(bool block, int axis);
  llvm::Value* DynamicShared();
  void AnnotateKernel(llvm::Function* f, const GpuLaunch& launch, int64_t min_blocks);

  GpuArch arch_;
  llvm::BasicBlock* entry_ = nullptr;  // allocas go here
  // With dynamic shared memory (GpuLaunch::dynamic_shared_bytes), the gpu_shared arrays lie
  // in one region at 16-byte aligned offsets, in the order they are allocated.
  bool dynamic_shared_ = false;
  int64_t shared_offset_ = 0;
  // GpuSharedAlignment of the kernel being emitted.
  int64_t shared_alignment_ = 16;
  std::map<const ir::Variable*, int64_t> multiples_;  // let-bound variables' known multiples
  // The kernel's tensor maps (TensorMapsOf) and the by-value parameters that carry them.
  std::vector<ir::TensorMap> tensor_maps_;
  std::vector<llvm::Value*> tensor_map_args_;
};

}  // namespace tune::llvm_backend
