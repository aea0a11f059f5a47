// Row-level operations on the tuning log's tables, shared by TuningLog's implementation.
// Callers use the connection exclusively and, for writes, hold a transaction open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "db/job.h"
#include "db/record.h"
#include "db/sqlite.h"

namespace tune::tables {

/// Ids of interned keys; nullopt when the key is not in the log.
absl::StatusOr<std::optional<int64_t>> FindWorkloadId(sqlite::Connection& db,
                                                      const std::string& workload);
absl::StatusOr<std::optional<int64_t>> FindDeviceId(sqlite::Connection& db,
                                                    const std::string& device_key);
absl::StatusOr<std::optional<int64_t>> FindTargetId(sqlite::Connection& db,
                                                    const std::string& target);

/// Id of a canonical workload, inserted when new.
absl::StatusOr<int64_t> InternWorkload(sqlite::Connection& db, const std::string& workload);
/// Id of a device key, inserted when new.
absl::StatusOr<int64_t> InternDevice(sqlite::Connection& db, const std::string& device_key);

/// Adds `fingerprint` to device `device_id`'s generations (db/fingerprints.h), first seen at
/// `seen_ms`, unless the log has seen it; true when it was new.
absl::StatusOr<bool> NoteFingerprint(sqlite::Connection& db, int64_t device_id,
                                     const std::string& fingerprint, int64_t seen_ms);
/// Device `device_id`'s newest fingerprint, or nullopt when it has none.
absl::StatusOr<std::optional<std::string>> NewestFingerprint(sqlite::Connection& db,
                                                             int64_t device_id);

/// True when a record with this uid is in the log.
absl::StatusOr<bool> HasRecordUid(sqlite::Connection& db, const std::string& uid);

/// Inserts a canonical record (see CanonicalizeRecord), interning its keys and filling uid
/// (when empty), created_at_ms (when 0) and id, and applies the quarantine rule to it
/// (NoteQuarantine), so that every way a record lands (a trial, an import) quarantines alike. A
/// duplicate uid is AlreadyExists; a job_id naming no job is InvalidArgument.
absl::Status InsertRecord(sqlite::Connection& db, Record& record);

/// Applies the quarantine rule (db/quarantine.h) to a record just inserted on device `device_id`:
/// makes an entry when it is the second worker's crash or wrong answer with that code, device
/// and fingerprint since the last lift.
absl::Status NoteQuarantine(sqlite::Connection& db, const Record& record, int64_t device_id);

/// Columns and joins of a record query: "SELECT <kRecordColumns> FROM <kRecordFrom> WHERE ...",
/// read back with ReadRecord. The records table is aliased r and drives the joins.
extern const std::string_view kRecordColumns;
inline constexpr int kRecordColumnCount = 24;
extern const std::string_view kRecordFrom;
/// The record on the current row of a statement selecting kRecordColumns first. A stored
/// value that does not decode is DataLoss naming the record id.
absl::StatusOr<Record> ReadRecord(const sqlite::Statement& row);

/// What a best query compares: the records of one target and cache state, or of a device.
enum class BestScope : uint8_t { kTarget, kDevice };

/// The query behind TuningLog::QueryTopK: kRecordColumns and then r.config_id of the
/// successful records of ?1 workload id and, for kTarget, ?2 target id and ?6 flush_cache
/// (0 or 1), for kDevice ?2 device id; optionally restricted to ?3 template, ?4 template
/// version, ?5 tune version and ?7 whether the GPU clock is events (EventsClockParameter)
/// (NULL: any), and ?8 the records' fingerprint (NULL: any); fastest first. It walks the
/// partial index records_best_by_target or records_best.
std::string BestRecordsSql(BestScope scope);
/// The newest fingerprint (fingerprints.h) of ?8 device id that has a record BestRecordsSql
/// would select, with the same ?1..?7 (one column, at most one row).
std::string NewestFingerprintWithBestSql(BestScope scope);

/// The ?7 of BestRecordsSql for a clock scope: NULL for kAny, 0 for kDeviceTime, 1 for kEvents.
std::optional<int> EventsClockParameter(ClockScope clocks);
/// True when the record's GPU clock is within `clocks`.
bool InClockScope(const Record& record, ClockScope clocks);

/// A statement selecting kRecordColumns of the records matching `filter` in id order;
/// nullopt when the filter names a workload or device the log does not know (nothing
/// matches). `count_only` selects COUNT(*) instead and ignores the limit.
absl::StatusOr<std::optional<sqlite::Statement>> PrepareRecordQuery(sqlite::Connection& db,
                                                                    const RecordFilter& filter,
                                                                    bool count_only);

/// A job's template names as stored (comma-separated), and back.
inline std::string JoinTemplateNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    out += out.empty() ? "" : ",";
    out += name;
  }
  return out;
}
std::vector<std::string> SplitTemplateNames(std::string_view text);

/// The job query behind FetchJob / FetchJobs: every job column and its best trial, from the
/// jobs table aliased j, followed by `tail` (a WHERE / ORDER BY clause).
std::string JobsSql(std::string_view tail);

/// A job with its best trial; NotFound naming the id.
absl::StatusOr<Job> FetchJob(sqlite::Connection& db, int64_t id);
/// Jobs selected by a WHERE / ORDER BY tail over the jobs table aliased j, e.g.
/// "WHERE j.state = ?1 ORDER BY j.id", with `state` bound to ?1 when given.
absl::StatusOr<std::vector<Job>> FetchJobs(sqlite::Connection& db, std::string_view tail,
                                           std::optional<std::string_view> state = std::nullopt);

}  // namespace tune::tables
