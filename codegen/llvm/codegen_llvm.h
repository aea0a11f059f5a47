// The LLVM emitter the CPU and GPU backends share (internal to codegen/llvm), in the manner of
// Halide's CodeGen_LLVM: one translation of IR expressions and of the target-independent
// statements into LLVM IR, with hooks for what a target does its own way.
//
// Shared here: every expression (arithmetic, comparisons and casts as the IR defines them,
// vectors, dense loads), Block, LetStmt, IfThenElse, counted loops, the plain and dense Store,
// and the per-function state (variables, buffers, the first error met). Each backend
// (CodeGenCpu in codegen_cpu.h, CodeGenGpu in codegen_gpu.h) adds its function ABI and decides:
// loops (parallel, GPU), allocations, Evaluate, Barrier, atomic adds, gathers and scatters,
// the alignment of dense accesses, external calls and addresses.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace tune::llvm_backend {

class CodeGenLlvm {
 public:
  virtual ~CodeGenLlvm() = default;
  CodeGenLlvm(const CodeGenLlvm&) = delete;
  CodeGenLlvm& operator=(const CodeGenLlvm&) = delete;

 protected:
  /// `target_name` starts error messages ("CPU codegen"); `cpu` and `features` become each
  /// function's target-cpu / target-features attributes. Float operations carry `contract`.
  CodeGenLlvm(llvm::Module* module, std::string target_name, std::string cpu, std::string features);

  // --- Functions (codegen_llvm.cc).
  /// Adds nounwind and the target-cpu / target-features attributes to `f`.
  void AddTargetAttributes(llvm::Function* f);
  /// Starts emitting `func` into `f`: clears the per-function state, binds the buffer
  /// parameters to the first arguments (named after them, noalias) and puts the builder at the
  /// end of a new entry block, which it returns.
  llvm::BasicBlock* BeginFunction(llvm::Function* f, const ir::LoweredFunc& func);
  /// Keeps the first error met; emission goes on with placeholder values.
  void Fail(absl::Status status);

  // --- Expressions (codegen_llvm_expr.cc).
  llvm::Value* Emit(const ir::Expr& e);
  /// The LLVM type of an IR type (vectors fixed-width); records the widest vector used.
  llvm::Type* LlvmType(ir::Type t);
  /// The start of a buffer in scope (a parameter or an allocation).
  llvm::Value* BufferBase(const ir::Buffer& buffer);
  /// The LLVM type of one element of `buffer` (bfloat16 as i16 and the 8-bit floats as i8:
  /// their bits, converted by casts), and the alignment of a scalar access to it.
  llvm::Type* ElementType(const ir::Buffer& buffer);
  llvm::Align ElementAlign(const ir::Buffer& buffer);
  /// The alignment of a scalar access of LLVM type `type`: its size.
  static llvm::Align ScalarAlign(llvm::Type* type);
  /// Floor division (`is_div`) or floor modulo of signed integers, as the IR defines them;
  /// `divisor` is the IR of `b` (a constant power of two makes them a shift / a mask).
  llvm::Value* EmitFloorDivMod(llvm::Value* a, llvm::Value* b, const ir::Expr& divisor,
                               bool is_div);

  /// One relaxed `atomicrmw fadd` at `scope` per lane of `index` (float offsets from `base`, a
  /// scalar or a vector of `lanes`) with the matching lane of `value`; returns them, for
  /// target metadata.
  std::vector<llvm::AtomicRMWInst*> EmitAtomicAdds(llvm::Value* base, llvm::Value* index,
                                                   llvm::Value* value, int lanes,
                                                   llvm::SyncScope::ID scope);

  /// An external call and an element's address (CPU: a call and a GEP; GPU: Unimplemented).
  virtual llvm::Value* EmitCallExtern(const ir::CallExtern* op) = 0;
  virtual llvm::Value* EmitAddressOf(const ir::AddressOf* op) = 0;
  /// The alignment of a dense vector access at element offset `base` of `buffer`.
  virtual llvm::Align DenseAlignment(const ir::Buffer& buffer, const ir::Expr& base) = 0;
  /// A load of the `lanes` elements at the element offsets `index` (a vector) from `base`.
  virtual llvm::Value* EmitGather(llvm::Type* type, llvm::Value* base, llvm::Value* index,
                                  int lanes) = 0;

