// TuningLog's quarantine (quarantine.h): the rule applied as records land, and the entries'
// queries and lifting (schema 10).
#include <algorithm>

#include "common/clock.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/quarantine.h"
#include "db/sqlite.h"
#include "db/tables.h"
#include "db/tuning_log.h"

namespace tune {

namespace {

// The grounding records of (?1 artifact hash, ?2 device id, ?3 fingerprint) after ?4 record id.
constexpr std::string_view kGrounding =
    "r.artifact_hash = ?1 AND r.device_id = ?2 AND r.device_fingerprint = ?3 AND r.id > ?4 "
    "AND r.error_kind IN ('RUNTIME_CRASH', 'WRONG_ANSWER') AND r.worker != ''";

// Every quarantine column, then the device key, from quarantine q joined with devices d.
constexpr std::string_view kEntrySql =
    "SELECT q.id, q.artifact_hash, d.device_key, q.fingerprint, q.after_record_id, "
    "q.last_record_id, q.created_at_ms, q.lifted_at_ms, q.lifted_by, q.device_id "
    "FROM quarantine q JOIN devices d ON d.id = q.device_id";

// An entry from a row of kEntrySql, with what its grounding records say.
absl::StatusOr<QuarantineEntry> ReadEntry(sqlite::Connection& db, const sqlite::Statement& row) {
  QuarantineEntry e;
  e.id = row.ColumnInt64(0);
  e.artifact_hash = row.ColumnText(1);
  e.device_key = row.ColumnText(2);
  e.fingerprint = row.ColumnText(3);
  const int64_t after = row.ColumnInt64(4), last = row.ColumnInt64(5);
  e.created_at_ms = row.ColumnInt64(6);
  e.lifted_at_ms = row.ColumnInt64(7);
  e.lifted_by = row.ColumnText(8);
  const int64_t device_id = row.ColumnInt64(9);
  ASSIGN_OR_RETURN(
      sqlite::Statement records,
      db.Prepare(StrCat("SELECT ", tables::kRecordColumns, " FROM ", tables::kRecordFrom, " WHERE ",
                        kGrounding, " AND r.id <= ?5 ORDER BY r.id")));
  records.BindAll(e.artifact_hash, device_id, e.fingerprint, after, last);
  while (true) {
    ASSIGN_OR_RETURN(bool more, records.Step());
    if (!more) {
      break;
    }
    ASSIGN_OR_RETURN(Record r, tables::ReadRecord(records));
    if (e.record_uids.empty()) {
      e.workload = r.workload;
      e.template_name = r.template_name;
      e.template_version = r.template_version;
      e.config = r.config;
      e.error = r.measurement.error;
      e.message = r.measurement.message;
    }
    e.record_uids.push_back(r.uid);
    if (std::find(e.workers.begin(), e.workers.end(), r.worker) == e.workers.end()) {
      e.workers.push_back(r.worker);
    }
  }
  return e;
}

}  // namespace

namespace tables {

absl::Status NoteQuarantine(sqlite::Connection& db, const Record& record, int64_t device_id) {
  if (!Quarantines(record.measurement.error) || record.artifact_hash.empty() ||
      record.worker.empty()) {
    return absl::OkStatus();
  }
  const std::string& fingerprint = record.measurement.device_fingerprint;
  ASSIGN_OR_RETURN(sqlite::Statement holding,
                   db.Prepare("SELECT 1 FROM quarantine WHERE artifact_hash = ? AND "
                              "device_id = ? AND fingerprint = ? AND lifted_at_ms = 0"));
  holding.BindAll(record.artifact_hash, device_id, fingerprint);
  ASSIGN_OR_RETURN(bool held, holding.Step());
  if (held) {
    return absl::OkStatus();
  }
  // Crashes before the last lift were forgiven.
  ASSIGN_OR_RETURN(sqlite::Statement lifted,
                   db.Prepare("SELECT COALESCE(MAX(last_record_id), 0) FROM quarantine WHERE "
                              "artifact_hash = ? AND device_id = ? AND fingerprint = ?"));
  lifted.BindAll(record.artifact_hash, device_id, fingerprint);
  ASSIGN_OR_RETURN(bool row, lifted.Step());
  const int64_t after = row ? lifted.ColumnInt64(0) : 0;
  ASSIGN_OR_RETURN(sqlite::Statement count,
                   db.Prepare(StrCat("SELECT COUNT(DISTINCT r.worker), MAX(r.id) FROM records r "
                                     "WHERE ",
                                     kGrounding)));
  count.BindAll(record.artifact_hash, device_id, fingerprint, after);
  ASSIGN_OR_RETURN(bool counted, count.Step());
  if (!counted || count.ColumnInt64(0) < 2) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(sqlite::Statement insert,
                   db.Prepare("INSERT INTO quarantine (artifact_hash, device_id, fingerprint, "
                              "after_record_id, last_record_id, created_at_ms) "
                              "VALUES (?, ?, ?, ?, ?, ?)"));
  insert.BindAll(record.artifact_hash, device_id, fingerprint, after, count.ColumnInt64(1),
                 UnixNowMs());
  return insert.Run();
}

}  // namespace tables

absl::StatusOr<std::vector<QuarantineEntry>> TuningLog::ListQuarantine(
    const QuarantineFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement select,
                   db_->Prepare(StrCat(kEntrySql,
                                       " WHERE (?1 IS NULL OR d.device_key = ?1) AND "
                                       "(?2 IS NULL OR q.artifact_hash = ?2) AND "
                                       "(?3 OR q.lifted_at_ms = 0) ORDER BY q.id")));
  select.BindAll(filter.device_key, filter.artifact_hash, filter.include_lifted ? 1 : 0);
  std::vector<QuarantineEntry> out;
  while (true) {
    ASSIGN_OR_RETURN(bool more, select.Step());
    if (!more) {
      return out;
    }
    ASSIGN_OR_RETURN(QuarantineEntry entry, ReadEntry(*db_, select));
    out.push_back(std::move(entry));
  }
}

absl::StatusOr<QuarantineEntry> TuningLog::LiftQuarantine(int64_t id, std::string_view by) {
  RETURN_IF_ERROR(RequireWritable("lift a quarantine entry"));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement lift,
                   db_->Prepare("UPDATE quarantine SET lifted_at_ms = ?, lifted_by = ? "
                                "WHERE id = ? AND lifted_at_ms = 0"));
  lift.BindAll(UnixNowMs(), by, id);
  RETURN_IF_ERROR(lift.Run());
  if (db_->Changes() == 0) {
    return absl::NotFoundError(
        StrCat("no quarantine entry ", id, " holds in ", path_,
               " (`tune-client quarantine` lists those that do, with their ids)"));
  }
  ASSIGN_OR_RETURN(sqlite::Statement select, db_->Prepare(StrCat(kEntrySql, " WHERE q.id = ?")));
  select.BindAll(id);
  ASSIGN_OR_RETURN(bool found, select.Step());
  TUNE_CHECK(found) << "quarantine entry " << id << " vanished";
  return ReadEntry(*db_, select);
}

}  // namespace tune
