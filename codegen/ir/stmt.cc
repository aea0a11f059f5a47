#include "codegen/ir/stmt.h"

#include <algorithm>

#include "codegen/ir/ir.h"
#include "codegen/ir/node_util.h"
#include "common/status.h"

namespace tune::ir {
namespace {

template <typename T>
Stmt WrapStmt(std::shared_ptr<T> node) {
  return Stmt(std::shared_ptr<const StmtNode>(std::move(node)));
}

}  // namespace

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
