#include "codegen/sim/gpu_sim.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/ir/params.h"
#include "codegen/ir/visitor.h"
#include "codegen/sim/interpreter.h"
#include "common/reference.h"

namespace tune {
namespace {

using sim::CancelFiber;
using sim::Interpreter;
using sim::SimError;

// Stack of one fiber: reserved address space (pages are committed when touched) with a guard
// page below it.
constexpr size_t kFiberStackBytes = 512 * 1024;

class FiberStack {
 public:
  FiberStack() {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    bytes_ = kFiberStackBytes + page;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      throw SimError{absl::ResourceExhaustedError("cannot map a fiber stack for a GPU thread")};
    }
    mprotect(p, page, PROT_NONE);
    base_ = static_cast<char*>(p);
    page_ = page;
  }
  ~FiberStack() { munmap(base_, bytes_); }
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  char* bottom() const { return base_ + page_; }
  size_t size() const { return bytes_ - page_; }

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0;
  size_t page_ = 0;
};

// One simulated GPU thread run as a fiber.
struct Fiber {
  enum class State { kRunning, kAtBarrier, kAtMBarrier, kDone };
  ucontext_t context;
  ucontext_t* scheduler = nullptr;
  std::optional<Interpreter> interp;
  const ir::Stmt* body = nullptr;
  State state = State::kRunning;
  const ir::Barrier* barrier = nullptr;  // where the fiber waits
  // kAtMBarrier: the mbarrier the fiber waits for, the parity it waits to pass, and its name.
  const sim::MBarrierState* mbarrier = nullptr;
  int64_t parity = 0;
  std::string mbarrier_wait;
  bool Blocked() const { return state == State::kAtMBarrier && !mbarrier->Passes(parity); }
  bool cancel = false;
  absl::Status status;
};

thread_local Fiber* current_fiber = nullptr;

void FiberEntry() {
  Fiber* f = current_fiber;
  try {
    f->interp->Exec(*f->body);
  } catch (const SimError& e) {
    f->status = e.status;
  } catch (const CancelFiber&) {
  } catch (const std::exception& e) {
    f->status = absl::InternalError(absl::StrCat("GPU thread failed: ", e.what()));
  }
  f->interp.reset();
  f->state = Fiber::State::kDone;
  // Returning switches to uc_link (the scheduler).
}

// The thread geometry of one gpu_thread loop nest, read off the IR.
class ThreadShape : public ir::IrVisitor {
 public:
  std::array<int64_t, 3> dims{1, 1, 1};
  bool has_barrier = false;
  absl::Status status;

  void VisitStmt(const ir::Stmt& s) override {
    if (status.ok()) {
      ir::IrVisitor::VisitStmt(s);
    }
  }
  void VisitExpr(const ir::Expr&) override {}

 protected:
  using ir::IrVisitor::Visit;
  void Visit(const ir::For* op) override {
    if (op->loop_kind == ir::LoopKind::kGpuBlock) {
      status = absl::InvalidArgumentError(
          absl::StrCat("gpu_block loop over `", op->var.name(),
                       "` inside gpu_thread loops (block loops must be outermost)"));
      return;
    }
    if (op->loop_kind != ir::LoopKind::kGpuThread) {
      ir::IrVisitor::Visit(op);
      return;
    }
    const int a = op->thread_axis;
    std::optional<int64_t> min = ir::AsConstInt(op->min);
    std::optional<int64_t> extent = ir::AsConstInt(op->extent);
    if (!min || *min != 0 || !extent || *extent < 1) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "gpu_thread loop over `", op->var.name(),
          "` must have min 0 and a constant extent >= 1 (the block size on its axis)"));
      return;
    }
    if (active_[a]) {
      status = absl::InvalidArgumentError(
          absl::StrCat("gpu_thread loop over `", op->var.name(), "` on axis ", a,
                       " is nested in another gpu_thread loop on the same axis"));
      return;
    }
    if (seen_[a] && dims[a] != *extent) {
      status = absl::InvalidArgumentError(absl::StrCat("gpu_thread loops on axis ", a,
                                                       " have different extents (", dims[a],
                                                       " and ", *extent, ")"));
      return;
    }
    seen_[a] = true;
    dims[a] = *extent;
    active_[a] = true;
    ir::IrVisitor::Visit(op);
    active_[a] = false;
  }
  void Visit(const ir::Barrier*) override { has_barrier = true; }
  void Visit(const ir::MBarrierOp* op) override {
    has_barrier = has_barrier || op->op == ir::MBarrierOpKind::kWait;
  }

 private:
  std::array<bool, 3> seen_{false, false, false};
  std::array<bool, 3> active_{false, false, false};
};

