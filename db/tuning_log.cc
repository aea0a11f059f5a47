#include "db/tuning_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <istream>
#include <ostream>
#include <unordered_set>

#include "common/clock.h"
#include "common/files.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "db/record_json.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "db/tables.h"

namespace tune {
namespace {

constexpr int kBusyTimeoutMs = 5000;

// "('NONE', 'BUILD_ERROR', ...)": the error kinds that are verdicts (IsVerdict), as an SQL list.
const std::string& VerdictKindsSql() {
  static const std::string* const list = [] {
    std::string out;
    for (size_t i = 0; i < kErrorKindCount; ++i) {
      const auto kind = static_cast<ErrorKind>(i);
      if (IsVerdict(kind)) {
        StrAppend(&out, out.empty() ? "(" : ", ", "'", ErrorKindName(kind), "'");
      }
    }
    return new std::string(out + ")");
  }();
  return *list;
}

// Applies the connection settings; the journal mode is persistent, the others per connection.
absl::Status Configure(sqlite::Connection& db, bool read_only) {
  RETURN_IF_ERROR(db.Execute(StrCat("PRAGMA busy_timeout = ", kBusyTimeoutMs)));
  RETURN_IF_ERROR(db.Execute("PRAGMA foreign_keys = ON"));
  if (read_only) {
    return db.Execute("PRAGMA query_only = ON");
  }
  ASSIGN_OR_RETURN(sqlite::Statement wal, db.Prepare("PRAGMA journal_mode = WAL"));
  ASSIGN_OR_RETURN(bool row, wal.Step());
  std::string mode = row ? wal.ColumnText(0) : "";
  if (mode != "wal") {
    return absl::FailedPreconditionError(StrCat(db.path(),
                                                ": cannot enable WAL (journal mode stays '", mode,
                                                "'); put the database on a local file system"));
  }
  // FULL syncs the WAL at every commit: a committed record survives a crash of the process
  // and of the machine.
  return db.Execute("PRAGMA synchronous = FULL");
}

// PRAGMA quick_check before anything is written: a damaged log is refused, never rewritten.
absl::Status CheckIntegrity(sqlite::Connection& db) {
  constexpr int kProblemsShown = 5;
  auto damaged = [&db](std::string_view what) {
    return absl::DataLossError(StrCat(
        db.path(), " ", what,
        "; the file is left untouched: restore it from a backup, or recover what is readable "
        "with `sqlite3 ",
        db.path(), " .recover | sqlite3 NEW.db` and start on NEW.db"));
  };
  // Only damage (SQLITE_CORRUPT, SQLITE_NOTADB) is reported as damage; a file that cannot be
  // opened or locked keeps its own error.
  auto failed = [&](const absl::Status& status) {
    return status.code() != absl::StatusCode::kDataLoss
               ? status
               : damaged(StrCat("failed its integrity check: ", status.message()));
  };
  absl::StatusOr<sqlite::Statement> check =
      db.Prepare(StrCat("PRAGMA quick_check(", kProblemsShown, ")"));
  if (!check.ok()) {
    return failed(check.status());
  }
  std::vector<std::string> problems;
  while (true) {
    absl::StatusOr<bool> row = check->Step();
    if (!row.ok()) {
      return failed(row.status());
    }
    if (!*row) {
      break;
    }
    problems.push_back(check->ColumnText(0));
  }
  if (problems.size() == 1 && problems[0] == "ok") {
    return absl::OkStatus();
  }
  return damaged(StrCat("is damaged (integrity check: ", Join(problems, "; "), ")"));
}

// The files SQLite keeps beside a log: the WAL and its shared memory, and a rollback journal
// (which SQLite would play back into the log on its first read).
constexpr const char* kLogFileSuffixes[] = {"", "-wal", "-shm", "-journal"};

// The writer trusts what the log holds (tokens, jobs, the best configs): each of its files that
// exists must be this user's, writable by nobody else (CheckTrustedPath).
absl::Status CheckWriterFiles(const std::string& path) {
  for (const char* suffix : kLogFileSuffixes) {
    absl::Status trusted = CheckTrustedPath(StrCat(path, suffix), "tuning log");
    if (!trusted.ok() && !absl::IsNotFound(trusted)) {
      return trusted;
    }
  }
  return absl::OkStatus();
}

// Creates a missing log as an empty file of mode 0640 (less the umask), which SQLite reads as an
// empty database; its WAL and shared-memory files take the same mode. An existing file is left
// as it is; any other failure is left for SQLite's open to report.
void CreateLogFile(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd >= 0) {
    close(fd);
  }
}

absl::StatusOr<std::string> CanonicalTarget(const std::string& text, std::string_view field) {
  absl::StatusOr<Target> target = Target::Parse(text);
  if (!target.ok()) {
    return absl::InvalidArgumentError(StrCat(field, ": ", std::string(target.status().message())));
  }
  if (target->kind == TargetKind::kLlvm && target->cpu == "native") {
    return absl::InvalidArgumentError(
        StrCat(field, ": '", text, "' is not resolved; name the CPU instead of -mcpu=native"));
  }
  return target->ToString();
}

}  // namespace

