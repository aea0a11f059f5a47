#include "codegen/ir/visitor.h"

namespace tune::ir {
// --- IrVisitor ------------------------------------------------------------------------------
void IrVisitor::VisitExpr(const Expr& e) {
  if (!e.defined()) {
    return;
  }
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return Visit(static_cast<const IntImm*>(e.get()));
    case ExprKind::kFloatImm:
      return Visit(static_cast<const FloatImm*>(e.get()));
    case ExprKind::kVar:
      return Visit(static_cast<const Variable*>(e.get()));
    case ExprKind::kAdd:
      return Visit(static_cast<const Add*>(e.get()));
    case ExprKind::kSub:
      return Visit(static_cast<const Sub*>(e.get()));
    case ExprKind::kMul:
      return Visit(static_cast<const Mul*>(e.get()));
    case ExprKind::kDiv:
      return Visit(static_cast<const Div*>(e.get()));
    case ExprKind::kMod:
      return Visit(static_cast<const Mod*>(e.get()));
    case ExprKind::kMin:
      return Visit(static_cast<const Min*>(e.get()));
    case ExprKind::kMax:
      return Visit(static_cast<const Max*>(e.get()));
    case ExprKind::kEQ:
      return Visit(static_cast<const EQ*>(e.get()));
    case ExprKind::kNE:
      return Visit(static_cast<const NE*>(e.get()));
    case ExprKind::kLT:
      return Visit(static_cast<const LT*>(e.get()));
    case ExprKind::kLE:
      return Visit(static_cast<const LE*>(e.get()));
    case ExprKind::kGT:
      return Visit(static_cast<const GT*>(e.get()));
    case ExprKind::kGE:
      return Visit(static_cast<const GE*>(e.get()));
    case ExprKind::kAnd:
      return Visit(static_cast<const And*>(e.get()));
    case ExprKind::kOr:
      return Visit(static_cast<const Or*>(e.get()));
    case ExprKind::kNot:
      return Visit(static_cast<const Not*>(e.get()));
    case ExprKind::kSelect:
      return Visit(static_cast<const Select*>(e.get()));
    case ExprKind::kCast:
      return Visit(static_cast<const Cast*>(e.get()));
    case ExprKind::kReinterpret:
      return Visit(static_cast<const Reinterpret*>(e.get()));
    case ExprKind::kBroadcast:
      return Visit(static_cast<const Broadcast*>(e.get()));
    case ExprKind::kShuffle:
      return Visit(static_cast<const Shuffle*>(e.get()));
    case ExprKind::kRamp:
      return Visit(static_cast<const Ramp*>(e.get()));
    case ExprKind::kLoad:
      return Visit(static_cast<const Load*>(e.get()));
    case ExprKind::kFma:
      return Visit(static_cast<const Fma*>(e.get()));
    case ExprKind::kDotAccumulate:
      return Visit(static_cast<const DotAccumulate*>(e.get()));
    case ExprKind::kCallExtern:
      return Visit(static_cast<const CallExtern*>(e.get()));
    case ExprKind::kAddressOf:
      return Visit(static_cast<const AddressOf*>(e.get()));
  }
}

void IrVisitor::VisitStmt(const Stmt& s) {
  if (!s.defined()) {
    return;
  }
  switch (s.kind()) {
    case StmtKind::kStore:
      return Visit(static_cast<const Store*>(s.get()));
    case StmtKind::kFor:
      return Visit(static_cast<const For*>(s.get()));
    case StmtKind::kBlock:
      return Visit(static_cast<const Block*>(s.get()));
    case StmtKind::kIfThenElse:
      return Visit(static_cast<const IfThenElse*>(s.get()));
    case StmtKind::kLetStmt:
      return Visit(static_cast<const LetStmt*>(s.get()));
    case StmtKind::kAllocate:
      return Visit(static_cast<const Allocate*>(s.get()));
    case StmtKind::kEvaluate:
      return Visit(static_cast<const Evaluate*>(s.get()));
    case StmtKind::kBarrier:
      return Visit(static_cast<const Barrier*>(s.get()));
    case StmtKind::kWarpMma:
      return Visit(static_cast<const WarpMma*>(s.get()));
    case StmtKind::kWarpGroupMma:
      return Visit(static_cast<const WarpGroupMma*>(s.get()));
    case StmtKind::kWaveMma:
      return Visit(static_cast<const WaveMma*>(s.get()));
    case StmtKind::kTensorCopy:
      return Visit(static_cast<const TensorCopy*>(s.get()));
    case StmtKind::kMBarrierOp:
      return Visit(static_cast<const MBarrierOp*>(s.get()));
    case StmtKind::kSetMaxRegisters:
      return Visit(static_cast<const SetMaxRegisters*>(s.get()));
    case StmtKind::kAmxTileOp:
      return Visit(static_cast<const AmxTileOp*>(s.get()));
    case StmtKind::kFetchAdd:
      return Visit(static_cast<const FetchAdd*>(s.get()));
  }
}

