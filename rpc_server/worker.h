// The worker's side of tune.v1.WorkerLink: dials the daemon, registers, measures the requests
// it receives (one per measurement slot, through a MeasureSupervisor each), sends results and
// heartbeats, and reconnects with exponential backoff whenever the stream breaks or the daemon
// is not up, until Shutdown(). A request names its code by hash: the worker asks the daemon for
// the code only when its artifact cache does not hold it. When the worker itself cannot measure
// a request (no measurement process, no code, a cache it cannot write), it answers with a
// worker_error, never with a verdict on the kernel.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "net/tls.h"
#include "rpc_server/artifact_cache.h"
#include "rpc_server/supervisor.h"
#include "tune/v1/worker.grpc.pb.h"

namespace tune::rpc {

struct WorkerOptions {
  /// The daemon's WorkerLink address, HOST:PORT.
  std::string daemon_address;
  /// TLS: the daemon's certificate must be signed by tls.ca before the stream opens; the worker
  /// presents tls.cert. Empty: plaintext.
  net::TlsFiles tls;
  /// Sent as `authorization: Bearer <token>` on every stream (a worker or admin token), when set.
  std::string token;
  /// Sent first on every stream: name, device key, capabilities (capabilities.capacity is the
  /// number of measurement slots; 0 means 1).
  v1::Register registration;
  /// Options of every slot's supervisor.
  SupervisorOptions supervisor;
  /// Where artifact code is cached; empty means DefaultArtifactCacheDir().
  std::string cache_dir;
  /// The cache directory's size limit.
  int64_t cache_max_bytes = ArtifactCache::kDefaultMaxBytes;
  /// How long a slot waits for the daemon to answer a FetchArtifact.
  int fetch_timeout_ms = 60000;
  /// Reconnect delay: starts here, doubles after each failed attempt up to the maximum, and is
  /// jittered by +-20%. A successful registration resets it.
  int initial_backoff_ms = 100;
  int max_backoff_ms = 5000;
};

class Worker {
 public:
  /// Checks the options (InvalidArgument naming the field; TLS files that cannot be read or are
  /// not PEM, naming the flag), opens the artifact cache (failing as
  /// ArtifactCache::Open does) and creates the supervisors (failing as MeasureSupervisor::Create
  /// does). Connects to nothing yet.
  static absl::StatusOr<std::unique_ptr<Worker>> Create(WorkerOptions options);

  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Serves until Shutdown(): connects, registers, measures, reconnects. Returns OK after
  /// Shutdown. Call once.
  absl::Status Run();

  /// Makes Run() return soon: ends the stream and stops running measurements. Thread-safe; not
  /// async-signal-safe (call it from a thread that waited for the signal).
  void Shutdown();

 private:
  struct Session;
  struct Task {
    v1::MeasureRequest request;
    std::shared_ptr<Session> session;
    std::chrono::steady_clock::time_point received;
  };
  struct Running {
    uint64_t trial_id = 0;
    std::shared_ptr<Session> session;
  };
  // A FetchArtifact in progress; every slot that needs the same code waits for one answer.
  struct Fetch {
    bool answered = false;
    v1::ArtifactCodeReply reply;
  };

  Worker(WorkerOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials);

  /// Waits up to `budget` for the channel to the daemon to be connected. With `dial_now` it
  /// dials at once (the channel's reconnection backoff reset); otherwise the channel redials on
  /// its own exponential backoff (initial_backoff_ms growing to max_backoff_ms), so that a daemon
  /// that refuses every connection (TLS) is dialed ever less often, not several times a second.
  /// False when it is not connected, or on Shutdown().
  bool WaitForDaemon(std::chrono::milliseconds budget, bool dial_now);
  /// One stream from dial to end. Returns true when the daemon accepted the registration.
  bool RunSession();
  void Handle(const v1::DaemonMessage& message, const std::shared_ptr<Session>& session);
  void HeartbeatLoop(std::shared_ptr<Session> session, std::chrono::milliseconds interval);
  void ExecutorLoop(size_t slot);
  /// The path of the task's code in the cache, fetching it from the daemon when it is missing.
  /// Any error is the worker's (Unavailable, DataLoss, Internal), sent as a worker_error.
  absl::StatusOr<CachedCode> CodeOf(const Task& task);
  /// The outcome of one task: a verdict, a worker_error, or nothing when it was cancelled.
  std::optional<v1::MeasureResult> Execute(size_t slot, const Task& task);
  /// Drops the queued trials of `session` and stops its running ones.
  void EndSession(const std::shared_ptr<Session>& session);

  WorkerOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerLink::Stub> stub_;
  std::unique_ptr<ArtifactCache> cache_;
  std::vector<std::unique_ptr<MeasureSupervisor>> supervisors_;
  std::vector<std::thread> executors_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<Session> session_ ABSL_GUARDED_BY(mu_);
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::optional<Running>> running_ ABSL_GUARDED_BY(mu_);            // one per slot
  std::map<std::string, std::shared_ptr<Fetch>> fetches_ ABSL_GUARDED_BY(mu_);  // by hash
};

}  // namespace tune::rpc
