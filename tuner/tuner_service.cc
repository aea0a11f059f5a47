#include "tuner/tuner_service.h"

#include <exception>
#include <sstream>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/record_json.h"
#include "tuner/grpc_status.h"
#include "tuner/proto_convert.h"

namespace tune::tuner {
namespace {

// Records read from the log per query while exporting.
constexpr int64_t kExportPage = 1000;
// Records imported per transaction.
constexpr size_t kImportChunk = 5000;
// Rejection reasons returned by ImportRecords.
constexpr size_t kMaxImportErrors = 10;
// Upper bound of QueryBest.top_k.
constexpr int kMaxTopK = 1000;

// Runs a handler body: its Status becomes the call's; an exception becomes INTERNAL.
template <typename Fn>
grpc::Status Handle(std::string_view method, Fn&& body) {
  try {
    absl::Status status = body();
    if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument &&
        status.code() != absl::StatusCode::kNotFound &&
        status.code() != absl::StatusCode::kFailedPrecondition &&
        status.code() != absl::StatusCode::kCancelled) {
      Logger("daemon")->warn("{}: {}", method, status);
    }
    return ToGrpcStatus(status);
  } catch (const std::exception& e) {
    Logger("daemon")->error("{} failed: {}", method, e.what());
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        StrCat("daemon error in ", method, ": ", e.what()));
  }
}

absl::StatusOr<std::string> DeviceKeyOf(const v1::QueryBestRequest& request) {
  if (!request.device_key().empty()) {
    return request.device_key();
  }
  if (request.target().empty()) {
    return absl::InvalidArgumentError(
        "device_key: empty, and no target given; set device_key (e.g. 'cpu/x86_64/znver4') or "
        "target (e.g. 'llvm -mcpu=native')");
  }
  absl::StatusOr<Target> target = Target::Parse(request.target());
  if (!target.ok()) {
    return absl::InvalidArgumentError(StrCat("target: ", std::string(target.status().message())));
  }
  return target->Resolved().DeviceKey();
}

}  // namespace

grpc::Status TunerService::SubmitJob(grpc::ServerContext* context,
                                     const v1::SubmitJobRequest* request, v1::Job* response) {
  return Handle("SubmitJob", [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, scheduler_->SubmitJob(request->spec(), context->peer()));
    return absl::OkStatus();
  });
}

grpc::Status TunerService::GetJob(grpc::ServerContext*, const v1::GetJobRequest* request,
                                  v1::Job* response) {
  return Handle("GetJob", [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, scheduler_->GetJob(request->job_id()));
    return absl::OkStatus();
  });
}

grpc::Status TunerService::ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* request,
                                    v1::ListJobsResponse* response) {
  return Handle("ListJobs", [&]() -> absl::Status {
    std::vector<JobState> states;
    for (int s : request->states()) {
      ASSIGN_OR_RETURN(JobState state, JobStateFromProto(static_cast<v1::JobState>(s), "states"));
      states.push_back(state);
    }
    ASSIGN_OR_RETURN(std::vector<v1::Job> jobs, scheduler_->ListJobs(states, request->limit()));
    for (v1::Job& job : jobs) {
      *response->add_jobs() = std::move(job);
    }
    return absl::OkStatus();
  });
}

grpc::Status TunerService::CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* request,
                                     v1::Job* response) {
  return Handle("CancelJob", [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, scheduler_->CancelJob(request->job_id()));
    return absl::OkStatus();
  });
}

grpc::Status TunerService::WatchJob(grpc::ServerContext* context,
                                    const v1::WatchJobRequest* request,
                                    grpc::ServerWriter<v1::JobEvent>* writer) {
  return Handle("WatchJob", [&]() -> absl::Status {
    return scheduler_->WatchJob(
        request->job_id(), [&](const v1::JobEvent& event) { return writer->Write(event); },
        [&] { return context->IsCancelled(); });
  });
}

