// tune.v1.Tuner on the daemon: jobs (through the Scheduler) and the tuning log (best records,
// export, import). Every handler maps its absl::Status with ToGrpcStatus and lets no exception
// escape.
#pragma once

#include "db/tuning_log.h"
#include "tune/v1/tuner.grpc.pb.h"
#include "tuner/auth.h"
#include "tuner/scheduler.h"

namespace tune::tuner {

class TunerService final : public v1::Tuner::Service {
 public:
  /// `scheduler`, `log` and `authorizer` must outlive the service. Every call is checked by
  /// `authorizer` first (tune/v1/tuner.proto names the role each needs).
  TunerService(Scheduler* scheduler, TuningLog* log, Authorizer* authorizer)
      : scheduler_(scheduler), log_(log), authorizer_(authorizer) {}

  grpc::Status SubmitJob(grpc::ServerContext* context, const v1::SubmitJobRequest* request,
                         v1::Job* response) override;
  grpc::Status GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                      v1::Job* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const v1::CancelJobRequest* request,
                         v1::Job* response) override;
  grpc::Status WatchJob(grpc::ServerContext* context, const v1::WatchJobRequest* request,
                        grpc::ServerWriter<v1::JobEvent>* writer) override;
  grpc::Status QueryBest(grpc::ServerContext* context, const v1::QueryBestRequest* request,
                         v1::QueryBestResponse* response) override;
  grpc::Status ListWorkers(grpc::ServerContext* context, const v1::ListWorkersRequest* request,
                           v1::ListWorkersResponse* response) override;
  grpc::Status ExportRecords(grpc::ServerContext* context, const v1::ExportRecordsRequest* request,
                             grpc::ServerWriter<v1::Record>* writer) override;
  grpc::Status ImportRecords(grpc::ServerContext* context, grpc::ServerReader<v1::Record>* reader,
                             v1::ImportRecordsResponse* response) override;
  grpc::Status CreateToken(grpc::ServerContext* context, const v1::CreateTokenRequest* request,
                           v1::CreateTokenResponse* response) override;
  grpc::Status RevokeToken(grpc::ServerContext* context, const v1::RevokeTokenRequest* request,
                           v1::TokenInfo* response) override;
  grpc::Status ListTokens(grpc::ServerContext* context, const v1::ListTokensRequest* request,
                          v1::ListTokensResponse* response) override;

 private:
  template <typename Fn>
  grpc::Status Handle(std::string_view method, grpc::ServerContext* context, Role needed,
                      Fn&& body);

  Scheduler* const scheduler_;
  TuningLog* const log_;
  Authorizer* const authorizer_;
};

}  // namespace tune::tuner
