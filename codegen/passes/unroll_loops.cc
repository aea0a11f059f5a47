#include "codegen/passes/unroll_loops.h"

#include <vector>

#include "codegen/ir/substitute.h"
#include "codegen/ir/visitor.h"

namespace tune::ir {
namespace {

class Unroller final : public IrMutator {
 protected:
  Stmt Visit(const For* op) override {
    if (op->loop_kind != LoopKind::kUnrolled) {
      return IrMutator::Visit(op);
    }
    Stmt body = Mutate(op->body);
    std::optional<int64_t> extent = AsConstInt(op->extent);
    if (!extent || *extent > kMaxUnrollExtent) {
      return For::Make(op->var, op->min, op->extent, LoopKind::kSerial, std::move(body));
    }
    std::vector<Stmt> copies;
    copies.reserve(static_cast<size_t>(std::max<int64_t>(*extent, 0)));
    for (int64_t i = 0; i < *extent; ++i) {
      Expr value = i == 0 ? op->min : Add::Make(op->min, IntImm::Make(i, op->var.type()));
      copies.push_back(Substitute(body, op->var, value));
    }
    return Block::Make(std::move(copies));
  }
};

}  // namespace

Stmt UnrollLoops(const Stmt& s) { return Unroller().Mutate(s); }

}  // namespace tune::ir
