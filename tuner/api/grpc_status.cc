#include "tuner/api/grpc_status.h"

#include <string>

namespace tune::tuner {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) {
    return grpc::Status::OK;
  }
  // Both enumerations are the canonical codes of google.rpc.Code, value for value.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) {
    return absl::OkStatus();
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

std::string AuthorizationOf(const grpc::ServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  return it == metadata.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

void AddBearerToken(grpc::ClientContext* context, const std::string& token) {
  if (!token.empty()) {
    context->AddMetadata("authorization", "Bearer " + token);
  }
}

}  // namespace tune::tuner
