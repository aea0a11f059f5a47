#include "codegen/ir/ir.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/status.h"

namespace tune::ir {

std::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kIntImm:
      return "IntImm";
    case NodeKind::kFloatImm:
      return "FloatImm";
    case NodeKind::kVar:
      return "Var";
    case NodeKind::kAdd:
      return "Add";
    case NodeKind::kSub:
      return "Sub";
    case NodeKind::kMul:
      return "Mul";
    case NodeKind::kDiv:
      return "Div";
    case NodeKind::kMod:
      return "Mod";
    case NodeKind::kMin:
      return "Min";
    case NodeKind::kMax:
      return "Max";
    case NodeKind::kEQ:
      return "EQ";
    case NodeKind::kNE:
      return "NE";
    case NodeKind::kLT:
      return "LT";
    case NodeKind::kLE:
      return "LE";
    case NodeKind::kGT:
      return "GT";
    case NodeKind::kGE:
      return "GE";
    case NodeKind::kAnd:
      return "And";
    case NodeKind::kOr:
      return "Or";
    case NodeKind::kNot:
      return "Not";
    case NodeKind::kSelect:
      return "Select";
    case NodeKind::kCast:
      return "Cast";
    case NodeKind::kBroadcast:
      return "Broadcast";
    case NodeKind::kRamp:
      return "Ramp";
    case NodeKind::kLoad:
      return "Load";
    case NodeKind::kFma:
      return "Fma";
    case NodeKind::kCallExtern:
      return "CallExtern";
    case NodeKind::kAddressOf:
      return "AddressOf";
    case NodeKind::kStore:
      return "Store";
    case NodeKind::kFor:
      return "For";
    case NodeKind::kBlock:
      return "Block";
    case NodeKind::kIfThenElse:
      return "IfThenElse";
    case NodeKind::kLetStmt:
      return "LetStmt";
    case NodeKind::kAllocate:
      return "Allocate";
    case NodeKind::kEvaluate:
      return "Evaluate";
    case NodeKind::kBarrier:
      return "Barrier";
  }
  return "?";
}

bool IsExprKind(NodeKind kind) { return kind < NodeKind::kStore; }

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

