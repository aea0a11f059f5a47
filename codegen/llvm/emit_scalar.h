// LLVM instructions for the IR's arithmetic, comparisons, casts and atomic adds, shared by the
// CPU and GPU emitters (internal to codegen/llvm): what an operator means does not depend on the
// target.
#pragma once

#include <vector>

#include "codegen/ir/ir.h"
#include "llvm/IR/IRBuilder.h"

namespace tune::llvm_backend {

/// `a op b` for a binary node kind (Add ... Or) on operands already emitted; `divisor` is the
/// IR of `b` (a constant power of two makes floor Div/Mod a shift/mask). nullptr for a kind that
/// is not binary.
llvm::Value* EmitBinaryOp(llvm::IRBuilder<>& builder, ir::ExprKind kind, llvm::Value* a,
                          llvm::Value* b, const ir::Expr& divisor, bool is_float);

/// Floor division (`is_div`) or floor modulo of signed integers, as the IR defines them.
llvm::Value* EmitFloorDivMod(llvm::IRBuilder<>& builder, llvm::Value* a, llvm::Value* b,
                             const ir::Expr& divisor, bool is_div);

/// `v` (of IR type `from`) converted to IR type `to` (LLVM type `type`) as ir::Cast defines it;
/// nullptr for a pair of types the IR has no cast for.
llvm::Value* EmitCastValue(llvm::IRBuilder<>& builder, llvm::Value* v, ir::Type from, ir::Type to,
                           llvm::Type* type);

/// A Store's atomic add: one relaxed `atomicrmw fadd` at `scope` per lane of `index` (float
/// element offsets from `base`, a scalar or a vector of `lanes`) with the matching lane of
/// `value`. Returns the instructions, for target metadata.
std::vector<llvm::AtomicRMWInst*> EmitAtomicAdds(llvm::IRBuilder<>& builder, llvm::Value* base,
                                                 llvm::Value* index, llvm::Value* value, int lanes,
                                                 llvm::SyncScope::ID scope);

}  // namespace tune::llvm_backend