  // --- Statements (codegen_llvm.cc).
  void Emit(const ir::Stmt& s);
  /// A plain or atomic-add Store: scalar, dense (DenseAlignment), or a scatter.
  virtual void EmitStore(const ir::Store* op);
  virtual void EmitLetStmt(const ir::LetStmt* op);
  void EmitIfThenElse(const ir::IfThenElse* op);
  /// The loop `op` as a counted loop over [min, min + extent).
  void EmitCountedLoop(const ir::For* op);
  /// A loop of `var` over [begin, end) around `body`: `<var>.loop` with a phi, `<var>.exit`.
  void EmitSerialLoop(const ir::Var& var, llvm::Value* begin, llvm::Value* end,
                      const ir::Stmt& body);

  virtual void EmitFor(const ir::For* op) = 0;
  virtual void EmitAllocate(const ir::Allocate* op) = 0;
  virtual void EmitEvaluate(const ir::Evaluate* op) = 0;
  virtual void EmitBarrier(const ir::Barrier* op) = 0;
  /// A warp-level tensor-core step (GPU only; elsewhere Unimplemented).
  virtual void EmitWarpMma(const ir::WarpMma* op);
  virtual void EmitWarpGroupMma(const ir::WarpGroupMma* op);
  virtual void EmitTensorCopy(const ir::TensorCopy* op);
  virtual void EmitMBarrierOp(const ir::MBarrierOp* op);
  virtual void EmitSetMaxRegisters(const ir::SetMaxRegisters* op);
  virtual void EmitFetchAdd(const ir::FetchAdd* op);
  virtual void EmitWaveMma(const ir::WaveMma* op);
  virtual void EmitAmxTileOp(const ir::AmxTileOp* op);
  /// The sums of ir::DotAccumulate in plain vector arithmetic; a target with the instruction
  /// overrides it.
  virtual llvm::Value* EmitDotAccumulate(const ir::DotAccumulate* op);
  /// float32 lanes `v` -> bfloat16 bits (i16 lanes), to nearest even, a NaN a quiet NaN of its
  /// sign: integer arithmetic here; a target with a conversion instruction overrides it.
  virtual llvm::Value* EmitFloatToBf16(llvm::Value* v, int lanes);
  /// `base[index] += value` atomically, lane by lane (`value` already emitted).
  virtual void EmitAtomicAdd(llvm::Value* base, const ir::Expr& index, llvm::Value* value) = 0;
  /// A store of the `lanes` lanes of `value` at the element offsets `index` (a vector) of
  /// `base`.
  virtual void EmitScatter(llvm::Value* base, llvm::Value* index, llvm::Value* value,
                           int lanes) = 0;

  llvm::Module* module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> builder_;
  const std::string target_name_;
  const std::string cpu_;
  const std::string features_;

  llvm::Function* function_ = nullptr;  // the function being emitted into
  std::string func_name_;               // the LoweredFunc's name
  int max_vector_bits_ = 0;             // the widest vector type of the function
  std::map<const ir::Variable*, llvm::Value*> vars_;
  std::map<const ir::BufferNode*, llvm::Value*> buffers_;
  absl::Status status_;

 private:
  /// `a op b` on the emitted operands of a binary node; `op(a, b, is_float)`.
  template <typename Op>
  llvm::Value* EmitBinary(const ir::Expr& e, Op op);
  llvm::Value* EmitCast(ir::Type to, const ir::Expr& value);
  llvm::Value* EmitRamp(const ir::Ramp* op);
  llvm::Value* EmitShuffle(const ir::Shuffle* op);
  llvm::Value* EmitLoad(const ir::Load* op);
};

}  // namespace tune::llvm_backend