namespace {

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
    if (to.is_float()) {
      return FloatImm::Make(static_cast<double>(i->value), to);
    }
  }
  if (const auto* f = e.As<FloatImm>(); f != nullptr && to.is_float()) {
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

void MatchTypes(NodeKind op, Expr* a, Expr* b) {
  TUNE_CHECK(a->defined() && b->defined()) << NodeKindName(op) << ": undefined operand";
  if (a->type() == b->type()) {
    return;
  }
  if (a->type().Element() != b->type().Element()) {
    Expr ca = ConvertImmediate(*a, b->type().Element());
    if (ca.defined() && a->type().is_scalar()) {
      *a = ca;
    } else {
      Expr cb = ConvertImmediate(*b, a->type().Element());
      if (cb.defined() && b->type().is_scalar()) {
        *b = cb;
      }
    }
  }
  int lanes = std::max(a->type().lanes(), b->type().lanes());
  if (a->type().is_scalar() && lanes > 1) {
    *a = Broadcast::Make(*a, lanes);
  }
  if (b->type().is_scalar() && lanes > 1) {
    *b = Broadcast::Make(*b, lanes);
  }
  TUNE_CHECK(a->type() == b->type())
      << NodeKindName(op) << ": operand types differ: " << a->type().ToString() << " vs "
      << b->type().ToString();
}

bool IsNumeric(Type t) { return t.is_int() || t.is_float(); }

template <typename T>
Expr MakeBinary(Expr a, Expr b, Type result_elem_or_operand) {
  auto node = std::make_shared<T>();
  node->type = result_elem_or_operand;
  node->a = std::move(a);
  node->b = std::move(b);
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

template <typename T>
Expr MakeArith(Expr a, Expr b, bool int_only) {
  MatchTypes(T::kKind, &a, &b);
  Type t = a.type();
  TUNE_CHECK(int_only ? t.is_int() : IsNumeric(t))
      << NodeKindName(T::kKind) << ": operands must be " << (int_only ? "integers" : "numeric")
      << ", got " << t.ToString();
  return MakeBinary<T>(std::move(a), std::move(b), t);
}

template <typename T>
Expr MakeCompare(Expr a, Expr b, bool allow_bool) {
  MatchTypes(T::kKind, &a, &b);
  Type t = a.type();
  TUNE_CHECK(IsNumeric(t) || (allow_bool && t.is_bool()))
      << NodeKindName(T::kKind) << ": cannot compare " << t.ToString();
  return MakeBinary<T>(std::move(a), std::move(b), Type::Bool(t.lanes()));
}

template <typename T>
Expr MakeLogic(Expr a, Expr b) {
  MatchTypes(T::kKind, &a, &b);
  Type t = a.type();
  TUNE_CHECK(t.is_bool()) << NodeKindName(T::kKind) << ": operands must be bool, got "
                          << t.ToString();
  return MakeBinary<T>(std::move(a), std::move(b), t);
}

template <typename T>
std::shared_ptr<T> NewExpr(Type type) {
  auto node = std::make_shared<T>();
  node->type = type;
  return node;
}

template <typename T>
Expr Wrap(std::shared_ptr<T> node) {
  return Expr(std::shared_ptr<const ExprNode>(std::move(node)));
}

template <typename T>
Stmt WrapStmt(std::shared_ptr<T> node) {
  return Stmt(std::shared_ptr<const StmtNode>(std::move(node)));
}

}  // namespace

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
  TUNE_CHECK(element_type == Type::Float32())
      << "Buffer " << name << ": element type must be float32, got " << element_type.ToString();
  auto node = std::make_shared<BufferNode>();
  node->name = std::move(name);
  node->element_type = element_type;
  node->scope = scope;
  node_ = std::move(node);
}

Expr Buffer::operator()(Expr index) const { return Load::Make(*this, std::move(index)); }

// --- expressions ----------------------------------------------------------------------------

Expr IntImm::Make(int64_t value, Type type) {
  TUNE_CHECK(type == Type::Int64() || type == Type::Int32() || type == Type::Bool())
      << "IntImm: type must be int64, int32 or bool, got " << type.ToString();
  if (type == Type::Int32()) {
    TUNE_CHECK(value >= std::numeric_limits<int32_t>::min() &&
               value <= std::numeric_limits<int32_t>::max())
        << "IntImm: " << value << " does not fit int32";
  }
  if (type.is_bool()) {
    TUNE_CHECK(value == 0 || value == 1) << "IntImm: bool value must be 0 or 1, got " << value;
  }
  auto node = NewExpr<IntImm>(type);
  node->value = value;
  return Wrap(std::move(node));
}

Expr FloatImm::Make(double value, Type type) {
  TUNE_CHECK(type == Type::Float32()) << "FloatImm: type must be float32, got " << type.ToString();
  auto node = NewExpr<FloatImm>(type);
  node->value = static_cast<double>(static_cast<float>(value));
  return Wrap(std::move(node));
}

Var Variable::Make(std::string name, Type type) {
  TUNE_CHECK(IsIdentifier(name)) << "Var: name '" << name << "' is not an identifier";
  TUNE_CHECK(type.IsSupported() && !type.is_handle())
      << "Var " << name << ": unsupported type " << type.ToString();
  auto node = NewExpr<Variable>(type);
  node->name = std::move(name);
  const Variable* raw = node.get();
  Expr holder = Wrap(std::move(node));
  return Var(raw);
}