class Simulator final : public sim::ExecHooks {
 public:
  explicit Simulator(const GpuSimOptions& options) : options_(options) {}

  void RunBlockLoop(Interpreter& parent, const ir::For* op) override {
    std::optional<int64_t> min = ir::AsConstInt(op->min);
    std::optional<int64_t> extent = ir::AsConstInt(op->extent);
    if (!min || *min != 0 || !extent || *extent < 1) {
      parent.Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrCat("gpu_block loop over `", op->var.name(),
                               "` must have min 0 and a constant extent >= 1 (the grid size on "
                               "its axis)"));
    }
    const int64_t workers = std::min<int64_t>(std::max(options_.block_workers, 1), *extent);
    if (workers == 1) {
      for (int64_t v = 0; v < *extent; ++v) {
        parent.RunBlockIteration(op, v);
      }
      return;
    }
    // Worker w runs iterations w, w + workers, ...; the error of the lowest failing iteration
    // is reported, as a sequential run would.
    struct Result {
      int64_t iteration = -1;
      absl::Status status;
    };
    std::vector<Result> results(static_cast<size_t>(workers));
    std::vector<std::thread> threads;
    for (int64_t w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        Simulator sim(options_);
        Interpreter interp = parent.ForkBlockWorker();
        interp.SetHooks(&sim);
        for (int64_t v = w; v < *extent; v += workers) {
          try {
            interp.RunBlockIteration(op, v);
          } catch (const SimError& e) {
            results[w] = {v, e.status};
            return;
          } catch (const std::exception& e) {
            results[w] = {v, absl::InternalError(absl::StrCat("GPU block failed: ", e.what()))};
            return;
          }
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
    const Result* first = nullptr;
    for (const Result& r : results) {
      if (!r.status.ok() && (first == nullptr || r.iteration < first->iteration)) {
        first = &r;
      }
    }
    if (first != nullptr) {
      throw SimError{first->status};
    }
  }

  void RunThreads(Interpreter& parent, const ir::For* op) override {
    ThreadShape shape;
    ir::Stmt nest(op);
    shape.VisitStmt(nest);
    if (!shape.status.ok()) {
      parent.Fail(shape.status.code(), std::string(shape.status.message()));
    }
    const int64_t count = shape.dims[0] * shape.dims[1] * shape.dims[2];
    if (count > options_.max_threads_per_block) {
      parent.Fail(
          absl::StatusCode::kInvalidArgument,
          absl::StrFormat("the block has %d x %d x %d = %d threads, more than %d", shape.dims[0],
                          shape.dims[1], shape.dims[2], count, options_.max_threads_per_block));
    }
    std::vector<std::array<int64_t, 3>> indices;
    indices.reserve(static_cast<size_t>(count));
    for (int64_t z = 0; z < shape.dims[2]; ++z) {
      for (int64_t y = 0; y < shape.dims[1]; ++y) {
        for (int64_t x = 0; x < shape.dims[0]; ++x) {
          indices.push_back({x, y, z});
        }
      }
    }
    if (!shape.has_barrier) {
      // Without barriers the threads are independent: run them one after the other.
      for (const auto& index : indices) {
        Interpreter t = parent.ForkThread(index, shape.dims);
        t.Exec(nest);
      }
    } else {
      RunFibers(parent, nest, indices, shape.dims);
    }
    parent.AdvanceEpoch();
  }

  void Barrier(Interpreter& thread, const ir::Barrier* op) override {
    Fiber* f = current_fiber;
    if (f == nullptr) {
      thread.Fail(absl::StatusCode::kInternal, "barrier() reached outside a simulated thread");
    }
    f->state = Fiber::State::kAtBarrier;
    f->barrier = op;
    swapcontext(&f->context, f->scheduler);
    // Resumed by the scheduler.
    current_fiber = f;
    if (f->cancel) {
      throw CancelFiber{};
    }
    f->state = Fiber::State::kRunning;
  }

  void WaitMBarrier(Interpreter& thread, const sim::MBarrierState* barrier, int64_t parity,
                    std::string what) override {
    Fiber* f = current_fiber;
    if (f == nullptr) {
      thread.Fail(absl::StatusCode::kInternal,
                  "an mbarrier wait reached outside a simulated thread");
    }
    f->state = Fiber::State::kAtMBarrier;
    f->mbarrier = barrier;
    f->parity = parity;
    f->mbarrier_wait = std::move(what);
    swapcontext(&f->context, f->scheduler);
    current_fiber = f;
    if (f->cancel) {
      throw CancelFiber{};
    }
    f->state = Fiber::State::kRunning;
  }

 private:
  void RunFibers(Interpreter& parent, const ir::Stmt& nest,
                 const std::vector<std::array<int64_t, 3>>& indices,
                 const std::array<int64_t, 3>& dims) {
    const size_t n = indices.size();
    while (stacks_.size() < n) {
      stacks_.push_back(std::make_unique<FiberStack>());
    }
    std::vector<Fiber> fibers(n);
    ucontext_t scheduler;
    for (size_t i = 0; i < n; ++i) {
      Fiber& f = fibers[i];
      f.interp.emplace(parent.ForkThread(indices[i], dims));
      f.body = &nest;
      f.scheduler = &scheduler;
      getcontext(&f.context);
      f.context.uc_stack.ss_sp = stacks_[i]->bottom();
      f.context.uc_stack.ss_size = stacks_[i]->size();
      f.context.uc_link = &scheduler;
      makecontext(&f.context, &FiberEntry, 0);
    }
    auto resume = [&](Fiber& f) {
      current_fiber = &f;
      swapcontext(&scheduler, &f.context);
      current_fiber = nullptr;
    };
    // Abandons the fibers still waiting (their stacks unwind) and reports `status`.
    auto fail = [&](absl::Status status) {
      for (Fiber& f : fibers) {
        if (f.state == Fiber::State::kAtBarrier || f.state == Fiber::State::kAtMBarrier) {
          f.cancel = true;
          resume(f);
        }
      }
      throw SimError{std::move(status)};
    };
    auto thread_name = [&](size_t i) {
      return absl::StrFormat("(%d, %d, %d)", indices[i][0], indices[i][1], indices[i][2]);
    };
    for (;;) {
      // One barrier interval: every thread runs until its next barrier or its end, where
      // mbarrier waits switch to the other threads until what they wait for has happened.
      bool progress = false;
      for (size_t i = 0; i < n; ++i) {
        Fiber& f = fibers[i];
        if (f.state == Fiber::State::kDone || f.state == Fiber::State::kAtBarrier || f.Blocked()) {
          continue;
        }
        resume(f);
        progress = true;
        if (f.state == Fiber::State::kDone && !f.status.ok()) {
          fail(f.status);
        }
      }
      if (progress) {
        continue;
      }
      for (size_t i = 0; i < n; ++i) {
        if (fibers[i].state == Fiber::State::kAtMBarrier) {
          const sim::MBarrierState& b = *fibers[i].mbarrier;
          fail(absl::FailedPreconditionError(absl::StrCat(
              "deadlock in ", BlockName(parent), ": thread ", thread_name(i), " waits at ",
              fibers[i].mbarrier_wait, " in phase ", b.phase, " (", b.pending, " of ", b.count,
              " arrivals and ", b.tx,
              " transaction bytes outstanding), which no other thread can complete: they have "
              "finished or wait too")));
        }
      }
      size_t waiting = 0, first_waiting = 0, first_done = n;
      const ir::Barrier* barrier = nullptr;
      for (size_t i = 0; i < n; ++i) {
        if (fibers[i].state == Fiber::State::kAtBarrier) {
          if (waiting++ == 0) {
            first_waiting = i;
            barrier = fibers[i].barrier;
          } else if (fibers[i].barrier != barrier) {
            fail(absl::FailedPreconditionError(absl::StrCat(
                "divergent barrier in ", BlockName(parent), ": thread ", thread_name(i),
                " waits at a different barrier() than thread ", thread_name(first_waiting),
                " (every thread of a block must reach the same barriers)")));
          }
        } else if (first_done == n) {
          first_done = i;
        }
      }
      if (waiting == 0) {
        return;
      }
      if (waiting != n) {
        fail(absl::FailedPreconditionError(absl::StrCat(
            "divergent barrier in ", BlockName(parent), ": thread ", thread_name(first_done),
            " finished while thread ", thread_name(first_waiting), " (and ", waiting - 1,
            " others) wait at a barrier() (every thread of a block must reach it)")));
      }
      parent.AdvanceEpoch();
      for (Fiber& f : fibers) {  // released: the next pass resumes them
        if (f.state == Fiber::State::kAtBarrier) {
          f.state = Fiber::State::kRunning;
        }
      }
    }
  }

  static std::string BlockName(const Interpreter& parent) {
    // "block (x, y, z), thread (0, 0, 0)": keep the block part.
    std::string location = parent.Location();
    return location.substr(0, location.find(", thread"));
  }

  const GpuSimOptions& options_;
  std::vector<std::unique_ptr<FiberStack>> stacks_;
};

}  // namespace

