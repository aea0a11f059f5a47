#include "codegen/ir/verifier.h"

#include <algorithm>
#include <set>
#include <string>

#include "codegen/ir/printer.h"
#include "codegen/ir/visitor.h"
#include "common/strings.h"

namespace tune::ir {
namespace {

// The first line of a statement's text: enough to name it in a message.
std::string Head(const Stmt& s) {
  std::string text = ToText(s);
  size_t eol = text.find('\n');
  return eol == std::string::npos ? text : text.substr(0, eol);
}

bool IsIdentifier(const std::string& name) {
  if (name.empty()) {
    return false;
  }
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(c >= '0' && c <= '9' && i > 0)) {
      return false;
    }
  }
  return true;
}

class Verifier final : public IrVisitor {
 public:
  explicit Verifier(const LoweredFunc& func) : func_(func) {}

  absl::Status Run() {
    if (!IsIdentifier(func_.name)) {
      return absl::InvalidArgumentError(
          StrCat("Verify: function name '", func_.name, "' is not a C identifier"));
    }
    for (int64_t c : func_.cluster) {
      if (c < 1 || c > 8) {
        return Error(StrCat("cluster (", func_.cluster[0], ", ", func_.cluster[1], ", ",
                            func_.cluster[2], ")"),
                     "must have 1 to 8 blocks per axis");
      }
    }
    if (ClusterSize() > 8) {
      return Error(StrCat("cluster (", func_.cluster[0], ", ", func_.cluster[1], ", ",
                          func_.cluster[2], ")"),
                   "holds more than 8 blocks (the portable cluster size)");
    }
    std::set<std::string> names;
    for (const Buffer& b : func_.params) {
      if (!b.defined()) {
        return Error("parameter", "is undefined");
      }
      if (b.scope() != MemoryScope::kGlobal) {
        return Error(StrCat("parameter ", b.name()), "must be a global buffer");
      }
      if (!names.insert(b.name()).second) {
        return Error(StrCat("parameter ", b.name()), "appears twice");
      }
      buffers_.insert(b.get());
    }
    if (func_.stream_param.defined()) {
      if (func_.stream_param.type() != Type::Int64()) {
        return Error(StrCat("stream parameter ", func_.stream_param.name()), "must be an int64");
      }
      bound_.insert(func_.stream_param.get());
    }
    if (!func_.body.defined()) {
      return Error("body", "is undefined");
    }
    VisitStmt(func_.body);
    return status_;
  }

 protected:
  void Fail(const std::string& what, const std::string& rule) {
    if (status_.ok()) {
      status_ = Error(what, rule);
    }
  }

  absl::Status Error(const std::string& what, const std::string& rule) const {
    return absl::InvalidArgumentError(StrCat("Verify ", func_.name, ": ", what, " ", rule));
  }

  void CheckBuffer(const Buffer& b, const std::string& node) {
    if (!b.defined() || buffers_.count(b.get()) == 0) {
      Fail(StrCat("`", node, "`"),
           StrCat("uses buffer ", b.defined() ? b.name() : std::string("<undefined>"),
                  " which is neither a parameter nor allocated around it"));
    }
  }

  void CheckIndex(const Expr& index, const std::string& node) {
    if (!index.defined() || !index.type().is_int()) {
      Fail(StrCat("`", node, "`"), "has a non-integer index");
    }
  }

  void CheckSame(const Expr& a, const Expr& b, const Expr& node) {
    if (!a.defined() || !b.defined() || a.type() != b.type()) {
      Fail(StrCat("`", ToText(node), "`"), "has operands of different types");
    }
  }

  void VisitBinaryChecked(const BinaryExprNode* op) {
    CheckSame(op->a, op->b, Expr(op));
    VisitBinary(op);
  }