Expr Add::Make(Expr a, Expr b) { return MakeArith<Add>(std::move(a), std::move(b), false); }
Expr Sub::Make(Expr a, Expr b) { return MakeArith<Sub>(std::move(a), std::move(b), false); }
Expr Mul::Make(Expr a, Expr b) { return MakeArith<Mul>(std::move(a), std::move(b), false); }
Expr Div::Make(Expr a, Expr b) { return MakeArith<Div>(std::move(a), std::move(b), false); }
Expr Mod::Make(Expr a, Expr b) { return MakeArith<Mod>(std::move(a), std::move(b), true); }
Expr Min::Make(Expr a, Expr b) { return MakeArith<Min>(std::move(a), std::move(b), false); }
Expr Max::Make(Expr a, Expr b) { return MakeArith<Max>(std::move(a), std::move(b), false); }
Expr EQ::Make(Expr a, Expr b) { return MakeCompare<EQ>(std::move(a), std::move(b), true); }
Expr NE::Make(Expr a, Expr b) { return MakeCompare<NE>(std::move(a), std::move(b), true); }
Expr LT::Make(Expr a, Expr b) { return MakeCompare<LT>(std::move(a), std::move(b), false); }
Expr LE::Make(Expr a, Expr b) { return MakeCompare<LE>(std::move(a), std::move(b), false); }
Expr GT::Make(Expr a, Expr b) { return MakeCompare<GT>(std::move(a), std::move(b), false); }
Expr GE::Make(Expr a, Expr b) { return MakeCompare<GE>(std::move(a), std::move(b), false); }
Expr And::Make(Expr a, Expr b) { return MakeLogic<And>(std::move(a), std::move(b)); }
Expr Or::Make(Expr a, Expr b) { return MakeLogic<Or>(std::move(a), std::move(b)); }

Expr Not::Make(Expr a) {
  TUNE_CHECK(a.defined() && a.type().is_bool()) << "Not: operand must be bool";
  auto node = NewExpr<Not>(a.type());
  node->a = std::move(a);
  return Wrap(std::move(node));
}

Expr Select::Make(Expr condition, Expr true_value, Expr false_value) {
  TUNE_CHECK(condition.defined() && condition.type().is_bool()) << "Select: condition must be bool";
  MatchTypes(kKind, &true_value, &false_value);
  int lanes = true_value.type().lanes();
  if (condition.type().lanes() > lanes) {
    lanes = condition.type().lanes();
    true_value = BroadcastTo(true_value, lanes);
    false_value = BroadcastTo(false_value, lanes);
  }
  TUNE_CHECK(condition.type().is_scalar() || condition.type().lanes() == lanes)
      << "Select: condition lanes " << condition.type().lanes() << " vs value lanes " << lanes;
  auto node = NewExpr<Select>(true_value.type());
  node->condition = std::move(condition);
  node->true_value = std::move(true_value);
  node->false_value = std::move(false_value);
  return Wrap(std::move(node));
}

Expr Cast::Make(Type type, Expr value) {
  TUNE_CHECK(value.defined()) << "Cast: undefined value";
  TUNE_CHECK(type.IsSupported() && !type.is_handle() && !value.type().is_handle())
      << "Cast: cannot cast " << value.type().ToString() << " to " << type.ToString();
  TUNE_CHECK(type.lanes() == value.type().lanes())
      << "Cast: lanes differ: " << value.type().ToString() << " to " << type.ToString();
  auto node = NewExpr<Cast>(type);
  node->value = std::move(value);
  return Wrap(std::move(node));
}

Expr Broadcast::Make(Expr value, int lanes) {
  TUNE_CHECK(value.defined() && value.type().is_scalar() && !value.type().is_handle())
      << "Broadcast: value must be a non-pointer scalar";
  TUNE_CHECK(lanes >= 2) << "Broadcast: lanes must be >= 2, got " << lanes;
  auto node = NewExpr<Broadcast>(value.type().WithLanes(lanes));
  node->value = std::move(value);
  node->lanes = lanes;
  return Wrap(std::move(node));
}

