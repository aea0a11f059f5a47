#include "tuner/tuner_service.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/record_json.h"
#include "tuner/grpc_status.h"
#include "tuner/proto_convert.h"
#include "tuner/record_queries.h"

namespace tune::tuner {
namespace {

// Records read from the log per query while exporting.
constexpr int64_t kExportPage = 1000;
// Rejection reasons returned by ImportRecords.
constexpr size_t kMaxImportErrors = 10;

}  // namespace

// Checks the call's token for `needed`, then runs a handler body: its Status becomes the call's;
// an exception becomes INTERNAL.
template <typename Fn>
grpc::Status TunerService::Handle(std::string_view method, grpc::ServerContext* context,
                                  Role needed, Fn&& body) {
  try {
    absl::StatusOr<Caller> caller = authorizer_->Check(AuthorizationOf(*context), needed);
    if (!caller.ok()) {
      Logger("daemon")->warn("{} from {} denied: {}", method, context->peer(),
                             caller.status().message());
      return ToGrpcStatus(caller.status());
    }
    absl::Status status = body(*caller);
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

namespace {

// A temporary file of JSON lines, removed when the object goes away.
class SpoolFile {
 public:
  static absl::StatusOr<SpoolFile> Create() {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
    std::string path = ((ec ? std::filesystem::path("/tmp") : dir) / "tune-import-XXXXXX").string();
    int fd = mkstemp(path.data());
    if (fd < 0) {
      return absl::UnavailableError(
          StrCat("import: cannot create a temporary file ", path, ": ", std::strerror(errno)));
    }
    close(fd);
    return SpoolFile(std::move(path));
  }
  SpoolFile(SpoolFile&& other) noexcept
      : path_(std::move(other.path_)), out_(std::move(other.out_)) {
    other.path_.clear();
  }
  SpoolFile& operator=(SpoolFile&&) = delete;
  ~SpoolFile() {
    if (!path_.empty()) {
      std::remove(path_.c_str());
    }
  }

  absl::Status Append(const std::string& line) {
    out_ << line << '\n';
    if (!out_) {
      return absl::UnavailableError(StrCat("import: cannot write the temporary file ", path_));
    }
    return absl::OkStatus();
  }

  /// Everything appended, from the start.
  absl::StatusOr<std::unique_ptr<std::istream>> Reader() {
    out_.close();
    auto in = std::make_unique<std::ifstream>(path_, std::ios::binary);
    if (!*in) {
      return absl::UnavailableError(StrCat("import: cannot read the temporary file ", path_));
    }
    return std::unique_ptr<std::istream>(std::move(in));
  }

 private:
  explicit SpoolFile(std::string path)
      : path_(std::move(path)), out_(path_, std::ios::binary | std::ios::trunc) {}
  std::string path_;
  std::ofstream out_;
};

}  // namespace

grpc::Status TunerService::SubmitJob(grpc::ServerContext* context,
                                     const v1::SubmitJobRequest* request, v1::Job* response) {
  return Handle("SubmitJob", context, Role::kSubmit, [&](const Caller& caller) -> absl::Status {
    ASSIGN_OR_RETURN(
        *response,
        scheduler_->SubmitJob(request->spec(), caller.name.empty()
                                                   ? context->peer()
                                                   : StrCat(caller.name, "@", context->peer())));
    return absl::OkStatus();
  });
}

grpc::Status TunerService::GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                  v1::Job* response) {
  return Handle("GetJob", context, Role::kRead, [&](const Caller& caller) -> absl::Status {
    ASSIGN_OR_RETURN(*response, scheduler_->GetJob(request->job_id()));
    return absl::OkStatus();
  });
}

grpc::Status TunerService::ListJobs(grpc::ServerContext* context,
                                    const v1::ListJobsRequest* request,
                                    v1::ListJobsResponse* response) {
  return Handle("ListJobs", context, Role::kRead, [&](const Caller& caller) -> absl::Status {
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

grpc::Status TunerService::CancelJob(grpc::ServerContext* context,
                                     const v1::CancelJobRequest* request, v1::Job* response) {
  return Handle("CancelJob", context, Role::kSubmit, [&](const Caller& caller) -> absl::Status {
    ASSIGN_OR_RETURN(*response, scheduler_->CancelJob(request->job_id()));
    return absl::OkStatus();
  });
}

grpc::Status TunerService::WatchJob(grpc::ServerContext* context,
                                    const v1::WatchJobRequest* request,
                                    grpc::ServerWriter<v1::JobEvent>* writer) {
  return Handle("WatchJob", context, Role::kRead, [&](const Caller& caller) -> absl::Status {
    return scheduler_->WatchJob(
        request->job_id(), [&](const v1::JobEvent& event) { return writer->Write(event); },
        [&] { return context->IsCancelled(); });
  });
}

grpc::Status TunerService::QueryBest(grpc::ServerContext* context,
                                     const v1::QueryBestRequest* request,
                                     v1::QueryBestResponse* response) {
  return Handle("QueryBest", context, Role::kRead, [&](const Caller& caller) -> absl::Status {
    ASSIGN_OR_RETURN(ValidatedBestQuery valid, ValidateQueryBest(*request));
    const BestQuery& query = valid.query;
    const int k = valid.top_k;
    // Device time first: GPU records timed call by call only when nothing else is recorded.
    ASSIGN_OR_RETURN(ClockedTopK top, log_->QueryTopKDeviceTimeFirst(query, k));
    std::vector<Record> records = std::move(top.records);
    if (query.target.empty()) {
      response->set_match(v1::BEST_MATCH_DEVICE);
      response->set_note(StrCat("records of every target on ", query.device_key));
    } else if (!records.empty()) {
      response->set_match(v1::BEST_MATCH_EXACT);
      response->set_note(StrCat("records measured with '", query.target, "' and ",
                                query.flush_cache ? "cold" : "warm", " caches"));
    } else {
      // Nothing in exactly this context: the device's records, and the answer says so.
      BestQuery device = query;
      device.target.clear();
      ASSIGN_OR_RETURN(top, log_->QueryTopKDeviceTimeFirst(device, k));
      records = std::move(top.records);
      response->set_match(v1::BEST_MATCH_SAME_DEVICE);
      response->set_note(StrCat("FALLBACK: nothing measured with '", query.target, "' and ",
                                query.flush_cache ? "cold" : "warm",
                                " caches; records of other "
                                "targets or cache states on ",
                                query.device_key));
    }
    if (records.empty()) {
      return absl::NotFoundError(
          StrCat("no successful record for ", query.workload, " on ", query.device_key));
    }
    if (top.events_fallback) {
      response->set_events_fallback(true);
      response->set_note(StrCat(response->note(),
                                "; FALLBACK: no record timed by graph replay (device time); these "
                                "GPU records were timed call by call (events), which reads a "
                                "host-bound library call as the host's call rate"));
    }
    for (const Record& record : records) {
      *response->add_records() = RecordToProto(record);
    }
    return absl::OkStatus();
  });
}

grpc::Status TunerService::ListWorkers(grpc::ServerContext* context,
                                       const v1::ListWorkersRequest* request,
                                       v1::ListWorkersResponse* response) {
  return Handle("ListWorkers", context, Role::kRead, [&](const Caller& caller) -> absl::Status {
    for (v1::WorkerInfo& info : scheduler_->ListWorkers(request->include_lost())) {
      *response->add_workers() = std::move(info);
    }
    return absl::OkStatus();
  });
}

grpc::Status TunerService::ExportRecords(grpc::ServerContext* context,
                                         const v1::ExportRecordsRequest* request,
                                         grpc::ServerWriter<v1::Record>* writer) {
  return Handle("ExportRecords", context, Role::kRead, [&](const Caller& caller) -> absl::Status {
    ASSIGN_OR_RETURN(ValidatedExport valid, ValidateExportRecords(*request));
    RecordFilter filter = valid.filter;
    filter.limit = kExportPage;
    while (true) {
      ASSIGN_OR_RETURN(std::vector<Record> page, log_->ListRecords(filter));
      for (const Record& record : page) {
        if (!valid.include_failures && !record.measurement.ok()) {
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

grpc::Status TunerService::ImportRecords(grpc::ServerContext* context,
                                         grpc::ServerReader<v1::Record>* reader,
                                         v1::ImportRecordsResponse* response) {
  return Handle("ImportRecords", context, Role::kSubmit, [&](const Caller& caller) -> absl::Status {
    // The valid records are spooled to a temporary file while the stream lasts, then imported
    // in one transaction: a failed or abandoned import adds nothing, and the log's writer lock
    // is held only for the import itself, not while the client sends.
    ASSIGN_OR_RETURN(SpoolFile spool, SpoolFile::Create());
    auto reject = [&](const v1::Record& proto, const absl::Status& why) {
      response->set_rejected(response->rejected() + 1);
      if (static_cast<size_t>(response->errors_size()) < kMaxImportErrors) {
        response->add_errors(StrCat("record ", proto.uid().empty() ? "(no uid)" : proto.uid(), ": ",
                                    std::string(why.message())));
      }
    };
    v1::Record proto;
    int64_t valid = 0;
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
      if (absl::Status ok = CanonicalizeRecord(*record); !ok.ok()) {
        reject(proto, ok);
        continue;
      }
      RETURN_IF_ERROR(spool.Append(RecordToJsonLine(*record)));
      ++valid;
    }
    if (context->IsCancelled()) {
      return absl::CancelledError(
          "the client went away before the end of the import; nothing "
          "was imported");
    }
    ASSIGN_OR_RETURN(std::unique_ptr<std::istream> in, spool.Reader());
    ASSIGN_OR_RETURN(TuningLog::ImportStats stats, log_->ImportJsonl(*in));
    response->set_imported(stats.imported);
    response->set_duplicates(stats.skipped_duplicates);
    Logger("daemon")->info(
        "import: {} of {} valid records added in one transaction, {} already "
        "present, {} rejected",
        response->imported(), valid, response->duplicates(), response->rejected());
    return absl::OkStatus();
  });
}

grpc::Status TunerService::CreateToken(grpc::ServerContext* context,
                                       const v1::CreateTokenRequest* request,
                                       v1::CreateTokenResponse* response) {
  return Handle("CreateToken", context, Role::kAdmin, [&](const Caller& caller) -> absl::Status {
    absl::StatusOr<Role> role = ParseRole(request->role());
    if (!role.ok()) {
      return absl::InvalidArgumentError(StrCat("role: ", role.status().message()));
    }
    ASSIGN_OR_RETURN(Authorizer::CreatedToken created,
                     authorizer_->CreateToken(request->name(), *role));
    *response->mutable_token() = TokenToProto(created.info);
    response->set_text(created.text);
    Logger("daemon")->info("token {} ({}, role {}) created by {}", created.info.id, request->name(),
                           request->role(), caller.name.empty() ? context->peer() : caller.name);
    return absl::OkStatus();
  });
}

grpc::Status TunerService::RevokeToken(grpc::ServerContext* context,
                                       const v1::RevokeTokenRequest* request,
                                       v1::TokenInfo* response) {
  return Handle("RevokeToken", context, Role::kAdmin, [&](const Caller& caller) -> absl::Status {
    ASSIGN_OR_RETURN(TokenInfo revoked, authorizer_->RevokeToken(request->id()));
    *response = TokenToProto(revoked);
    Logger("daemon")->info("token {} revoked by {}", request->id(),
                           caller.name.empty() ? context->peer() : caller.name);
    return absl::OkStatus();
  });
}

grpc::Status TunerService::ListTokens(grpc::ServerContext* context, const v1::ListTokensRequest*,
                                      v1::ListTokensResponse* response) {
  return Handle("ListTokens", context, Role::kAdmin, [&](const Caller&) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<TokenInfo> tokens, authorizer_->ListTokens());
    for (const TokenInfo& token : tokens) {
      *response->add_tokens() = TokenToProto(token);
    }
    return absl::OkStatus();
  });
}

}  // namespace tune::tuner
