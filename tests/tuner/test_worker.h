// A worker on the far side of the scheduler's WorkerChannel seam, driven by the test: it keeps
// every message the scheduler sends it and lets the test wait for them and answer. The
// scheduler under test is real (real tuning log, real builder processes); only the gRPC stream
// is replaced, as the daemon's WorkerLink service would drive it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tuner/scheduler/scheduler.h"
#include "tuner/scheduler/worker_channel.h"

namespace tune::tuner::testing {

class TestWorker final : public WorkerChannel {
 public:
  TestWorker() = default;
  /// Leaves the scheduler (as a broken stream would) if still registered.
  ~TestWorker() override;
  TestWorker(const TestWorker&) = delete;
  TestWorker& operator=(const TestWorker&) = delete;

  bool Send(v1::DaemonMessage message) override;
  void Close() override;

  /// Registers with `scheduler` as `name` (device key of this host, `threads` kernel threads,
  /// capacity `capacity`, the given preloaded library file names, a machine of `cores` cores; 0:
  /// not said). Fails the test on error.
  void Register(Scheduler& scheduler, const std::string& name, int threads = 1, int capacity = 1,
                const std::vector<std::string>& preloaded = {}, int cores = 0);

  /// Registers with `scheduler` as `reg` says (a device key and CPU features other than this
  /// host's). Fails the test on error.
  void Register(Scheduler& scheduler, const v1::Register& reg);

  /// The next MeasureRequest, waiting up to `timeout` for it; nullopt if none came.
  std::optional<v1::MeasureRequest> NextRequest(
      std::chrono::milliseconds timeout = std::chrono::seconds(120));
  /// True when no request is waiting.
  bool NoRequestWaiting();
  /// Trial ids the scheduler cancelled on this worker.
  std::vector<uint64_t> Cancels();
  /// Sends FetchArtifact for `hash` and returns the scheduler's answer.
  v1::ArtifactCodeReply Fetch(const std::string& hash);
  bool closed();

  /// Answers a request with a correct measurement of `secs` per call.
  void Answer(const v1::MeasureRequest& request, double secs);
  /// Answers a request with a failed measurement of `kind`.
  void AnswerFailure(const v1::MeasureRequest& request, v1::ErrorKind kind,
                     const std::string& message);
  /// Answers a request with a worker_error.
  void Fail(const v1::MeasureRequest& request, const std::string& why);
  /// A heartbeat listing `in_flight`.
  void Beat(const std::vector<uint64_t>& in_flight);
  /// Ends the stream as the WorkerLink service does when it breaks.
  void Disconnect(const std::string& reason);

  const std::string& id() const { return id_; }

 private:
  Scheduler* scheduler_ = nullptr;
  std::string id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::MeasureRequest> requests_;
  std::vector<uint64_t> cancels_;
  std::deque<v1::ArtifactCodeReply> code_replies_;
  bool closed_ = false;
};

/// The device key of this host's CPU.
std::string HostDeviceKey();

}  // namespace tune::tuner::testing