void IrVisitor::VisitBinary(const BinaryExprNode* op) {
  VisitExpr(op->a);
  VisitExpr(op->b);
}

void IrVisitor::Visit(const IntImm* op) {}
void IrVisitor::Visit(const FloatImm* op) {}
void IrVisitor::Visit(const Variable* op) {}
void IrVisitor::Visit(const Add* op) { VisitBinary(op); }
void IrVisitor::Visit(const Sub* op) { VisitBinary(op); }
void IrVisitor::Visit(const Mul* op) { VisitBinary(op); }
void IrVisitor::Visit(const Div* op) { VisitBinary(op); }
void IrVisitor::Visit(const Mod* op) { VisitBinary(op); }
void IrVisitor::Visit(const Min* op) { VisitBinary(op); }
void IrVisitor::Visit(const Max* op) { VisitBinary(op); }
void IrVisitor::Visit(const EQ* op) { VisitBinary(op); }
void IrVisitor::Visit(const NE* op) { VisitBinary(op); }
void IrVisitor::Visit(const LT* op) { VisitBinary(op); }
void IrVisitor::Visit(const LE* op) { VisitBinary(op); }
void IrVisitor::Visit(const GT* op) { VisitBinary(op); }
void IrVisitor::Visit(const GE* op) { VisitBinary(op); }
void IrVisitor::Visit(const And* op) { VisitBinary(op); }
void IrVisitor::Visit(const Or* op) { VisitBinary(op); }
void IrVisitor::Visit(const Not* op) { VisitExpr(op->a); }
void IrVisitor::Visit(const Select* op) {
  VisitExpr(op->condition);
  VisitExpr(op->true_value);
  VisitExpr(op->false_value);
}
void IrVisitor::Visit(const Cast* op) { VisitExpr(op->value); }
void IrVisitor::Visit(const Reinterpret* op) { VisitExpr(op->value); }
void IrVisitor::Visit(const Broadcast* op) { VisitExpr(op->value); }
void IrVisitor::Visit(const Shuffle* op) {
  for (const Expr& v : op->vectors) {
    VisitExpr(v);
  }
}
void IrVisitor::Visit(const Ramp* op) {
  VisitExpr(op->base);
  VisitExpr(op->stride);
}
void IrVisitor::Visit(const Load* op) { VisitExpr(op->index); }
void IrVisitor::Visit(const Fma* op) {
  VisitExpr(op->a);
  VisitExpr(op->b);
  VisitExpr(op->c);
}
void IrVisitor::Visit(const DotAccumulate* op) {
  VisitExpr(op->acc);
  VisitExpr(op->a);
  VisitExpr(op->b);
}
void IrVisitor::Visit(const CallExtern* op) {
  for (const Expr& arg : op->args) {
    VisitExpr(arg);
  }
}
void IrVisitor::Visit(const AddressOf* op) { VisitExpr(op->index); }
void IrVisitor::Visit(const Store* op) {
  VisitExpr(op->index);
  VisitExpr(op->value);
  VisitExpr(op->valid);
}
void IrVisitor::Visit(const For* op) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  VisitStmt(op->body);
}
void IrVisitor::Visit(const Block* op) {
  for (const Stmt& s : op->stmts) {
    VisitStmt(s);
  }
}
void IrVisitor::Visit(const IfThenElse* op) {
  VisitExpr(op->condition);
  VisitStmt(op->then_case);
  VisitStmt(op->else_case);
}
void IrVisitor::Visit(const LetStmt* op) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void IrVisitor::Visit(const Allocate* op) { VisitStmt(op->body); }
void IrVisitor::Visit(const Evaluate* op) { VisitExpr(op->value); }
void IrVisitor::Visit(const Barrier* op) {}
void IrVisitor::Visit(const WarpMma* op) {
  VisitExpr(op->a_index);
  VisitExpr(op->b_index);
}
void IrVisitor::Visit(const WarpGroupMma* op) {
  VisitExpr(op->a_index);
  VisitExpr(op->b_index);
}
void IrVisitor::Visit(const WaveMma* op) {
  VisitExpr(op->a_index);
  VisitExpr(op->b_index);
}
void IrVisitor::Visit(const TensorCopy* op) {
  for (const Expr& c : op->coords) {
    VisitExpr(c);
  }
  for (const Expr& o : op->offsets) {
    VisitExpr(o);
  }
  VisitExpr(op->dst_index);
  VisitExpr(op->barrier_index);
}
void IrVisitor::Visit(const SetMaxRegisters* op) {}
void IrVisitor::Visit(const AmxTileOp* op) {
  if (op->index.defined()) {
    VisitExpr(op->index);
  }
}
void IrVisitor::Visit(const FetchAdd* op) {
  VisitExpr(op->index);
  VisitExpr(op->value);
  VisitExpr(op->result_index);
}
void IrVisitor::Visit(const MBarrierOp* op) {
  VisitExpr(op->index);
  VisitExpr(op->value);
  VisitExpr(op->cta);
}

