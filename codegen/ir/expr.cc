#include "codegen/ir/expr.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "codegen/ir/ir.h"
#include "codegen/ir/node_util.h"
#include "common/status.h"

namespace tune::ir {
namespace {

void MatchTypes(ExprKind op, Expr* a, Expr* b) {
  TUNE_CHECK(a->defined() && b->defined()) << ExprKindName(op) << ": undefined operand";
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
      << ExprKindName(op) << ": operand types differ: " << a->type().ToString() << " vs "
      << b->type().ToString();
}

// Arithmetic and comparisons take the compute types (a storage type is cast first).
bool IsNumeric(Type t) { return (t.is_int() || t.is_float()) && t.is_compute(); }

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
  TUNE_CHECK(int_only ? t.is_int() && t.is_compute() : IsNumeric(t))
      << ExprKindName(T::kKind) << ": operands must be " << (int_only ? "integers" : "numeric")
      << ", got " << t.ToString();
  return MakeBinary<T>(std::move(a), std::move(b), t);
}

template <typename T>
Expr MakeCompare(Expr a, Expr b, bool allow_bool) {
  MatchTypes(T::kKind, &a, &b);
  Type t = a.type();
  TUNE_CHECK(IsNumeric(t) || (allow_bool && t.is_bool()))
      << ExprKindName(T::kKind) << ": cannot compare " << t.ToString();
  return MakeBinary<T>(std::move(a), std::move(b), Type::Bool(t.lanes()));
}

template <typename T>
Expr MakeLogic(Expr a, Expr b) {
  MatchTypes(T::kKind, &a, &b);
  Type t = a.type();
  TUNE_CHECK(t.is_bool()) << ExprKindName(T::kKind) << ": operands must be bool, got "
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

}  // namespace

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
  const Type from = value.type();
  TUNE_CHECK(type.IsSupported() && !type.is_handle() && !from.is_handle())
      << "Cast: cannot cast " << from.ToString() << " to " << type.ToString();
  // A storage type is cast only to or from its compute type (float32 or int32); the 8-bit
  // floats only from: kernels read them and never write them.
  if (type.is_storage_only() || from.is_storage_only()) {
    const Type storage = type.is_storage_only() ? type : from;
    const Type other = type.is_storage_only() ? from : type;
    TUNE_CHECK(!(type.is_storage_only() && from.is_storage_only()) &&
               other.Element() == storage.ComputeType().Element() && !(type.is_fp8()))
        << "Cast: cannot cast " << from.ToString() << " to " << type.ToString()
        << " (a storage type converts to and from " << storage.ComputeType().Element().ToString()
        << " only; 8-bit floats only to it)";
  }
  TUNE_CHECK(type.lanes() == value.type().lanes())
      << "Cast: lanes differ: " << value.type().ToString() << " to " << type.ToString();
  auto node = NewExpr<Cast>(type);
  node->value = std::move(value);
  return Wrap(std::move(node));
}

Expr Reinterpret::Make(Type type, Expr value) {
  TUNE_CHECK(value.defined()) << "Reinterpret: undefined value";
  const Type from = value.type();
  auto plain = [](Type t) {
    return t.IsSupported() && (t.is_int() || (t.code() == TypeCode::kUInt && t.bits() == 8) ||
                               (t.is_float() && t.bits() == 32));
  };
  TUNE_CHECK(plain(type) && plain(from)) << "Reinterpret: " << from.ToString() << " as "
                                         << type.ToString() << " (integers and float32 only)";
  TUNE_CHECK(int64_t{type.bits()} * type.lanes() == int64_t{from.bits()} * from.lanes())
      << "Reinterpret: " << from.ToString() << " as " << type.ToString()
      << ": the total bits differ";
  auto node = NewExpr<Reinterpret>(type);
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

Expr Shuffle::Make(std::vector<Expr> vectors, std::vector<int> indices) {
  TUNE_CHECK(!vectors.empty() && vectors.front().defined()) << "Shuffle: no vectors";
  const Type type = vectors.front().type();
  TUNE_CHECK(!type.is_scalar() && !type.is_handle())
      << "Shuffle: vectors of two or more lanes, got " << type.ToString();
  int total = 0;
  for (const Expr& v : vectors) {
    TUNE_CHECK(v.defined() && v.type() == type)
        << "Shuffle: vectors of one type, got " << type.ToString() << " and "
        << (v.defined() ? v.type().ToString() : "undefined");
    total += v.type().lanes();
  }
  TUNE_CHECK(indices.size() >= 2) << "Shuffle: at least two lanes, got " << indices.size();
  for (int i : indices) {
    TUNE_CHECK(i >= 0 && i < total) << "Shuffle: index " << i << " outside [0, " << total << ")";
  }
  auto node = NewExpr<Shuffle>(type.WithLanes(static_cast<int>(indices.size())));
  node->vectors = std::move(vectors);
  node->indices = std::move(indices);
  return Wrap(std::move(node));
}

Expr Shuffle::Interleave(std::vector<Expr> vectors) {
  TUNE_CHECK(!vectors.empty() && vectors.front().defined()) << "Shuffle: no vectors";
  const int n = static_cast<int>(vectors.size());
  const int lanes = vectors.front().type().lanes();
  std::vector<int> indices;
  for (int l = 0; l < lanes; ++l) {
    for (int v = 0; v < n; ++v) {
      indices.push_back(v * lanes + l);
    }
  }
  return Make(std::move(vectors), std::move(indices));
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

bool DotPairs(DotKind kind) { return kind != DotKind::kU8S8Quads; }

int DotGroup(DotKind kind) { return DotPairs(kind) ? 2 : 4; }

Expr DotAccumulate::Make(DotKind kind, Expr acc, Expr a, Expr b) {
  TUNE_CHECK(acc.defined() && a.defined() && b.defined()) << "DotAccumulate: undefined operand";
  const int group = DotGroup(kind);
  const bool pairs = DotPairs(kind);
  const int lanes = acc.type().lanes();
  const Type acc_type = pairs ? Type::Float32(lanes) : Type::Int32(lanes);
  const Type pair_elem = kind == DotKind::kF16Pairs ? Type::Float16() : Type::BFloat16();
  const Type a_elem = pairs ? pair_elem : Type::UInt8();
  const Type b_elem = pairs ? pair_elem : Type::Int8();
  TUNE_CHECK(acc.type() == acc_type)
      << "DotAccumulate: acc must be " << acc_type.ToString() << ", got " << acc.type().ToString();
  for (const auto& [name, e, elem] : {std::tuple{"a", &a, a_elem}, std::tuple{"b", &b, b_elem}}) {
    TUNE_CHECK(e->type() == elem.WithLanes(lanes * group) || e->type() == elem.WithLanes(group))
        << "DotAccumulate: " << name << " must be " << elem.WithLanes(lanes * group).ToString()
        << " or one group, " << elem.WithLanes(group).ToString() << "; got "
        << e->type().ToString();
  }
  TUNE_CHECK(lanes == 1 || a.type().lanes() > group || b.type().lanes() > group)
      << "DotAccumulate: a and b are both one group for " << lanes << " lanes";
  auto node = NewExpr<DotAccumulate>(acc_type);
  node->kind = kind;
  node->acc = std::move(acc);
  node->a = std::move(a);
  node->b = std::move(b);
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

}  // namespace tune::ir
