// WorkerRegistry: the workers connected to the daemon (device key, capabilities, trials in
// flight, liveness) and the ones lost recently, and which of them may run a trial. Not
// thread-safe: guarded by the scheduler's lock.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/element_type.h"
#include "tune/v1/tuner.pb.h"
#include "tuner/scheduler/scheduler_types.h"

namespace tune::tuner {

/// What a trial needs of a worker.
struct WorkerNeeds {
  std::string device_key;
  std::string fingerprint;               // empty: any; else only workers of this fingerprint
  int threads = 1;                       // the target's -threads
  std::vector<std::string> needed_libs;  // the artifact's needed libraries (empty before build)
  Dtype dtype = Dtype::kF32;             // the workload's element types
  std::vector<std::string> features;     // CPU features its template's kernels use
};

/// Whether `worker` measures trials of `dtype` (Capabilities.dtypes; f32 only when it lists
/// none).
bool MeasuresDtype(const WorkerEntry& worker, Dtype dtype);

/// True when `worker` can run a trial needing `needs`: the same device key, at least as many
/// kernel threads on offer, every needed library preloaded (a library is named by its file
/// name, "libopenblas.so.0", or its short name, "openblas"), the workload's dtype measured and
/// every needed CPU feature reported (Capabilities.features), and the fingerprint when one is
/// needed (a reverify job's: the device's newest).
bool CanRun(const WorkerEntry& worker, const WorkerNeeds& needs);

/// Whether a job of `threads` kernel threads on `device_key` fits the machines of the connected
/// workers: InvalidArgument naming -threads and the accepted range when workers of that device
/// key are connected, say how many cores their machines have, and every machine has fewer;
/// OK otherwise (also when none is connected yet, or none says: one may come).
absl::Status CheckThreadsFitCores(const std::vector<WorkerEntry*>& workers,
                                  const std::string& device_key, int threads);

class WorkerRegistry {
 public:
  /// Workers lost since start that ListWorkers can still show.
  static constexpr size_t kKeptLost = 100;

  /// Registers a worker under a new id ("w1", "w2", ...); returns its entry.
  WorkerEntry& Add(const v1::Register& reg, std::string peer,
                   std::shared_ptr<WorkerChannel> channel, Clock::time_point now,
                   int64_t now_unix_ms);
  /// The worker, or null.
  WorkerEntry* Find(const std::string& id);
  /// Removes a worker and remembers it as lost. Returns its entry (its in-flight trials are the
  /// caller's to re-queue).
  std::unique_ptr<WorkerEntry> Remove(const std::string& id);
  /// Ids of the workers that sent nothing for longer than `deadline`.
  std::vector<std::string> Silent(Clock::time_point now, Clock::duration deadline) const;
  /// Connected workers: the least loaded first (fewest in flight, then fewest done), so that
  /// dispatch spreads trials over every worker.
  std::vector<WorkerEntry*> ByLoad();
  /// Total capacity of the connected workers that can run trials needing `needs`.
  int Capacity(const WorkerNeeds& needs) const;
  /// Connected workers (and, with `include_lost`, the recently lost), sorted by name.
  std::vector<v1::WorkerInfo> List(bool include_lost) const;
  /// Every connected worker, in id order.
  std::vector<WorkerEntry*> All();
  size_t size() const { return workers_.size(); }

 private:
  uint64_t next_id_ = 1;
  std::map<std::string, std::unique_ptr<WorkerEntry>> workers_;
  std::deque<v1::WorkerInfo> lost_;
};

/// The wire description of a worker.
v1::WorkerInfo WorkerInfoOf(const WorkerEntry& worker, v1::WorkerState state);

}  // namespace tune::tuner