TuningLog::TuningLog(std::unique_ptr<sqlite::Connection> db, std::string path, Mode mode,
                     int version)
    : db_(std::move(db)), path_(std::move(path)), mode_(mode), schema_version_(version) {}

TuningLog::~TuningLog() = default;

absl::StatusOr<std::unique_ptr<TuningLog>> TuningLog::Open(const std::string& path, Mode mode) {
  bool read_only = mode == Mode::kReadOnly;
  if (!read_only && !path.empty()) {
    RETURN_IF_ERROR(CheckWriterFiles(path));
    CreateLogFile(path);
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<sqlite::Connection> db,
      sqlite::Connection::Open(path, read_only ? sqlite::Connection::Access::kReadOnly
                                               : sqlite::Connection::Access::kReadWriteCreate));
  if (!read_only) {
    RETURN_IF_ERROR(CheckIntegrity(*db));
  }
  RETURN_IF_ERROR(Configure(*db, read_only));
  if (!read_only) {
    // Again, now that SQLite has opened the WAL and shared-memory files: one made by someone
    // else between the first check and the open is refused too.
    RETURN_IF_ERROR(CheckWriterFiles(path));
  }
  if (read_only) {
    ASSIGN_OR_RETURN(int version, ReadSchemaVersion(*db));
    if (version == 0) {
      return absl::FailedPreconditionError(StrCat(path, ": is empty, not a tuning log"));
    }
    if (version > kSchemaVersion) {
      return absl::FailedPreconditionError(StrCat(path, ": schema version ", version,
                                                  " is newer than this build's version ",
                                                  kSchemaVersion, "; use a newer tune to open it"));
    }
    if (version < kSchemaVersion) {
      return absl::FailedPreconditionError(
          StrCat(path, ": schema version ", version, " is older than this build's version ",
                 kSchemaVersion, "; open it read-write once to migrate it"));
    }
  } else {
    ASSIGN_OR_RETURN(int found, MigrateSchema(*db));
    if (found == 0) {
      Logger("db")->info("{}: created a tuning log (schema version {})", path, kSchemaVersion);
    } else if (found != kSchemaVersion) {
      Logger("db")->info("{}: migrated schema version {} to {}", path, found, kSchemaVersion);
    }
  }
  return std::unique_ptr<TuningLog>(new TuningLog(std::move(db), path, mode, kSchemaVersion));
}

absl::Status TuningLog::RequireWritable(std::string_view operation) const {
  if (!read_only()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      StrCat(path_,
             ": the tuning log is read-only here (opened read-only, or its file system or "
             "permissions do not allow writing); cannot ",
             operation, ". Reads (jobs, best, export, tune-compile) still work"));
}

// --- Records --------------------------------------------------------------------------------

