// The one place where absl::Status and grpc::Status meet: abseil's canonical codes map 1:1 to
// gRPC's. Also where a call's bearer token is read from and written to gRPC metadata.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace tune::tuner {

/// The gRPC status with the same code and message (OK for OK).
grpc::Status ToGrpcStatus(const absl::Status& status);

/// The absl status with the same code and message (OK for OK).
absl::Status FromGrpcStatus(const grpc::Status& status);

/// The `authorization` metadata of a call as the server received it ("" when it has none).
std::string AuthorizationOf(const grpc::ServerContext& context);

/// Sends `token` (tune_<id>_<secret>) as `authorization: Bearer <token>`; nothing when empty.
void AddBearerToken(grpc::ClientContext* context, const std::string& token);

}  // namespace tune::tuner
