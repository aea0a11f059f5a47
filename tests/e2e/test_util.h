// Checks shared by the e2e and fault suites: reading a tuning log the way tune-compile does
// (read-only, beside the running daemon) and the exactly-once property of a job's records.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/record.h"

namespace tune::testing {

/// The trials of `job_id` in the log at `db`, opened read-only: its records, without the
/// re-measurements of its finalists at its end (Record::final).
absl::StatusOr<std::vector<Record>> RecordsOfJob(const std::string& db, int64_t job_id);
/// The re-measurements of the finalists of `job_id`.
absl::StatusOr<std::vector<Record>> FinalRecordsOfJob(const std::string& db, int64_t job_id);

/// Every trial in the log at `db` (re-measurements of finalists left out).
absl::StatusOr<std::vector<Record>> AllRecords(const std::string& db);

/// How many records each (template, config) has.
std::map<std::string, int> CountPerConfig(const std::vector<Record>& records);

/// The job id tune-client printed on the first line of its output (0 if none).
uint64_t FirstLineJobId(const std::string& out);

}  // namespace tune::testing