// --- IrMutator ------------------------------------------------------------------------------
Expr IrMutator::Mutate(const Expr& e) {
  if (!e.defined()) {
    return e;
  }
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return Visit(static_cast<const IntImm*>(e.get()));
    case ExprKind::kFloatImm:
      return Visit(static_cast<const FloatImm*>(e.get()));
    case ExprKind::kVar:
      return Visit(static_cast<const Variable*>(e.get()));
    case ExprKind::kAdd:
      return Visit(static_cast<const Add*>(e.get()));
    case ExprKind::kSub:
      return Visit(static_cast<const Sub*>(e.get()));
    case ExprKind::kMul:
      return Visit(static_cast<const Mul*>(e.get()));
    case ExprKind::kDiv:
      return Visit(static_cast<const Div*>(e.get()));
    case ExprKind::kMod:
      return Visit(static_cast<const Mod*>(e.get()));
    case ExprKind::kMin:
      return Visit(static_cast<const Min*>(e.get()));
    case ExprKind::kMax:
      return Visit(static_cast<const Max*>(e.get()));
    case ExprKind::kEQ:
      return Visit(static_cast<const EQ*>(e.get()));
    case ExprKind::kNE:
      return Visit(static_cast<const NE*>(e.get()));
    case ExprKind::kLT:
      return Visit(static_cast<const LT*>(e.get()));
    case ExprKind::kLE:
      return Visit(static_cast<const LE*>(e.get()));
    case ExprKind::kGT:
      return Visit(static_cast<const GT*>(e.get()));
    case ExprKind::kGE:
      return Visit(static_cast<const GE*>(e.get()));
    case ExprKind::kAnd:
      return Visit(static_cast<const And*>(e.get()));
    case ExprKind::kOr:
      return Visit(static_cast<const Or*>(e.get()));
    case ExprKind::kNot:
      return Visit(static_cast<const Not*>(e.get()));
    case ExprKind::kSelect:
      return Visit(static_cast<const Select*>(e.get()));
    case ExprKind::kCast:
      return Visit(static_cast<const Cast*>(e.get()));
    case ExprKind::kReinterpret:
      return Visit(static_cast<const Reinterpret*>(e.get()));
    case ExprKind::kBroadcast:
      return Visit(static_cast<const Broadcast*>(e.get()));
    case ExprKind::kShuffle:
      return Visit(static_cast<const Shuffle*>(e.get()));
    case ExprKind::kRamp:
      return Visit(static_cast<const Ramp*>(e.get()));
    case ExprKind::kLoad:
      return Visit(static_cast<const Load*>(e.get()));
    case ExprKind::kFma:
      return Visit(static_cast<const Fma*>(e.get()));
    case ExprKind::kDotAccumulate:
      return Visit(static_cast<const DotAccumulate*>(e.get()));
    case ExprKind::kCallExtern:
      return Visit(static_cast<const CallExtern*>(e.get()));
    case ExprKind::kAddressOf:
      return Visit(static_cast<const AddressOf*>(e.get()));
  }
  return e;
}

