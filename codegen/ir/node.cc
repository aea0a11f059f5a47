#include "codegen/ir/node.h"

#include <limits>

#include "codegen/ir/expr.h"
#include "codegen/ir/node_util.h"
#include "common/status.h"

namespace tune::ir {

std::string_view ExprKindName(ExprKind kind) {
  switch (kind) {
    case ExprKind::kIntImm:
      return "IntImm";
    case ExprKind::kFloatImm:
      return "FloatImm";
    case ExprKind::kVar:
      return "Var";
    case ExprKind::kAdd:
      return "Add";
    case ExprKind::kSub:
      return "Sub";
    case ExprKind::kMul:
      return "Mul";
    case ExprKind::kDiv:
      return "Div";
    case ExprKind::kMod:
      return "Mod";
    case ExprKind::kMin:
      return "Min";
    case ExprKind::kMax:
      return "Max";
    case ExprKind::kEQ:
      return "EQ";
    case ExprKind::kNE:
      return "NE";
    case ExprKind::kLT:
      return "LT";
    case ExprKind::kLE:
      return "LE";
    case ExprKind::kGT:
      return "GT";
    case ExprKind::kGE:
      return "GE";
    case ExprKind::kAnd:
      return "And";
    case ExprKind::kOr:
      return "Or";
    case ExprKind::kNot:
      return "Not";
    case ExprKind::kSelect:
      return "Select";
    case ExprKind::kCast:
      return "Cast";
    case ExprKind::kReinterpret:
      return "Reinterpret";
    case ExprKind::kBroadcast:
      return "Broadcast";
    case ExprKind::kShuffle:
      return "Shuffle";
    case ExprKind::kRamp:
      return "Ramp";
    case ExprKind::kLoad:
      return "Load";
    case ExprKind::kFma:
      return "Fma";
    case ExprKind::kDotAccumulate:
      return "DotAccumulate";
    case ExprKind::kCallExtern:
      return "CallExtern";
    case ExprKind::kAddressOf:
      return "AddressOf";
  }
  return "?";
}

std::string_view StmtKindName(StmtKind kind) {
  switch (kind) {
    case StmtKind::kStore:
      return "Store";
    case StmtKind::kFor:
      return "For";
    case StmtKind::kBlock:
      return "Block";
    case StmtKind::kIfThenElse:
      return "IfThenElse";
    case StmtKind::kLetStmt:
      return "LetStmt";
    case StmtKind::kAllocate:
      return "Allocate";
    case StmtKind::kEvaluate:
      return "Evaluate";
    case StmtKind::kBarrier:
      return "Barrier";
    case StmtKind::kWarpMma:
      return "WarpMma";
    case StmtKind::kWarpGroupMma:
      return "WarpGroupMma";
    case StmtKind::kWaveMma:
      return "WaveMma";
    case StmtKind::kTensorCopy:
      return "TensorCopy";
    case StmtKind::kMBarrierOp:
      return "MBarrierOp";
    case StmtKind::kSetMaxRegisters:
      return "SetMaxRegisters";
    case StmtKind::kFetchAdd:
      return "FetchAdd";
    case StmtKind::kAmxTileOp:
      return "AmxTileOp";
  }
  return "?";
}

std::string_view LoopKindName(LoopKind kind) {
  switch (kind) {
    case LoopKind::kSerial:
      return "serial";
    case LoopKind::kParallel:
      return "parallel";
    case LoopKind::kVectorized:
      return "vectorized";
    case LoopKind::kUnrolled:
      return "unrolled";
    case LoopKind::kGpuBlock:
      return "gpu_block";
    case LoopKind::kGpuThread:
      return "gpu_thread";
  }
  return "?";
}

bool IsGpuLoop(LoopKind kind) {
  return kind == LoopKind::kGpuBlock || kind == LoopKind::kGpuThread;
}

std::string_view MemoryScopeName(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::kGlobal:
      return "global";
    case MemoryScope::kStack:
      return "stack";
    case MemoryScope::kGpuShared:
      return "gpu_shared";
    case MemoryScope::kGpuLocal:
      return "gpu_local";
  }
  return "?";
}

bool IsIdentifier(const std::string& name) {
  if (name.empty()) {
    return false;
  }
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) {
      return false;
    }
  }
  return true;
}

// An immediate converted to the scalar type `to`, or an undefined Expr when that is not a
// lossless immediate conversion.
Expr ConvertImmediate(const Expr& e, Type to) {
  if (const auto* i = e.As<IntImm>(); i != nullptr && !e.type().is_bool()) {
    if (to == Type::Int64()) {
      return IntImm::Make(i->value, to);
    }
    if (to == Type::Int32() && i->value >= std::numeric_limits<int32_t>::min() &&
        i->value <= std::numeric_limits<int32_t>::max()) {
      return IntImm::Make(i->value, to);
    }
    if (to == Type::Float32()) {
      return FloatImm::Make(static_cast<double>(i->value), to);
    }
  }
  if (const auto* f = e.As<FloatImm>(); f != nullptr && to == Type::Float32()) {
    return FloatImm::Make(f->value, to);
  }
  return Expr();
}

// Applies the operand coercion rules (see ir.h) to `*e` so that its element type becomes
// `elem` and its lanes `lanes`, where possible.
void CoerceTo(Expr* e, Type elem, int lanes) {
  if (e->type().Element() != elem && e->type().is_scalar()) {
    Expr converted = ConvertImmediate(*e, elem);
    if (converted.defined()) {
      *e = converted;
    }
  }
  if (e->type().is_scalar() && lanes > 1) {
    *e = Broadcast::Make(*e, lanes);
  }
}

// --- handles --------------------------------------------------------------------------------

Expr::Expr(const ExprNode* node) {
  if (node != nullptr) {
    node_ = std::static_pointer_cast<const ExprNode>(node->shared_from_this());
  }
}

Expr::Expr(float value) : Expr(FloatImm::Make(value)) {}
Expr::Expr(double value) : Expr(FloatImm::Make(value)) {}

Stmt::Stmt(const StmtNode* node) {
  if (node != nullptr) {
    node_ = std::static_pointer_cast<const StmtNode>(node->shared_from_this());
  }
}

Var::Var(std::string name, Type type) : Var(Variable::Make(std::move(name), type)) {}

Var::Var(const Variable* node) : Expr(static_cast<const ExprNode*>(node)) {}

const Variable* Var::get() const { return static_cast<const Variable*>(Expr::get()); }

const std::string& Var::name() const { return get()->name; }

Buffer::Buffer(std::string name, MemoryScope scope, Type element_type) {
  TUNE_CHECK(IsIdentifier(name)) << "Buffer: name '" << name << "' is not an identifier";
  TUNE_CHECK(element_type.IsSupported() && element_type.is_scalar() && !element_type.is_handle() &&
             !element_type.is_bool())
      << "Buffer " << name << ": element type must be a scalar number type, got "
      << element_type.ToString();
  auto node = std::make_shared<BufferNode>();
  node->name = std::move(name);
  node->element_type = element_type;
  node->scope = scope;
  node_ = std::move(node);
}

Expr Buffer::operator()(Expr index) const { return Load::Make(*this, std::move(index)); }

}  // namespace tune::ir
