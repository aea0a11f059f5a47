#include "codegen/sim/thread_fibers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/sim/interpreter.h"

namespace tune::sim {
namespace {

// A fiber's stack (FiberStack): what the deepest expression of thread code needs.
constexpr size_t kFiberStackBytes = 512 * 1024;

// How many hardware barriers a block has: id 0 (barrier()) and the named ones, 1 to 15.
constexpr size_t kBarrierIds = 16;

// The threads of a warp: those whose linear index in the block lies in [32w, 32w + 32).
constexpr size_t kWarpSize = 32;

// One simulated GPU thread run as a fiber.
struct Fiber {
  // kAtWarpGroup: at a warpgroup instruction, until its warpgroup has reached it; kIssued: its
  // share of it done, until the warpgroup's other threads have done theirs.
  enum class State { kRunning, kAtBarrier, kAtMBarrier, kAtWarpGroup, kIssued, kDone };
  size_t group = 0;  // the block (ThreadGroup) of the thread
  ucontext_t context;
  ucontext_t* scheduler = nullptr;
  std::optional<Interpreter> interp;
  const ir::Stmt* body = nullptr;
  State state = State::kRunning;
  const ir::Barrier* barrier = nullptr;  // where the fiber waits
  // kAtMBarrier: the mbarrier the fiber waits for, the parity it waits to pass, and its name.
  const MBarrierState* mbarrier = nullptr;
  int64_t parity = 0;
  std::string mbarrier_wait;
  bool Blocked() const { return state == State::kAtMBarrier && !mbarrier->Passes(parity); }
  bool cancel = false;
  absl::Status status;
};

thread_local Fiber* current_fiber = nullptr;

// Returns from fiber `f` to the scheduler, until it resumes `f`; unwinds `f` where the scheduler
// cancels it.
void Park(Fiber* f) {
  swapcontext(&f->context, f->scheduler);
  current_fiber = f;
  if (f->cancel) {
    throw CancelFiber{};
  }
}

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

// The index in a run's fibers of group `gi`'s first thread (of the fiber after the last for
// gi == groups.size()).
size_t First(const std::vector<ThreadGroup*>& groups, size_t gi) {
  size_t k = 0;
  for (size_t g = 0; g < gi; ++g) {
    k += groups[g]->indices.size();
  }
  return k;
}

std::string BlockName(const Interpreter& parent) {
  // "block (x, y, z), thread (0, 0, 0)": keep the block part.
  std::string location = parent.Location();
  return location.substr(0, location.find(", thread"));
}

// Issues the warpgroup instructions that a whole warpgroup has reached (its 128 threads all at
// kAtWarpGroup): resumes each of its threads to compute its share, so that every share is done
// before any thread goes on, as the hardware issues the instruction for the warpgroup as one.
// Returns whether any was issued.
template <typename Resume, typename Fail>
bool IssueWarpGroupSteps(const std::vector<ThreadGroup*>& groups, std::vector<Fiber>& fibers,
                         const Resume& resume, const Fail& fail) {
  bool issued = false;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const size_t end = First(groups, gi + 1);
    for (size_t first = First(groups, gi); first < end; first += 128) {
      const size_t last = std::min(end, first + 128);
      bool all = true;
      for (size_t k = first; k < last && all; ++k) {
        all = fibers[k].state == Fiber::State::kAtWarpGroup;
      }
      if (!all) {
        continue;
      }
      for (size_t k = first; k < last; ++k) {
        resume(fibers[k]);
        if (fibers[k].state == Fiber::State::kDone) {
          fail(fibers[k].status);
        }
      }
      for (size_t k = first; k < last; ++k) {
        fibers[k].state = Fiber::State::kRunning;  // the next pass resumes them
      }
      issued = true;
    }
  }
  return issued;
}

}  // namespace

