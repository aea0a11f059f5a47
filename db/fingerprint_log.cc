// TuningLog's fingerprint generations (fingerprints.h, schema 11): noted as workers register
// and as records land; listed newest first.
#include "common/clock.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "db/fingerprints.h"
#include "db/sqlite.h"
#include "db/tables.h"
#include "db/tuning_log.h"

namespace tune {
namespace tables {

absl::StatusOr<bool> NoteFingerprint(sqlite::Connection& db, int64_t device_id,
                                     const std::string& fingerprint, int64_t seen_ms) {
  ASSIGN_OR_RETURN(sqlite::Statement insert,
                   db.Prepare("INSERT OR IGNORE INTO fingerprints (device_id, text, "
                              "first_seen_ms) VALUES (?, ?, ?)"));
  insert.BindAll(device_id, fingerprint, seen_ms);
  RETURN_IF_ERROR(insert.Run());
  return db.Changes() > 0;
}

absl::StatusOr<std::optional<std::string>> NewestFingerprint(sqlite::Connection& db,
                                                             int64_t device_id) {
  ASSIGN_OR_RETURN(sqlite::Statement stmt,
                   db.Prepare("SELECT text FROM fingerprints WHERE device_id = ? "
                              "ORDER BY first_seen_ms DESC, id DESC LIMIT 1"));
  stmt.BindAll(device_id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) {
    return std::nullopt;
  }
  return stmt.ColumnText(0);
}

}  // namespace tables

absl::StatusOr<FingerprintNote> TuningLog::NoteFingerprint(const std::string& device_key,
                                                           const std::string& fingerprint) {
  RETURN_IF_ERROR(RequireWritable("note a fingerprint"));
  if (device_key.empty()) {
    return absl::InvalidArgumentError("device_key: empty");
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(*db_));
  ASSIGN_OR_RETURN(int64_t device_id, tables::InternDevice(*db_, device_key));
  FingerprintNote note;
  ASSIGN_OR_RETURN(std::optional<std::string> newest, tables::NewestFingerprint(*db_, device_id));
  ASSIGN_OR_RETURN(note.first_seen,
                   tables::NoteFingerprint(*db_, device_id, fingerprint, UnixNowMs()));
  if (note.first_seen && newest && *newest != fingerprint) {
    note.superseded = std::move(newest);
  }
  RETURN_IF_ERROR(txn.Commit());
  return note;
}

absl::StatusOr<std::optional<std::string>> TuningLog::NewestFingerprint(
    const std::string& device_key) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(std::optional<int64_t> device_id, tables::FindDeviceId(*db_, device_key));
  if (!device_id) {
    return std::nullopt;
  }
  return tables::NewestFingerprint(*db_, *device_id);
}

absl::StatusOr<std::vector<std::string>> TuningLog::WorkloadsMeasuredOn(const std::string& target) {
  absl::StatusOr<Target> parsed = Target::Parse(target);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(StrCat("target: ", parsed.status().message()));
  }
  const std::string canonical = parsed->ToString();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> workloads;
  ASSIGN_OR_RETURN(std::optional<int64_t> target_id, tables::FindTargetId(*db_, canonical));
  if (!target_id) {
    return workloads;
  }
  ASSIGN_OR_RETURN(sqlite::Statement stmt,
                   db_->Prepare("SELECT w.text FROM workloads w WHERE EXISTS (SELECT 1 FROM "
                                "records r WHERE r.workload_id = w.id AND r.target_id = ?1 AND "
                                "r.error_kind = 'NONE') ORDER BY w.text"));
  stmt.BindAll(*target_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    workloads.push_back(stmt.ColumnText(0));
  }
  return workloads;
}

absl::StatusOr<std::vector<SeenFingerprint>> TuningLog::ListFingerprints(
    std::string_view device_key) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement stmt,
                   db_->Prepare("SELECT d.device_key, f.text, f.first_seen_ms, f.device_id, f.id "
                                "FROM fingerprints f JOIN devices d ON d.id = f.device_id "
                                "WHERE ?1 = '' OR d.device_key = ?1 "
                                "ORDER BY d.device_key, f.first_seen_ms DESC, f.id DESC"));
  stmt.BindAll(std::string(device_key));
  std::vector<SeenFingerprint> seen;
  std::string last_device;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    SeenFingerprint f{stmt.ColumnText(0), stmt.ColumnText(1), stmt.ColumnInt64(2)};
    f.newest = f.device_key != last_device;  // the first of each device is its newest
    last_device = f.device_key;
    seen.push_back(std::move(f));
  }
  return seen;
}

}  // namespace tune
