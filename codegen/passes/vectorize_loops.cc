#include "codegen/passes/vectorize_loops.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "codegen/ir/equality.h"
#include "codegen/ir/visitor.h"
#include "codegen/passes/simplify.h"
#include "common/logging.h"

namespace tune::ir {
namespace {

class VectorFinder final : public IrVisitor {
 public:
  bool found = false;

  void VisitExpr(const Expr& e) override {
    if (e.defined() && e.type().is_vector()) {
      found = true;
      return;
    }
    IrVisitor::VisitExpr(e);
  }
};

bool ContainsVectors(const Stmt& s) {
  VectorFinder finder;
  finder.VisitStmt(s);
  return finder.found;
}

// Rewrites a loop body for all lanes at once; sets failed() when the body cannot be rewritten
// without changing its meaning.
class Widener final : public IrMutator {
 public:
  Widener(const Var& var, Expr lanes_value) { replacements_[var.get()] = std::move(lanes_value); }
  bool failed() const { return failed_; }

 protected:
  Expr Visit(const Variable* op) override {
    auto it = replacements_.find(op);
    return it == replacements_.end() ? Expr(op) : it->second;
  }

  Expr Visit(const Cast* op) override {
    Expr v = Mutate(op->value);
    if (v.same_as(op->value)) {
      return Expr(op);
    }
    int lanes = v.type().lanes();
    return Cast::Make(op->type.WithLanes(lanes), std::move(v));
  }

  Expr Visit(const Broadcast* op) override { return Unchanged(op, {op->value}); }
  Expr Visit(const Ramp* op) override { return Unchanged(op, {op->base, op->stride}); }
  Expr Visit(const CallExtern* op) override { return Unchanged(op, op->args); }
  Expr Visit(const AddressOf* op) override { return Unchanged(op, {op->index}); }

  Stmt Visit(const Store* op) override {
    Expr index = Mutate(op->index);
    Expr value = Mutate(op->value);
    if (index.type().is_scalar()) {
      failed_ = true;  // every lane would write the same element
      return Stmt(op);
    }
    return Store::MakeLike(op, std::move(index), std::move(value), Mutate(op->valid));
  }

  Stmt Visit(const For* op) override {
    if (op->loop_kind == LoopKind::kParallel || IsGpuLoop(op->loop_kind)) {
      failed_ = true;
      return Stmt(op);
    }
    Expr min = Mutate(op->min);
    Expr extent = Mutate(op->extent);
    if (min.type().is_vector() || extent.type().is_vector()) {
      failed_ = true;
      return Stmt(op);
    }
    Stmt body = Mutate(op->body);
    if (failed_) {
      return Stmt(op);
    }
    return For::Make(op->var, std::move(min), std::move(extent), op->loop_kind, std::move(body));
  }

  Stmt Visit(const IfThenElse* op) override {
    Expr c = Mutate(op->condition);
    if (c.type().is_vector()) {
      failed_ = true;
      return Stmt(op);
    }
    Stmt t = Mutate(op->then_case);
    Stmt e = Mutate(op->else_case);
    if (failed_) {
      return Stmt(op);
    }
    return IfThenElse::Make(std::move(c), std::move(t), std::move(e));
  }

  Stmt Visit(const LetStmt* op) override {
    Expr value = Mutate(op->value);
    if (value.type() == op->var.type()) {
      Stmt body = Mutate(op->body);
      return failed_ ? Stmt(op) : LetStmt::Make(op->var, std::move(value), std::move(body));
    }
    Var wide(op->var.name(), value.type());
    replacements_[op->var.get()] = wide;
    Stmt body = Mutate(op->body);
    replacements_.erase(op->var.get());
    return failed_ ? Stmt(op) : LetStmt::Make(wide, std::move(value), std::move(body));
  }

  Stmt Visit(const Allocate* op) override { return Fail(op); }
  Stmt Visit(const Evaluate* op) override { return Fail(op); }
  Stmt Visit(const Barrier* op) override { return Fail(op); }

 private:
  // Nodes whose operands must stay scalar: fail when one of them depends on the variable.
  template <typename T>
  Expr Unchanged(const T* op, const std::vector<Expr>& operands) {
    for (const Expr& e : operands) {
      if (Mutate(e).type().is_vector()) {
        failed_ = true;
      }
    }
    return Expr(op);
  }

  Stmt Fail(const StmtNode* op) {
    failed_ = true;
    return Stmt(op);
  }

  std::map<const Variable*, Expr> replacements_;
  bool failed_ = false;
};

// Variables bound inside a statement, and the buffers it stores to.
class BindingCollector final : public IrVisitor {
 public:
  std::set<const Variable*> vars;
  std::set<const BufferNode*> stored;

 protected:
  void Visit(const For* op) override {
    vars.insert(op->var.get());
    IrVisitor::Visit(op);
  }
  void Visit(const LetStmt* op) override {
    vars.insert(op->var.get());
    IrVisitor::Visit(op);
  }
  void Visit(const Store* op) override {
    stored.insert(op->buffer.get());
    IrVisitor::Visit(op);
  }
};

class UsesAnyFinder final : public IrVisitor {
 public:
  explicit UsesAnyFinder(const std::set<const Variable*>& vars) : vars_(vars) {}
  bool found = false;

 protected:
  void Visit(const Variable* op) override { found = found || vars_.count(op) != 0; }