Expr Ramp::Make(Expr base, Expr stride, int lanes) {
  TUNE_CHECK(base.defined() && stride.defined()) << "Ramp: undefined operand";
  TUNE_CHECK(base.type().is_scalar() && stride.type().is_scalar())
      << "Ramp: base and stride must be scalars";
  MatchTypes(kKind, &base, &stride);
  TUNE_CHECK(base.type().is_int())
      << "Ramp: base must be an integer, got " << base.type().ToString();
  TUNE_CHECK(lanes >= 2) << "Ramp: lanes must be >= 2, got " << lanes;
  auto node = NewExpr<Ramp>(base.type().WithLanes(lanes));
  node->base = std::move(base);
  node->stride = std::move(stride);
  node->lanes = lanes;
  return Wrap(std::move(node));
}

Expr Load::Make(Buffer buffer, Expr index) {
  TUNE_CHECK(buffer.defined()) << "Load: undefined buffer";
  TUNE_CHECK(index.defined() && index.type().is_int())
      << "Load " << buffer.name() << ": index must be an integer";
  auto node = NewExpr<Load>(buffer.element_type().WithLanes(index.type().lanes()));
  node->buffer = std::move(buffer);
  node->index = std::move(index);
  return Wrap(std::move(node));
}

Expr Load::Make(Buffer buffer, Expr base, int lanes) {
  TUNE_CHECK(lanes >= 1) << "Load: lanes must be >= 1";
  if (lanes == 1) {
    return Make(std::move(buffer), std::move(base));
  }
  return Make(std::move(buffer), Ramp::Make(std::move(base), 1, lanes));
}

Expr Fma::Make(Expr a, Expr b, Expr c) {
  TUNE_CHECK(a.defined() && b.defined() && c.defined()) << "Fma: undefined operand";
  int lanes = std::max({a.type().lanes(), b.type().lanes(), c.type().lanes()});
  for (Expr* e : {&a, &b, &c}) {
    CoerceTo(e, Type::Float32(), lanes);
    TUNE_CHECK(e->type() == Type::Float32(lanes))
        << "Fma: operands must be float32 with " << lanes << " lanes, got " << e->type().ToString();
  }
  auto node = NewExpr<Fma>(a.type());
  node->a = std::move(a);
  node->b = std::move(b);
  node->c = std::move(c);
  return Wrap(std::move(node));
}

Expr CallExtern::Make(Type type, std::string symbol, std::vector<Expr> args) {
  TUNE_CHECK(IsIdentifier(symbol)) << "CallExtern: symbol '" << symbol << "' is not a C identifier";
  TUNE_CHECK(type == Type::Int32() || type == Type::Int64() || type == Type::Float32())
      << "CallExtern " << symbol << ": result must be int32, int64 or float32, got "
      << type.ToString();
  for (const Expr& arg : args) {
    TUNE_CHECK(arg.defined()) << "CallExtern " << symbol << ": undefined argument";
    Type t = arg.type();
    TUNE_CHECK(t == Type::Int32() || t == Type::Int64() || t == Type::Float32() ||
               t == Type::FloatPtr())
        << "CallExtern " << symbol << ": unsupported argument type " << t.ToString();
  }
  auto node = NewExpr<CallExtern>(type);
  node->symbol = std::move(symbol);
  node->args = std::move(args);
  return Wrap(std::move(node));
}

Expr AddressOf::Make(Buffer buffer, Expr index) {
  TUNE_CHECK(buffer.defined()) << "AddressOf: undefined buffer";
  TUNE_CHECK(index.defined() && index.type().is_int() && index.type().is_scalar())
      << "AddressOf " << buffer.name() << ": index must be a scalar integer";
  auto node = NewExpr<AddressOf>(Type::FloatPtr());
  node->buffer = std::move(buffer);
  node->index = std::move(index);
  return Wrap(std::move(node));
}

// --- statements -----------------------------------------------------------------------------

