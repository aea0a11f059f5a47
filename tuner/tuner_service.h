// tune.v1.Tuner on the daemon: jobs (through the Scheduler) and the tuning log (best records,
// export, import). Every handler maps its absl::Status with ToGrpcStatus and lets no exception
// escape.
#pragma once

#include "db/tuning_log.h"
#include "tune/v1/tuner.grpc.pb.h"
#include "tuner/scheduler.h"

namespace tune::tuner {

class TunerService final : public v1::Tuner::Service {
 public:
  /// `scheduler` and `log` must outlive the service.
  TunerService(Scheduler* scheduler, TuningLog* log) : scheduler_(scheduler), log_(log) {}

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

 private:
  Scheduler* const scheduler_;
  TuningLog* const log_;
};

}  // namespace tune::tuner
