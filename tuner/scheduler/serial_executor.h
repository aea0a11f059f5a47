// SerialExecutor: one thread that runs posted tasks one at a time, in the order they were
// posted. The scheduler keeps two: its log writer, through which every durable write goes (a
// trial's record with its job's progress, a job's state), so that fsyncs never hold up
// heartbeats, results or dispatch and the writes of one job reach the disk in the order they
// were decided; and its planner, which runs the searches (proposals), so that search work never
// runs under the scheduler's lock or on a worker's stream. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace tune::tuner {

class SerialExecutor {
 public:
  /// Starts the thread.
  SerialExecutor();
  /// Stop().
  ~SerialExecutor();
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;

  /// Runs `task` on the executor's thread after every task posted before it. After Stop() the task
  /// is dropped and false returned.
  bool Post(std::function<void()> task);

  /// Returns once every task posted before the call has run (at once after Stop()).
  void Flush();

  /// Runs the tasks already posted, then ends the thread; later Posts are dropped. Idempotent.
  void Stop();

  /// Tasks posted and not finished.
  size_t Pending() const;

 private:
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable cv_;       // a task was posted, or stopping
  std::condition_variable done_cv_;  // a task finished
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  uint64_t posted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t finished_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;  // the thread returned
  std::thread thread_;
};

}  // namespace tune::tuner
