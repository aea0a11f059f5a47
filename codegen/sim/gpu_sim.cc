#include "codegen/sim/gpu_sim.h"

#include <ucontext.h>

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
#include "codegen/sim/thread_fibers.h"
#include "common/reference.h"

namespace tune {
namespace {

using sim::CancelFiber;
using sim::FiberStack;
using sim::Interpreter;
using sim::MakeFiberContext;
using sim::SimError;
using sim::ThreadGroup;

// One block of a thread-block cluster, run as a fiber so that the cluster's blocks reach their
// thread loops together: the block-level code runs until its threads are due (kAtThreads), the
// cluster's threads then run as one set of fibers, and the block goes on.
struct ClusterBlock {
  enum class State { kRunning, kAtThreads, kDone };
  ucontext_t context;
  ucontext_t* scheduler = nullptr;
  std::optional<Interpreter> interp;
  const ir::For* loop = nullptr;
  int64_t iteration = 0;
  State state = State::kRunning;
  ThreadGroup threads;  // kAtThreads: the threads due
  bool cancel = false;
  absl::Status status;
};

thread_local ClusterBlock* current_block = nullptr;

void ClusterBlockEntry() {
  ClusterBlock* b = current_block;
  try {
    b->interp->RunBlockIteration(b->loop, b->iteration);
  } catch (const SimError& e) {
    b->status = e.status;
  } catch (const CancelFiber&) {
  } catch (const std::exception& e) {
    b->status = absl::InternalError(absl::StrCat("GPU block failed: ", e.what()));
  }
  b->interp.reset();
  b->state = ClusterBlock::State::kDone;
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
  // A warpgroup step synchronises its warpgroup (ExecHooks::WarpGroupStep).
  void Visit(const ir::WarpGroupMma*) override { has_barrier = true; }
  void Visit(const ir::MBarrierOp* op) override {
    has_barrier = has_barrier || op->op == ir::MBarrierOpKind::kWait;
  }

 private:
  std::array<bool, 3> seen_{false, false, false};
  std::array<bool, 3> active_{false, false, false};
};

class Simulator final : public sim::ExecHooks {
 public:
  // `cluster`: blocks per thread-block cluster along the grid's x axis (1: none).
  Simulator(const GpuSimOptions& options, int64_t cluster)
      : options_(options), cluster_size_(cluster), fibers_(options.schedule_seed) {}

