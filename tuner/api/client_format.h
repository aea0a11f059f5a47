// How tune-client shows things: text for people (tables, a progress line) and JSON for programs
// (nlohmann-json objects with stable keys).
#pragma once

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tune/v1/tuner.pb.h"

namespace tune::tuner {

/// "QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED" ("UNKNOWN" otherwise).
std::string JobStateText(v1::JobState state);
bool IsFinalState(v1::JobState state);

nlohmann::json JobJson(const v1::Job& job);
nlohmann::json EventJson(const v1::JobEvent& event);
nlohmann::json WorkerJson(const v1::WorkerInfo& worker);
nlohmann::json RecordJson(const v1::Record& record);
/// `best --json`: the answer's records (RecordJson), each with `fallback`: true when the daemon
/// had nothing for the requested target and cache state and answered with records of other
/// targets or cache states on the same device (BEST_MATCH_SAME_DEVICE), which then also carry
/// `requested_target` (the target as asked). An array, empty when there are no records.
nlohmann::json BestJson(const v1::QueryBestResponse& best, const std::string& requested_target);

/// Several lines describing one job.
std::string JobText(const v1::Job& job);
/// One header line and one line per job.
std::string JobsTable(const std::vector<v1::Job>& jobs);
/// One header line and one line per worker.
std::string WorkersTable(const std::vector<v1::WorkerInfo>& workers);
/// Quarantine entries, one block each: id, code, device and fingerprint, what it is, the
/// workers and error that ground it, and when it was lifted.
std::string QuarantineText(const std::vector<v1::QuarantineEntry>& entries);
nlohmann::json QuarantineJson(const v1::QuarantineEntry& entry);
/// One line per record (GFLOPS, seconds, template, config, provenance), plus an indented
/// "library: ..." line for library candidates.
std::string BestText(const std::vector<v1::Record>& records);
/// A shape range's bests (QueryBestResponse.range_sizes): the note, then each size's workload
/// and BestText line.
std::string RangeBestText(const v1::QueryBestResponse& best);

/// "12/40 trials (1 failed), best 35.2 GFLOPS, ETA 14s" (no bar).
std::string ProgressText(const v1::JobEvent& event);
/// A model job's totals: "12.345 ms per inference (untuned defaults: 40.000 ms, 3.24x faster)".
std::string ModelTotalText(double estimated_total_secs, double default_total_secs);
/// One row of a model job's task table, and the table with its header.
std::string TaskLine(const v1::TaskProgress& task);
std::string TasksTable(const google::protobuf::RepeatedPtrField<v1::TaskProgress>& tasks);
/// "[#######.............] " + ProgressText, for a terminal line of about `width` columns.
std::string ProgressBar(const v1::JobEvent& event, int width);
/// One header line and one line per token: id, name, role, created, revoked.
std::string TokensTable(const std::vector<v1::TokenInfo>& tokens);
nlohmann::json TokenJson(const v1::TokenInfo& token);
/// Seconds as "14s", "3m05s" or "1h02m".
std::string Duration(double seconds);

}  // namespace tune::tuner
