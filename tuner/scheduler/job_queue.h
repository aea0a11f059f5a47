// JobQueue and Admission: which jobs run, in what order, and which may propose now.
//
// JobQueue: the scheduler's live jobs (queued, running, and finished ones until their final
// state is on disk), in dispatch order: priority descending; among jobs of one priority, the
// client with the fewest trials outstanding first (fair share: one client's big job does not
// starve another's small one), and a client's own jobs in submission order. A job
// leaves the queue once it has finished and nothing of it is in flight, so memory does not
// grow with the number of jobs ever run; a finished job is then found in the tuning log.
//
// Admission: the policy of one pump over the queue, asked of each search job in dispatch order
// (the scheduling rules of scheduler.h): a job proposes only when some connected worker can run
// it, the log can be written, and every job before it on its device key of a higher priority,
// or of its own client, has proposed its whole budget; and only as many candidates as the
// workers of its key can take beyond what the jobs before it have in their pipelines.
//
// Not thread-safe: guarded by the scheduler's lock.
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

class Admission {
 public:
  /// What one job may do in this pump.
  struct Ticket {
    bool may_propose = false;  // it has workers, its turn, and the log can be written
    int room = 0;              // candidates its workers can take beyond the pipelines before it
    int capacity = 0;          // slots of the connected workers that can run it
    bool none_usable = false;  // every template of it calls a library no such worker offers
    bool no_worker = false;    // no connected worker can run it (or any of its templates)
    const JobRuntime* blocking = nullptr;  // the job it waits behind, if any
  };

  /// `storage_paused`: the log cannot be written now (no job proposes).
  explicit Admission(bool storage_paused) : storage_paused_(storage_paused) {}

  /// The ticket of `job`, the next in dispatch order: `capacity` slots of connected workers
  /// can run it, and `none_usable` says that none of them offers a library its templates call.
  Ticket Ask(const JobRuntime& job, int capacity, bool none_usable);
  /// After `job`'s step (it had `ticket`): its pipeline as it now stands counts against the
  /// later jobs of its device key, and while it `wants_more` they wait behind it (those of a
  /// lower priority, or of its client).
  void Passed(const JobRuntime& job, const Ticket& ticket, bool wants_more);

 private:
  const bool storage_paused_;
  // Artifacts proposed, building or waiting for a worker, per device key, of the jobs so far.
  std::map<std::string, int> pipelined_;
  // The first job on a device key that still wants to propose: later jobs of a lower priority,
  // and later jobs of the same client, wait for it (other clients of its priority share the
  // workers with it: the dispatch order puts the least served client first).
  std::map<std::string, const JobRuntime*> blocker_;
  std::map<std::string, const JobRuntime*> client_blocker_;  // by device key and client
};

}  // namespace tune::tuner
