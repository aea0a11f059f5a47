#include "codegen/sim/interpreter.h"

#include <atomic>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tune::sim {
namespace {

using ir::NodeKind;

Value MakeValue(ir::Type type) {
  Value v;
  v.type = type;
  if (type.lanes() == 1) {
    v.lanes.push_back(Lane{.i = 0});  // cheaper than the generic resize for scalars
  } else {
    v.lanes.resize(type.lanes());
  }
  return v;
}

Value IntValue(ir::Type type, int64_t i) {
  Value v;
  v.type = type;
  v.lanes.push_back(Lane{.i = i});
  return v;
}

// Lane `i` of `v`, a scalar standing for every lane.
inline const Lane& LaneOf(const Value& v, int i) { return v.lanes[v.lanes.size() == 1 ? 0 : i]; }

inline int64_t Wrap(int64_t v, const ir::Type& t) {
  return t.bits() == 32 ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))) : v;
}

inline float FloatMin(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  return b < a ? b : a;
}
inline float FloatMax(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  return a < b ? b : a;
}

std::string ScopeText(const SimBuffer& b) {
  if (b.param_index >= 0) {
    return absl::StrCat("global, parameter ", b.param_index);
  }
  return std::string(ir::MemoryScopeName(b.scope));
}

}  // namespace

Interpreter::Interpreter(ExecHooks* hooks, const GpuSimOptions* options)
    : hooks_(hooks), options_(options), epoch_(std::make_shared<int64_t>(0)) {}

Interpreter Interpreter::ForkThread(const std::array<int64_t, 3>& thread_index,
                                    const std::array<int64_t, 3>& block_dims) const {
  Interpreter t(*this);
  t.in_threads_ = true;
  t.thread_index_ = thread_index;
  t.thread_id_ = static_cast<int32_t>(
      thread_index[0] + block_dims[0] * (thread_index[1] + block_dims[1] * thread_index[2]));
  // gpu_local and stack arrays allocated around the thread loops are private to each thread
  // (registers or a stack slot of the kernel function): each thread gets fresh elements.
  t.private_buffers_.clear();
  for (auto& [node, buffer] : t.buffers_) {
    if (buffer->scope != ir::MemoryScope::kGpuLocal && buffer->scope != ir::MemoryScope::kStack) {
      continue;
    }
    auto copy = std::make_shared<SimBuffer>();
    copy->name = buffer->name;
    copy->scope = buffer->scope;
    copy->size = buffer->size;
    copy->storage.assign(static_cast<size_t>(buffer->size),
                         std::numeric_limits<float>::quiet_NaN());
    copy->data = copy->storage.data();
    buffer = copy.get();
    t.private_buffers_.push_back(std::move(copy));
  }
  return t;
}

Interpreter Interpreter::ForkBlockWorker() const {
  Interpreter w(*this);
  w.epoch_ = std::make_shared<int64_t>(0);
  return w;
}

void Interpreter::BindBuffer(const ir::BufferNode* node, SimBuffer* buffer) {
  buffers_.emplace_back(node, buffer);
}

std::string Interpreter::Location() const {
  return absl::StrFormat("block (%d, %d, %d), thread (%d, %d, %d)", block_index_[0],
                         block_index_[1], block_index_[2], thread_index_[0], thread_index_[1],
                         thread_index_[2]);
}

void Interpreter::Fail(absl::StatusCode code, const std::string& message) const {
  throw SimError{absl::Status(code, absl::StrCat(message, " at ", Location()))};
}

Value Interpreter::LookupVar(const ir::Variable* var) const {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
    if (it->first == var) {
      return it->second;
    }
  }
  Fail(absl::StatusCode::kInvalidArgument,
       absl::StrCat("variable `", var->name, "` is used outside the statement that binds it"));
}

SimBuffer* Interpreter::LookupBuffer(const ir::BufferNode* node) const {
  for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) {
    if (it->first == node) {
      return it->second;
    }
  }
  Fail(absl::StatusCode::kInvalidArgument,
       absl::StrCat("buffer `", node->name,
                    "` is neither a parameter nor allocated by an enclosing Allocate"));
}

int64_t Interpreter::CheckedIndex(const SimBuffer& b, int64_t index, const char* access) const {
  if (index < 0 || index >= b.size) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("out-of-bounds %s buffer `%s` (%s): index %d is outside [0, %d)", access,
                         b.name, ScopeText(b), index, b.size));
  }
  return index;
}

