// JobDriver: one kind of job. The scheduler keeps the queue, the workers, the trial pipeline,
// the lock and the event loop (dispatch, commits, worker events); what a kind of job adds to a
// job is its driver's, and the pump (Scheduler::PumpLocked) asks each admitted job's driver,
// under the scheduler's lock, what the job does next (a JobStep), then does it. Two kinds, an
// explicit list:
//   SearchJob  search_job.h   one workload's search, whose finalists are its last phase
//                             (finalist_phase.h); a task of a model job is one, whose budget
//                             its model job gives it a chunk at a time
//   ModelJob   model_job.h    a model's workloads under one budget: it owns its task jobs'
//                             allocation and ends once they all ended
//
// The life of every job (the scheduler's; a driver only answers which way it goes):
//
//   load ──▶ QUEUED ◀──kWaiting (why)── / ──kRunning──▶ RUNNING
//              │                                          │
//              └──────────────kEnded (state, why)─────────┴──▶ DONE / FAILED / CANCELLED
//                 (or cancelled by a client; or failed by its trials: FinishLocked)
//   ended ──(its final state on disk and no trial of it left)──▶ pruned: it leaves memory
//
// A search job (SearchJob::Next):
//
//   searching ──kPropose n (admitted: workers of its key, its turn, the log writable)──▶ ...
//       │ its budget allocated, its search exhausted or stopped early, nothing outstanding
//       ├──(a task whose model job may give it more)──▶ kWaiting for its model job
//       ▼
//   finalists (FinalistPhase): kPlanFinalists ▶ kMeasureFinalists pass 1..3 ▶ kDecide
//       │ decided (or nothing to re-measure)
//       ▼
//   kEnded DONE, saying why it stopped short of its budget and what the finalists decided
//
// A model job (ModelJob::Next):
//
//   allocating ──kAllocate (task, n) once the previous chunk is proposed──▶ allocating
//       │ its budget spent, or no task can take more, and nothing outstanding
//       ▼
//   allocation done: each task re-measures its finalists and ends ──(every task ended)──▶
//   kEnded DONE (FAILED when every task had failed)
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "db/job.h"
#include "tuner/scheduler/job_search.h"
#include "tuner/scheduler/job_view.h"
#include "tuner/scheduler/scheduler_types.h"

namespace tune::tuner {

class JobQueue;
class ModelJob;
class SearchJob;

/// What a job does next, as its driver answers the pump: an action for the scheduler to take,
/// and where the job stands.
struct JobStep {
  enum class Action : uint8_t {
    kNone,
    kPropose,           // ask its search for `n` candidates (on the planner); the pump
                        // proposes before its admission counts the job's pipeline
    kPlanFinalists,     // pick its finalists from the log (on the planner)
    kMeasureFinalists,  // admit `finalists` as trials: one pass of re-measurements
    kDecide,            // decide its best from the re-measurements (on the log writer)
    kAllocate,          // store task job `task`'s budget, now `n` trials (the writer)
  };
  enum class Standing : uint8_t {
    kUnchanged,  // under way: nothing to say
    kRunning,    // it is active: RUNNING, no longer waiting
    kWaiting,    // it waits for `why`: QUEUED (or still QUEUED) saying so
    kEnded,      // it ends in `end_state`, saying `why`
  };

  Action action = Action::kNone;
  int n = 0;
  int64_t task = 0;
  std::vector<Candidate> finalists;
  std::set<const KernelTemplate*> unusable;  // kPropose, kPlanFinalists: templates left out
  Standing standing = Standing::kUnchanged;
  JobState end_state = JobState::kDone;
  std::string why;

  static JobStep Do(Action action) {
    JobStep step;
    step.action = action;
    return step;
  }
  static JobStep Running() {
    JobStep step;
    step.standing = Standing::kRunning;
    return step;
  }
  static JobStep Waiting(std::string why) {
    JobStep step;
    step.standing = Standing::kWaiting;
    step.why = std::move(why);
    return step;
  }
  static JobStep Ended(JobState state, std::string why) {
    JobStep step;
    step.standing = Standing::kEnded;
    step.end_state = state;
    step.why = std::move(why);
    return step;
  }
};

class JobDriver {
 public:
  virtual ~JobDriver() = default;

  /// The driver as its kind (an explicit downcast: the kinds are the list above).
  virtual SearchJob* AsSearch() { return nullptr; }
  virtual const SearchJob* AsSearch() const { return nullptr; }
  virtual ModelJob* AsModel() { return nullptr; }
  virtual const ModelJob* AsModel() const { return nullptr; }

  /// Copies what this kind of job shows into `view` (a snapshot of `job`, job_view.h), under the
  /// scheduler's lock: plain values only, formatted later outside it. `jobs`: the live jobs.
  virtual void Snapshot(const JobRuntime& job, const JobQueue& jobs, JobView& view) const = 0;
};

}  // namespace tune::tuner