  void Visit(const Variable* op) override {
    if (bound_.count(op) == 0) {
      Fail(StrCat("variable ", op->name), "is used outside the scope of its binding");
    }
  }
  void Visit(const Add* op) override { VisitBinaryChecked(op); }
  void Visit(const Sub* op) override { VisitBinaryChecked(op); }
  void Visit(const Mul* op) override { VisitBinaryChecked(op); }
  void Visit(const Div* op) override { VisitBinaryChecked(op); }
  void Visit(const Mod* op) override { VisitBinaryChecked(op); }
  void Visit(const Min* op) override { VisitBinaryChecked(op); }
  void Visit(const Max* op) override { VisitBinaryChecked(op); }
  void Visit(const EQ* op) override { VisitBinaryChecked(op); }
  void Visit(const NE* op) override { VisitBinaryChecked(op); }
  void Visit(const LT* op) override { VisitBinaryChecked(op); }
  void Visit(const LE* op) override { VisitBinaryChecked(op); }
  void Visit(const GT* op) override { VisitBinaryChecked(op); }
  void Visit(const GE* op) override { VisitBinaryChecked(op); }
  void Visit(const And* op) override { VisitBinaryChecked(op); }
  void Visit(const Or* op) override { VisitBinaryChecked(op); }

  void Visit(const Select* op) override {
    CheckSame(op->true_value, op->false_value, Expr(op));
    IrVisitor::Visit(op);
  }

  void Visit(const Fma* op) override {
    CheckSame(op->a, op->b, Expr(op));
    CheckSame(op->a, op->c, Expr(op));
    IrVisitor::Visit(op);
  }

  void Visit(const Load* op) override {
    std::string text = ToText(Expr(op));
    CheckBuffer(op->buffer, text);
    CheckIndex(op->index, text);
    if (op->index.defined() && op->type.lanes() != op->index.type().lanes()) {
      Fail(StrCat("`", text, "`"), "has a result with other lanes than its index");
    }
    IrVisitor::Visit(op);
  }

  void Visit(const AddressOf* op) override {
    std::string text = ToText(Expr(op));
    CheckBuffer(op->buffer, text);
    CheckIndex(op->index, text);
    IrVisitor::Visit(op);
  }

  void Visit(const Store* op) override {
    std::string text = Head(Stmt(op));
    CheckBuffer(op->buffer, text);
    CheckIndex(op->index, text);
    if (op->index.defined() && op->value.defined() &&
        op->value.type() != op->buffer.element_type().WithLanes(op->index.type().lanes())) {
      Fail(StrCat("`", text, "`"),
           StrCat("stores a ", op->value.type().ToString(), " value through an index of ",
                  op->index.type().lanes(), " lanes"));
    }
    if (op->atomic_add && (op->buffer.scope() != MemoryScope::kGlobal ||
                           op->buffer.element_type() != Type::Float32())) {
      Fail(StrCat("`", text, "`"), "adds atomically to a buffer that is not global float32");
    }
    if (op->async_copy) {
      CheckAsyncCopy(op, text);
    }
    IrVisitor::Visit(op);
  }

  void Visit(const For* op) override {
    std::string text = Head(Stmt(op));
    VisitExpr(op->min);
    VisitExpr(op->extent);
    if (op->loop_kind == LoopKind::kVectorized || op->loop_kind == LoopKind::kUnrolled) {
      std::optional<int64_t> extent = AsConstInt(op->extent);
      if (!extent || *extent < 0) {
        Fail(StrCat("`", text, "`"),
             StrCat("is ", LoopKindName(op->loop_kind), " but its extent is not a constant >= 0"));
      }
    }
    bool parallel = op->loop_kind == LoopKind::kParallel;
    bool gpu = IsGpuLoop(op->loop_kind);
    if (parallel && (parallel_depth_ > 0 || gpu_depth_ > 0)) {
      Fail(StrCat("`", text, "`"), "is a parallel loop inside a parallel or GPU loop");
    }
    if (gpu && parallel_depth_ > 0) {
      Fail(StrCat("`", text, "`"), "is a GPU loop inside a parallel loop");
    }
    if (op->thread_axis < 0 || op->thread_axis > 2 || (!gpu && op->thread_axis != 0)) {
      Fail(StrCat("`", text, "`"), "has a thread axis outside 0..2 or on a non-GPU loop");
    }
    parallel_depth_ += parallel ? 1 : 0;
    gpu_depth_ += gpu ? 1 : 0;
    gpu_thread_depth_ += op->loop_kind == LoopKind::kGpuThread ? 1 : 0;
    Bind(op->var, text);
    VisitStmt(op->body);
    bound_.erase(op->var.get());
    parallel_depth_ -= parallel ? 1 : 0;
    gpu_depth_ -= gpu ? 1 : 0;
    gpu_thread_depth_ -= op->loop_kind == LoopKind::kGpuThread ? 1 : 0;
  }