namespace {

Stmt MakeStore(Buffer buffer, Expr index, Expr value, bool atomic_add, bool async_copy = false) {
  TUNE_CHECK(buffer.defined()) << "Store: undefined buffer";
  TUNE_CHECK(index.defined() && index.type().is_int())
      << "Store " << buffer.name() << ": index must be an integer";
  TUNE_CHECK(value.defined()) << "Store " << buffer.name() << ": undefined value";
  int lanes = std::max(index.type().lanes(), value.type().lanes());
  CoerceTo(&value, buffer.element_type(), lanes);
  if (index.type().is_scalar() && lanes > 1) {
    index = Ramp::Make(index, 1, lanes);
  }
  TUNE_CHECK(value.type() == buffer.element_type().WithLanes(lanes) &&
             index.type().lanes() == lanes)
      << "Store " << buffer.name() << ": value type " << value.type().ToString()
      << " does not match " << buffer.element_type().WithLanes(lanes).ToString()
      << " through an index of " << index.type().lanes() << " lanes";
  auto node = std::make_shared<Store>();
  node->buffer = std::move(buffer);
  node->index = std::move(index);
  node->value = std::move(value);
  node->atomic_add = atomic_add;
  node->async_copy = async_copy;
  return WrapStmt(std::move(node));
}

}  // namespace

Stmt Store::Make(Buffer buffer, Expr index, Expr value) {
  return MakeStore(std::move(buffer), std::move(index), std::move(value), false);
}

Stmt Store::MakeAtomicAdd(Buffer buffer, Expr index, Expr value) {
  TUNE_CHECK(buffer.defined() && buffer.scope() == MemoryScope::kGlobal &&
             buffer.element_type() == Type::Float32())
      << "Store " << (buffer.defined() ? buffer.name() : "?")
      << ": atomic adds go to global float32 buffers only";
  return MakeStore(std::move(buffer), std::move(index), std::move(value), true);
}

Stmt Store::MakeAsyncCopy(Buffer dst, Expr dst_index, Buffer src, Expr src_index, int lanes,
                          Expr valid) {
  TUNE_CHECK(dst.defined() && dst.scope() == MemoryScope::kGpuShared && src.defined() &&
             src.scope() == MemoryScope::kGlobal && dst.element_type() == src.element_type())
      << "Store: asynchronous copies go from a global buffer to a gpu_shared one of the same "
         "element type";
  TUNE_CHECK(lanes == 1 || lanes == 2 || lanes == 4)
      << "Store " << dst.name() << ": an asynchronous copy moves 1, 2 or 4 elements";
  TUNE_CHECK(dst_index.defined() && dst_index.type().is_scalar() && src_index.defined() &&
             src_index.type().is_scalar())
      << "Store " << dst.name() << ": an asynchronous copy takes scalar base indexes";
  Expr value = LoadOrZero(std::move(src), std::move(src_index), lanes, std::move(valid));
  return MakeStore(std::move(dst), std::move(dst_index), std::move(value), false, true);
}

Stmt Store::MakeLike(const Store* like, Expr index, Expr value) {
  TUNE_CHECK(like != nullptr);
  return MakeStore(like->buffer, std::move(index), std::move(value), like->atomic_add,
                   like->async_copy);
}

Stmt For::Make(Var var, Expr min, Expr extent, LoopKind kind, Stmt body, int thread_axis) {
  TUNE_CHECK(var.defined() && var.type().is_int() && var.type().is_scalar())
      << "For: loop variable must be a scalar integer";
  TUNE_CHECK(min.defined() && extent.defined()) << "For " << var.name() << ": undefined bounds";
  CoerceTo(&min, var.type(), 1);
  CoerceTo(&extent, var.type(), 1);
  TUNE_CHECK(min.type() == var.type() && extent.type() == var.type())
      << "For " << var.name() << ": min/extent must be " << var.type().ToString() << ", got "
      << min.type().ToString() << "/" << extent.type().ToString();
  TUNE_CHECK(body.defined()) << "For " << var.name() << ": undefined body";
  TUNE_CHECK(thread_axis >= 0 && thread_axis <= 2)
      << "For " << var.name() << ": thread_axis must be 0..2, got " << thread_axis;
  TUNE_CHECK(IsGpuLoop(kind) || thread_axis == 0)
      << "For " << var.name() << ": thread_axis is only for GPU loops";
  auto node = std::make_shared<For>();
  node->var = std::move(var);
  node->min = std::move(min);
  node->extent = std::move(extent);
  node->loop_kind = kind;
  node->thread_axis = thread_axis;
  node->body = std::move(body);
  return WrapStmt(std::move(node));
}

