#include "codegen/sim/interpreter.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tune::sim {

void SimBuffer::Allocate(ir::Type element_type, int64_t elements) {
  element = element_type;
  size = elements;
  storage.assign(static_cast<size_t>((elements * element.Bytes() + 7) / 8), 0);
  data = reinterpret_cast<std::byte*>(storage.data());
  const Lane poison = element.ComputeType().is_float()
                          ? Lane{.f = std::numeric_limits<float>::quiet_NaN()}
                          : Lane{.i = 0x7f7f7f7f};
  for (int64_t k = 0; k < elements; ++k) {
    Write(k, poison);
  }
}

// float32 and int64 directly (int64 is no element type of common/element_type.h); every other
// type through its exact decoding and rounding there.
Lane SimBuffer::Read(int64_t k) const {
  if (element == ir::Type::Float32()) {
    return Lane{.f = floats()[k]};
  }
  if (element == ir::Type::Int64()) {
    return Lane{.i = reinterpret_cast<const int64_t*>(data)[k]};
  }
  const double value = DecodeElement(element.AsElementType(), data, k);
  return element.ComputeType().is_float() ? Lane{.f = static_cast<float>(value)}
                                          : Lane{.i = static_cast<int64_t>(value)};
}

void SimBuffer::Write(int64_t k, Lane lane) {
  if (element == ir::Type::Float32()) {
    floats()[k] = lane.f;
  } else if (element == ir::Type::Int64()) {
    reinterpret_cast<int64_t*>(data)[k] = lane.i;
  } else {
    EncodeElement(element.AsElementType(),
                  element.ComputeType().is_float() ? static_cast<double>(lane.f)
                                                   : static_cast<double>(lane.i),
                  data, k);
  }
}

namespace {

using ir::StmtKind;

std::string ScopeText(const SimBuffer& b) {
  if (b.param_index >= 0) {
    return absl::StrCat("global, parameter ", b.param_index);
  }
  return std::string(ir::MemoryScopeName(b.scope));
}

}  // namespace

Interpreter::Interpreter(ExecHooks* hooks, const GpuSimOptions* options)
    : hooks_(hooks), options_(options), epochs_(std::make_shared<BarrierEpochs>()) {}

Interpreter Interpreter::ForkThread(const std::array<int64_t, 3>& thread_index,
                                    const std::array<int64_t, 3>& block_dims) const {
  Interpreter t(*this);
  t.in_threads_ = true;
  t.thread_index_ = thread_index;
  t.thread_id_ = static_cast<int32_t>(
      thread_index[0] + block_dims[0] * (thread_index[1] + block_dims[1] * thread_index[2]));
  t.block_threads_ = block_dims[0] * block_dims[1] * block_dims[2];
  t.amx_.reset();  // each thread has its own tiles
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
    copy->Allocate(buffer->element, buffer->size);
    buffer = copy.get();
    t.private_buffers_.push_back(std::move(copy));
  }
  return t;
}

Interpreter Interpreter::ForkBlockWorker() const {
  Interpreter w(*this);
  w.epochs_ = std::make_shared<BarrierEpochs>();
  w.amx_.reset();
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

bool BarrierEpochs::OrderedByNamed(int64_t e, int32_t first, int32_t last, int32_t thread) const {
  for (const NamedRelease& r : named) {
    if (r.epoch > e && r.Covers(first, last) && r.Covers(thread, thread)) {
      return true;
    }
  }
  return false;
}

void Interpreter::AdvanceEpoch() {
  epochs_->block_epoch = ++epochs_->epoch;
  epochs_->named.clear();
}

void Interpreter::AdvanceEpoch(const std::vector<bool>& participants) {
  BarrierEpochs::NamedRelease release{.epoch = ++epochs_->epoch, .below = {0}};
  for (const bool p : participants) {
    release.below.push_back(release.below.back() + (p ? 1 : 0));
  }
  for (BarrierEpochs::NamedRelease& r : epochs_->named) {
    if (r.below == release.below) {
      r.epoch = release.epoch;
      return;
    }
  }
  epochs_->named.push_back(std::move(release));
}

void Interpreter::TrackShared(SimBuffer& b, int64_t index, bool write) const {
  if (b.cells.empty()) {
    return;
  }
  SimBuffer::Cell& c = b.cells[static_cast<size_t>(index)];
  const BarrierEpochs& epochs = *epochs_;
  const int32_t me = thread_id_;
  const bool races = options_->check_shared_races;
  if (write) {
    if (races && c.writer != me && !epochs.Ordered(c.write_epoch, c.writer, c.writer, me)) {
      Fail(absl::StatusCode::kFailedPrecondition,
           absl::StrFormat("data race on gpu_shared buffer `%s`: element %d is written by thread "
                           "%d and by thread %d with no barrier between",
                           b.name, index, c.writer, me));
    }
    if (races && c.first_reader >= 0 && (c.first_reader != me || c.last_reader != me) &&
        !epochs.Ordered(c.read_epoch, c.first_reader, c.last_reader, me)) {
      Fail(
          absl::StatusCode::kFailedPrecondition,
          absl::StrFormat("data race on gpu_shared buffer `%s`: element %d is read by %s and "
                          "written by thread %d with no barrier between",
                          b.name, index,
                          c.first_reader != c.last_reader ? std::string("several threads")
                                                          : absl::StrCat("thread ", c.first_reader),
                          me));
    }
    c.write_epoch = epochs.epoch;
    c.writer = me;
    return;
  }
  if (options_->check_uninitialized_shared && c.write_epoch == SimBuffer::kUnwritten) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("read of uninitialised gpu_shared memory: element %d of buffer `%s` has "
                         "not been written by any thread of the block before this read (a write "
                         "by another thread since the last barrier would be a data race; where "
                         "the value is never used, e.g. by the threads of a partial tile, "
                         "GpuSimOptions::check_uninitialized_shared = false lets it read as NaN)",
                         index, b.name));
  }
  if (races && c.writer != me && !epochs.Ordered(c.write_epoch, c.writer, c.writer, me)) {
    Fail(absl::StatusCode::kFailedPrecondition,
         absl::StrFormat("data race on gpu_shared buffer `%s`: element %d is written by thread %d "
                         "and read by thread %d with no barrier between",
                         b.name, index, c.writer, me));
  }
  // Reads since the latest whole-block release are kept together, as a range of threads, with
  // the epoch of the latest: a later write must be ordered after all of them, which is
  // conservative where a named barrier ordered an earlier one of them on its own.
  if (c.first_reader < 0 || c.read_epoch < epochs.block_epoch) {
    c.first_reader = c.last_reader = me;
  } else {
    c.first_reader = std::min(c.first_reader, me);
    c.last_reader = std::max(c.last_reader, me);
  }
  c.read_epoch = epochs.epoch;
}

