// The one place where absl::Status and grpc::Status meet: abseil's canonical codes map 1:1 to
// gRPC's.
#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace tune::tuner {

/// The gRPC status with the same code and message (OK for OK).
grpc::Status ToGrpcStatus(const absl::Status& status);

/// The absl status with the same code and message (OK for OK).
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace tune::tuner