void Interpreter::TrackShared(SimBuffer& b, int64_t index, bool write) const {
  if (b.cells.empty()) {
    return;
  }
  SimBuffer::Cell& c = b.cells[static_cast<size_t>(index)];
  const int64_t epoch = *epoch_;
  const int32_t me = thread_id_;
  const bool races = options_->check_shared_races;
  if (write) {
    if (races && c.write_epoch == epoch && c.writer != me) {
      Fail(absl::StatusCode::kFailedPrecondition,
           absl::StrFormat("data race on gpu_shared buffer `%s`: element %d is written by thread "
                           "%d and by thread %d with no barrier between",
                           b.name, index, c.writer, me));
    }
    if (races && c.read_epoch == epoch && c.reader != me) {
      Fail(absl::StatusCode::kFailedPrecondition,
           absl::StrFormat("data race on gpu_shared buffer `%s`: element %d is read by %s and "
                           "written by thread %d with no barrier between",
                           b.name, index,
                           c.reader == SimBuffer::kManyReaders ? std::string("several threads")
                                                               : absl::StrCat("thread ", c.reader),
                           me));
    }
    c.write_epoch = epoch;
    c.writer = me;
    return;
  }
  if (options_->check_uninitialized_shared && c.write_epoch < 0) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("read of uninitialised gpu_shared memory: element %d of buffer `%s` has "
                         "not been written by any thread of the block before this read (a write "
                         "by another thread since the last barrier would be a data race; where "
                         "the value is never used, e.g. by the threads of a partial tile, "
                         "GpuSimOptions::check_uninitialized_shared = false lets it read as NaN)",
                         index, b.name));
  }
  if (races && c.write_epoch == epoch && c.writer != me) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("data race on gpu_shared buffer `%s`: element %d is written by thread %d "
                         "and read by thread %d with no barrier between",
                         b.name, index, c.writer, me));
  }
  if (c.read_epoch != epoch) {
    c.read_epoch = epoch;
    c.reader = me;
  } else if (c.reader != me) {
    c.reader = SimBuffer::kManyReaders;
  }
}

Value Interpreter::EvalLoad(const ir::Load* op) {
  SimBuffer* b = LookupBuffer(op->buffer.get());
  Value index = Eval(op->index);
  Value v = MakeValue(op->type);
  const bool shared = !b->cells.empty();
  for (int i = 0; i < op->type.lanes(); ++i) {
    int64_t k = CheckedIndex(*b, LaneOf(index, i).i, "load from");
    if (shared) {
      TrackShared(*b, k, /*write=*/false);
    }
    v.lanes[i].f = b->data[k];
  }
  return v;
}

void Interpreter::ExecStore(const ir::Store* op) {
  SimBuffer* b = LookupBuffer(op->buffer.get());
  Value value = Eval(op->value);
  Value index = Eval(op->index);
  const int lanes = static_cast<int>(value.lanes.size());
  const bool dense = index.lanes.size() == 1;
  const bool shared = !b->cells.empty();
  for (int i = 0; i < lanes; ++i) {
    int64_t k = CheckedIndex(*b, dense ? index.lanes[0].i + i : index.lanes[i].i, "store to");
    if (shared) {
      TrackShared(*b, k, /*write=*/true);
    }
    if (op->atomic_add) {
      // Blocks may run on several OS threads (GpuSimOptions::block_workers).
      std::atomic_ref<float>(b->data[k]).fetch_add(value.lanes[i].f, std::memory_order_relaxed);
    } else {
      b->data[k] = value.lanes[i].f;
    }
  }
}

void Interpreter::ExecFor(const ir::For* op) {
  if (op->loop_kind == ir::LoopKind::kGpuBlock) {
    if (in_threads_) {
      Fail(absl::StatusCode::kInvalidArgument,
           absl::StrCat("gpu_block loop over `", op->var.name(),
                        "` inside gpu_thread loops (block loops must be outermost)"));
    }
    if (!in_block_loop_) {
      hooks_->RunBlockLoop(*this, op);
      return;
    }
  }
  if (op->loop_kind == ir::LoopKind::kGpuThread) {
    if (!in_threads_) {
      hooks_->RunThreads(*this, op);
      return;
    }
    vars_.emplace_back(op->var.get(), IntValue(ir::Type::Int64(), thread_index_[op->thread_axis]));
    Exec(op->body);
    vars_.pop_back();
    return;
  }
  const int64_t min = Eval(op->min).lanes[0].i;
  const int64_t extent = Eval(op->extent).lanes[0].i;
  if (op->loop_kind == ir::LoopKind::kGpuBlock) {  // a nested block loop (another axis)
    if (!ir::AsConstInt(op->min) || min != 0 || !ir::AsConstInt(op->extent) || extent < 1) {
      Fail(absl::StatusCode::kInvalidArgument,
           absl::StrCat("gpu_block loop over `", op->var.name(),
                        "` must have min 0 and a constant extent >= 1 (the grid size on its "
                        "axis)"));
    }
    for (int64_t v = 0; v < extent; ++v) {
      RunBlockIteration(op, v);
    }
    return;
  }
  const size_t slot = vars_.size();
  vars_.emplace_back(op->var.get(), IntValue(ir::Type::Int64(), min));
  for (int64_t v = min; v < min + extent; ++v) {
    vars_[slot].second.lanes[0].i = v;
    Exec(op->body);
  }
  vars_.pop_back();
}

