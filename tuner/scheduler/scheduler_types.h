// The scheduler's bookkeeping: one JobRuntime per live job (what every job has; what a kind of
// job adds is its driver's, job_driver.h), one Trial per candidate from proposal to commit, one
// WorkerEntry per connected worker. Used by the scheduler's pieces (job_queue, worker_registry,
// trial_pipeline, the drivers) and tuner/scheduler/scheduler*.cc only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "db/job.h"
#include "tune/v1/tuner.pb.h"
#include "tune/v1/worker.pb.h"
#include "tuner/scheduler/event_hub.h"
#include "tuner/scheduler/job_search.h"
#include "tuner/scheduler/job_view.h"
#include "tuner/scheduler/worker_channel.h"

namespace tune::tuner {

using Clock = std::chrono::steady_clock;

class JobDriver;

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
  // A finalist's re-measurement: the workers that measured its earlier passes; another worker
  // of the device key gets it when there is one, so that its figures are not one machine's.
  std::set<std::string> measured_on;
  std::string last_failure;  // why the latest attempt ended without a result
  bool final = false;        // a finalist's re-measurement, not a search trial
  // A crash or wrong answer from one worker, waiting for a second worker's measurement of the
  // same code (Scheduler::SecondOpinionLocked): one worker's crash may be a sick device.
  std::shared_ptr<const struct PendingCommit> unconfirmed;
};

/// A live job: loaded from the log, queued or running, or finished and not yet pruned. This is
/// what every job has; what its kind adds (a search and its finalists, or a model's allocation
/// over its task jobs) is its driver's (job_driver.h).
struct JobRuntime {
  JobRuntime();
  ~JobRuntime();
  JobRuntime(const JobRuntime&) = delete;
  JobRuntime& operator=(const JobRuntime&) = delete;

  // Set when the job is loaded, then read-only (the driver's own state has its own guards).
  std::unique_ptr<JobDriver> driver;
  std::shared_ptr<JobEvents> events;
  std::string client_key;  // ClientKey(row.spec.client): whom it shares the workers with

  // Everything below is guarded by the scheduler's lock.
  Job row;                     // as in the log: spec, state, counters, timestamps, error
  bool state_written = false;  // a final state is on disk (the job can leave memory)

  // Its trials by stage (trial_pipeline.h keeps these in step).
  int proposing = 0;  // candidates asked of the planner and not back yet
  // Candidates whose config another job's trial is measuring: each waits for that trial to be
  // recorded (then it is dropped: the config is measured) or dropped (then it becomes a trial
  // of this job). Pairs of (claim key, candidate).
  std::vector<std::pair<std::string, Candidate>> deferred;
  // The re-measurements of the current finalist pass not yet admitted, in the pass's order
  // (Scheduler::AdmitQueuedFinalistLocked).
  std::deque<Candidate> finals_queue;
  int building = 0;
  std::deque<uint64_t> ready;  // built, waiting for a worker (front first)
  int following = 0;           // built, waiting for another trial's measurement of their code
  int in_flight = 0;
  int committing = 0;

  // Which workers re-measured each finalist so far (by template name and config text).
  std::map<std::string, std::set<std::string>> finalist_workers;
  std::string waiting;                   // why a queued job is not running, for people
  std::string last_error;                // "KIND: message" of the latest failed trial
  std::deque<Clock::time_point> recent;  // completion times of the latest trials (for the ETA)

  /// Trials proposed and not given up: proposing, deferred, queued finalists, building, ready,
  /// following, in flight or committing.
  int Outstanding() const { return Pipelined() + following + in_flight + committing; }
  /// Trials on their way to a worker: proposing, deferred, queued finalists, building or ready.
  int Pipelined() const {
    return proposing + static_cast<int>(deferred.size() + finals_queue.size()) + building +
           static_cast<int>(ready.size());
  }
  /// Trials recorded or on their way.
  int Allocated() const { return row.trials_done + Outstanding(); }
  /// Seconds until its budget is spent at the rate of its latest trials; negative when unknown,
  /// 0 once it has ended.
  double EtaSeconds() const {
    if (IsTerminal(row.state)) {
      return 0;
    }
    if (recent.size() < 2) {
      return -1;
    }
    const double span = std::chrono::duration<double>(recent.back() - recent.front()).count();
    if (span <= 0) {
      return -1;
    }
    const double rate = static_cast<double>(recent.size() - 1) / span;
    return std::max(0, row.spec.trials - row.trials_done) / rate;
  }
  /// A trial of its budget was counted now (for the ETA).
  void NoteCompleted(Clock::time_point now) {
    recent.push_back(now);
    if (recent.size() > kRecentTrials) {
      recent.pop_front();
    }
  }
};

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
  // The first worker's crash or wrong answer that this answer confirms or contradicts: recorded
  // beside it, in the same transaction, as no trial of the budget.
  std::shared_ptr<const PendingCommit> earlier = {};
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