grpc::Status TunerService::QueryBest(grpc::ServerContext*, const v1::QueryBestRequest* request,
                                     v1::QueryBestResponse* response) {
  return Handle("QueryBest", [&]() -> absl::Status {
    BestQuery query;
    ASSIGN_OR_RETURN(query.workload, CanonicalWorkload(request->workload(), "workload"));
    ASSIGN_OR_RETURN(query.device_key, DeviceKeyOf(*request));
    if (request->template_version() < 0) {
      return absl::InvalidArgumentError(StrCat("template_version: ", request->template_version(),
                                               " is negative; expected 0 (any) or a version"));
    }
    if (request->template_version() > 0) {
      query.template_version = request->template_version();
    }
    if (!request->tune_version().empty()) {
      query.tune_version = request->tune_version();
    }
    if (request->top_k() < 0 || request->top_k() > kMaxTopK) {
      return absl::InvalidArgumentError(
          StrCat("top_k: ", request->top_k(), " is out of range; expected 0 (one) to ", kMaxTopK));
    }
    ASSIGN_OR_RETURN(std::vector<Record> records,
                     log_->QueryTopK(query, std::max(1, request->top_k())));
    if (records.empty()) {
      return absl::NotFoundError(
          StrCat("no successful record for ", query.workload, " on ", query.device_key));
    }
    for (const Record& record : records) {
      *response->add_records() = RecordToProto(record);
    }
    return absl::OkStatus();
  });
}

grpc::Status TunerService::ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest* request,
                                       v1::ListWorkersResponse* response) {
  return Handle("ListWorkers", [&]() -> absl::Status {
    for (v1::WorkerInfo& info : scheduler_->ListWorkers(request->include_lost())) {
      *response->add_workers() = std::move(info);
    }
    return absl::OkStatus();
  });
}

grpc::Status TunerService::ExportRecords(grpc::ServerContext* context,
                                         const v1::ExportRecordsRequest* request,
                                         grpc::ServerWriter<v1::Record>* writer) {
  return Handle("ExportRecords", [&]() -> absl::Status {
    RecordFilter filter;
    if (!request->workload().empty()) {
      ASSIGN_OR_RETURN(filter.workload, CanonicalWorkload(request->workload(), "workload"));
    }
    if (!request->device_key().empty()) {
      filter.device_key = request->device_key();
    }
    filter.limit = kExportPage;
    while (true) {
      ASSIGN_OR_RETURN(std::vector<Record> page, log_->ListRecords(filter));
      for (const Record& record : page) {
        if (!request->include_failures() && !record.measurement.ok()) {
          continue;
        }
        if (!writer->Write(RecordToProto(record))) {
          return absl::CancelledError("the client stopped reading the export");
        }
      }
      if (static_cast<int64_t>(page.size()) < kExportPage) {
        return absl::OkStatus();
      }
      if (context->IsCancelled()) {
        return absl::CancelledError("the export was cancelled");
      }
      filter.after_id = page.back().id;
    }
  });
}

grpc::Status TunerService::ImportRecords(grpc::ServerContext*,
                                         grpc::ServerReader<v1::Record>* reader,
                                         v1::ImportRecordsResponse* response) {
  return Handle("ImportRecords", [&]() -> absl::Status {
    std::ostringstream chunk;
    size_t lines = 0;
    auto flush = [&]() -> absl::Status {
      if (lines == 0) {
        return absl::OkStatus();
      }
      std::istringstream in(chunk.str());
      ASSIGN_OR_RETURN(TuningLog::ImportStats stats, log_->ImportJsonl(in));
      response->set_imported(response->imported() + stats.imported);
      response->set_duplicates(response->duplicates() + stats.skipped_duplicates);
      chunk.str("");
      lines = 0;
      return absl::OkStatus();
    };
    auto reject = [&](const v1::Record& proto, const absl::Status& why) {
      response->set_rejected(response->rejected() + 1);
      if (static_cast<size_t>(response->errors_size()) < kMaxImportErrors) {
        response->add_errors(StrCat("record ", proto.uid().empty() ? "(no uid)" : proto.uid(), ": ",
                                    std::string(why.message())));
      }
    };
    v1::Record proto;
    while (reader->Read(&proto)) {
      absl::StatusOr<Record> record = RecordFromProto(proto);
      if (!record.ok()) {
        reject(proto, record.status());
        continue;
      }
      // An imported record needs its own uid: that is what makes a second import a no-op.
      if (record->uid.empty()) {
        reject(proto,
               absl::InvalidArgumentError("record.uid: is empty; exported records carry one"));
        continue;
      }
      if (absl::Status valid = CanonicalizeRecord(*record); !valid.ok()) {
        reject(proto, valid);
        continue;
      }
      chunk << RecordToJsonLine(*record) << '\n';
      if (++lines >= kImportChunk) {
        RETURN_IF_ERROR(flush());
      }
    }
    RETURN_IF_ERROR(flush());
    Logger("daemon")->info("import: {} added, {} already present, {} rejected",
                           response->imported(), response->duplicates(), response->rejected());
    return absl::OkStatus();
  });
}

}  // namespace tune::tuner