Stmt IrMutator::Mutate(const Stmt& s) {
  if (!s.defined()) {
    return s;
  }
  switch (s.kind()) {
    case StmtKind::kStore:
      return Visit(static_cast<const Store*>(s.get()));
    case StmtKind::kFor:
      return Visit(static_cast<const For*>(s.get()));
    case StmtKind::kBlock:
      return Visit(static_cast<const Block*>(s.get()));
    case StmtKind::kIfThenElse:
      return Visit(static_cast<const IfThenElse*>(s.get()));
    case StmtKind::kLetStmt:
      return Visit(static_cast<const LetStmt*>(s.get()));
    case StmtKind::kAllocate:
      return Visit(static_cast<const Allocate*>(s.get()));
    case StmtKind::kEvaluate:
      return Visit(static_cast<const Evaluate*>(s.get()));
    case StmtKind::kBarrier:
      return Visit(static_cast<const Barrier*>(s.get()));
    case StmtKind::kWarpMma:
      return Visit(static_cast<const WarpMma*>(s.get()));
    case StmtKind::kWarpGroupMma:
      return Visit(static_cast<const WarpGroupMma*>(s.get()));
    case StmtKind::kWaveMma:
      return Visit(static_cast<const WaveMma*>(s.get()));
    case StmtKind::kTensorCopy:
      return Visit(static_cast<const TensorCopy*>(s.get()));
    case StmtKind::kMBarrierOp:
      return Visit(static_cast<const MBarrierOp*>(s.get()));
    case StmtKind::kSetMaxRegisters:
      return Visit(static_cast<const SetMaxRegisters*>(s.get()));
    case StmtKind::kAmxTileOp:
      return Visit(static_cast<const AmxTileOp*>(s.get()));
    case StmtKind::kFetchAdd:
      return Visit(static_cast<const FetchAdd*>(s.get()));
  }
  return s;
}

Expr IrMutator::Visit(const IntImm* op) { return Expr(op); }
Expr IrMutator::Visit(const FloatImm* op) { return Expr(op); }
Expr IrMutator::Visit(const Variable* op) { return Expr(op); }
Expr IrMutator::Visit(const Add* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const Sub* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const Mul* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const Div* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const Mod* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const Min* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const Max* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const EQ* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const NE* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const LT* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const LE* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const GT* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const GE* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const And* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const Or* op) { return MutateBinary(op); }
Expr IrMutator::Visit(const Not* op) {
  Expr a = Mutate(op->a);
  return a.same_as(op->a) ? Expr(op) : Not::Make(std::move(a));
}
Expr IrMutator::Visit(const Select* op) {
  Expr c = Mutate(op->condition);
  Expr t = Mutate(op->true_value);
  Expr f = Mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
    return Expr(op);
  }
  return Select::Make(std::move(c), std::move(t), std::move(f));
}
Expr IrMutator::Visit(const Cast* op) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? Expr(op) : Cast::Make(op->type, std::move(v));
}
Expr IrMutator::Visit(const Reinterpret* op) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? Expr(op) : Reinterpret::Make(op->type, std::move(v));
}
Expr IrMutator::Visit(const Shuffle* op) {
  std::vector<Expr> vectors;
  bool same = true;
  for (const Expr& v : op->vectors) {
    vectors.push_back(Mutate(v));
    same = same && vectors.back().same_as(v);
  }
  return same ? Expr(op) : Shuffle::Make(std::move(vectors), op->indices);
}

