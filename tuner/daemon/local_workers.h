// LocalWorkers: the `--local-workers N` mode of tune-daemon. It starts N tune-server processes
// that dial the daemon on loopback, restarts any that dies (with a growing delay), and stops
// them all when the daemon stops. The children get SIGTERM if the daemon itself dies
// (PR_SET_PDEATHSIG), so no worker outlives a killed daemon.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"

namespace tune::tuner {

struct LocalWorkerOptions {
  /// The tune-server executable.
  std::string binary;
  /// How many workers.
  int count = 1;
  /// The daemon's address, HOST:PORT.
  std::string daemon_address;
  /// Passed as --log-level when not empty.
  std::string log_level;
  /// Appended to every worker's arguments.
  std::vector<std::string> extra_args = {};
  /// "NAME=value" entries added to every worker's environment (its token: never in argv, where
  /// any user could read it).
  std::vector<std::string> env = {};
};

/// The tune-server next to the running executable, else `tune-server` on PATH; NotFound naming
/// both places when there is none.
absl::StatusOr<std::string> FindWorkerBinary();

class LocalWorkers {
 public:
  /// Checks that the binary is executable (NotFound / FailedPrecondition naming it) and starts
  /// the workers from a supervising thread.
  static absl::StatusOr<std::unique_ptr<LocalWorkers>> Start(LocalWorkerOptions options);

  /// Stop().
  ~LocalWorkers();
  LocalWorkers(const LocalWorkers&) = delete;
  LocalWorkers& operator=(const LocalWorkers&) = delete;

  /// SIGTERM to every worker, SIGKILL to those still alive after 3 s; waits for them.
  /// Idempotent.
  void Stop();

  /// Pids of the running workers (for logs and tests).
  std::vector<pid_t> Pids() const;

 private:
  explicit LocalWorkers(LocalWorkerOptions options) : options_(std::move(options)) {}
  void Supervise();
  pid_t Spawn(int index);

  const LocalWorkerOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<pid_t> pids_ ABSL_GUARDED_BY(mu_);  // -1 while a worker is down
  std::thread supervisor_;
};

}  // namespace tune::tuner