Stmt Block::Make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  flat.reserve(stmts.size());
  for (Stmt& s : stmts) {
    if (!s.defined()) {
      continue;
    }
    if (const auto* inner = s.As<Block>()) {
      flat.insert(flat.end(), inner->stmts.begin(), inner->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) {
    return flat[0];
  }
  auto node = std::make_shared<Block>();
  node->stmts = std::move(flat);
  return WrapStmt(std::move(node));
}

Stmt IfThenElse::Make(Expr condition, Stmt then_case, Stmt else_case) {
  TUNE_CHECK(condition.defined() && condition.type() == Type::Bool())
      << "IfThenElse: condition must be a scalar bool";
  TUNE_CHECK(then_case.defined()) << "IfThenElse: undefined then_case";
  auto node = std::make_shared<IfThenElse>();
  node->condition = std::move(condition);
  node->then_case = std::move(then_case);
  node->else_case = std::move(else_case);
  return WrapStmt(std::move(node));
}

Stmt LetStmt::Make(Var var, Expr value, Stmt body) {
  TUNE_CHECK(var.defined() && value.defined() && body.defined())
      << "LetStmt: undefined var, value or body";
  CoerceTo(&value, var.type().Element(), var.type().lanes());
  TUNE_CHECK(value.type() == var.type())
      << "LetStmt " << var.name() << ": value type " << value.type().ToString()
      << " does not match " << var.type().ToString();
  auto node = std::make_shared<LetStmt>();
  node->var = std::move(var);
  node->value = std::move(value);
  node->body = std::move(body);
  return WrapStmt(std::move(node));
}

Stmt Allocate::Make(Buffer buffer, int64_t size, Stmt body) {
  TUNE_CHECK(buffer.defined() && body.defined()) << "Allocate: undefined buffer or body";
  TUNE_CHECK(buffer.scope() != MemoryScope::kGlobal)
      << "Allocate " << buffer.name() << ": cannot allocate a global buffer";
  TUNE_CHECK(size >= 1) << "Allocate " << buffer.name() << ": size must be >= 1, got " << size;
  auto node = std::make_shared<Allocate>();
  node->buffer = std::move(buffer);
  node->size = size;
  node->body = std::move(body);
  return WrapStmt(std::move(node));
}

Stmt Evaluate::Make(Expr value, bool return_on_error) {
  TUNE_CHECK(value.defined()) << "Evaluate: undefined value";
  TUNE_CHECK(!return_on_error || value.type() == Type::Int32())
      << "Evaluate: a status returned on error must be int32, not " << value.type().ToString();
  auto node = std::make_shared<Evaluate>();
  node->value = std::move(value);
  node->return_on_error = return_on_error;
  return WrapStmt(std::move(node));
}

Stmt Barrier::Make() { return WrapStmt(std::make_shared<Barrier>()); }

Stmt Barrier::MakeAfterAsyncCopies(bool commit, int wait_pending) {
  TUNE_CHECK(wait_pending >= -1) << "Barrier: wait_pending " << wait_pending << " < -1";
  auto node = std::make_shared<Barrier>();
  node->commit_async = commit;
  node->wait_async = wait_pending;
  return WrapStmt(std::move(node));
}

}  // namespace tune::ir
