#include "codegen/ir/substitute.h"

#include <set>

#include "codegen/ir/visitor.h"
#include "common/status.h"

namespace tune::ir {
namespace {

class Substituter final : public IrMutator {
 public:
  explicit Substituter(const std::map<const Variable*, Expr>& replacements)
      : replacements_(replacements) {}

 protected:
  Expr Visit(const Variable* op) override {
    auto it = replacements_.find(op);
    if (it == replacements_.end() || shadowed_.count(op) != 0) {
      return Expr(op);
    }
    TUNE_CHECK(it->second.type() == op->type)
        << "Substitute " << op->name << ": replacement type " << it->second.type().ToString()
        << " does not match " << op->type.ToString();
    return it->second;
  }

  Stmt Visit(const For* op) override {
    Expr min = Mutate(op->min);
    Expr extent = Mutate(op->extent);
    Stmt body = MutateShadowed(op->var, op->body);
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) {
      return Stmt(op);
    }
    return For::Make(op->var, std::move(min), std::move(extent), op->loop_kind, std::move(body),
                     op->thread_axis);
  }

  Stmt Visit(const LetStmt* op) override {
    Expr value = Mutate(op->value);
    Stmt body = MutateShadowed(op->var, op->body);
    if (value.same_as(op->value) && body.same_as(op->body)) {
      return Stmt(op);
    }
    return LetStmt::Make(op->var, std::move(value), std::move(body));
  }

 private:
  Stmt MutateShadowed(const Var& var, const Stmt& body) {
    if (replacements_.count(var.get()) == 0) {
      return Mutate(body);
    }
    bool inserted = shadowed_.insert(var.get()).second;
    Stmt result = Mutate(body);
    if (inserted) {
      shadowed_.erase(var.get());
    }
    return result;
  }

  const std::map<const Variable*, Expr>& replacements_;
  std::set<const Variable*> shadowed_;
};

class VarUseFinder final : public IrVisitor {
 public:
  explicit VarUseFinder(const Variable* var) : var_(var) {}
  bool found() const { return found_; }

 protected:
  void Visit(const Variable* op) override { found_ = found_ || op == var_; }

 private:
  const Variable* var_;
  bool found_ = false;
};

}  // namespace

Expr Substitute(const Expr& e, const Var& var, const Expr& replacement) {
  return Substitute(e, std::map<const Variable*, Expr>{{var.get(), replacement}});
}

Stmt Substitute(const Stmt& s, const Var& var, const Expr& replacement) {
  return Substitute(s, std::map<const Variable*, Expr>{{var.get(), replacement}});
}

Expr Substitute(const Expr& e, const std::map<const Variable*, Expr>& replacements) {
  if (replacements.empty()) {
    return e;
  }
  return Substituter(replacements).Mutate(e);
}

Stmt Substitute(const Stmt& s, const std::map<const Variable*, Expr>& replacements) {
  if (replacements.empty()) {
    return s;
  }
  return Substituter(replacements).Mutate(s);
}

bool UsesVar(const Expr& e, const Var& var) {
  VarUseFinder finder(var.get());
  finder.VisitExpr(e);
  return finder.found();
}

bool UsesVar(const Stmt& s, const Var& var) {
  VarUseFinder finder(var.get());
  finder.VisitStmt(s);
  return finder.found();
}

}  // namespace tune::ir