Expr IrMutator::Visit(const Broadcast* op) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? Expr(op) : Broadcast::Make(std::move(v), op->lanes);
}
Expr IrMutator::Visit(const Ramp* op) {
  Expr base = Mutate(op->base);
  Expr stride = Mutate(op->stride);
  if (base.same_as(op->base) && stride.same_as(op->stride)) {
    return Expr(op);
  }
  return Ramp::Make(std::move(base), std::move(stride), op->lanes);
}
Expr IrMutator::Visit(const Load* op) {
  Expr index = Mutate(op->index);
  return index.same_as(op->index) ? Expr(op) : Load::Make(op->buffer, std::move(index));
}
Expr IrMutator::Visit(const Fma* op) {
  Expr a = Mutate(op->a);
  Expr b = Mutate(op->b);
  Expr c = Mutate(op->c);
  if (a.same_as(op->a) && b.same_as(op->b) && c.same_as(op->c)) {
    return Expr(op);
  }
  return Fma::Make(std::move(a), std::move(b), std::move(c));
}
Expr IrMutator::Visit(const DotAccumulate* op) {
  Expr acc = Mutate(op->acc);
  Expr a = Mutate(op->a);
  Expr b = Mutate(op->b);
  if (acc.same_as(op->acc) && a.same_as(op->a) && b.same_as(op->b)) {
    return Expr(op);
  }
  return DotAccumulate::Make(op->kind, std::move(acc), std::move(a), std::move(b));
}
Expr IrMutator::Visit(const CallExtern* op) {
  std::vector<Expr> args;
  args.reserve(op->args.size());
  bool changed = false;
  for (const Expr& arg : op->args) {
    args.push_back(Mutate(arg));
    changed = changed || !args.back().same_as(arg);
  }
  return changed ? CallExtern::Make(op->type, op->symbol, std::move(args)) : Expr(op);
}
Expr IrMutator::Visit(const AddressOf* op) {
  Expr index = Mutate(op->index);
  return index.same_as(op->index) ? Expr(op) : AddressOf::Make(op->buffer, std::move(index));
}
Stmt IrMutator::Visit(const Store* op) {
  Expr index = Mutate(op->index);
  Expr value = Mutate(op->value);
  Expr valid = Mutate(op->valid);
  if (index.same_as(op->index) && value.same_as(op->value) && valid.same_as(op->valid)) {
    return Stmt(op);
  }
  return Store::MakeLike(op, std::move(index), std::move(value), std::move(valid));
}
Stmt IrMutator::Visit(const For* op) {
  Expr min = Mutate(op->min);
  Expr extent = Mutate(op->extent);
  Stmt body = Mutate(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) {
    return Stmt(op);
  }
  return For::Make(op->var, std::move(min), std::move(extent), op->loop_kind, std::move(body),
                   op->thread_axis);
}
Stmt IrMutator::Visit(const Block* op) {
  std::vector<Stmt> stmts;
  stmts.reserve(op->stmts.size());
  bool changed = false;
  for (const Stmt& s : op->stmts) {
    stmts.push_back(Mutate(s));
    changed = changed || !stmts.back().same_as(s);
  }
  return changed ? Block::Make(std::move(stmts)) : Stmt(op);
}
Stmt IrMutator::Visit(const IfThenElse* op) {
  Expr c = Mutate(op->condition);
  Stmt t = Mutate(op->then_case);
  Stmt e = Mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) {
    return Stmt(op);
  }
  return IfThenElse::Make(std::move(c), std::move(t), std::move(e));
}
Stmt IrMutator::Visit(const LetStmt* op) {
  Expr value = Mutate(op->value);
  Stmt body = Mutate(op->body);
  if (value.same_as(op->value) && body.same_as(op->body)) {
    return Stmt(op);
  }
  return LetStmt::Make(op->var, std::move(value), std::move(body));
}
Stmt IrMutator::Visit(const Allocate* op) {
  Stmt body = Mutate(op->body);
  return body.same_as(op->body) ? Stmt(op) : Allocate::Make(op->buffer, op->size, std::move(body));
}
Stmt IrMutator::Visit(const Evaluate* op) {
  Expr value = Mutate(op->value);
  return value.same_as(op->value) ? Stmt(op)
                                  : Evaluate::Make(std::move(value), op->return_on_error);
}
Stmt IrMutator::Visit(const Barrier* op) { return Stmt(op); }
Stmt IrMutator::Visit(const WarpMma* op) {
  Expr a_index = Mutate(op->a_index);
  Expr b_index = Mutate(op->b_index);
  if (a_index.same_as(op->a_index) && b_index.same_as(op->b_index)) {
    return Stmt(op);
  }
  return WarpMma::Make(op->dtype, op->a, std::move(a_index), op->a_stride, op->b,
                       std::move(b_index), op->b_stride, op->b_k_contiguous, op->acc,
                       op->acc_offset, op->m_tiles, op->n_tiles);
}
Stmt IrMutator::Visit(const WarpGroupMma* op) {
  Expr a_index = Mutate(op->a_index);
  Expr b_index = Mutate(op->b_index);
  if (a_index.same_as(op->a_index) && b_index.same_as(op->b_index)) {
    return Stmt(op);
  }
  return WarpGroupMma::Make(op->dtype, op->a, std::move(a_index), op->b, std::move(b_index), op->n,
                            op->k_steps, op->acc, op->acc_offset, op->pending, op->b_mn_atom_stride,
                            op->overwrite);
}
Stmt IrMutator::Visit(const WaveMma* op) {
  Expr a_index = Mutate(op->a_index);
  Expr b_index = Mutate(op->b_index);
  if (a_index.same_as(op->a_index) && b_index.same_as(op->b_index)) {
    return Stmt(op);
  }
  return WaveMma::Make(op->dtype, op->shape, op->k, op->a, std::move(a_index), op->a_stride, op->b,
                       std::move(b_index), op->b_stride, op->b_k_contiguous, op->acc,
                       op->acc_offset, op->m_tiles, op->n_tiles);
}

