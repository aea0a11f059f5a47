// The scheduler's bookkeeping: one JobRuntime per job, one Trial per candidate from proposal
// to commit, one WorkerEntry per connected worker. Used by tuner/scheduler*.cc only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "db/job.h"
#include "tune/v1/tuner.pb.h"
#include "tune/v1/worker.pb.h"
#include "tuner/job_options.h"
#include "tuner/job_search.h"
#include "tuner/worker_channel.h"

namespace tune::tuner {

using Clock = std::chrono::steady_clock;

/// Where a trial is: built, queued for a worker, on a worker, or being written to the log.
enum class TrialStage : uint8_t { kBuilding, kReady, kInFlight, kCommitting };

struct Trial {
  uint64_t id = 0;
  int64_t job_id = 0;
  const KernelTemplate* tpl = nullptr;
  Config config;
  std::string config_text;
  TrialStage stage = TrialStage::kBuilding;
  std::shared_ptr<const v1::Artifact> artifact;  // once built (names its code by hash)
  std::shared_ptr<const v1::ArtifactCode> code;  // once built, until the trial ends
  std::string worker_id;                         // while in flight
  Clock::time_point dispatched_at;
  int attempts = 0;           // times dispatched
  int missed_heartbeats = 0;  // consecutive heartbeats of its worker that did not list it
};

struct BestSoFar {
  double secs = 0;
  double gflops = 0;
  std::string template_name;
  std::string config;
  std::string record_uid;
};

struct JobEventEntry {
  uint64_t seq = 0;
  v1::JobEvent event;
};

struct JobRuntime {
  Job row;  // as in the log: spec, state, counters, timestamps, error
  Workload workload;
  Target target;
  std::vector<const KernelTemplate*> templates;
  std::unique_ptr<JobSearch> search;  // null once the job is final
  std::shared_ptr<Compiler> compiler;
  int since_improvement = 0;
  bool exhausted = false;  // the search has nothing left to propose

  int building = 0;
  std::deque<uint64_t> ready;  // built, waiting for a worker (front first)
  int in_flight = 0;
  int committing = 0;

  std::optional<BestSoFar> best;
  std::string last_error;                // "KIND: message" of the latest failed trial
  std::string waiting;                   // why a queued job is not running, for people
  std::deque<Clock::time_point> recent;  // completion times of the latest trials (for the ETA)

  std::deque<JobEventEntry> events;  // the latest events, for watchers
  uint64_t next_seq = 1;

  /// Trials proposed and not given up: recorded, building, ready, in flight or committing.
  int Allocated() const {
    return row.trials_done + building + static_cast<int>(ready.size()) + in_flight + committing;
  }
  int Outstanding() const {
    return building + static_cast<int>(ready.size()) + in_flight + committing;
  }
  bool EarlyStopped() const {
    return row.spec.early_stopping > 0 && since_improvement >= row.spec.early_stopping;
  }
  /// True while the job may propose more trials.
  bool WantsMore() const { return !exhausted && !EarlyStopped() && Allocated() < row.spec.trials; }
};

struct WorkerEntry {
  std::string id;
  v1::Register reg;
  std::string peer;
  std::shared_ptr<WorkerChannel> channel;
  int capacity = 1;
  std::set<uint64_t> in_flight;
  uint64_t trials_done = 0;
  Clock::time_point last_seen;
  int64_t last_heartbeat_ms = 0;
  int64_t connected_at_ms = 0;
};

/// A trial outcome to write to the log once the scheduler's lock is released.
struct PendingCommit {
  uint64_t trial_id = 0;
  Measurement measurement;
  std::string worker;      // name; empty for build errors
  std::string device_key;  // the device that measured it (the job's, for build errors)
};

}  // namespace tune::tuner
