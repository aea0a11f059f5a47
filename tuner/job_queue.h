// JobQueue: the scheduler's live jobs (queued, running, and finished ones until their final
// state is on disk), in dispatch order: priority descending, then submission order. A job
// leaves the queue once it has finished and nothing of it is in flight, so memory does not
// grow with the number of jobs ever run; a finished job is then found in the tuning log. Not
// thread-safe: guarded by the scheduler's lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "tuner/scheduler_types.h"

namespace tune::tuner {

class JobQueue {
 public:
  /// Adds a job (its row's id must be new).
  void Add(std::shared_ptr<JobRuntime> job);
  /// The job, or null when it is not live.
  JobRuntime* Find(int64_t id) const;
  std::shared_ptr<JobRuntime> Shared(int64_t id) const;
  /// Removes a job; its runtime lives on while others (tasks, watchers) hold it.
  void Remove(int64_t id);
  /// Jobs that are not final, priority descending, ties in id order (FIFO).
  std::vector<JobRuntime*> ActiveInDispatchOrder() const;
  /// Every live job, in id order.
  std::vector<JobRuntime*> All() const;
  size_t size() const { return jobs_.size(); }

 private:
  std::map<int64_t, std::shared_ptr<JobRuntime>> jobs_;
};

}  // namespace tune::tuner