absl::Status RunGpuKernel(const ir::LoweredFunc& func, const std::vector<std::span<float>>& args,
                          const GpuSimOptions& options) {
  std::vector<std::span<std::byte>> bytes;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < func.params.size() && func.params[i].element_type() != ir::Type::Float32()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "parameter %s of `%s` holds %s, not float32: pass its bytes", func.params[i].name(),
          func.name, func.params[i].element_type().ToString()));
    }
    bytes.push_back(std::as_writable_bytes(args[i]));
  }
  return RunGpuKernel(func, bytes, options);
}

absl::Status RunGpuKernel(const ir::LoweredFunc& func,
                          const std::vector<std::span<std::byte>>& args,
                          const GpuSimOptions& options) {
  if (args.size() != func.params.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("kernel `%s` has %d parameters but %d buffers were passed", func.name,
                        func.params.size(), args.size()));
  }
  if (options.max_threads_per_block < 1) {
    return absl::InvalidArgumentError("GpuSimOptions::max_threads_per_block must be >= 1");
  }
  std::vector<sim::SimBuffer> params(args.size());
  Simulator simulator(options);
  Interpreter interp(&simulator, &options);
  for (size_t i = 0; i < args.size(); ++i) {
    sim::SimBuffer& b = params[i];
    b.name = func.params[i].name();
    b.scope = ir::MemoryScope::kGlobal;
    b.param_index = static_cast<int>(i);
    b.element = func.params[i].element_type();
    b.data = args[i].data();
    b.size = static_cast<int64_t>(args[i].size()) / b.element.Bytes();
    interp.BindBuffer(func.params[i].get(), &b);
  }
  try {
    interp.Exec(func.body);
  } catch (const SimError& e) {
    return e.status;
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("GPU simulation of `", func.name, "` failed: ", e.what()));
  }
  return absl::OkStatus();
}

