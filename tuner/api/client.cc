#include "tuner/api/client.h"

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "tuner/api/grpc_status.h"

namespace tune::tuner {
namespace {

constexpr int kMaxMessageBytes = 256 << 20;

}  // namespace

TunerClient::TunerClient(std::string address, std::chrono::milliseconds timeout)
    : TunerClient(std::move(address), timeout, grpc::InsecureChannelCredentials(), {}) {}

TunerClient::TunerClient(std::string address, std::chrono::milliseconds timeout,
                         std::shared_ptr<grpc::ChannelCredentials> credentials,
                         ClientSecurity security)
    : address_(std::move(address)), token_(std::move(security.token)), timeout_(timeout) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  net::ApplyServerName(security.tls, &args);
  stub_ = v1::Tuner::NewStub(grpc::CreateCustomChannel(address_, credentials, args));
}

absl::StatusOr<std::unique_ptr<TunerClient>> TunerClient::Create(std::string address,
                                                                 std::chrono::milliseconds timeout,
                                                                 ClientSecurity security) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      net::ChannelCredentialsFor(security.tls);
  if (!credentials.ok()) {
    return credentials.status();
  }
  return std::unique_ptr<TunerClient>(
      new TunerClient(std::move(address), timeout, *credentials, std::move(security)));
}

void TunerClient::SetDeadline(grpc::ClientContext* context,
                              std::chrono::milliseconds timeout) const {
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  AddBearerToken(context, token_);
}

absl::StatusOr<v1::Job> TunerClient::SubmitJob(const v1::JobSpec& spec) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  v1::Job job;
  grpc::Status status = stub_->SubmitJob(&context, request, &job);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return job;
}

absl::StatusOr<v1::Job> TunerClient::GetJob(uint64_t job_id) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  grpc::Status status = stub_->GetJob(&context, request, &job);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return job;
}

absl::StatusOr<std::vector<v1::Job>> TunerClient::ListJobs(int limit) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::ListJobsRequest request;
  request.set_limit(limit);
  v1::ListJobsResponse response;
  grpc::Status status = stub_->ListJobs(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return std::vector<v1::Job>(response.jobs().begin(), response.jobs().end());
}

absl::StatusOr<v1::Job> TunerClient::CancelJob(uint64_t job_id) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::CancelJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  grpc::Status status = stub_->CancelJob(&context, request, &job);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return job;
}

absl::Status TunerClient::WatchJob(uint64_t job_id,
                                   const std::function<bool(const v1::JobEvent&)>& on_event,
                                   std::chrono::milliseconds deadline) {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  v1::WatchJobRequest request;
  request.set_job_id(job_id);
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader = stub_->WatchJob(&context, request);
  v1::JobEvent event;
  bool stopped = false;
  while (reader->Read(&event)) {
    if (!on_event(event)) {
      stopped = true;
      context.TryCancel();
      break;
    }
  }
  grpc::Status status = reader->Finish();
  if (stopped) {
    return absl::CancelledError("stopped watching");
  }
  return FromGrpcStatus(status);
}

absl::StatusOr<v1::QueryBestResponse> TunerClient::QueryBest(const v1::QueryBestRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::QueryBestResponse response;
  grpc::Status status = stub_->QueryBest(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return response;
}

absl::StatusOr<std::vector<v1::WorkerInfo>> TunerClient::ListWorkers(bool include_lost) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::ListWorkersRequest request;
  request.set_include_lost(include_lost);
  v1::ListWorkersResponse response;
  grpc::Status status = stub_->ListWorkers(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return std::vector<v1::WorkerInfo>(response.workers().begin(), response.workers().end());
}

absl::Status TunerClient::ExportRecords(
    const v1::ExportRecordsRequest& request,
    const std::function<absl::Status(const v1::Record&)>& on_record,
    std::chrono::milliseconds deadline) {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  std::unique_ptr<grpc::ClientReader<v1::Record>> reader = stub_->ExportRecords(&context, request);
  v1::Record record;
  absl::Status failed;
  while (reader->Read(&record)) {
    failed = on_record(record);
    if (!failed.ok()) {
      context.TryCancel();
      break;
    }
  }
  grpc::Status status = reader->Finish();
  if (!failed.ok()) {
    return failed;
  }
  return FromGrpcStatus(status);
}

absl::StatusOr<v1::ImportRecordsResponse> TunerClient::ImportRecords(
    const std::function<bool(v1::Record*)>& next, std::chrono::milliseconds deadline) {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  v1::ImportRecordsResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::Record>> writer =
      stub_->ImportRecords(&context, &response);
  v1::Record record;
  while (next(&record)) {
    if (!writer->Write(record)) {
      break;  // the call failed; Finish says why
    }
    record.Clear();
  }
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return response;
}

absl::StatusOr<v1::CreateTokenResponse> TunerClient::CreateToken(const std::string& name,
                                                                 const std::string& role) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::CreateTokenRequest request;
  request.set_name(name);
  request.set_role(role);
  v1::CreateTokenResponse response;
  grpc::Status status = stub_->CreateToken(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return response;
}

absl::StatusOr<v1::TokenInfo> TunerClient::RevokeToken(const std::string& id) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::RevokeTokenRequest request;
  request.set_id(id);
  v1::TokenInfo response;
  grpc::Status status = stub_->RevokeToken(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return response;
}

absl::StatusOr<std::vector<v1::TokenInfo>> TunerClient::ListTokens() {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::ListTokensResponse response;
  grpc::Status status = stub_->ListTokens(&context, v1::ListTokensRequest(), &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return std::vector<v1::TokenInfo>(response.tokens().begin(), response.tokens().end());
}

absl::StatusOr<std::vector<v1::QuarantineEntry>> TunerClient::ListQuarantine(
    const v1::ListQuarantineRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::ListQuarantineResponse response;
  grpc::Status status = stub_->ListQuarantine(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return std::vector<v1::QuarantineEntry>(response.entries().begin(), response.entries().end());
}

absl::StatusOr<v1::QuarantineEntry> TunerClient::LiftQuarantine(uint64_t id) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::LiftQuarantineRequest request;
  request.set_id(id);
  v1::QuarantineEntry response;
  grpc::Status status = stub_->LiftQuarantine(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return response;
}

absl::StatusOr<v1::Job> TunerClient::Reverify(const v1::ReverifyRequest& request) {
  grpc::ClientContext context;
  SetDeadline(&context, timeout_);
  v1::Job response;
  grpc::Status status = stub_->Reverify(&context, request, &response);
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  return response;
}

}  // namespace tune::tuner
