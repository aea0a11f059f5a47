#include "tuner/daemon/tuner_service.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>

#include "codegen/templates/template.h"
#include "common/fingerprint.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "db/record_json.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "tuner/api/grpc_status.h"
#include "tuner/api/proto_convert.h"
#include "tuner/daemon/record_queries.h"

namespace tune::tuner {
namespace {

// Records read from the log per query while exporting.
constexpr int64_t kExportPage = 1000;
// Rejection reasons returned by ImportRecords.
constexpr size_t kMaxImportErrors = 10;

// Who made a call, for audit lines: the token's name and id (none when tokens are off) and the
// peer's address.
std::string Who(const Caller& caller, const grpc::ServerContext& context) {
  if (caller.token_id.empty()) {
    return StrCat("a caller without a token (tokens are off) from ", context.peer());
  }
  return StrCat(caller.name, " (token ", caller.token_id, ") from ", context.peer());
}

// A record names a template of this daemon's catalog (built-in, or a codegen plugin's family)
// for its target's kind: a name nothing builds would only mislead `best`.
absl::Status CheckTemplateKnown(const Catalog& catalog, const Record& record) {
  absl::StatusOr<Target> target = catalog.ParseTarget(record.target);
  if (!target.ok()) {
    return absl::InvalidArgumentError(StrCat("record.target: ", target.status().message()));
  }
  const KernelTemplate* known = catalog.FindTemplate(record.template_name, target->kind);
  if (known == nullptr || !TemplateBuildsFor(*known, target->kind)) {
    return absl::InvalidArgumentError(
        StrCat("record.template: '", record.template_name,
               "' is not a template of this daemon for ", TargetKindName(target->kind),
               " targets; accepted form: a template of tune's table (e.g. gemm.cpu.blocked) or a "
               "family of a --codegen-plugin that this daemon runs"));
  }
  return absl::OkStatus();
}

// Admin actions, one line each, under a logger of their own so that they can be told apart
// (and kept) in the daemon's log: `grep ' audit: '` in text, `"logger":"audit"` in JSON.
std::shared_ptr<spdlog::logger> Audit() { return Logger("audit"); }

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

// Handle, for a call whose request the handler reads (the streamed forms): the request is read
// only once the token passed; then `body(caller, request, call)`.
template <typename Request, typename Stream, typename Fn>
grpc::Status TunerService::HandleRequest(std::string_view method, grpc::ServerContext* context,
                                         Role needed, Stream* call, Fn&& body) {
  return Handle(method, context, needed, [&](const Caller& caller) -> absl::Status {
    Request request;
    if (!call->Read(&request)) {
      return absl::InvalidArgumentError(StrCat(method, ": the request is missing or is not a ",
                                               Request::descriptor()->full_name()));
    }
    return body(caller, request, *call);
  });
}

namespace {

// A unary call's answer: `response` written when `status` is OK.
template <typename Request, typename Response>
absl::Status Answer(grpc::ServerUnaryStreamer<Request, Response>& call,
                    const absl::StatusOr<Response>& response) {
  RETURN_IF_ERROR(response.status());
  if (!call.Write(*response)) {
    return absl::CancelledError("the client went away before the answer");
  }
  return absl::OkStatus();
}

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

// The best records of one workload (top k), with how they matched and whether they are
// unverified; NotFound when it has no successful record.
absl::StatusOr<v1::QueryBestResponse> BestOf(TuningLog& log, const BestQuery& query, int k) {
  v1::QueryBestResponse response;
  // Device time first: GPU records timed call by call only when nothing else is recorded.
  ASSIGN_OR_RETURN(ClockedTopK top, log.QueryTopKDeviceTimeFirst(query, k));
  std::vector<Record> records = std::move(top.records);
  if (query.target.empty()) {
    response.set_match(v1::BEST_MATCH_DEVICE);
    response.set_note(StrCat("records of every target on ", query.device_key));
  } else if (!records.empty()) {
    response.set_match(v1::BEST_MATCH_EXACT);
    response.set_note(StrCat("records measured with '", query.target, "' and ",
                             query.flush_cache ? "cold" : "warm", " caches"));
  } else {
    // Nothing in exactly this context: the device's records, and the answer says so.
    BestQuery device = query;
    device.target.clear();
    ASSIGN_OR_RETURN(top, log.QueryTopKDeviceTimeFirst(device, k));
    records = std::move(top.records);
    response.set_match(v1::BEST_MATCH_SAME_DEVICE);
    response.set_note(StrCat("FALLBACK: nothing measured with '", query.target, "' and ",
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
    response.set_events_fallback(true);
    response.set_note(StrCat(response.note(),
                             "; FALLBACK: no record timed by graph replay (device time); "
                             "these GPU records were timed call by call (events), which "
                             "reads a host-bound library call as the host's call rate"));
  }
  const Record& first = records.front();
  ASSIGN_OR_RETURN(std::optional<std::string> newest, log.NewestFingerprint(first.device_key));
  if (newest && *newest != first.measurement.device_fingerprint) {
    response.set_unverified(true);
    response.set_note(
        StrCat(response.note(),
               UnverifiedNote(first.device_key, *newest, first.measurement.device_fingerprint)));
  }
  for (const Record& record : records) {
    *response.add_records() = RecordToProto(record);
  }
  return response;
}

}  // namespace

grpc::Status TunerService::StreamedSubmitJob(grpc::ServerContext* context,
                                             Unary<v1::SubmitJobRequest, v1::Job>* call) {
  return HandleRequest<v1::SubmitJobRequest>(
      "SubmitJob", context, Role::kSubmit, call,
      [&](const Caller& caller, const v1::SubmitJobRequest& request, auto& out) {
        return Answer(out, scheduler_->SubmitJob(request.spec(),
                                                 caller.name.empty()
                                                     ? context->peer()
                                                     : StrCat(caller.name, "@", context->peer())));
      });
}

grpc::Status TunerService::StreamedGetJob(grpc::ServerContext* context,
                                          Unary<v1::GetJobRequest, v1::Job>* call) {
  return HandleRequest<v1::GetJobRequest>(
      "GetJob", context, Role::kRead, call,
      [&](const Caller&, const v1::GetJobRequest& request, auto& out) {
        return Answer(out, scheduler_->GetJob(request.job_id()));
      });
}

grpc::Status TunerService::StreamedListJobs(
    grpc::ServerContext* context, Unary<v1::ListJobsRequest, v1::ListJobsResponse>* call) {
  return HandleRequest<v1::ListJobsRequest>(
      "ListJobs", context, Role::kRead, call,
      [&](const Caller&, const v1::ListJobsRequest& request, auto& out) -> absl::Status {
        std::vector<JobState> states;
        for (int s : request.states()) {
          ASSIGN_OR_RETURN(JobState state,
                           JobStateFromProto(static_cast<v1::JobState>(s), "states"));
          states.push_back(state);
        }
        ASSIGN_OR_RETURN(std::vector<v1::Job> jobs, scheduler_->ListJobs(states, request.limit()));
        v1::ListJobsResponse response;
        for (v1::Job& job : jobs) {
          *response.add_jobs() = std::move(job);
        }
        return Answer(out, absl::StatusOr<v1::ListJobsResponse>(std::move(response)));
      });
}

grpc::Status TunerService::StreamedCancelJob(grpc::ServerContext* context,
                                             Unary<v1::CancelJobRequest, v1::Job>* call) {
  return HandleRequest<v1::CancelJobRequest>(
      "CancelJob", context, Role::kSubmit, call,
      [&](const Caller& caller, const v1::CancelJobRequest& request, auto& out) -> absl::Status {
        ASSIGN_OR_RETURN(v1::Job job, scheduler_->CancelJob(request.job_id()));
        absl::StatusOr<Job> stored = log_->GetJob(static_cast<int64_t>(request.job_id()));
        Audit()->info(
            "job {} (submitted by {}) cancelled by {}", request.job_id(),
            stored.ok() && !stored->spec.client.empty() ? stored->spec.client : "an unknown client",
            Who(caller, *context));
        return Answer(out, absl::StatusOr<v1::Job>(std::move(job)));
      });
}

grpc::Status TunerService::StreamedWatchJob(
    grpc::ServerContext* context,
    grpc::ServerSplitStreamer<v1::WatchJobRequest, v1::JobEvent>* call) {
  return HandleRequest<v1::WatchJobRequest>(
      "WatchJob", context, Role::kRead, call,
      [&](const Caller&, const v1::WatchJobRequest& request, auto& out) {
        return scheduler_->WatchJob(
            request.job_id(), [&](const v1::JobEvent& event) { return out.Write(event); },
            [&] { return context->IsCancelled(); });
      });
}

grpc::Status TunerService::StreamedQueryBest(
    grpc::ServerContext* context, Unary<v1::QueryBestRequest, v1::QueryBestResponse>* call) {
  return HandleRequest<v1::QueryBestRequest>(
      "QueryBest", context, Role::kRead, call,
      [&](const Caller&, const v1::QueryBestRequest& request, auto& out) -> absl::Status {
        ASSIGN_OR_RETURN(ValidatedBestQuery valid, ValidateQueryBest(request));
        if (!valid.range) {
          ASSIGN_OR_RETURN(v1::QueryBestResponse response, BestOf(*log_, valid.query, valid.top_k));
          return Answer(out, absl::StatusOr<v1::QueryBestResponse>(std::move(response)));
        }
        // A range: the best of each size the log measured on the device.
        const ShapeRange& range = *valid.range;
        ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                         log_->RangeSizesMeasured(range, valid.query.device_key));
        v1::QueryBestResponse response;
        response.set_match(v1::BEST_MATCH_EXACT);
        std::vector<std::string> fallbacks;
        for (int64_t size : sizes) {
          BestQuery query = valid.query;
          query.workload = range.At(size).ToString();
          absl::StatusOr<v1::QueryBestResponse> best = BestOf(*log_, query, 1);
          if (absl::IsNotFound(best.status())) {
            continue;
          }
          RETURN_IF_ERROR(best.status());
          *response.add_records() = best->records(0);
          response.add_range_sizes(size);
          if (best->match() != v1::BEST_MATCH_EXACT) {
            response.set_match(best->match());
            fallbacks.push_back(StrCat(range.dim(), "=", size, ": ", best->note()));
          }
          response.set_events_fallback(response.events_fallback() || best->events_fallback());
          response.set_unverified(response.unverified() || best->unverified());
        }
        if (response.records().empty()) {
          return absl::NotFoundError(StrCat("no size of ", range.ToString(),
                                            " has a successful record on ",
                                            valid.query.device_key));
        }
        response.set_note(StrCat(range.ToString(), ": ", response.records_size(),
                                 " sizes measured on ", valid.query.device_key,
                                 fallbacks.empty() ? "" : StrCat("; ", Join(fallbacks, "; "))));
        return Answer(out, absl::StatusOr<v1::QueryBestResponse>(std::move(response)));
      });
}

grpc::Status TunerService::StreamedListWorkers(
    grpc::ServerContext* context, Unary<v1::ListWorkersRequest, v1::ListWorkersResponse>* call) {
  return HandleRequest<v1::ListWorkersRequest>(
      "ListWorkers", context, Role::kRead, call,
      [&](const Caller&, const v1::ListWorkersRequest& request, auto& out) {
        v1::ListWorkersResponse response;
        for (v1::WorkerInfo& info : scheduler_->ListWorkers(request.include_lost())) {
          *response.add_workers() = std::move(info);
        }
        return Answer(out, absl::StatusOr<v1::ListWorkersResponse>(std::move(response)));
      });
}

grpc::Status TunerService::StreamedExportRecords(
    grpc::ServerContext* context,
    grpc::ServerSplitStreamer<v1::ExportRecordsRequest, v1::Record>* call) {
  return HandleRequest<v1::ExportRecordsRequest>(
      "ExportRecords", context, Role::kRead, call,
      [&](const Caller&, const v1::ExportRecordsRequest& request, auto& out) -> absl::Status {
        ASSIGN_OR_RETURN(ValidatedExport valid, ValidateExportRecords(request));
        // A range: each size with records in turn, ascending.
        std::vector<std::optional<std::string>> workloads = {valid.filter.workload};
        if (valid.range) {
          ASSIGN_OR_RETURN(
              std::vector<int64_t> sizes,
              log_->RangeSizesMeasured(*valid.range, valid.filter.device_key.value_or(""),
                                       !valid.include_failures));
          workloads.clear();
          for (int64_t size : sizes) {
            workloads.push_back(valid.range->At(size).ToString());
          }
        }
        // The records that ground quarantine entries go with the successful ones, so that an
        // import quarantines the same code (the rule runs as records land).
        std::set<std::string> grounding;
        if (!valid.include_failures) {
          ASSIGN_OR_RETURN(std::vector<QuarantineEntry> entries,
                           scheduler_->ListQuarantine({.device_key = valid.filter.device_key}));
          for (const QuarantineEntry& entry : entries) {
            grounding.insert(entry.record_uids.begin(), entry.record_uids.end());
          }
        }
        auto export_pages = [&](RecordFilter filter) -> absl::Status {
          filter.limit = kExportPage;
          while (true) {
            ASSIGN_OR_RETURN(std::vector<Record> page, log_->ListRecords(filter));
            for (const Record& record : page) {
              if (!valid.include_failures && !record.measurement.ok() &&
                  !grounding.contains(record.uid)) {
                continue;
              }
              if (!out.Write(RecordToProto(record))) {
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
        };
        for (const std::optional<std::string>& workload : workloads) {
          RecordFilter filter = valid.filter;
          filter.workload = workload;
          RETURN_IF_ERROR(export_pages(std::move(filter)));
        }
        return absl::OkStatus();
      });
}

grpc::Status TunerService::RawImportRecords(grpc::ServerContext* context,
                                            grpc::ServerReader<grpc::ByteBuffer>* reader,
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
    grpc::ByteBuffer message;
    int64_t received = 0;
    int64_t valid = 0;
    while (reader->Read(&message)) {
      ++received;
      v1::Record proto;
      grpc::ProtoBufferReader bytes(&message);
      if (!proto.ParseFromZeroCopyStream(&bytes)) {
        return absl::InvalidArgumentError(
            StrCat("message ", received,
                   " of the import is not a tune.v1.Record (it does not "
                   "parse); nothing was imported"));
      }
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
      if (absl::Status ok = CheckTemplateKnown(scheduler_->catalog(), *record); !ok.ok()) {
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
    Audit()->info("import by {}: {} of {} valid records added, {} already present, {} rejected",
                  Who(caller, *context), response->imported(), valid, response->duplicates(),
                  response->rejected());
    return absl::OkStatus();
  });
}

grpc::Status TunerService::StreamedCreateToken(
    grpc::ServerContext* context, Unary<v1::CreateTokenRequest, v1::CreateTokenResponse>* call) {
  return HandleRequest<v1::CreateTokenRequest>(
      "CreateToken", context, Role::kAdmin, call,
      [&](const Caller& caller, const v1::CreateTokenRequest& request, auto& out) -> absl::Status {
        absl::StatusOr<Role> role = ParseRole(request.role());
        if (!role.ok()) {
          return absl::InvalidArgumentError(StrCat("role: ", role.status().message()));
        }
        ASSIGN_OR_RETURN(Authorizer::CreatedToken created,
                         authorizer_->CreateToken(request.name(), *role));
        v1::CreateTokenResponse response;
        *response.mutable_token() = TokenToProto(created.info);
        response.set_text(created.text);
        Audit()->info("token {} ({}, role {}) created by {}", created.info.id, request.name(),
                      request.role(), Who(caller, *context));
        return Answer(out, absl::StatusOr<v1::CreateTokenResponse>(std::move(response)));
      });
}

grpc::Status TunerService::StreamedRevokeToken(grpc::ServerContext* context,
                                               Unary<v1::RevokeTokenRequest, v1::TokenInfo>* call) {
  return HandleRequest<v1::RevokeTokenRequest>(
      "RevokeToken", context, Role::kAdmin, call,
      [&](const Caller& caller, const v1::RevokeTokenRequest& request, auto& out) -> absl::Status {
        ASSIGN_OR_RETURN(TokenInfo revoked, authorizer_->RevokeToken(request.id()));
        Audit()->info("token {} ({}) revoked by {}", request.id(), revoked.name,
                      Who(caller, *context));
        return Answer(out, absl::StatusOr<v1::TokenInfo>(TokenToProto(revoked)));
      });
}

grpc::Status TunerService::StreamedListQuarantine(
    grpc::ServerContext* context,
    Unary<v1::ListQuarantineRequest, v1::ListQuarantineResponse>* call) {
  return HandleRequest<v1::ListQuarantineRequest>(
      "ListQuarantine", context, Role::kRead, call,
      [&](const Caller&, const v1::ListQuarantineRequest& request, auto& out) -> absl::Status {
        QuarantineFilter filter{.include_lifted = request.include_lifted()};
        if (!request.device_key().empty()) {
          filter.device_key = request.device_key();
        }
        ASSIGN_OR_RETURN(std::vector<QuarantineEntry> entries, scheduler_->ListQuarantine(filter));
        v1::ListQuarantineResponse response;
        for (const QuarantineEntry& entry : entries) {
          *response.add_entries() = QuarantineEntryToProto(entry);
        }
        return Answer(out, absl::StatusOr<v1::ListQuarantineResponse>(std::move(response)));
      });
}

grpc::Status TunerService::StreamedLiftQuarantine(
    grpc::ServerContext* context, Unary<v1::LiftQuarantineRequest, v1::QuarantineEntry>* call) {
  return HandleRequest<v1::LiftQuarantineRequest>(
      "LiftQuarantine", context, Role::kAdmin, call,
      [&](const Caller& caller, const v1::LiftQuarantineRequest& request,
          auto& out) -> absl::Status {
        if (request.id() == 0 || request.id() > uint64_t{INT64_MAX}) {
          return absl::InvalidArgumentError(
              StrCat("id: ", request.id(),
                     " is not a quarantine entry's id (`tune-client quarantine` lists them)"));
        }
        const std::string by = caller.name.empty() ? "admin" : caller.name;
        ASSIGN_OR_RETURN(QuarantineEntry lifted,
                         scheduler_->LiftQuarantine(static_cast<int64_t>(request.id()), by));
        Audit()->info("quarantine entry {} (artifact {} on {}, fingerprint '{}') lifted by {}",
                      lifted.id, lifted.artifact_hash, lifted.device_key, lifted.fingerprint,
                      Who(caller, *context));
        return Answer(out, absl::StatusOr<v1::QuarantineEntry>(QuarantineEntryToProto(lifted)));
      });
}

grpc::Status TunerService::StreamedListTokens(
    grpc::ServerContext* context, Unary<v1::ListTokensRequest, v1::ListTokensResponse>* call) {
  return HandleRequest<v1::ListTokensRequest>(
      "ListTokens", context, Role::kAdmin, call,
      [&](const Caller&, const v1::ListTokensRequest&, auto& out) -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<TokenInfo> tokens, authorizer_->ListTokens());
        v1::ListTokensResponse response;
        for (const TokenInfo& token : tokens) {
          *response.add_tokens() = TokenToProto(token);
        }
        return Answer(out, absl::StatusOr<v1::ListTokensResponse>(std::move(response)));
      });
}

grpc::Status TunerService::StreamedReverify(grpc::ServerContext* context,
                                            Unary<v1::ReverifyRequest, v1::Job>* call) {
  return HandleRequest<v1::ReverifyRequest>(
      "Reverify", context, Role::kSubmit, call,
      [&](const Caller& caller, const v1::ReverifyRequest& request, auto& out) -> absl::Status {
        ASSIGN_OR_RETURN(v1::Job job, scheduler_->Reverify(request, caller.name.empty()
                                                                        ? context->peer()
                                                                        : StrCat(caller.name, "@",
                                                                                 context->peer())));
        Audit()->info("reverify job {} of {} on '{}' ({} re-measurements at most) queued by {}",
                      job.job_id(),
                      request.all()                ? std::string("every measured workload")
                      : request.workload().empty() ? StrCat(request.tasks_size(), " workloads")
                                                   : request.workload(),
                      job.spec().target(), job.spec().trials(), Who(caller, *context));
        return Answer(out, absl::StatusOr<v1::Job>(std::move(job)));
      });
}

}  // namespace tune::tuner
