// tune.v1.WorkerLink on the daemon: one long-lived stream per worker. The handler reads the
// worker's messages (Register first, then results and heartbeats) and hands them to the
// Scheduler; a writer thread per stream sends what the scheduler queues (Registered, requests,
// cancels), so the scheduler never blocks on a slow worker.
#pragma once

#include "tune/v1/worker.grpc.pb.h"
#include "tuner/auth/auth.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {

class WorkerLinkService final : public v1::WorkerLink::Service {
 public:
  /// `scheduler` and `authorizer` must outlive the service.
  WorkerLinkService(Scheduler* scheduler, Authorizer* authorizer)
      : scheduler_(scheduler), authorizer_(authorizer) {}

  /// UNAUTHENTICATED / PERMISSION_DENIED when tokens are on and the call's token is not a
  /// worker's (or an admin's); INVALID_ARGUMENT when the first message is not a valid Register
  /// (naming the field); UNAVAILABLE when the daemon stops; OK when the worker ends the stream.
  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::DaemonMessage, v1::WorkerMessage>* stream) override;

 private:
  Scheduler* const scheduler_;
  Authorizer* const authorizer_;
};

}  // namespace tune::tuner