  void Visit(const IfThenElse* op) override {
    if (!op->condition.defined() || op->condition.type() != Type::Bool()) {
      Fail(StrCat("`", Head(Stmt(op)), "`"), "has a condition that is not a scalar bool");
    }
    IrVisitor::Visit(op);
  }

  void Visit(const LetStmt* op) override {
    VisitExpr(op->value);
    if (op->value.type() != op->var.type()) {
      Fail(StrCat("`", Head(Stmt(op)), "`"), "binds a value of another type than its variable");
    }
    Bind(op->var, Head(Stmt(op)));
    VisitStmt(op->body);
    bound_.erase(op->var.get());
  }

  void Visit(const Allocate* op) override {
    std::string text = Head(Stmt(op));
    MemoryScope scope = op->buffer.scope();
    if (scope == MemoryScope::kGlobal && (gpu_depth_ > 0 || parallel_depth_ > 0)) {
      Fail(StrCat("`", text, "`"),
           "allocates a global buffer (a workspace) inside a loop; workspaces are allocated "
           "outside the GPU loops");
    }
    if ((scope == MemoryScope::kGpuShared || scope == MemoryScope::kGpuLocal) && gpu_depth_ == 0) {
      Fail(StrCat("`", text, "`"), "allocates GPU memory outside GPU loops");
    }
    if (op->size < 1) {
      Fail(StrCat("`", text, "`"), "has a size < 1");
    }
    if (!buffers_.insert(op->buffer.get()).second) {
      Fail(StrCat("`", text, "`"), "allocates a buffer that is already in scope");
      return;
    }
    VisitStmt(op->body);
    buffers_.erase(op->buffer.get());
  }

  void Visit(const Evaluate* op) override {
    if (op->value.As<CallExtern>() == nullptr) {
      Fail(StrCat("`", Head(Stmt(op)), "`"), "evaluates something other than a call");
    }
    if (op->return_on_error && (parallel_depth_ > 0 || gpu_depth_ > 0)) {
      Fail(StrCat("`", Head(Stmt(op)), "`"),
           "returns from the kernel inside a parallel or GPU loop (only the kernel's own thread "
           "can return)");
    }
    IrVisitor::Visit(op);
  }

  // The form Store::MakeAsyncCopy builds: gpu_shared <- Load of a global buffer, 4, 8 or 16
  // bytes of dense lanes, inside the gpu_thread loops (or zeros, once simplified: a plain store).
  void CheckAsyncCopy(const Store* op, const std::string& text) {
    if (IsConst(op->value, 0.0)) {
      return;
    }
    const auto* load = op->value.As<Load>();
    const int lanes = op->index.defined() ? op->index.type().lanes() : 0;
    const auto* ramp = op->index.As<Ramp>();
    if (load == nullptr || load->buffer.scope() != MemoryScope::kGlobal ||
        op->buffer.scope() != MemoryScope::kGpuShared) {
      Fail(StrCat("`", text, "`"),
           "is an asynchronous copy that is not gpu_shared <- Load of a global buffer");
    } else if (const int64_t bytes = int64_t{lanes} * op->buffer.element_type().Bytes();
               (bytes != 4 && bytes != 8 && bytes != 16) ||
               (lanes > 1 && (ramp == nullptr || !IsConst(ramp->stride, 1)))) {
      Fail(StrCat("`", text, "`"),
           "is an asynchronous copy of other than 4, 8 or 16 bytes of dense lanes");
    } else if (gpu_thread_depth_ == 0) {
      Fail(StrCat("`", text, "`"), "is an asynchronous copy outside a gpu_thread loop");
    }
  }

  void Visit(const Barrier* op) override {
    if (gpu_thread_depth_ == 0) {
      Fail(StrCat("`", Head(Stmt(op)), "`"), "is outside a gpu_thread loop");
    }
    if (op->cluster) {
      NeedCluster("`cluster_barrier()`");
    }
  }

  void Visit(const WarpMma* op) override {
    if (gpu_thread_depth_ == 0) {
      Fail(StrCat("`warp_mma(", op->a.name(), ", ", op->b.name(), ")`"),
           "is outside a gpu_thread loop");
    }
    IrVisitor::Visit(op);
  }

