// TunerClient: tune.v1.Tuner for programs (tune-client, tests): one channel, a deadline on every
// call, and absl::Status results (the gRPC code and message, unchanged).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "net/tls.h"
#include "tune/v1/tuner.grpc.pb.h"

namespace tune::tuner {

/// How a client proves who it is: TLS files (net/tls.h) and a token (tune_<id>_<secret>).
struct ClientSecurity {
  net::TlsFiles tls;
  std::string token;
};

class TunerClient {
 public:
  /// Connects lazily to `address` (HOST:PORT) in plaintext with no token; unary calls get
  /// `timeout`.
  TunerClient(std::string address, std::chrono::milliseconds timeout);
  /// The same with TLS and a token; TLS files that cannot be used are InvalidArgument naming the
  /// flag.
  static absl::StatusOr<std::unique_ptr<TunerClient>> Create(std::string address,
                                                             std::chrono::milliseconds timeout,
                                                             ClientSecurity security);

  const std::string& address() const { return address_; }

  absl::StatusOr<v1::Job> SubmitJob(const v1::JobSpec& spec);
  absl::StatusOr<v1::Job> GetJob(uint64_t job_id);
  absl::StatusOr<std::vector<v1::Job>> ListJobs(int limit);
  absl::StatusOr<v1::Job> CancelJob(uint64_t job_id);
  /// Calls `on_event` for every event until the stream ends (OK after a final state) or
  /// `on_event` returns false (Cancelled). The whole watch has `deadline`.
  absl::Status WatchJob(uint64_t job_id, const std::function<bool(const v1::JobEvent&)>& on_event,
                        std::chrono::milliseconds deadline);
  absl::StatusOr<v1::QueryBestResponse> QueryBest(const v1::QueryBestRequest& request);
  absl::StatusOr<std::vector<v1::WorkerInfo>> ListWorkers(bool include_lost);
  /// Calls `on_record` for every exported record; its error stops the export.
  absl::Status ExportRecords(const v1::ExportRecordsRequest& request,
                             const std::function<absl::Status(const v1::Record&)>& on_record,
                             std::chrono::milliseconds deadline);
  /// Streams the records `next` yields (it returns false when there are no more).
  absl::StatusOr<v1::ImportRecordsResponse> ImportRecords(
      const std::function<bool(v1::Record*)>& next, std::chrono::milliseconds deadline);
  /// Admin: creates a token and returns it with its text (shown once).
  absl::StatusOr<v1::CreateTokenResponse> CreateToken(const std::string& name,
                                                      const std::string& role);
  absl::StatusOr<v1::TokenInfo> RevokeToken(const std::string& id);
  absl::StatusOr<std::vector<v1::TokenInfo>> ListTokens();
  absl::StatusOr<std::vector<v1::QuarantineEntry>> ListQuarantine(
      const v1::ListQuarantineRequest& request);
  absl::StatusOr<v1::QuarantineEntry> LiftQuarantine(uint64_t id);
  absl::StatusOr<v1::Job> Reverify(const v1::ReverifyRequest& request);

 private:
  TunerClient(std::string address, std::chrono::milliseconds timeout,
              std::shared_ptr<grpc::ChannelCredentials> credentials, ClientSecurity security);
  /// Sets the call's deadline and its token.
  void SetDeadline(grpc::ClientContext* context, std::chrono::milliseconds timeout) const;

  std::string address_;
  std::string token_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<v1::Tuner::Stub> stub_;
};

}  // namespace tune::tuner