void Interpreter::ExecStore(const ir::Store* op) {
  SimBuffer* b = LookupBuffer(op->buffer.get());
  // An asynchronous copy that is not valid stores zeros and reads nothing.
  const bool zeros = op->valid.defined() && Eval(op->valid).lanes[0].i == 0;
  Value value = zeros ? MakeValue(op->value.type()) : Eval(op->value);  // zero bits: +0
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
      // Blocks may run on several OS threads (GpuSimOptions::block_workers); float32 only.
      std::atomic_ref<float>(b->floats()[k]).fetch_add(value.lanes[i].f, std::memory_order_relaxed);
    } else {
      b->Write(k, value.lanes[i]);
    }
  }
}

// Counters are int32 elements in their own bytes; blocks may run on several OS threads, and the
// acquire-release read-modify-write orders what blocks wrote before their arrivals (the
// simulator's device-scope fences).
void Interpreter::ExecFetchAdd(const ir::FetchAdd* op) {
  SimBuffer* counter = LookupBuffer(op->buffer.get());
  SimBuffer* result = LookupBuffer(op->result.get());
  const int64_t k = CheckedIndex(*counter, Eval(op->index).lanes[0].i, "fetch_add on");
  const int64_t r = CheckedIndex(*result, Eval(op->result_index).lanes[0].i, "fetch_add result to");
  const auto add = static_cast<int32_t>(Eval(op->value).lanes[0].i);
  const int32_t old = std::atomic_ref<int32_t>(reinterpret_cast<int32_t*>(counter->data)[k])
                          .fetch_add(add, std::memory_order_acq_rel);
  if (!result->cells.empty()) {
    TrackShared(*result, r, /*write=*/true);
  }
  result->Write(r, Lane{.i = old});
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
  b.Allocate(op->buffer.element_type(), op->size);
  if (scope == ir::MemoryScope::kGlobal) {  // a workspace starts as the loaded module's: zeros
    std::fill(b.storage.begin(), b.storage.end(), 0);
  }
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
    case StmtKind::kStore:
      ExecStore(s.As<ir::Store>());
      return;
    case StmtKind::kFor:
      ExecFor(s.As<ir::For>());
      return;
    case StmtKind::kBlock:
      for (const ir::Stmt& child : s.As<ir::Block>()->stmts) {
        Exec(child);
      }
      return;
    case StmtKind::kIfThenElse: {
      const auto* op = s.As<ir::IfThenElse>();
      if (Eval(op->condition).lanes[0].i != 0) {
        Exec(op->then_case);
      } else {
        Exec(op->else_case);
      }
      return;
    }
    case StmtKind::kLetStmt: {
      const auto* op = s.As<ir::LetStmt>();
      Value v = Eval(op->value);
      vars_.emplace_back(op->var.get(), std::move(v));
      Exec(op->body);
      vars_.pop_back();
      return;
    }
    case StmtKind::kAllocate:
      ExecAllocate(s.As<ir::Allocate>());
      return;
    case StmtKind::kEvaluate:
      Eval(s.As<ir::Evaluate>()->value);
      return;
    case StmtKind::kBarrier:
      if (!in_threads_) {
        Fail(absl::StatusCode::kInvalidArgument,
             "barrier() outside gpu_thread loops (a barrier synchronises the threads of a block)");
      }
      hooks_->Barrier(*this, s.As<ir::Barrier>());
      return;
    case StmtKind::kWarpMma:
      ExecWarpMma(s.As<ir::WarpMma>());
      return;
    case StmtKind::kWaveMma:
      ExecWaveMma(s.As<ir::WaveMma>());
      return;
    case StmtKind::kWarpGroupMma:
      ExecWarpGroupMma(s.As<ir::WarpGroupMma>());
      return;
    case StmtKind::kTensorCopy:
      ExecTensorCopy(s.As<ir::TensorCopy>());
      return;
    case StmtKind::kMBarrierOp:
      ExecMBarrierOp(s.As<ir::MBarrierOp>());
      return;
    case StmtKind::kSetMaxRegisters:  // registers are not simulated
      return;
    case StmtKind::kAmxTileOp:
      ExecAmxTileOp(s.As<ir::AmxTileOp>());
      return;
    case StmtKind::kFetchAdd:
      ExecFetchAdd(s.As<ir::FetchAdd>());
      return;
  }
  Fail(absl::StatusCode::kInternal,
       absl::StrCat("unexpected statement kind ", std::string(ir::StmtKindName(s.kind()))));
}

}  // namespace tune::sim
