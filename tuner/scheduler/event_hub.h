// EventHub: the fan-out of job progress to watchers (WatchJob streams). Each job has one
// JobEvents stream that the scheduler appends to and any number of watchers read from; a
// watcher holds its stream by shared_ptr, so a job leaving the scheduler's memory never
// invalidates what a watcher reads. Thread-safe; a stream's lock is taken after the scheduler's.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "tune/v1/tuner.pb.h"

namespace tune::tuner {

/// The events of one job, newest kept up to a bound.
class JobEvents {
 public:
  /// Events kept for watchers that fall behind (older ones are dropped; a watcher that missed
  /// some still gets the latest, which carries the whole state).
  static constexpr size_t kKept = 256;

  /// Appends an event and wakes the watchers. Ignored once closed.
  void Push(v1::JobEvent event);

  /// No event follows (the job ended and its last event was pushed, or the daemon stops).
  void Close();

  /// Sequence number of the latest event (0 before the first).
  uint64_t LatestSeq() const;

  struct Batch {
    std::vector<v1::JobEvent> events;  // every kept event after the asked sequence number
    uint64_t last_seq = 0;             // sequence number of the last one (or the asked one)
    bool closed = false;               // no more events will come
  };
  /// Events after `after`, waiting up to `timeout` for one when there are none.
  Batch WaitAfter(uint64_t after, std::chrono::milliseconds timeout);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<uint64_t, v1::JobEvent>> events_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

/// One JobEvents per job that is live in the scheduler.
class EventHub {
 public:
  /// The job's stream, created on first use.
  std::shared_ptr<JobEvents> For(int64_t job_id);
  /// The job's stream if it has one.
  std::shared_ptr<JobEvents> Find(int64_t job_id) const;
  /// Closes the job's stream and forgets it (its watchers keep reading what it holds).
  void Drop(int64_t job_id);
  /// Closes every stream (the daemon stops).
  void CloseAll();

 private:
  mutable std::mutex mu_;
  std::map<int64_t, std::shared_ptr<JobEvents>> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tune::tuner
