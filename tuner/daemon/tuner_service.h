// tune.v1.Tuner on the daemon: jobs (through the Scheduler) and the tuning log (best records,
// export, import). Every handler maps its absl::Status with ToGrpcStatus and lets no exception
// escape.
//
// Every call's token is checked from its metadata before its request is read: the unary and
// server-streaming methods are served in gRPC's "streamed" forms (the core reads no request
// before the handler runs; the handler reads it once the token passed), and the client-streaming
// ImportRecords reads nothing before its handler does anyway. An unauthenticated caller thus
// costs the daemon its metadata, never a message.
#pragma once

#include <cstdlib>

#include "db/tuning_log.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/method_handler.h"
#include "tune/v1/tuner.grpc.pb.h"
#include "tuner/auth/auth.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {

/// ImportRecords with its messages read raw (as the generated `WithStreamedUnaryMethod_*`
/// classes replace a method's handler): a message that does not parse is then told from the end
/// of the stream, which the generated reader cannot do (its Read returns false for both).
template <class Base>
class WithRawImportRecords : public Base {
 public:
  /// ImportRecords' index in tune.v1.Tuner (the order of proto/tune/v1/tuner.proto's rpcs, as
  /// the generated code numbers them); the import tests fail if it is wrong.
  static constexpr int kMethodIndex = 8;

  WithRawImportRecords() {
    grpc::Service::MarkMethodStreamed(
        kMethodIndex,
        new grpc::internal::ClientStreamingHandler<WithRawImportRecords, grpc::ByteBuffer,
                                                   v1::ImportRecordsResponse>(
            [](WithRawImportRecords* service, grpc::ServerContext* context,
               grpc::ServerReader<grpc::ByteBuffer>* reader, v1::ImportRecordsResponse* response) {
              return service->RawImportRecords(context, reader, response);
            },
            this));
  }
  grpc::Status ImportRecords(grpc::ServerContext*, grpc::ServerReader<v1::Record>*,
                             v1::ImportRecordsResponse*) final {
    std::abort();  // replaced by RawImportRecords, as the generated streamed forms do
  }
  virtual grpc::Status RawImportRecords(grpc::ServerContext* context,
                                        grpc::ServerReader<grpc::ByteBuffer>* reader,
                                        v1::ImportRecordsResponse* response) = 0;
};

class TunerService final : public WithRawImportRecords<v1::Tuner::StreamedService> {
 public:
  /// `scheduler`, `log` and `authorizer` must outlive the service. Every call is checked by
  /// `authorizer` first (tune/v1/tuner.proto names the role each needs).
  TunerService(Scheduler* scheduler, TuningLog* log, Authorizer* authorizer)
      : scheduler_(scheduler), log_(log), authorizer_(authorizer) {}

  template <typename Request, typename Response>
  using Unary = grpc::ServerUnaryStreamer<Request, Response>;

  grpc::Status StreamedSubmitJob(grpc::ServerContext* context,
                                 Unary<v1::SubmitJobRequest, v1::Job>* call) override;
  grpc::Status StreamedGetJob(grpc::ServerContext* context,
                              Unary<v1::GetJobRequest, v1::Job>* call) override;
  grpc::Status StreamedListJobs(grpc::ServerContext* context,
                                Unary<v1::ListJobsRequest, v1::ListJobsResponse>* call) override;
  /// Writes an audit line (logger "audit") naming the caller and the job's submitter.
  grpc::Status StreamedCancelJob(grpc::ServerContext* context,
                                 Unary<v1::CancelJobRequest, v1::Job>* call) override;
  grpc::Status StreamedWatchJob(
      grpc::ServerContext* context,
      grpc::ServerSplitStreamer<v1::WatchJobRequest, v1::JobEvent>* call) override;
  grpc::Status StreamedQueryBest(grpc::ServerContext* context,
                                 Unary<v1::QueryBestRequest, v1::QueryBestResponse>* call) override;
  grpc::Status StreamedListWorkers(
      grpc::ServerContext* context,
      Unary<v1::ListWorkersRequest, v1::ListWorkersResponse>* call) override;
  grpc::Status StreamedExportRecords(
      grpc::ServerContext* context,
      grpc::ServerSplitStreamer<v1::ExportRecordsRequest, v1::Record>* call) override;
  /// All or nothing: a message that is not a Record fails the import (INVALID_ARGUMENT) and
  /// nothing is added; records that parse but are not valid are counted as rejected. Writes an
  /// audit line.
  grpc::Status RawImportRecords(grpc::ServerContext* context,
                                grpc::ServerReader<grpc::ByteBuffer>* reader,
                                v1::ImportRecordsResponse* response) override;
  /// Token calls need an admin token, also on a daemon without tokens (auth.h); creating and
  /// revoking write audit lines.
  grpc::Status StreamedCreateToken(
      grpc::ServerContext* context,
      Unary<v1::CreateTokenRequest, v1::CreateTokenResponse>* call) override;
  grpc::Status StreamedRevokeToken(grpc::ServerContext* context,
                                   Unary<v1::RevokeTokenRequest, v1::TokenInfo>* call) override;
  grpc::Status StreamedListTokens(
      grpc::ServerContext* context,
      Unary<v1::ListTokensRequest, v1::ListTokensResponse>* call) override;
  grpc::Status StreamedListQuarantine(
      grpc::ServerContext* context,
      Unary<v1::ListQuarantineRequest, v1::ListQuarantineResponse>* call) override;
  /// Needs an admin token; writes an audit line.
  grpc::Status StreamedLiftQuarantine(
      grpc::ServerContext* context,
      Unary<v1::LiftQuarantineRequest, v1::QuarantineEntry>* call) override;
  /// Needs a submit token; writes an audit line.
  grpc::Status StreamedReverify(grpc::ServerContext* context,
                                Unary<v1::ReverifyRequest, v1::Job>* call) override;

 private:
  template <typename Fn>
  grpc::Status Handle(std::string_view method, grpc::ServerContext* context, Role needed,
                      Fn&& body);
  template <typename Request, typename Stream, typename Fn>
  grpc::Status HandleRequest(std::string_view method, grpc::ServerContext* context, Role needed,
                             Stream* call, Fn&& body);

  Scheduler* const scheduler_;
  TuningLog* const log_;
  Authorizer* const authorizer_;
};

}  // namespace tune::tuner