 private:
  const std::set<const Variable*>& vars_;
};

// `e` as sum(coefs[v] * v) + rest, with `rest` free of the variables in `vars`.
struct Linear {
  std::map<const Variable*, int64_t> coefs;
  Expr rest;
};

std::optional<Linear> Linearize(const Expr& e, const std::set<const Variable*>& vars) {
  UsesAnyFinder finder(vars);
  finder.VisitExpr(e);
  if (!finder.found) {
    return Linear{{}, e};
  }
  if (const auto* v = e.As<Variable>()) {
    return Linear{{{v, 1}}, IntImm::Make(0, e.type())};
  }
  auto combine = [](Linear a, const Linear& b, int64_t sign) {
    for (const auto& [var, c] : b.coefs) {
      a.coefs[var] += sign * c;
    }
    a.rest = sign > 0 ? Add::Make(a.rest, b.rest) : Sub::Make(a.rest, b.rest);
    return a;
  };
  if (const auto* add = e.As<Add>()) {
    auto a = Linearize(add->a, vars);
    auto b = Linearize(add->b, vars);
    return a && b ? std::optional<Linear>(combine(*a, *b, 1)) : std::nullopt;
  }
  if (const auto* sub = e.As<Sub>()) {
    auto a = Linearize(sub->a, vars);
    auto b = Linearize(sub->b, vars);
    return a && b ? std::optional<Linear>(combine(*a, *b, -1)) : std::nullopt;
  }
  if (const auto* mul = e.As<Mul>()) {
    std::optional<int64_t> c = AsConstInt(mul->b);
    Expr other = mul->a;
    if (!c) {
      c = AsConstInt(mul->a);
      other = mul->b;
    }
    if (!c) {
      return std::nullopt;
    }
    auto l = Linearize(other, vars);
    if (!l) {
      return std::nullopt;
    }
    for (auto& entry : l->coefs) {
      entry.second *= *c;
    }
    l->rest = Mul::Make(l->rest, IntImm::Make(*c, l->rest.type()));
    return l;
  }
  return std::nullopt;
}

// Checks that no two lanes of the widened body `s` (n lanes) touch a common element of a
// buffer that the body stores to.
class LaneDisjointness final : public IrVisitor {
 public:
  LaneDisjointness(const Stmt& s, int64_t lanes) : lanes_(lanes) { collector_.VisitStmt(s); }
  bool Check(const Stmt& s) {
    VisitStmt(s);
    return ok_;
  }

 protected:
  void Visit(const Load* op) override {
    Access(op->buffer, op->index);
    IrVisitor::Visit(op);
  }
  void Visit(const Store* op) override {
    Access(op->buffer, op->index);
    IrVisitor::Visit(op);
  }

 private:
  struct Pattern {
    int64_t stride;
    Expr rest;
  };

  void Access(const Buffer& buffer, const Expr& index) {
    if (!ok_ || collector_.stored.count(buffer.get()) == 0) {
      return;
    }
    const auto* ramp = index.As<Ramp>();
    std::optional<int64_t> stride = ramp != nullptr ? AsConstInt(ramp->stride) : std::nullopt;
    if (!stride || *stride == 0) {
      ok_ = false;
      return;
    }
    std::optional<Linear> linear = Linearize(ramp->base, collector_.vars);
    if (!linear) {
      ok_ = false;
      return;
    }
    int64_t period = lanes_ * std::llabs(*stride);
    for (const auto& [var, coef] : linear->coefs) {
      if (coef % period != 0) {
        ok_ = false;
        return;
      }
    }
    Expr rest = Simplify(linear->rest);
    auto [it, inserted] = patterns_.try_emplace(buffer.get(), Pattern{*stride, rest});
    if (!inserted && (it->second.stride != *stride || !StructurallyEqual(it->second.rest, rest))) {
      ok_ = false;
    }
  }

  int64_t lanes_;
  BindingCollector collector_;
  std::map<const BufferNode*, Pattern> patterns_;
  bool ok_ = true;
};

class Vectorizer final : public IrMutator {
 protected:
  Stmt Visit(const For* op) override {
    Stmt body = Mutate(op->body);
    if (op->loop_kind != LoopKind::kVectorized) {
      if (body.same_as(op->body)) {
        return Stmt(op);
      }
      return For::Make(op->var, op->min, op->extent, op->loop_kind, std::move(body),
                       op->thread_axis);
    }
    auto serial = [&](std::string_view reason) {
      Logger("codegen")->debug("vectorize: loop over {} stays serial: {}", op->var.name(), reason);
      return For::Make(op->var, op->min, op->extent, LoopKind::kSerial, body);
    };
    std::optional<int64_t> extent = AsConstInt(op->extent);
    if (!extent || *extent < 2 || *extent > kMaxVectorLanes) {
      return serial("its extent is not a constant in [2, kMaxVectorLanes]");
    }
    if (ContainsVectors(body)) {
      return serial("its body already holds vectors");
    }
    int lanes = static_cast<int>(*extent);
    Widener widener(op->var, Ramp::Make(op->min, IntImm::Make(1, op->var.type()), lanes));
    Stmt wide = widener.Mutate(body);
    if (widener.failed()) {
      return serial("its body has a statement that cannot run on all lanes at once");
    }
    wide = Simplify(wide);
    if (!LaneDisjointness(wide, lanes).Check(wide)) {
      return serial("two lanes could access the same element of a stored buffer");
    }
    return wide;
  }
};

}  // namespace

Stmt VectorizeLoops(const Stmt& s) { return Vectorizer().Mutate(s); }

}  // namespace tune::ir
