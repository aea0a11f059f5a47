// Traversal of the IR: IrVisitor walks a tree read-only, IrMutator rebuilds it.
#pragma once

#include "codegen/ir/ir.h"

namespace tune::ir {

/// Walks expressions and statements. Each Visit overload visits the node's children by default;
/// override the ones of interest and call IrVisitor::Visit(op) to keep walking below them.
class IrVisitor {
 public:
  virtual ~IrVisitor() = default;

  /// Dispatches on the node kind (undefined handles are ignored).
  virtual void VisitExpr(const Expr& e);
  virtual void VisitStmt(const Stmt& s);

 protected:
  virtual void Visit(const IntImm* op);
  virtual void Visit(const FloatImm* op);
  virtual void Visit(const Variable* op);
  virtual void Visit(const Add* op);
  virtual void Visit(const Sub* op);
  virtual void Visit(const Mul* op);
  virtual void Visit(const Div* op);
  virtual void Visit(const Mod* op);
  virtual void Visit(const Min* op);
  virtual void Visit(const Max* op);
  virtual void Visit(const EQ* op);
  virtual void Visit(const NE* op);
  virtual void Visit(const LT* op);
  virtual void Visit(const LE* op);
  virtual void Visit(const GT* op);
  virtual void Visit(const GE* op);
  virtual void Visit(const And* op);
  virtual void Visit(const Or* op);
  virtual void Visit(const Not* op);
  virtual void Visit(const Select* op);
  virtual void Visit(const Cast* op);
  virtual void Visit(const Broadcast* op);
  virtual void Visit(const Reinterpret* op);
  virtual void Visit(const Shuffle* op);
  virtual void Visit(const Ramp* op);
  virtual void Visit(const Load* op);
  virtual void Visit(const Fma* op);
  virtual void Visit(const DotAccumulate* op);
  virtual void Visit(const CallExtern* op);
  virtual void Visit(const AddressOf* op);

  virtual void Visit(const Store* op);
  virtual void Visit(const For* op);
  virtual void Visit(const Block* op);
  virtual void Visit(const IfThenElse* op);
  virtual void Visit(const LetStmt* op);
  virtual void Visit(const Allocate* op);
  virtual void Visit(const Evaluate* op);
  virtual void Visit(const Barrier* op);
  virtual void Visit(const WarpMma* op);
  virtual void Visit(const WarpGroupMma* op);
  virtual void Visit(const WaveMma* op);
  virtual void Visit(const TensorCopy* op);
  virtual void Visit(const MBarrierOp* op);
  virtual void Visit(const SetMaxRegisters* op);
  virtual void Visit(const FetchAdd* op);
  virtual void Visit(const AmxTileOp* op);

  /// Visits both operands (the default of every binary node).
  void VisitBinary(const BinaryExprNode* op);
};

/// Rebuilds expressions and statements bottom-up. Each Visit overload mutates the children and
/// returns the original node when none changed, else a node rebuilt with Make.
class IrMutator {
 public:
  virtual ~IrMutator() = default;

  /// Dispatches on the node kind; an undefined handle is returned unchanged.
  virtual Expr Mutate(const Expr& e);
  virtual Stmt Mutate(const Stmt& s);

 protected:
  virtual Expr Visit(const IntImm* op);
  virtual Expr Visit(const FloatImm* op);
  virtual Expr Visit(const Variable* op);
  virtual Expr Visit(const Add* op);
  virtual Expr Visit(const Sub* op);
  virtual Expr Visit(const Mul* op);
  virtual Expr Visit(const Div* op);
  virtual Expr Visit(const Mod* op);
  virtual Expr Visit(const Min* op);
  virtual Expr Visit(const Max* op);
  virtual Expr Visit(const EQ* op);
  virtual Expr Visit(const NE* op);
  virtual Expr Visit(const LT* op);
  virtual Expr Visit(const LE* op);
  virtual Expr Visit(const GT* op);
  virtual Expr Visit(const GE* op);
  virtual Expr Visit(const And* op);
  virtual Expr Visit(const Or* op);
  virtual Expr Visit(const Not* op);
  virtual Expr Visit(const Select* op);
  virtual Expr Visit(const Cast* op);
  virtual Expr Visit(const Broadcast* op);
  virtual Expr Visit(const Reinterpret* op);
  virtual Expr Visit(const Shuffle* op);
  virtual Expr Visit(const Ramp* op);
  virtual Expr Visit(const Load* op);
  virtual Expr Visit(const Fma* op);
  virtual Expr Visit(const DotAccumulate* op);
  virtual Expr Visit(const CallExtern* op);
  virtual Expr Visit(const AddressOf* op);

  virtual Stmt Visit(const Store* op);
  virtual Stmt Visit(const For* op);
  virtual Stmt Visit(const Block* op);
  virtual Stmt Visit(const IfThenElse* op);
  virtual Stmt Visit(const LetStmt* op);
  virtual Stmt Visit(const Allocate* op);
  virtual Stmt Visit(const Evaluate* op);
  virtual Stmt Visit(const Barrier* op);
  virtual Stmt Visit(const WarpMma* op);
  virtual Stmt Visit(const WarpGroupMma* op);
  virtual Stmt Visit(const WaveMma* op);
  virtual Stmt Visit(const TensorCopy* op);
  virtual Stmt Visit(const MBarrierOp* op);
  virtual Stmt Visit(const SetMaxRegisters* op);
  virtual Stmt Visit(const FetchAdd* op);
  virtual Stmt Visit(const AmxTileOp* op);

  /// Mutates both operands of `op` and rebuilds it with `make` when one changed.
  template <typename T>
  Expr MutateBinary(const T* op) {
    Expr a = Mutate(op->a);
    Expr b = Mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) {
      return Expr(op);
    }
    return T::Make(std::move(a), std::move(b));
  }
};

}  // namespace tune::ir
