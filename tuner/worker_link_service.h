// tune.v1.WorkerLink on the daemon: one long-lived stream per worker. The handler reads the
// worker's messages (Register first, then results and heartbeats) and hands them to the
// Scheduler; a writer thread per stream sends what the scheduler queues (Registered, requests,
// cancels), so the scheduler never blocks on a slow worker.
#pragma once

#include "tune/v1/worker.grpc.pb.h"
#include "tuner/scheduler.h"

namespace tune::tuner {

class WorkerLinkService final : public v1::WorkerLink::Service {
 public:
  /// `scheduler` must outlive the service.
  explicit WorkerLinkService(Scheduler* scheduler) : scheduler_(scheduler) {}

  /// INVALID_ARGUMENT when the first message is not a valid Register (naming the field);
  /// UNAVAILABLE when the daemon stops; OK when the worker ends the stream.
  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::DaemonMessage, v1::WorkerMessage>* stream) override;

 private:
  Scheduler* const scheduler_;
};

}  // namespace tune::tuner