absl::Status SimulateAgainstReference(const Workload& workload, const ir::LoweredFunc& func,
                                      uint64_t seed, const GpuSimOptions& options) {
  TensorSet tensors(workload, seed);
  std::vector<TensorArg> args = workload.Arguments();
  std::vector<void*> pointers = tensors.AbiPointers();
  std::vector<std::span<std::byte>> spans;
  for (size_t i = 0; i < args.size() && i < pointers.size(); ++i) {
    spans.emplace_back(static_cast<std::byte*>(pointers[i]),
                       static_cast<size_t>(args[i].NumBytes()));
  }
  // As a launcher does: the outputs the kernel accumulates into (float32) start at zero.
  for (int param : ir::AtomicallyAccumulatedParams(func)) {
    if (static_cast<size_t>(param) < spans.size()) {
      std::fill(spans[param].begin(), spans[param].end(), std::byte{0});
    }
  }
  if (absl::Status status = RunGpuKernel(func, spans, options); !status.ok()) {
    return status;
  }
  // ReferenceType has 4-byte elements (f32 or i32).
  std::vector<uint32_t> want(static_cast<size_t>(tensors.output_size()));
  RunReference(workload, tensors.Inputs(), want.data());
  CompareResult result = CompareOutputs(workload, tensors.output_data(), want.data(),
                                        tensors.output_size(), 1.0, tensors.scale_product());
  if (!result.ok) {
    return absl::FailedPreconditionError(
        absl::StrCat("kernel `", func.name, "` on ", workload.ToString(), ": ", result.message));
  }
  return absl::OkStatus();
}

}  // namespace tune