  void Visit(const WaveMma* op) override {
    if (gpu_thread_depth_ == 0) {
      Fail(StrCat("`wave_mma(", op->a.name(), ", ", op->b.name(), ")`"),
           "is outside a gpu_thread loop");
    }
    IrVisitor::Visit(op);
  }

  void Visit(const WarpGroupMma* op) override {
    if (gpu_thread_depth_ == 0) {
      Fail(StrCat("`warpgroup_mma(", op->a.name(), ", ", op->b.name(), ")`"),
           "is outside a gpu_thread loop");
    }
    IrVisitor::Visit(op);
  }

  void Visit(const TensorCopy* op) override {
    const std::string text =
        StrCat("`tensor_copy(", op->dst.name(), " <- ", op->map.buffer.name(), ")`");
    if (gpu_thread_depth_ == 0) {
      Fail(text, "is outside a gpu_thread loop");
    }
    if (std::find_if(func_.params.begin(), func_.params.end(), [&](const Buffer& p) {
          return p.same_as(op->map.buffer);
        }) == func_.params.end()) {
      Fail(text,
           StrCat("maps ", op->map.buffer.name(), ", which is not a parameter of the function"));
    }
    CheckBuffer(op->dst, text);
    CheckBuffer(op->barrier, text);
    if (op->multicast != 0) {
      NeedCluster(text);
      if (op->multicast >> ClusterSize() != 0) {
        Fail(text, StrCat("multicasts to mask ", op->multicast, ", past the cluster's ",
                          ClusterSize(), " blocks"));
      }
    }
    IrVisitor::Visit(op);
  }

  void Visit(const FetchAdd* op) override {
    const std::string text =
        StrCat("`", op->result.name(), " = fetch_add(", op->buffer.name(), ")`");
    if (gpu_thread_depth_ == 0) {
      Fail(text, "is outside a gpu_thread loop");
    }
    CheckBuffer(op->buffer, text);
    CheckBuffer(op->result, text);
    IrVisitor::Visit(op);
  }

  void Visit(const AmxTileOp* op) override {
    const std::string text = StrCat("`amx tile op on t", op->tile, "`");
    if (gpu_thread_depth_ > 0) {
      Fail(text, "is a CPU instruction inside a gpu_thread loop");
    }
    if (op->op == AmxTileOpKind::kLoad || op->op == AmxTileOpKind::kStore) {
      CheckBuffer(op->buffer, text);
      CheckIndex(op->index, text);
    }
    IrVisitor::Visit(op);
  }

  void Visit(const SetMaxRegisters* op) override {
    if (gpu_thread_depth_ == 0) {
      Fail("`set_max_registers`", "is outside a gpu_thread loop");
    }
  }

  void Visit(const MBarrierOp* op) override {
    const std::string text =
        StrCat("`mbarrier_", MBarrierOpKindName(op->op), "(", op->barrier.name(), ")`");
    if (gpu_thread_depth_ == 0) {
      Fail(text, "is outside a gpu_thread loop");
    }
    CheckBuffer(op->barrier, text);
    if (op->cta.defined()) {
      NeedCluster(text);
    }
    IrVisitor::Visit(op);
  }

 private:
  int64_t ClusterSize() const { return func_.cluster[0] * func_.cluster[1] * func_.cluster[2]; }
  // A statement that reaches other blocks of a cluster, in a function that has one.
  void NeedCluster(const std::string& text) {
    if (ClusterSize() == 1) {
      Fail(text, "reaches other blocks of a thread-block cluster, but the function has none");
    }
  }

  void Bind(const Var& var, const std::string& node) {
    if (!bound_.insert(var.get()).second) {
      Fail(StrCat("`", node, "`"),
           StrCat("binds variable ", var.name(), " again inside its own scope"));
    }
  }

  const LoweredFunc& func_;
  absl::Status status_;
  std::set<const Variable*> bound_;
  std::set<const BufferNode*> buffers_;
  int parallel_depth_ = 0;
  int gpu_depth_ = 0;
  int gpu_thread_depth_ = 0;
};

}  // namespace

absl::Status Verify(const LoweredFunc& func) { return Verifier(func).Run(); }

}  // namespace tune::ir
