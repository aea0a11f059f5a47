#include "tuner/web/http_api.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/version.h"
#include "nlohmann/json.hpp"
#include "tuner/api/client_format.h"
#include "tuner/api/proto_convert.h"

namespace tune::tuner {
namespace {

// Records per page of /api/jobs/{id}/records (the export's page size too).
constexpr int64_t kRecordsPage = 1000;

HttpReply JsonReply(const nlohmann::json& body) {
  HttpReply reply;
  // Invalid UTF-8 in a message (a compiler's output) must not make the whole answer fail.
  reply.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return reply;
}

HttpReply ReplyOf(const absl::StatusOr<nlohmann::json>& body) {
  return body.ok() ? JsonReply(*body) : ErrorReply(body.status());
}

std::optional<std::string> Param(const QueryParams& params, std::string_view name) {
  std::optional<std::string> value;
  for (auto [it, end] = params.equal_range(std::string(name)); it != end; ++it) {
    value = it->second;
  }
  return value;
}

// A non-negative integer parameter; `fallback` when absent.
absl::StatusOr<int64_t> IntParam(const QueryParams& params, std::string_view name,
                                 int64_t fallback) {
  std::optional<std::string> text = Param(params, name);
  if (!text) {
    return fallback;
  }
  std::optional<int64_t> value = ParseInt(*text);
  if (!value || *value < 0) {
    return absl::InvalidArgumentError(
        StrCat(name, ": '", *text, "' is not valid; expected an integer >= 0"));
  }
  return *value;
}

absl::StatusOr<uint64_t> JobId(std::string_view text) {
  std::optional<int64_t> id = ParseInt(text);
  if (!id || *id <= 0) {
    return absl::InvalidArgumentError(StrCat("job id '", text,
                                             "' is not valid; expected a positive integer, as in "
                                             "/api/jobs/12"));
  }
  return static_cast<uint64_t>(*id);
}

// "RUNNING,QUEUED" (any case) as states; InvalidArgument naming the bad one.
absl::StatusOr<std::vector<JobState>> States(const std::string& text) {
  std::vector<JobState> states;
  for (std::string_view name : Split(text, ',', /*skip_empty=*/true)) {
    std::string upper(name);
    for (char& c : upper) {
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    v1::JobState proto = v1::JOB_STATE_UNSPECIFIED;
    absl::StatusOr<JobState> state = v1::JobState_Parse(StrCat("JOB_STATE_", upper), &proto)
                                         ? JobStateFromProto(proto, "state")
                                         : absl::InvalidArgumentError("not a state");
    if (!state.ok()) {
      return absl::InvalidArgumentError(
          StrCat("state: '", name,
                 "' is not a job state; accepted: QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED "
                 "(comma-separated)"));
    }
    states.push_back(*state);
  }
  return states;
}

// A job as tune-client --json shows it, plus its ETA: 0 once it has ended, null when unknown.
nlohmann::json JobWithEta(const v1::Job& job, const std::map<uint64_t, double>& etas) {
  nlohmann::json j = JobJson(job);
  auto eta = etas.find(job.job_id());
  if (IsFinalState(job.state())) {
    j["eta_seconds"] = 0;
  } else if (eta != etas.end() && eta->second >= 0) {
    j["eta_seconds"] = eta->second;
  } else {
    j["eta_seconds"] = nullptr;
  }
  return j;
}

}  // namespace

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

HttpReply ErrorReply(const absl::Status& status) {
  HttpReply reply = JsonReply({{"error",
                                {{"code", absl::StatusCodeToString(status.code())},
                                 {"message", std::string(status.message())}}}});
  reply.status = HttpStatusOf(status.code());
  return reply;
}

HttpReply JsonApi::Health() const {
  return JsonReply(
      {{"status", "SERVING"}, {"tune_version", kTuneVersion}, {"warnings", warnings_}});
}

HttpReply JsonApi::Jobs(const QueryParams& params) const {
  return ReplyOf([&]() -> absl::StatusOr<nlohmann::json> {
    ASSIGN_OR_RETURN(int64_t limit, IntParam(params, "limit", 0));
    std::vector<JobState> states;
    if (std::optional<std::string> text = Param(params, "state")) {
      ASSIGN_OR_RETURN(states, States(*text));
    }
    const int capped = static_cast<int>(std::min<int64_t>(limit, std::numeric_limits<int>::max()));
    ASSIGN_OR_RETURN(std::vector<v1::Job> jobs, scheduler_->ListJobs(states, capped));
    const std::map<uint64_t, double> etas = scheduler_->Etas();
    nlohmann::json list = nlohmann::json::array();
    for (const v1::Job& job : jobs) {
      list.push_back(JobWithEta(job, etas));
    }
    return nlohmann::json{{"jobs", std::move(list)}};
  }());
}

HttpReply JsonApi::Job(std::string_view id) const {
  return ReplyOf([&]() -> absl::StatusOr<nlohmann::json> {
    ASSIGN_OR_RETURN(uint64_t job_id, JobId(id));
    ASSIGN_OR_RETURN(v1::Job job, scheduler_->GetJob(job_id));
    return JobWithEta(job, scheduler_->Etas());
  }());
}

HttpReply JsonApi::JobRecords(std::string_view id, const QueryParams& params) const {
  return ReplyOf([&]() -> absl::StatusOr<nlohmann::json> {
    ASSIGN_OR_RETURN(uint64_t job_id, JobId(id));
    ASSIGN_OR_RETURN(int64_t after, IntParam(params, "after", 0));
    ASSIGN_OR_RETURN(int64_t limit, IntParam(params, "limit", kRecordsPage));
    if (limit < 1 || limit > kRecordsPage) {
      return absl::InvalidArgumentError(
          StrCat("limit: ", limit, " is out of range; expected 1 to ", kRecordsPage));
    }
    RETURN_IF_ERROR(scheduler_->GetJob(job_id).status());  // NotFound for an unknown job
    ASSIGN_OR_RETURN(
        std::vector<Record> records,
        records_->ListRecords(RecordFilter{
            .job_id = static_cast<int64_t>(job_id), .after_id = after, .limit = limit}));
    nlohmann::json list = nlohmann::json::array();
    for (const Record& record : records) {
      nlohmann::json j = RecordJson(RecordToProto(record));
      j["id"] = record.id;
      j["final"] = record.final;
      list.push_back(std::move(j));
    }
    return nlohmann::json{{"job_id", job_id},
                          {"records", std::move(list)},
                          {"next_after", records.empty() ? after : records.back().id},
                          {"more", static_cast<int64_t>(records.size()) == limit}};
  }());
}

HttpReply JsonApi::Workers(const QueryParams& params) const {
  std::optional<std::string> all = Param(params, "all");
  const bool include_lost = all && *all != "0" && *all != "false";
  nlohmann::json list = nlohmann::json::array();
  for (const v1::WorkerInfo& worker : scheduler_->ListWorkers(include_lost)) {
    list.push_back(WorkerJson(worker));
  }
  return JsonReply({{"workers", std::move(list)}});
}

HttpReply JsonApi::Quarantine(const QueryParams& params) const {
  std::optional<std::string> all = Param(params, "all");
  QuarantineFilter filter{.device_key = Param(params, "device_key"),
                          .include_lifted = all && *all != "0" && *all != "false"};
  absl::StatusOr<std::vector<QuarantineEntry>> entries = scheduler_->ListQuarantine(filter);
  if (!entries.ok()) {
    return ErrorReply(entries.status());
  }
  nlohmann::json list = nlohmann::json::array();
  for (const QuarantineEntry& entry : *entries) {
    list.push_back(QuarantineJson(QuarantineEntryToProto(entry)));
  }
  return JsonReply({{"entries", std::move(list)}});
}

HttpReply JsonApi::Fingerprints() const {
  absl::StatusOr<std::vector<SeenFingerprint>> seen = scheduler_->ListFingerprints();
  if (!seen.ok()) {
    return ErrorReply(seen.status());
  }
  nlohmann::json list = nlohmann::json::array();
  for (const SeenFingerprint& f : *seen) {
    list.push_back({{"device_key", f.device_key},
                    {"fingerprint", f.text},
                    {"first_seen_ms", f.first_seen_ms},
                    {"newest", f.newest}});
  }
  return JsonReply({{"fingerprints", std::move(list)}});
}

HttpReply JsonApi::Metrics() const {
  DaemonMetrics& metrics = scheduler_->metrics();
  metrics.SetQueue(scheduler_->Depth());
  metrics.SetWorkers(scheduler_->ListWorkers(false));
  HttpReply reply;
  reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
  reply.body = metrics.Exposition();
  return reply;
}

}  // namespace tune::tuner
