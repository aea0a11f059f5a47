// WorkerChannel: how the scheduler talks to one connected worker without touching gRPC. The
// WorkerLink service implements it over the worker's stream; sending never blocks the caller.
#pragma once

#include "tune/v1/worker.pb.h"

namespace tune::tuner {

class WorkerChannel {
 public:
  virtual ~WorkerChannel() = default;

  /// Queues `message` for the worker, in order. False when the channel is closed (the message
  /// is dropped). Never blocks on the network.
  virtual bool Send(v1::DaemonMessage message) = 0;

  /// Ends the worker's stream; its messages still queued are dropped. Idempotent.
  virtual void Close() = 0;
};

}  // namespace tune::tuner
