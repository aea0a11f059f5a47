#include "codegen/ir/params.h"

#include <set>

#include "codegen/ir/visitor.h"

namespace tune::ir {
namespace {

class AtomicTargets : public IrVisitor {
 public:
  void Visit(const Store* op) override {
    if (op->atomic_add) {
      buffers.insert(op->buffer.get());
    }
    IrVisitor::Visit(op);
  }
  std::set<const BufferNode*> buffers;
};

}  // namespace

std::vector<int> AtomicallyAccumulatedParams(const LoweredFunc& func) {
  AtomicTargets targets;
  if (func.body.defined()) {
    targets.VisitStmt(func.body);
  }
  std::vector<int> params;
  for (size_t i = 0; i < func.params.size(); ++i) {
    if (targets.buffers.count(func.params[i].get()) != 0) {
      params.push_back(static_cast<int>(i));
    }
  }
  return params;
}

}  // namespace tune::ir