FiberStack::FiberStack() {
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

FiberStack::~FiberStack() { munmap(base_, bytes_); }

// Out of line: getcontext returns twice, which would leave the caller's locals clobbered.
[[gnu::noinline]] void MakeFiberContext(ucontext_t* context, const FiberStack& stack,
                                        ucontext_t* link, void (*entry)()) {
  getcontext(context);
  context->uc_stack.ss_sp = stack.bottom();
  context->uc_stack.ss_size = stack.size();
  context->uc_link = link;
  makecontext(context, entry, 0);
}

bool ParkAtBarrier(const ir::Barrier* barrier) {
  Fiber* f = current_fiber;
  if (f == nullptr) {
    return false;
  }
  f->state = Fiber::State::kAtBarrier;
  f->barrier = barrier;
  Park(f);
  f->state = Fiber::State::kRunning;
  return true;
}

bool ParkAtWarpGroupStep(absl::FunctionRef<void()> issue) {
  Fiber* f = current_fiber;
  if (f == nullptr) {
    return false;
  }
  f->state = Fiber::State::kAtWarpGroup;
  Park(f);
  issue();  // resumed by IssueWarpGroupSteps, which resumes the warpgroup's threads in turn
  f->state = Fiber::State::kIssued;
  Park(f);
  f->state = Fiber::State::kRunning;
  return true;
}

bool YieldThreadFiber() {
  Fiber* f = current_fiber;
  if (f == nullptr) {
    return false;
  }
  Park(f);  // still kRunning: the next pass resumes it
  return true;
}

bool ParkAtMBarrier(const MBarrierState* barrier, int64_t parity, std::string what) {
  Fiber* f = current_fiber;
  if (f == nullptr) {
    return false;
  }
  f->state = Fiber::State::kAtMBarrier;
  f->mbarrier = barrier;
  f->parity = parity;
  f->mbarrier_wait = std::move(what);
  Park(f);
  f->state = Fiber::State::kRunning;
  return true;
}

void ThreadFibers::Run(const std::vector<ThreadGroup*>& groups) {
  size_t n = 0;
  for (const ThreadGroup* g : groups) {
    n += g->indices.size();
  }
  while (stacks_.size() < n) {
    stacks_.push_back(std::make_unique<FiberStack>());
  }
  std::vector<Fiber> fibers(n);
  std::vector<size_t> left(groups.size());  // threads of each group not finished
  ucontext_t scheduler;
  size_t i = 0;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const ThreadGroup& g = *groups[gi];
    left[gi] = g.indices.size();
    for (const auto& index : g.indices) {
      Fiber& f = fibers[i];
      f.group = gi;
      f.interp.emplace(g.parent->ForkThread(index, g.dims));
      f.body = &g.nest;
      f.scheduler = &scheduler;
      MakeFiberContext(&f.context, *stacks_[i], &scheduler, &FiberEntry);
      ++i;
    }
  }
  auto resume = [&](Fiber& f) {
    current_fiber = &f;
    swapcontext(&scheduler, &f.context);
    current_fiber = nullptr;
  };
  // Abandons the fibers still waiting (their stacks unwind) and reports `status`.
  auto fail = [&](absl::Status status) {
    for (Fiber& f : fibers) {
      if (f.state == Fiber::State::kAtBarrier || f.state == Fiber::State::kAtMBarrier ||
          f.state == Fiber::State::kAtWarpGroup || f.state == Fiber::State::kIssued) {
        f.cancel = true;
        resume(f);
      }
    }
    throw SimError{std::move(status)};
  };
  auto thread_name = [&](size_t k) {
    const auto& index = groups[fibers[k].group]->indices[k - First(groups, fibers[k].group)];
    return absl::StrFormat("(%d, %d, %d)", index[0], index[1], index[2]);
  };
  auto block_name = [&](size_t k) { return BlockName(*groups[fibers[k].group]->parent); };
  // The threads of group `gi` at a named barrier of each id (none at 0, the block's).
  auto at_named_barriers = [&](size_t gi) {
    std::array<std::vector<size_t>, kBarrierIds> at;
    for (size_t k = First(groups, gi); k < First(groups, gi + 1); ++k) {
      if (fibers[k].state == Fiber::State::kAtBarrier && fibers[k].barrier->named()) {
        at[static_cast<size_t>(fibers[k].barrier->id)].push_back(k);
      }
    }
    return at;
  };
  // Releases the threads of group `gi` at each named barrier that as many of them wait at as
  // it names; returns whether any was released. A release orders its participants' gpu_shared
  // accesses before it before theirs after it, and no other thread's, so it is not the block's
  // AdvanceEpoch() of a barrier(): that would also order the accesses of the threads outside it
  // (a producer's write and a consumer's read after the release, a race on the hardware, would
  // pass unreported), while leaving the epoch as it is would report the participants' ordered
  // accesses as races. The block's epochs record which threads took part instead
  // (Interpreter::AdvanceEpoch(participants)), and the race checks ask for a barrier that both
  // threads of a pair passed.
  auto release_named_barriers = [&](size_t gi) {
    const ThreadGroup& g = *groups[gi];
    const auto block_threads = static_cast<int64_t>(g.indices.size());
    bool any = false;
    for (const std::vector<size_t>& at : at_named_barriers(gi)) {
      if (at.empty()) {
        continue;
      }
      const ir::Barrier& first = *fibers[at[0]].barrier;
      for (const size_t k : at) {
        if (fibers[k].barrier->threads != first.threads) {
          fail(absl::FailedPreconditionError(absl::StrCat(
              "divergent barrier in ", block_name(k), ": thread ", thread_name(at[0]),
              " waits at barrier id ", first.id, " for ", first.threads, " threads and thread ",
              thread_name(k), " for ", fibers[k].barrier->threads,
              " (the threads at a barrier of one id must name the same count)")));
        }
      }
      if (first.threads > block_threads) {
        fail(absl::FailedPreconditionError(
            absl::StrCat("deadlock in ", block_name(at[0]), ": thread ", thread_name(at[0]),
                         " waits at barrier id ", first.id, " for ", first.threads,
                         " threads, but the block has ", block_threads)));
      }
      const auto arrived = static_cast<int64_t>(at.size());
      if (arrived > first.threads) {
        fail(absl::FailedPreconditionError(absl::StrCat(
            "divergent barrier in ", block_name(at[0]), ": ", arrived,
            " threads wait at barrier id ", first.id, " at once, more than its ", first.threads,
            " (thread ", thread_name(at[0]), " and thread ", thread_name(at.back()),
            " among them; the threads of one barrier id must reach it in groups of that count)")));
      }
      if (arrived < first.threads) {
        continue;
      }
      // The participants by linear index in the block. The hardware counts a barrier's arrivals
      // by warps, which the count above matches only where whole warps arrive.
      std::vector<bool> participants(static_cast<size_t>(block_threads), false);
      std::vector<size_t> fiber_of(static_cast<size_t>(block_threads));
      for (size_t k = First(groups, gi); k < First(groups, gi + 1); ++k) {
        const auto& index = g.indices[k - First(groups, gi)];
        const auto t =
            static_cast<size_t>(index[0] + g.dims[0] * (index[1] + g.dims[1] * index[2]));
        fiber_of[t] = k;
        participants[t] = fibers[k].state == Fiber::State::kAtBarrier &&
                          fibers[k].barrier->named() && fibers[k].barrier->id == first.id;
      }
      for (size_t t = 0; t < participants.size(); ++t) {
        const size_t lead = t - t % kWarpSize;  // the warp's first thread
        if (participants[t] != participants[lead]) {
          const size_t passes = participants[t] ? t : lead, stays = participants[t] ? lead : t;
          fail(absl::FailedPreconditionError(
              absl::StrCat("divergent barrier in ", block_name(at[0]), ": thread ",
                           thread_name(fiber_of[passes]), " passes barrier id ", first.id,
                           " but thread ", thread_name(fiber_of[stays]),
                           " of its warp does not (whole warps reach a named barrier)")));
        }
      }
      for (const size_t k : at) {
        fibers[k].state = Fiber::State::kRunning;  // released: the next pass resumes them
      }
      g.parent->AdvanceEpoch(participants);
      any = true;
    }
    return any;
  };
  // The order of each pass: the threads' own, or one drawn from the schedule's seed, which
  // also leaves each thread that could run behind with probability 1/2.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 shuffle_bits(schedule_seed_);
  for (;;) {
    // One barrier interval: every thread runs until its next barrier or its end, where
    // mbarrier waits switch to the other threads until what they wait for has happened.
    if (schedule_seed_ != 0) {
      std::shuffle(order.begin(), order.end(), shuffle_bits);
    }
    bool progress = false;
    for (const size_t k : order) {
      Fiber& f = fibers[k];
      if (f.state == Fiber::State::kDone || f.state == Fiber::State::kAtBarrier ||
          f.state == Fiber::State::kAtWarpGroup || f.Blocked()) {
        continue;
      }
      progress = true;
      if (schedule_seed_ != 0 && (shuffle_bits() & 1) != 0) {
        continue;  // left behind this pass: threads drift apart, as warps do
      }
      resume(f);
      if (f.state == Fiber::State::kDone) {
        if (!f.status.ok()) {
          fail(f.status);
        }
        if (--left[f.group] == 0) {
          groups[f.group]->finished = true;
        }
      }
    }
    if (progress) {
      continue;
    }
    if (IssueWarpGroupSteps(groups, fibers, resume, fail)) {
      continue;
    }
    // Release the blocks whose threads all wait at one barrier(), the named barriers that as
    // many threads of their block wait at as they name, and the cluster when all of its threads
    // wait at a cluster barrier. A thread at a named barrier waits for other threads than the
    // block's barrier() does: it neither holds that up as divergent nor lets it pass.
    bool released = false;
    size_t at_cluster_barrier = 0;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      size_t waiting = 0, first_waiting = 0, first_other = n;
      bool at_named = false;
      const ir::Barrier* barrier = nullptr;
      for (size_t k = First(groups, gi); k < First(groups, gi + 1); ++k) {
        if (fibers[k].state == Fiber::State::kAtBarrier) {
          if (fibers[k].barrier->cluster) {
            ++at_cluster_barrier;
            continue;
          }
          if (fibers[k].barrier->named()) {
            at_named = true;
            continue;
          }
          if (waiting++ == 0) {
            first_waiting = k;
            barrier = fibers[k].barrier;
          } else if (fibers[k].barrier != barrier) {
            fail(absl::FailedPreconditionError(absl::StrCat(
                "divergent barrier in ", block_name(k), ": thread ", thread_name(k),
                " waits at a different barrier() than thread ", thread_name(first_waiting),
                " (every thread of a block must reach the same barriers)")));
          }
        } else if (first_other == n) {
          first_other = k;
        }
      }
      if (at_named && release_named_barriers(gi)) {
        released = true;
        continue;
      }
      if (waiting == 0) {
        continue;
      }
      if (first_other != n && fibers[first_other].state == Fiber::State::kDone) {
        fail(absl::FailedPreconditionError(absl::StrCat(
            "divergent barrier in ", block_name(first_other), ": thread ", thread_name(first_other),
            " finished while thread ", thread_name(first_waiting), " (and ", waiting - 1,
            " others) wait at a barrier() (every thread of a block must "
            "reach it)")));
      }
      if (first_other == n && !at_named) {
        groups[gi]->parent->AdvanceEpoch();
        for (size_t k = First(groups, gi); k < First(groups, gi + 1); ++k) {
          fibers[k].state = Fiber::State::kRunning;  // released: the next pass resumes them
        }
        released = true;
      }
    }
    if (released) {
      continue;
    }
    if (at_cluster_barrier == n) {
      for (ThreadGroup* g : groups) {
        g->parent->AdvanceEpoch();
      }
      for (Fiber& f : fibers) {
        f.state = Fiber::State::kRunning;
      }
      continue;
    }
    size_t done = 0;
    for (size_t k = 0; k < n; ++k) {
      done += fibers[k].state == Fiber::State::kDone;
    }
    if (done == n) {
      return;
    }
    for (size_t k = 0; k < n; ++k) {
      if (fibers[k].state == Fiber::State::kAtMBarrier) {
        const MBarrierState& b = *fibers[k].mbarrier;
        fail(absl::FailedPreconditionError(absl::StrCat(
            "deadlock in ", block_name(k), ": thread ", thread_name(k), " waits at ",
            fibers[k].mbarrier_wait, " in phase ", b.phase, " (", b.pending, " of ", b.count,
            " arrivals and ", b.tx,
            " transaction bytes outstanding), which no other thread can complete: they have "
            "finished or wait too")));
      }
    }
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      for (const std::vector<size_t>& at : at_named_barriers(gi)) {
        if (at.empty()) {
          continue;
        }
        const ir::Barrier& b = *fibers[at[0]].barrier;
        fail(absl::FailedPreconditionError(absl::StrCat(
            "deadlock in ", block_name(at[0]), ": thread ", thread_name(at[0]),
            " waits at barrier id ", b.id, " with ", at.size(), " of ", b.threads,
            " threads arrived, which the others cannot reach: they have finished or wait "
            "elsewhere (",
            b.threads, " threads of the block must reach a barrier of id ", b.id, ")")));
      }
    }
    for (size_t k = 0; k < n; ++k) {
      if (fibers[k].state == Fiber::State::kAtWarpGroup) {
        fail(absl::FailedPreconditionError(absl::StrCat(
            "divergent warpgroup_mma in ", block_name(k), ": thread ", thread_name(k),
            " waits to issue a warpgroup_mma that the other threads of its warpgroup cannot "
            "reach: they have finished or wait elsewhere (all 128 threads of a warpgroup "
            "issue it together)")));
      }
    }
    for (size_t k = 0; k < n; ++k) {
      if (fibers[k].state == Fiber::State::kAtBarrier && fibers[k].barrier->cluster) {
        fail(absl::FailedPreconditionError(absl::StrCat(
            "divergent cluster barrier in ", block_name(k), ": thread ", thread_name(k),
            " waits at a cluster barrier that ", n - at_cluster_barrier,
            " threads of the cluster cannot reach: they have finished or wait elsewhere "
            "(every thread of every block of a cluster must reach it)")));
      }
    }
    fail(absl::InternalError("the simulated threads stopped without a cause"));
  }
}

}  // namespace tune::sim