void Interpreter::RunBlockIteration(const ir::For* op, int64_t value) {
  const bool was_in_block_loop = in_block_loop_;
  in_block_loop_ = true;
  block_index_[op->thread_axis] = value;
  vars_.emplace_back(op->var.get(), IntValue(ir::Type::Int64(), value));
  Exec(op->body);
  vars_.pop_back();
  block_index_[op->thread_axis] = 0;
  in_block_loop_ = was_in_block_loop;
}

void Interpreter::ExecAllocate(const ir::Allocate* op) {
  const ir::MemoryScope scope = op->buffer.scope();
  if (scope == ir::MemoryScope::kGpuShared && in_threads_) {
    Fail(absl::StatusCode::kInvalidArgument,
         absl::StrCat("gpu_shared allocation of `", op->buffer.name(),
                      "` inside gpu_thread loops (allocate shared arrays between the block loops "
                      "and the thread loops)"));
  }
  SimBuffer b;
  b.name = op->buffer.name();
  b.scope = scope;
  b.size = op->size;
  b.storage.assign(static_cast<size_t>(op->size), std::numeric_limits<float>::quiet_NaN());
  b.data = b.storage.data();
  if (scope == ir::MemoryScope::kGpuShared &&
      (options_->check_shared_races || options_->check_uninitialized_shared)) {
    b.cells.resize(static_cast<size_t>(op->size));
  }
  buffers_.emplace_back(op->buffer.get(), &b);
  Exec(op->body);
  buffers_.pop_back();
}

void Interpreter::Exec(const ir::Stmt& s) {
  if (!s.defined()) {
    return;
  }
  switch (s.kind()) {
    case NodeKind::kStore:
      ExecStore(s.As<ir::Store>());
      return;
    case NodeKind::kFor:
      ExecFor(s.As<ir::For>());
      return;
    case NodeKind::kBlock:
      for (const ir::Stmt& child : s.As<ir::Block>()->stmts) {
        Exec(child);
      }
      return;
    case NodeKind::kIfThenElse: {
      const auto* op = s.As<ir::IfThenElse>();
      if (Eval(op->condition).lanes[0].i != 0) {
        Exec(op->then_case);
      } else {
        Exec(op->else_case);
      }
      return;
    }
    case NodeKind::kLetStmt: {
      const auto* op = s.As<ir::LetStmt>();
      Value v = Eval(op->value);
      vars_.emplace_back(op->var.get(), std::move(v));
      Exec(op->body);
      vars_.pop_back();
      return;
    }
    case NodeKind::kAllocate:
      ExecAllocate(s.As<ir::Allocate>());
      return;
    case NodeKind::kEvaluate:
      Eval(s.As<ir::Evaluate>()->value);
      return;
    case NodeKind::kBarrier:
      if (!in_threads_) {
        Fail(absl::StatusCode::kInvalidArgument,
             "barrier() outside gpu_thread loops (a barrier synchronises the threads of a block)");
      }
      hooks_->Barrier(*this, s.As<ir::Barrier>());
      return;
    default:
      Fail(absl::StatusCode::kInternal,
           absl::StrCat("unexpected statement kind ", std::string(ir::NodeKindName(s.kind()))));
  }
}

