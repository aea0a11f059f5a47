// JobQueue: the scheduler's live jobs (queued, running, and finished ones until their final
// state is on disk), in dispatch order: priority descending; among jobs of one priority, the
// client with the fewest trials outstanding first (fair share: one client's big job does not
// starve another's small one), and a client's own jobs in submission order. A job
// leaves the queue once it has finished and nothing of it is in flight, so memory does not
// grow with the number of jobs ever run; a finished job is then found in the tuning log. Not
// thread-safe: guarded by the scheduler's lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/scheduler/scheduler_types.h"

namespace tune::tuner {

/// Who shares the workers fairly with whom, from a job's client field: the token's name when
/// the job came with a token ("NAME@PEER"), else the peer's host without its port (every
/// connection of one host is one client).
std::string ClientKey(std::string_view client);

class JobQueue {
 public:
  /// Adds a job (its row's id must be new) and sets its client_key.
  void Add(std::shared_ptr<JobRuntime> job);
  /// The job, or null when it is not live.
  JobRuntime* Find(int64_t id) const;
  std::shared_ptr<JobRuntime> Shared(int64_t id) const;
  /// Removes a job; its runtime lives on while others (tasks, watchers) hold it.
  void Remove(int64_t id);
  /// Jobs that are not final, priority descending; within a priority, clients (ClientKey) by
  /// their trials outstanding, fewest first; a client's jobs in id order (FIFO).
  std::vector<JobRuntime*> ActiveInDispatchOrder() const;
  /// Every live job, in id order.
  std::vector<JobRuntime*> All() const;
  size_t size() const { return jobs_.size(); }

 private:
  std::map<int64_t, std::shared_ptr<JobRuntime>> jobs_;
};

}  // namespace tune::tuner
