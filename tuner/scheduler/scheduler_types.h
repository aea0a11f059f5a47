// The scheduler's bookkeeping: one JobRuntime per live job, one Trial per candidate from
// proposal to commit, one WorkerEntry per connected worker. Used by the scheduler's pieces
// (job_queue, worker_registry, trial_pipeline) and tuner/scheduler*.cc only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "db/job.h"
#include "search/task_scheduler.h"
#include "tune/v1/tuner.pb.h"
#include "tune/v1/worker.pb.h"
#include "tuner/scheduler/event_hub.h"
#include "tuner/scheduler/job_search.h"
#include "tuner/scheduler/worker_channel.h"

namespace tune::tuner {

using Clock = std::chrono::steady_clock;

/// Completion times a job keeps for its ETA.
inline constexpr size_t kRecentTrials = 16;

/// Where a trial is: being built, built and waiting for a worker, built and waiting for another
/// trial that measures the same artifact on the same device with the same timing (following),
/// on a worker, or being written to the log.
enum class TrialStage : uint8_t { kBuilding, kReady, kFollowing, kInFlight, kCommitting };

struct Trial {
  uint64_t id = 0;
  int64_t job_id = 0;
  const KernelTemplate* tpl = nullptr;
  Config config;
  std::string config_text;
  std::string claim;  // ClaimKey: no other trial measures this config for this workload/target
  // MeasureKey once built (empty for a finalist's re-measurement, which is never shared): the
  // trial that leads it is measured, and the trials that follow it take its measurement.
  std::string measure_key;
  uint64_t leader = 0;              // while following: the trial it waits for
  std::vector<uint64_t> followers;  // while leading: the trials waiting for it, in order
  TrialStage stage = TrialStage::kBuilding;
  std::shared_ptr<const v1::Artifact> artifact;  // once built (names its code by hash)
  std::shared_ptr<const v1::ArtifactCode> code;  // once built, until the trial ends
  std::string worker_id;                         // while in flight
  Clock::time_point dispatched_at;
  int attempts = 0;                 // times dispatched
  int missed_heartbeats = 0;        // consecutive heartbeats of its worker that did not list it
  std::set<std::string> failed_on;  // names of workers that lost it or could not measure it
  std::string last_failure;         // why the latest attempt ended without a result
  bool final = false;               // a finalist's re-measurement, not a search trial
};

struct BestSoFar {
  double secs = 0;
  double gflops = 0;
  std::string template_name;
  std::string config;
  std::string record_uid;

  void ToProto(v1::BestTrial* out) const {
    out->set_gflops(gflops);
    out->set_secs(secs);
    out->set_template_name(template_name);
    out->set_config(config);
    out->set_record_uid(record_uid);
  }
};

/// What a model job adds to a JobRuntime: how its budget is spread over its task jobs.
struct ModelRuntime {
  search::TaskScheduler allocator;
  std::vector<int64_t> task_ids;  // the task jobs, in the order of spec.tasks
  // The budget is spent (or no task can take more): the tasks re-measure their finalists and
  // end, then the model job ends.
  bool allocation_done = false;
  bool tasks_failed = false;  // every task had ended (failed) before the budget was spent
  std::string why = {};       // why it ended short of its budget, if it did
};

/// A live job: loaded from the log, queued or running, or finished and not yet pruned. A model
/// job has no templates and no search: its tasks (jobs of their own) propose, and it only
/// allocates their budgets (scheduler_models.cc).
struct JobRuntime {
  // Set when the job is loaded, then read-only.
  Workload workload;
  Target target;
  std::vector<const KernelTemplate*> templates;
  std::shared_ptr<JobEvents> events;
  std::string client_key;  // ClientKey(row.spec.client): whom it shares the workers with

  // The search: used by the planner and the log writer, never under the scheduler's lock.
  std::mutex search_mu;
  std::unique_ptr<JobSearch> search ABSL_GUARDED_BY(search_mu);

  // Everything below is guarded by the scheduler's lock.
  Job row;  // as in the log: spec, state, counters, timestamps, error
  int since_improvement = 0;
  bool exhausted = false;      // the search has nothing left to propose
  bool state_written = false;  // a final state is on disk (the job can leave memory)