Value Interpreter::EvalArith(const ir::ExprNode* n) {
  const auto* op = static_cast<const ir::BinaryExprNode*>(n);
  const ir::Type t = n->type;
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  Value r = MakeValue(t);
  const int lanes = t.lanes();
  if (t.is_float()) {
    for (int i = 0; i < lanes; ++i) {
      float x = LaneOf(a, i).f, y = LaneOf(b, i).f, z = 0;
      switch (n->kind) {
        case NodeKind::kAdd:
          z = x + y;
          break;
        case NodeKind::kSub:
          z = x - y;
          break;
        case NodeKind::kMul:
          z = x * y;
          break;
        case NodeKind::kDiv:
          z = x / y;
          break;
        case NodeKind::kMin:
          z = FloatMin(x, y);
          break;
        case NodeKind::kMax:
          z = FloatMax(x, y);
          break;
        default:
          Fail(absl::StatusCode::kInvalidArgument, "Mod of float32 values (Mod is integer)");
      }
      r.lanes[i].f = z;
    }
    return r;
  }
  for (int i = 0; i < lanes; ++i) {
    int64_t x = LaneOf(a, i).i, y = LaneOf(b, i).i, z = 0;
    const auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    switch (n->kind) {
      case NodeKind::kAdd:
        z = static_cast<int64_t>(ux + uy);
        break;
      case NodeKind::kSub:
        z = static_cast<int64_t>(ux - uy);
        break;
      case NodeKind::kMul:
        z = static_cast<int64_t>(ux * uy);
        break;
      case NodeKind::kDiv:
      case NodeKind::kMod:
        if (y == 0) {
          Fail(absl::StatusCode::kFailedPrecondition,
               absl::StrCat("integer division by zero (", x,
                            n->kind == NodeKind::kDiv ? " / " : " % ", y, ")"));
        }
        if (y == -1) {
          z = n->kind == NodeKind::kDiv ? static_cast<int64_t>(0 - ux) : 0;
        } else {
          z = n->kind == NodeKind::kDiv ? ir::FloorDiv(x, y) : ir::FloorMod(x, y);
        }
        break;
      case NodeKind::kMin:
        z = y < x ? y : x;
        break;
      default:
        z = x < y ? y : x;
        break;
    }
    r.lanes[i].i = Wrap(z, t);
  }
  return r;
}

Value Interpreter::EvalCompare(const ir::ExprNode* n) {
  const auto* op = static_cast<const ir::BinaryExprNode*>(n);
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  Value r = MakeValue(n->type);
  const bool fl = a.type.is_float();
  for (int i = 0; i < n->type.lanes(); ++i) {
    // float32 lanes compare exactly as doubles.
    double x = fl ? LaneOf(a, i).f : 0, y = fl ? LaneOf(b, i).f : 0;
    int64_t p = fl ? 0 : LaneOf(a, i).i, q = fl ? 0 : LaneOf(b, i).i;
    bool z;
    switch (n->kind) {
      case NodeKind::kEQ:
        z = fl ? x == y : p == q;
        break;
      case NodeKind::kNE:
        z = fl ? x != y : p != q;
        break;
      case NodeKind::kLT:
        z = fl ? x < y : p < q;
        break;
      case NodeKind::kLE:
        z = fl ? x <= y : p <= q;
        break;
      case NodeKind::kGT:
        z = fl ? x > y : p > q;
        break;
      default:
        z = fl ? x >= y : p >= q;
        break;
    }
    r.lanes[i].i = z ? 1 : 0;
  }
  return r;
}

Value Interpreter::EvalLogic(const ir::ExprNode* n) {
  Value r = MakeValue(n->type);
  if (n->kind == NodeKind::kNot) {
    Value a = Eval(static_cast<const ir::Not*>(n)->a);
    for (int i = 0; i < n->type.lanes(); ++i) {
      r.lanes[i].i = LaneOf(a, i).i != 0 ? 0 : 1;
    }
    return r;
  }
  const auto* op = static_cast<const ir::BinaryExprNode*>(n);
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  for (int i = 0; i < n->type.lanes(); ++i) {
    bool x = LaneOf(a, i).i != 0, y = LaneOf(b, i).i != 0;
    r.lanes[i].i = (n->kind == NodeKind::kAnd ? (x && y) : (x || y)) ? 1 : 0;
  }
  return r;
}

Value Interpreter::EvalSelect(const ir::Select* op) {
  Value c = Eval(op->condition);
  Value x = Eval(op->true_value);
  Value y = Eval(op->false_value);
  Value r = MakeValue(op->type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    r.lanes[i] = LaneOf(c, i).i != 0 ? LaneOf(x, i) : LaneOf(y, i);
  }
  return r;
}

Value Interpreter::EvalCast(const ir::Cast* op) {
  const ir::Type t = op->type;
  Value a = Eval(op->value);
  Value r = MakeValue(t);
  for (int i = 0; i < t.lanes(); ++i) {
    const Lane& l = LaneOf(a, i);
    if (t.is_float()) {
      r.lanes[i].f = a.type.is_float() ? l.f : static_cast<float>(l.i);
    } else if (t.is_bool()) {
      r.lanes[i].i = (a.type.is_float() ? l.f != 0 : l.i != 0) ? 1 : 0;
    } else if (a.type.is_float()) {
      const double limit = t.bits() == 32 ? 2147483648.0 : 9223372036854775808.0;
      if (!(std::fabs(static_cast<double>(l.f)) < limit)) {
        Fail(absl::StatusCode::kFailedPrecondition,
             absl::StrCat("cast of float32 ", l.f, " to ", t.ToString(), " (NaN or out of range)"));
      }
      r.lanes[i].i = static_cast<int64_t>(l.f);
    } else {
      r.lanes[i].i = Wrap(l.i, t);
    }
  }
  return r;
}