absl::StatusOr<Record> TuningLog::CommitRecord(Record record) {
  RETURN_IF_ERROR(RequireWritable("commit a record"));
  RETURN_IF_ERROR(CanonicalizeRecord(record));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(*db_));
  RETURN_IF_ERROR(tables::InsertRecord(*db_, record));
  RETURN_IF_ERROR(txn.Commit());
  return record;
}

absl::StatusOr<std::optional<Record>> TuningLog::QueryBest(const BestQuery& query) {
  ASSIGN_OR_RETURN(std::vector<Record> best, QueryTopK(query, 1));
  if (best.empty()) {
    return std::nullopt;
  }
  return std::move(best.front());
}

absl::StatusOr<std::vector<Record>> TuningLog::QueryTopK(const BestQuery& query, int k) {
  if (k < 1) {
    return absl::InvalidArgumentError(StrCat("k: ", k, " is not >= 1"));
  }
  ASSIGN_OR_RETURN(std::string workload, CanonicalWorkload(query.workload, "query.workload"));
  const tables::BestScope scope =
      query.target.empty() ? tables::BestScope::kDevice : tables::BestScope::kTarget;
  std::string target;
  if (scope == tables::BestScope::kTarget) {
    ASSIGN_OR_RETURN(target, CanonicalTarget(query.target, "query.target"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(std::optional<int64_t> workload_id, tables::FindWorkloadId(*db_, workload));
  std::optional<int64_t> context_id;
  if (scope == tables::BestScope::kTarget) {
    ASSIGN_OR_RETURN(context_id, tables::FindTargetId(*db_, target));
  } else {
    ASSIGN_OR_RETURN(context_id, tables::FindDeviceId(*db_, query.device_key));
  }
  std::vector<Record> top;
  if (!workload_id || !context_id) {
    return top;
  }
  // The fingerprint whose records answer: the query's, else the newest with records in scope
  // (every record when the device's fingerprints hold none of them).
  std::optional<std::string> fingerprint = query.fingerprint;
  if (!fingerprint) {
    std::optional<int64_t> device_id = context_id;
    if (scope == tables::BestScope::kTarget) {
      ASSIGN_OR_RETURN(sqlite::Statement device,
                       db_->Prepare("SELECT device_id FROM targets WHERE id = ?"));
      device.BindAll(*context_id);
      ASSIGN_OR_RETURN(bool row, device.Step());
      device_id = row ? std::optional<int64_t>(device.ColumnInt64(0)) : std::nullopt;
    }
    ASSIGN_OR_RETURN(sqlite::Statement newest,
                     db_->Prepare(tables::NewestFingerprintWithBestSql(scope)));
    newest.BindAll(*workload_id, *context_id, query.template_name, query.template_version,
                   query.tune_version);
    newest.Bind(6, query.flush_cache ? 1 : 0);
    newest.Bind(7, tables::EventsClockParameter(query.clocks));
    newest.Bind(8, device_id);
    ASSIGN_OR_RETURN(bool row, newest.Step());
    if (row) {
      fingerprint = newest.ColumnText(0);
    }
  }
  std::unordered_set<int64_t> seen_configs;
  const int config_id_column = tables::kRecordColumnCount;
  // With a target: the decided best first, when it is within the query.
  if (scope == tables::BestScope::kTarget) {
    ASSIGN_OR_RETURN(sqlite::Statement decided,
                     db_->Prepare(StrCat("SELECT ", tables::kRecordColumns, ", r.config_id FROM ",
                                         tables::kRecordFrom,
                                         " WHERE r.id = (SELECT record_id FROM best_configs "
                                         "WHERE workload_id = ?1 AND target_id = ?2 AND "
                                         "flush_cache = ?3)")));
    decided.BindAll(*workload_id, *context_id, query.flush_cache ? 1 : 0);
    ASSIGN_OR_RETURN(bool row, decided.Step());
    if (row) {
      ASSIGN_OR_RETURN(Record record, tables::ReadRecord(decided));
      if ((!query.template_name || record.template_name == *query.template_name) &&
          (!query.template_version || record.template_version == *query.template_version) &&
          (!query.tune_version || record.tune_version == *query.tune_version) &&
          (!fingerprint || record.measurement.device_fingerprint == *fingerprint) &&
          tables::InClockScope(record, query.clocks)) {
        seen_configs.insert(decided.ColumnInt64(config_id_column));
        top.push_back(std::move(record));
      }
    }
  }
  // Walks a partial index of successful records in time order; the optional filters are
  // checked on the way, so the first k distinct configs are the answer.
  ASSIGN_OR_RETURN(sqlite::Statement stmt, db_->Prepare(tables::BestRecordsSql(scope)));
  stmt.BindAll(*workload_id, *context_id, query.template_name, query.template_version,
               query.tune_version);
  if (scope == tables::BestScope::kTarget) {
    stmt.Bind(6, query.flush_cache ? 1 : 0);
  }
  stmt.Bind(7, tables::EventsClockParameter(query.clocks));
  stmt.Bind(8, fingerprint);
  while (static_cast<int>(top.size()) < k) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    if (!seen_configs.insert(stmt.ColumnInt64(config_id_column)).second) {
      continue;  // a slower measurement of a config already in the answer
    }
    ASSIGN_OR_RETURN(Record record, tables::ReadRecord(stmt));
    top.push_back(std::move(record));
  }
  return top;
}

absl::StatusOr<ClockedTopK> TuningLog::QueryTopKDeviceTimeFirst(BestQuery query, int k) {
  query.clocks = ClockScope::kDeviceTime;
  ClockedTopK answer;
  ASSIGN_OR_RETURN(answer.records, QueryTopK(query, k));
  if (answer.records.empty()) {
    query.clocks = ClockScope::kEvents;
    ASSIGN_OR_RETURN(answer.records, QueryTopK(query, k));
    answer.events_fallback = !answer.records.empty();
  }
  return answer;
}

absl::Status TuningLog::SetBestDecision(const BestDecision& decision) {
  RETURN_IF_ERROR(RequireWritable("store a decided best"));
  ASSIGN_OR_RETURN(std::string workload, CanonicalWorkload(decision.workload, "decision.workload"));
  ASSIGN_OR_RETURN(std::string target, CanonicalTarget(decision.target, "decision.target"));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(*db_));
  ASSIGN_OR_RETURN(
      sqlite::Statement check,
      db_->Prepare("SELECT r.workload_id, r.target_id, r.flush_cache FROM records r "
                   "CROSS JOIN workloads w ON w.id = r.workload_id CROSS JOIN "
                   "targets t ON t.id = r.target_id WHERE r.id = ?1 AND w.text = ?2 "
                   "AND t.text = ?3 AND r.flush_cache = ?4 AND r.error_kind = 'NONE'"));
  check.BindAll(decision.record_id, workload, target, decision.flush_cache ? 1 : 0);
  ASSIGN_OR_RETURN(bool found, check.Step());
  if (!found) {
    return absl::InvalidArgumentError(
        StrCat("decision.record_id: ", decision.record_id, " is not a successful record of ",
               workload, " on ", target, decision.flush_cache ? " with cold caches" : ""));
  }
  const int64_t workload_id = check.ColumnInt64(0);
  const int64_t target_id = check.ColumnInt64(1);
  ASSIGN_OR_RETURN(sqlite::Statement upsert,
                   db_->Prepare("INSERT OR REPLACE INTO best_configs (workload_id, target_id, "
                                "flush_cache, record_id, median_secs, relative_ci, job_id, "
                                "decided_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
  upsert.BindAll(workload_id, target_id, decision.flush_cache ? 1 : 0, decision.record_id,
                 decision.median_secs, decision.relative_ci, decision.job_id,
                 decision.decided_at_ms != 0 ? decision.decided_at_ms : UnixNowMs());
  RETURN_IF_ERROR(upsert.Run());
  return txn.Commit();
}

absl::StatusOr<std::optional<BestDecision>> TuningLog::GetBestDecision(std::string_view workload,
                                                                       std::string_view target,
                                                                       bool flush_cache) {
  ASSIGN_OR_RETURN(std::string canonical_workload, CanonicalWorkload(workload, "workload"));
  ASSIGN_OR_RETURN(std::string canonical_target, CanonicalTarget(std::string(target), "target"));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement stmt,
                   db_->Prepare("SELECT b.record_id, b.median_secs, b.relative_ci, b.job_id, "
                                "b.decided_at_ms FROM best_configs b CROSS JOIN workloads w ON "
                                "w.id = b.workload_id CROSS JOIN targets t ON t.id = b.target_id "
                                "WHERE w.text = ?1 AND t.text = ?2 AND b.flush_cache = ?3"));
  stmt.BindAll(canonical_workload, canonical_target, flush_cache ? 1 : 0);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) {
    return std::nullopt;
  }
  return BestDecision{canonical_workload,          canonical_target,     flush_cache,
                      stmt.ColumnInt64(0),         stmt.ColumnDouble(1), stmt.ColumnDouble(2),
                      stmt.ColumnOptionalInt64(3), stmt.ColumnInt64(4)};
}

absl::StatusOr<std::optional<Record>> TuningLog::GetRecord(int64_t id) {
  ASSIGN_OR_RETURN(std::vector<Record> records,
                   ListRecords(RecordFilter{.after_id = id - 1, .limit = 1}));
  if (records.empty() || records.front().id != id) {
    return std::nullopt;
  }
  return std::move(records.front());
}

absl::StatusOr<std::vector<Record>> TuningLog::ListRecords(const RecordFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(std::optional<sqlite::Statement> stmt,
                   tables::PrepareRecordQuery(*db_, filter, /*count_only=*/false));
  std::vector<Record> records;
  if (!stmt) {
    return records;
  }
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) {
      break;
    }
    ASSIGN_OR_RETURN(Record record, tables::ReadRecord(*stmt));
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<int64_t> TuningLog::CountRecords(const RecordFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(std::optional<sqlite::Statement> stmt,
                   tables::PrepareRecordQuery(*db_, filter, /*count_only=*/true));
  if (!stmt) {
    return 0;
  }
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  TUNE_CHECK(row) << "COUNT(*) returned no row";
  return stmt->ColumnInt64(0);
}

absl::StatusOr<std::vector<ConfigKey>> TuningLog::MeasuredConfigs(const std::string& workload,
                                                                  const std::string& target) {
  ASSIGN_OR_RETURN(std::string canonical_workload, CanonicalWorkload(workload, "workload"));
  ASSIGN_OR_RETURN(std::string canonical_target, CanonicalTarget(target, "target"));
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ConfigKey> configs;
  ASSIGN_OR_RETURN(std::optional<int64_t> workload_id,
                   tables::FindWorkloadId(*db_, canonical_workload));
  ASSIGN_OR_RETURN(std::optional<int64_t> target_id, tables::FindTargetId(*db_, canonical_target));
  if (!workload_id || !target_id) {
    return configs;
  }
  ASSIGN_OR_RETURN(
      sqlite::Statement stmt,
      db_->Prepare(StrCat("SELECT c.template, c.template_version, c.text "
                          "FROM records r CROSS JOIN configs c ON c.id = r.config_id "
                          "WHERE r.workload_id = ?1 AND r.target_id = ?2 "
                          "AND r.error_kind IN ",
                          VerdictKindsSql(),
                          " AND r.device_fingerprint = COALESCE((SELECT f.text FROM "
                          "fingerprints f WHERE f.device_id = r.device_id ORDER BY "
                          "f.first_seen_ms DESC, f.id DESC LIMIT 1), r.device_fingerprint)"
                          " GROUP BY r.config_id ORDER BY MIN(r.id)")));
  stmt.BindAll(*workload_id, *target_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    configs.push_back({stmt.ColumnText(0), stmt.ColumnInt(1), stmt.ColumnText(2)});
  }
  return configs;
}

absl::StatusOr<std::vector<TemplateTrial>> TuningLog::TrialsOfTemplate(
    const std::string& template_name, int template_version, const std::string& target,
    bool flush_cache, const std::string& except_workload, int limit) {
  ASSIGN_OR_RETURN(std::string canonical_target, CanonicalTarget(target, "target"));
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TemplateTrial> trials;
  ASSIGN_OR_RETURN(std::optional<int64_t> target_id, tables::FindTargetId(*db_, canonical_target));
  if (!target_id || limit < 1) {
    return trials;
  }
  ASSIGN_OR_RETURN(
      sqlite::Statement stmt,
      db_->Prepare(StrCat("SELECT w.text, c.text, r.median_secs, r.error_kind, r.timing "
                          "FROM records r INDEXED BY records_by_target "
                          "CROSS JOIN configs c ON c.id = r.config_id "
                          "CROSS JOIN workloads w ON w.id = r.workload_id "
                          "WHERE r.target_id = ?1 AND c.template = ?2 "
                          "AND c.template_version = ?3 AND r.flush_cache = ?4 "
                          "AND w.text <> ?5 AND r.error_kind IN ",
                          VerdictKindsSql(), " ORDER BY r.id DESC LIMIT ?6")));
  stmt.BindAll(*target_id, template_name, template_version, flush_cache ? 1 : 0, except_workload,
               limit);
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    Measurement m;
    m.error = ParseErrorKind(stmt.ColumnText(3)).value_or(ErrorKind::kRuntimeCrash);
    if (std::optional<double> median = stmt.ColumnOptionalDouble(2)) {
      m.round_secs = {*median};
    }
    // Records from before their timing was kept were timed with the defaults.
    const int timeout_ms = TimingFromJson(stmt.ColumnText(4)).value_or(TimingOptions()).timeout_ms;
    trials.push_back({stmt.ColumnText(0), stmt.ColumnText(1), m.error, LearnedSecs(m, timeout_ms)});
  }
  return trials;
}