  int proposing = 0;  // candidates asked of the planner and not back yet
  int building = 0;
  std::deque<uint64_t> ready;  // built, waiting for a worker (front first)
  int following = 0;           // built, waiting for another trial's measurement of their code
  int in_flight = 0;
  int committing = 0;
  // Candidates whose config another job's trial is measuring: each waits for that trial to be
  // recorded (then it is dropped: the config is measured) or dropped (then it becomes a trial
  // of this job). Pairs of (claim key, candidate).
  std::vector<std::pair<std::string, Candidate>> deferred;
  // Claim keys of configs that other jobs recorded while this job ran: the search learns of
  // each asynchronously (ShareRecordLocked), so a proposal made before it did is dropped here
  // instead of measured again.
  std::set<std::string> shared_records;

  std::optional<BestSoFar> best;
  // The end of a job: once its budget is spent, its finalists are re-measured (tuner/finalists.h)
  // and the best rests on those figures.
  enum class FinalStage : uint8_t { kSearching, kPlanning, kMeasuring, kDeciding, kDecided };
  FinalStage final_stage = FinalStage::kSearching;
  // The finalists and how many passes over each were recorded before (by a run of this
  // finalization that a restart cut short); the pass being measured.
  std::vector<std::pair<Candidate, int>> finalists;
  int final_pass = 0;
  std::string verdict;  // what the re-measurement decided, for people
  // A model job's allocation; null for the others.
  std::unique_ptr<ModelRuntime> model;
  // A task job: its model job (0 for the others), the untuned default (the first template's
  // default config) and its time once measured.
  int64_t model_id = 0;
  std::string default_config;
  std::optional<double> default_secs;
  std::string last_error;  // "KIND: message" of the latest failed trial
  // Its trials given up without a verdict (WORKER_LOST records: no trial of its budget), as
  // "<template> <config>: <why>", oldest first; and how many of them came after its latest
  // verdict.
  std::vector<std::string> given_up;
  int given_up_in_a_row = 0;
  std::string waiting;                   // why a queued job is not running, for people
  std::string skipped;                   // library templates left out for want of a worker
  std::deque<Clock::time_point> recent;  // completion times of the latest trials (for the ETA)

  /// Trials proposed and not given up: proposing, deferred, building, ready, following, in
  /// flight or committing.
  int Outstanding() const {
    return proposing + static_cast<int>(deferred.size()) + building +
           static_cast<int>(ready.size()) + following + in_flight + committing;
  }
  /// Trials recorded or on their way.
  int Allocated() const { return row.trials_done + Outstanding(); }
  bool EarlyStopped() const {
    return row.spec.early_stopping > 0 && since_improvement >= row.spec.early_stopping;
  }
  /// True while the job may propose more trials.
  bool WantsMore() const {
    return !IsTerminal(row.state) && !exhausted && !EarlyStopped() && Allocated() < row.spec.trials;
  }
};

/// "gave up N trial(s) without a verdict: <the first few of JobRuntime::given_up>"; empty when
/// none was given up.
std::string GivenUpNote(const JobRuntime& job);

struct WorkerEntry {
  std::string id;
  v1::Register reg = {};
  std::string peer = {};
  std::shared_ptr<WorkerChannel> channel = {};
  int capacity = 1;
  int threads = 1;                       // threads a kernel may use on it
  std::set<std::string> preloaded = {};  // file names of its preloaded libraries
  std::set<uint64_t> in_flight = {};
  uint64_t trials_done = 0;
  Clock::time_point last_seen = {};
  int64_t last_heartbeat_ms = 0;
  int64_t connected_at_ms = 0;
};

/// A trial outcome to write to the log, prepared under the scheduler's lock.
struct PendingCommit {
  uint64_t trial_id = 0;
  Measurement measurement;
  std::string worker;      // name; empty for build errors and trials given up
  std::string device_key;  // the device that measured it (the job's, otherwise)
};

/// A trial of a commit group, prepared under the scheduler's lock.
struct PreparedTrial {
  std::shared_ptr<JobRuntime> job;
  PendingCommit pending;
  const KernelTemplate* tpl = nullptr;
  TrialOutcome outcome;
  bool final = false;
  bool improved = false;  // a new best of its job (the group's earlier trials counted)
};

/// Trials handed to the log writer together, committed in one transaction.
struct CommitGroup {
  std::vector<std::pair<std::shared_ptr<JobRuntime>, PendingCommit>> trials;
};

}  // namespace tune::tuner