Value Interpreter::EvalVector(const ir::ExprNode* n) {
  const ir::Type t = n->type;
  Value r = MakeValue(t);
  if (n->kind == NodeKind::kBroadcast) {
    Value a = Eval(static_cast<const ir::Broadcast*>(n)->value);
    for (int i = 0; i < t.lanes(); ++i) {
      r.lanes[i] = a.lanes[0];
    }
    return r;
  }
  const auto* op = static_cast<const ir::Ramp*>(n);
  const int64_t base = Eval(op->base).lanes[0].i;
  const int64_t stride = Eval(op->stride).lanes[0].i;
  for (int i = 0; i < t.lanes(); ++i) {
    r.lanes[i].i = Wrap(
        static_cast<int64_t>(static_cast<uint64_t>(base) + static_cast<uint64_t>(stride) * i), t);
  }
  return r;
}

Value Interpreter::EvalFma(const ir::Fma* op) {
  Value a = Eval(op->a);
  Value b = Eval(op->b);
  Value c = Eval(op->c);
  Value r = MakeValue(op->type);
  for (int i = 0; i < op->type.lanes(); ++i) {
    r.lanes[i].f = std::fma(LaneOf(a, i).f, LaneOf(b, i).f, LaneOf(c, i).f);
  }
  return r;
}

Value Interpreter::Eval(const ir::Expr& e) {
  const ir::ExprNode* n = e.get();
  if (in_threads_ && ++depth_ > kMaxThreadExprDepth) {
    Fail(absl::StatusCode::kResourceExhausted,
         absl::StrCat("expression nested deeper than ", kMaxThreadExprDepth,
                      " levels in thread code (the simulator's fiber stack limit)"));
  }
  struct DepthGuard {
    int* depth;
    bool on;
    ~DepthGuard() {
      if (on) {
        --*depth;
      }
    }
  } guard{&depth_, in_threads_};
  switch (n->kind) {
    case NodeKind::kIntImm:
      return IntValue(n->type, static_cast<const ir::IntImm*>(n)->value);
    case NodeKind::kFloatImm: {
      Value v;
      v.type = n->type;
      v.lanes.push_back(Lane{.f = static_cast<float>(static_cast<const ir::FloatImm*>(n)->value)});
      return v;
    }
    case NodeKind::kVar:
      return LookupVar(static_cast<const ir::Variable*>(n));
    case NodeKind::kAdd:
    case NodeKind::kSub:
    case NodeKind::kMul:
    case NodeKind::kDiv:
    case NodeKind::kMod:
    case NodeKind::kMin:
    case NodeKind::kMax:
      return EvalArith(n);
    case NodeKind::kEQ:
    case NodeKind::kNE:
    case NodeKind::kLT:
    case NodeKind::kLE:
    case NodeKind::kGT:
    case NodeKind::kGE:
      return EvalCompare(n);
    case NodeKind::kAnd:
    case NodeKind::kOr:
    case NodeKind::kNot:
      return EvalLogic(n);
    case NodeKind::kSelect:
      return EvalSelect(static_cast<const ir::Select*>(n));
    case NodeKind::kCast:
      return EvalCast(static_cast<const ir::Cast*>(n));
    case NodeKind::kBroadcast:
    case NodeKind::kRamp:
      return EvalVector(n);
    case NodeKind::kLoad:
      return EvalLoad(static_cast<const ir::Load*>(n));
    case NodeKind::kFma:
      return EvalFma(static_cast<const ir::Fma*>(n));
    case NodeKind::kCallExtern:
      Fail(absl::StatusCode::kUnimplemented,
           absl::StrCat("call of the external function `",
                        static_cast<const ir::CallExtern*>(n)->symbol,
                        "` (the GPU simulator does not run external code)"));
    case NodeKind::kAddressOf:
      Fail(absl::StatusCode::kUnimplemented,
           absl::StrCat("address of buffer `", static_cast<const ir::AddressOf*>(n)->buffer.name(),
                        "` (the GPU simulator does not run external code)"));
    default:
      Fail(absl::StatusCode::kInternal,
           absl::StrCat("unexpected expression kind ", std::string(ir::NodeKindName(n->kind))));
  }
}

}  // namespace tune::sim