  void RunBlockLoop(Interpreter& parent, const ir::For* op) override {
    std::optional<int64_t> min = ir::AsConstInt(op->min);
    std::optional<int64_t> extent = ir::AsConstInt(op->extent);
    if (!min || *min != 0 || !extent || *extent < 1) {
      parent.Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrCat("gpu_block loop over `", op->var.name(),
                               "` must have min 0 and a constant extent >= 1 (the grid size on "
                               "its axis)"));
    }
    const int64_t c = cluster_size_;
    if (c > 1 && (op->thread_axis != 0 || *extent % c != 0)) {
      parent.Fail(absl::StatusCode::kUnimplemented,
                  absl::StrCat("the simulator runs clusters along the grid's x axis, from its "
                               "outermost gpu_block loop, whose extent they divide: `",
                               op->var.name(), "` is on axis ", op->thread_axis, " with ", *extent,
                               " blocks for clusters of ", c));
    }
    // A unit of work: one block, or one cluster of `c` blocks from its first.
    const int64_t units = *extent / c;
    auto run_unit = [&](Simulator& sim, Interpreter& interp, int64_t u) {
      if (c == 1) {
        interp.RunBlockIteration(op, u);
      } else {
        sim.RunCluster(interp, op, u * c);
      }
    };
    const int64_t workers = std::min<int64_t>(std::max(options_.block_workers, 1), units);
    if (workers == 1) {
      for (int64_t u = 0; u < units; ++u) {
        run_unit(*this, parent, u);
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
        Simulator sim(options_, cluster_size_);
        Interpreter interp = parent.ForkBlockWorker();
        interp.SetHooks(&sim);
        for (int64_t v = w; v < units; v += workers) {
          try {
            run_unit(sim, interp, v);
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
    if (current_block != nullptr) {
      // A block of a cluster: its threads run with the other blocks' (RunCluster).
      ParkAtThreads(ThreadGroup{&parent, nest, std::move(indices), shape.dims});
    } else if (!shape.has_barrier) {
      // Without barriers the threads are independent: run them one after the other.
      for (const auto& index : indices) {
        Interpreter t = parent.ForkThread(index, shape.dims);
        t.Exec(nest);
      }
    } else {
      ThreadGroup group{&parent, nest, std::move(indices), shape.dims};
      fibers_.Run({&group});
    }
    parent.AdvanceEpoch();
  }

  Interpreter& ClusterPeer(Interpreter& thread, int64_t rank, const std::string& what) override {
    if (cluster_ == nullptr) {
      thread.Fail(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat(what, ": the kernel runs without thread-block clusters"));
    }
    if (rank < 0 || rank >= static_cast<int64_t>(cluster_->size())) {
      thread.Fail(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat(what, ": the cluster's ranks are 0 to ", cluster_->size() - 1));
    }
    const ClusterBlock& peer = *(*cluster_)[static_cast<size_t>(rank)];
    if (peer.state != ClusterBlock::State::kAtThreads || peer.threads.finished) {
      thread.Fail(absl::StatusCode::kFailedPrecondition,
                  absl::StrCat(what,
                               ": the threads of that block have finished, and its shared "
                               "memory with them (a cluster barrier before a block's end "
                               "keeps it for its peers)"));
    }
    return *peer.threads.parent;
  }

  void Barrier(Interpreter& thread, const ir::Barrier* op) override {
    if (!sim::ParkAtBarrier(op)) {
      thread.Fail(absl::StatusCode::kInternal, "barrier() reached outside a simulated thread");
    }
  }

  void WarpGroupStep(Interpreter& /*thread*/, absl::FunctionRef<void()> issue) override {
    if (!sim::ParkAtWarpGroupStep(issue)) {
      issue();  // threads without barriers run one after the other: nothing can overtake
    }
  }

  void Yield(Interpreter& /*thread*/) override { sim::YieldThreadFiber(); }

  void WaitMBarrier(Interpreter& thread, const sim::MBarrierState* barrier, int64_t parity,
                    std::string what) override {
    if (!sim::ParkAtMBarrier(barrier, parity, std::move(what))) {
      thread.Fail(absl::StatusCode::kInternal,
                  "an mbarrier wait reached outside a simulated thread");
    }
  }

 private:
  // Runs blocks [first, first + cluster_size_) of the gpu_block loop `op` as one thread-block
  // cluster: each block's block-level code as a fiber (ClusterBlockEntry) that parks where its
  // threads are due (ParkAtThreads), and the parked blocks' threads as one set of fibers, so
  // that they reach one another's shared memory (ClusterPeer) and cluster barriers.
  void RunCluster(Interpreter& parent, const ir::For* op, int64_t first) {
    const auto c = static_cast<size_t>(cluster_size_);
    while (block_stacks_.size() < c) {
      block_stacks_.push_back(std::make_unique<FiberStack>());
    }
    std::vector<std::unique_ptr<ClusterBlock>> blocks;
    ucontext_t scheduler;
    for (size_t r = 0; r < c; ++r) {
      auto b = std::make_unique<ClusterBlock>();
      b->interp.emplace(parent.ForkBlockWorker());
      b->interp->SetHooks(this);
      b->loop = op;
      b->iteration = first + static_cast<int64_t>(r);
      b->scheduler = &scheduler;
      MakeFiberContext(&b->context, *block_stacks_[r], &scheduler, &ClusterBlockEntry);
      blocks.push_back(std::move(b));
    }
    auto resume = [&](ClusterBlock& b) {
      current_block = &b;
      swapcontext(&scheduler, &b.context);
      current_block = nullptr;
    };
    // Unwinds the blocks parked at their threads and reports `status`.
    auto fail = [&](absl::Status status) {
      for (auto& b : blocks) {
        if (b->state == ClusterBlock::State::kAtThreads) {
          b->cancel = true;
          resume(*b);
        }
      }
      cluster_ = nullptr;
      throw SimError{std::move(status)};
    };
    cluster_ = &blocks;
    for (;;) {
      for (auto& b : blocks) {
        if (b->state == ClusterBlock::State::kRunning) {
          resume(*b);
          if (b->state == ClusterBlock::State::kDone && !b->status.ok()) {
            fail(b->status);
          }
        }
      }
      const auto parked =
          static_cast<size_t>(std::count_if(blocks.begin(), blocks.end(), [](const auto& b) {
            return b->state == ClusterBlock::State::kAtThreads;
          }));
      if (parked == 0) {
        break;
      }
      if (parked != c) {
        fail(absl::FailedPreconditionError(
            absl::StrCat("cluster of blocks ", first, " to ", first + cluster_size_ - 1, ": ",
                         parked, " of its ", c,
                         " blocks reached their threads, the others finished (every block of a "
                         "cluster must run the same thread loops)")));
      }
      // The groups live in the blocks, where ClusterPeer reads whether they have finished.
      std::vector<ThreadGroup*> live;
      for (auto& b : blocks) {
        live.push_back(&b->threads);
      }
      try {
        fibers_.Run(live);
      } catch (const SimError& e) {
        fail(e.status);
      }
      for (auto& b : blocks) {
        b->state = ClusterBlock::State::kRunning;  // the next pass returns from ParkAtThreads
      }
    }
    cluster_ = nullptr;
  }

  void ParkAtThreads(ThreadGroup group) {
    ClusterBlock* b = current_block;
    b->threads = std::move(group);
    b->state = ClusterBlock::State::kAtThreads;
    swapcontext(&b->context, b->scheduler);
    current_block = b;
    if (b->cancel) {
      throw CancelFiber{};
    }
  }

  const GpuSimOptions& options_;
  const int64_t cluster_size_;
  sim::ThreadFibers fibers_;                               // of threads
  std::vector<std::unique_ptr<FiberStack>> block_stacks_;  // of a cluster's blocks
  // The cluster whose threads run now (RunCluster), indexed by rank.
  std::vector<std::unique_ptr<ClusterBlock>>* cluster_ = nullptr;
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
  if (func.cluster[1] != 1 || func.cluster[2] != 1) {
    return absl::UnimplementedError(absl::StrFormat(
        "kernel `%s` has clusters of (%d, %d, %d) blocks; the simulator runs clusters along the "
        "grid's x axis only",
        func.name, func.cluster[0], func.cluster[1], func.cluster[2]));
  }
  std::vector<sim::SimBuffer> params(args.size());
  Simulator simulator(options, func.cluster[0]);
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