Stmt IrMutator::Visit(const TensorCopy* op) {
  bool changed = false;
  std::vector<Expr> coords;
  for (const Expr& c : op->coords) {
    coords.push_back(Mutate(c));
    changed |= !coords.back().same_as(c);
  }
  std::vector<Expr> offsets;
  for (const Expr& o : op->offsets) {
    offsets.push_back(Mutate(o));
    changed |= !offsets.back().same_as(o);
  }
  Expr dst_index = Mutate(op->dst_index);
  Expr barrier_index = Mutate(op->barrier_index);
  if (!changed && dst_index.same_as(op->dst_index) && barrier_index.same_as(op->barrier_index)) {
    return Stmt(op);
  }
  return TensorCopy::Make(op->map, std::move(coords), op->dst, std::move(dst_index), op->barrier,
                          std::move(barrier_index), op->multicast, std::move(offsets));
}
Stmt IrMutator::Visit(const SetMaxRegisters* op) { return Stmt(op); }
Stmt IrMutator::Visit(const AmxTileOp* op) {
  if (!op->index.defined()) {
    return Stmt(op);
  }
  Expr index = Mutate(op->index);
  if (index.same_as(op->index)) {
    return Stmt(op);
  }
  return op->op == AmxTileOpKind::kLoad
             ? AmxTileOp::Load(op->tile, op->buffer, std::move(index), op->stride)
             : AmxTileOp::Store(op->tile, op->buffer, std::move(index), op->stride);
}
Stmt IrMutator::Visit(const FetchAdd* op) {
  Expr index = Mutate(op->index);
  Expr value = Mutate(op->value);
  Expr result_index = Mutate(op->result_index);
  if (index.same_as(op->index) && value.same_as(op->value) &&
      result_index.same_as(op->result_index)) {
    return Stmt(op);
  }
  return FetchAdd::Make(op->buffer, std::move(index), std::move(value), op->result,
                        std::move(result_index));
}
Stmt IrMutator::Visit(const MBarrierOp* op) {
  Expr index = Mutate(op->index);
  Expr value = Mutate(op->value);
  Expr cta = Mutate(op->cta);
  if (index.same_as(op->index) && value.same_as(op->value) && cta.same_as(op->cta)) {
    return Stmt(op);
  }
  return MBarrierOp::Make(op->op, op->barrier, std::move(index), std::move(value), std::move(cta));
}

}  // namespace tune::ir
