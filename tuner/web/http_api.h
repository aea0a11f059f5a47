// The daemon's JSON API (/api/...) and /metrics, apart from HTTP itself (tuner/http_server.h
// routes to it). Every answer comes from the scheduler's snapshot calls, the same that
// tune.v1.Tuner answers with (Scheduler::GetJob, ListJobs, ListWorkers), and from the tuning
// log's ListRecords on a read-only connection of its own, so that reading records never waits
// for, nor holds up, the daemon's writer. The JSON shapes are tune-client's --json ones
// (client_format.h) with a few fields added.
//
// Errors are {"error":{"code":"NOT_FOUND","message":"job 7 does not exist"}} with the HTTP status
// of the code (HttpStatusOf).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "db/tuning_log.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {

/// An answer, before HTTP.
struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

/// Query parameters (the last value of a repeated name wins).
using QueryParams = std::multimap<std::string, std::string>;

/// 400 InvalidArgument, 401 Unauthenticated, 403 PermissionDenied, 404 NotFound,
/// 409 FailedPrecondition / AlreadyExists, 503 Unavailable, 504 DeadlineExceeded, 500 otherwise.
int HttpStatusOf(absl::StatusCode code);

/// The JSON error answer for a status that is not OK.
HttpReply ErrorReply(const absl::Status& status);

class JsonApi {
 public:
  /// `scheduler` and `records` (a read-only log) must outlive the API; `warnings` are what
  /// /api/health reports (and the page shows).
  JsonApi(Scheduler* scheduler, TuningLog* records, std::vector<std::string> warnings = {})
      : scheduler_(scheduler), records_(records), warnings_(std::move(warnings)) {}

  /// GET /api/health: {"status":"SERVING","tune_version":...,"warnings":[...]}.
  HttpReply Health() const;
  /// GET /api/jobs[?limit=N][&state=RUNNING,QUEUED]: {"jobs":[...]}, newest first, each job as
  /// tune-client's (tasks of model jobs included, with their model_job_id) plus eta_seconds
  /// (0 once the job has ended, null when unknown).
  HttpReply Jobs(const QueryParams& params) const;
  /// GET /api/jobs/{id}: one job, as in the list.
  HttpReply Job(std::string_view id) const;
  /// GET /api/jobs/{id}/records[?after=ID][&limit=N]: the job's records of any outcome in the
  /// order they were recorded, those with a local id above `after`, at most `limit` (default
  /// and most 1000): {"job_id":..,"records":[...],"next_after":ID,"more":bool}. Each record is
  /// tune-client's plus its local "id" and "final" (a finalist's re-measurement, no trial).
  HttpReply JobRecords(std::string_view id, const QueryParams& params) const;
  /// GET /api/workers[?all=1]: {"workers":[...]}, connected ones (all: lost ones too).
  HttpReply Workers(const QueryParams& params) const;
  /// GET /api/quarantine[?all=1][&device_key=K]: {"entries":[...]}, the quarantined code (all:
  /// lifted entries too), each as tune-client quarantine --json shows it.
  HttpReply Quarantine(const QueryParams& params) const;
  /// GET /api/fingerprints: {"fingerprints":[{"device_key","fingerprint","first_seen_ms",
  /// "newest"}...]}, each device's newest first: best prefers the newest's records, and a
  /// winner measured only under an older one is unverified (tune-client reverify).
  HttpReply Fingerprints() const;
  /// GET /metrics: the Prometheus text page, the queue and worker gauges set just before.
  HttpReply Metrics() const;

 private:
  Scheduler* const scheduler_;
  TuningLog* const records_;
  const std::vector<std::string> warnings_;
};

}  // namespace tune::tuner