// --- Export / import ------------------------------------------------------------------------

absl::Status TuningLog::ExportJsonl(std::ostream& out, const RecordFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(std::optional<sqlite::Statement> stmt,
                   tables::PrepareRecordQuery(*db_, filter, /*count_only=*/false));
  if (!stmt) {
    return absl::OkStatus();
  }
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) {
      break;
    }
    ASSIGN_OR_RETURN(Record record, tables::ReadRecord(*stmt));
    out << RecordToJsonLine(record) << '\n';
    if (!out) {
      return absl::UnavailableError(StrCat(path_, ": export: writing the output failed"));
    }
  }
  out.flush();
  if (!out) {
    return absl::UnavailableError(StrCat(path_, ": export: writing the output failed"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TuningLog::ImportStats> TuningLog::ImportJsonl(std::istream& in) {
  RETURN_IF_ERROR(RequireWritable("import records"));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(*db_));
  ImportStats stats;
  std::string line;
  for (int64_t line_number = 1; std::getline(in, line); ++line_number) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (line.find_first_not_of(" \t") == std::string::npos) {
      continue;
    }
    auto invalid = [line_number](const absl::Status& status) {
      return absl::InvalidArgumentError(
          StrCat("line ", line_number, ": ", std::string(status.message())));
    };
    absl::StatusOr<Record> record = RecordFromJsonLine(line);
    if (!record.ok()) {
      return invalid(record.status());
    }
    if (absl::Status valid = CanonicalizeRecord(*record); !valid.ok()) {
      return invalid(valid);
    }
    ASSIGN_OR_RETURN(bool present, tables::HasRecordUid(*db_, record->uid));
    if (present) {
      ++stats.skipped_duplicates;
      continue;
    }
    RETURN_IF_ERROR(tables::InsertRecord(*db_, *record));
    ++stats.imported;
  }
  if (in.bad()) {
    return absl::UnavailableError(StrCat(path_, ": import: reading the input failed"));
  }
  RETURN_IF_ERROR(txn.Commit());
  return stats;
}

}  // namespace tune
