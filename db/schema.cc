#include "db/schema.h"

#include "common/clock.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/record.h"

namespace tune {
namespace {

// Version 1: the tables. Workloads, devices, targets and configs are interned; a record refers
// to them by id. median_secs is set exactly when the trial succeeded.
constexpr std::string_view kV1Tables = R"sql(
CREATE TABLE schema_version (
  version INTEGER PRIMARY KEY,
  applied_at_ms INTEGER NOT NULL
);
CREATE TABLE workloads (
  id INTEGER PRIMARY KEY,
  text TEXT NOT NULL UNIQUE,
  op TEXT NOT NULL
);
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  device_key TEXT NOT NULL UNIQUE
);
CREATE TABLE targets (
  id INTEGER PRIMARY KEY,
  text TEXT NOT NULL UNIQUE,
  device_id INTEGER NOT NULL REFERENCES devices(id)
);
CREATE TABLE configs (
  id INTEGER PRIMARY KEY,
  template TEXT NOT NULL,
  template_version INTEGER NOT NULL,
  text TEXT NOT NULL,
  UNIQUE (template, template_version, text)
);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target TEXT NOT NULL,
  device_key TEXT NOT NULL,
  strategy TEXT NOT NULL,
  trials INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  seed INTEGER NOT NULL,
  timing TEXT NOT NULL,
  client TEXT NOT NULL,
  state TEXT NOT NULL,
  trials_done INTEGER NOT NULL DEFAULT 0,
  trials_failed INTEGER NOT NULL DEFAULT 0,
  search_state TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  started_at_ms INTEGER NOT NULL DEFAULT 0,
  finished_at_ms INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE records (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  config_id INTEGER NOT NULL REFERENCES configs(id),
  error_kind TEXT NOT NULL,
  error_message TEXT NOT NULL,
  round_secs TEXT NOT NULL,
  number INTEGER NOT NULL,
  median_secs REAL,
  device_fingerprint TEXT NOT NULL,
  tune_version TEXT NOT NULL,
  llvm_version TEXT NOT NULL,
  job_id INTEGER REFERENCES jobs(id),
  worker TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  CHECK ((error_kind = 'NONE') = (median_secs IS NOT NULL))
);
)sql";

// Version 2: indexes for the queries that must stay fast at millions of records. The best-config
// index holds successful records only, ordered by time within (workload, device).
constexpr std::string_view kV2Indexes = R"sql(
CREATE INDEX records_best ON records (workload_id, device_id, median_secs)
  WHERE error_kind = 'NONE';
CREATE INDEX records_by_workload_target ON records (workload_id, target_id, config_id);
CREATE INDEX records_by_job ON records (job_id, median_secs) WHERE job_id IS NOT NULL;
CREATE INDEX jobs_active ON jobs (priority DESC, id) WHERE state IN ('QUEUED', 'RUNNING');
)sql";

// Version 3: what a job needs becomes columns of its row (version 2 kept the template
// restriction, early stopping, name and improvement count inside the search state, as
// {"version":1,"templates":[...],"early_stopping":N,"name":"...","since_improvement":N,
// "search":"<search state>"}); records keep how they were timed, and "best" compares records of
// one target and cache state through their own index.
constexpr std::string_view kV3JobColumnsAndRecordContext = R"sql(
ALTER TABLE jobs ADD COLUMN templates TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN early_stopping INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN since_improvement INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET
  templates = COALESCE(
      (SELECT group_concat(value, ',') FROM json_each(jobs.search_state, '$.templates')), ''),
  early_stopping = COALESCE(json_extract(search_state, '$.early_stopping'), 0),
  name = COALESCE(json_extract(search_state, '$.name'), ''),
  since_improvement = COALESCE(json_extract(search_state, '$.since_improvement'), 0),
  search_state = COALESCE(json_extract(search_state, '$.search'), '')
WHERE json_valid(search_state) AND json_type(search_state) = 'object'
  AND json_extract(search_state, '$.version') = 1;
ALTER TABLE records ADD COLUMN flush_cache INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN timing TEXT NOT NULL DEFAULT '';
CREATE INDEX records_best_by_target ON records (workload_id, target_id, flush_cache, median_secs)
  WHERE error_kind = 'NONE';
)sql";

// Version 4: records say how the external libraries their kernels called ran (version, kernel
// set or ISA, last error), so that a library held back by its environment shows in the log.
constexpr std::string_view kV4LibraryInfo = R"sql(
ALTER TABLE records ADD COLUMN library_info TEXT NOT NULL DEFAULT '';
)sql";

// Version 5: a job may decline to learn from other workloads' records (transfer), and those
// records are found by target, newest first, without a scan of the log.
constexpr std::string_view kV5Transfer = R"sql(
ALTER TABLE jobs ADD COLUMN transfer INTEGER NOT NULL DEFAULT 1;
CREATE INDEX records_by_target ON records (target_id, id);
)sql";

// Version 6: model jobs. A model job's row has task_count tasks, each a job of its own whose
// parent_id names it and whose weight says how often its workload runs per inference.
constexpr std::string_view kV6ModelJobs = R"sql(
ALTER TABLE jobs ADD COLUMN parent_id INTEGER REFERENCES jobs(id);
ALTER TABLE jobs ADD COLUMN weight REAL NOT NULL DEFAULT 1;
ALTER TABLE jobs ADD COLUMN task_count INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_parent ON jobs (parent_id, id) WHERE parent_id IS NOT NULL;
)sql";

// Version 7: finalists. Records say whether they re-measure a finalist at a job's end, and
// best_configs holds the decided best per workload, target and cache state: the finalist that
// won on the re-measured figures (a challenger replaces it only when faster beyond the noise).
constexpr std::string_view kV7Finalists = R"sql(
ALTER TABLE records ADD COLUMN final INTEGER NOT NULL DEFAULT 0;
CREATE TABLE best_configs (
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  flush_cache INTEGER NOT NULL,
  record_id INTEGER NOT NULL REFERENCES records(id),
  median_secs REAL NOT NULL,
  relative_ci REAL NOT NULL,
  job_id INTEGER REFERENCES jobs(id),
  decided_at_ms INTEGER NOT NULL,
  PRIMARY KEY (workload_id, target_id, flush_cache)
);
)sql";

// Client tokens (common/token.h): the secret only as its SHA-256; a revoked token keeps its row,
// so a log that ever had tokens keeps requiring them.
constexpr std::string_view kV8Tokens = R"sql(
CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  revoked_at_ms INTEGER NOT NULL DEFAULT 0
);
)sql";

// Version 9: GPU records say how they were timed. round_secs hold device time (gpu_clock
// 'graph': calls replayed from a captured graph) or, where capture was refused and in every GPU
// record made before, the call-by-call reading (gpu_clock 'events'); host_round_secs keep the
// call-by-call reading beside graph-timed rounds. CPU records and failed trials have no GPU
// clock ('').
constexpr std::string_view kV9GpuClock = R"sql(
ALTER TABLE records ADD COLUMN gpu_clock TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN host_round_secs TEXT NOT NULL DEFAULT '[]';
UPDATE records SET gpu_clock = 'events' WHERE error_kind = 'NONE' AND device_id IN
  (SELECT id FROM devices WHERE device_key LIKE 'cuda/%' OR device_key LIKE 'rocm/%');
)sql";

// Version 10: records name the code they measured (its artifact hash), and code that crashed or
// computed wrong on two workers of a device key and fingerprint is quarantined there
// (db/quarantine.h). An entry is grounded by the crash records of (after_record_id,
// last_record_id]; a lifted entry keeps its row, and at most one entry per code, device and
// fingerprint holds at a time.
constexpr std::string_view kV10Quarantine = R"sql(
ALTER TABLE records ADD COLUMN artifact_hash TEXT NOT NULL DEFAULT '';
CREATE INDEX records_by_artifact ON records (artifact_hash, device_id, id)
  WHERE artifact_hash != '';
CREATE TABLE quarantine (
  id INTEGER PRIMARY KEY,
  artifact_hash TEXT NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  fingerprint TEXT NOT NULL,
  after_record_id INTEGER NOT NULL,
  last_record_id INTEGER NOT NULL REFERENCES records(id),
  created_at_ms INTEGER NOT NULL,
  lifted_at_ms INTEGER NOT NULL DEFAULT 0,
  lifted_by TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX quarantine_holding ON quarantine (artifact_hash, device_id, fingerprint)
  WHERE lifted_at_ms = 0;
)sql";

// Version 11: each device's fingerprints in the order they were first seen (a worker that
// registered with one, or its first record), so that "best" prefers the newest fingerprint's
// records and uses an older one's only where the newest has none (db/fingerprint_log.cc).
// Fingerprints already in the log are seen when their first record was made. A job may be a
// reverify job, which re-measures the best configs under the newest fingerprint.
constexpr std::string_view kV11Fingerprints = R"sql(
CREATE TABLE fingerprints (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  text TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  UNIQUE (device_id, text)
);
INSERT INTO fingerprints (device_id, text, first_seen_ms)
  SELECT device_id, device_fingerprint, MIN(created_at_ms) FROM records
  GROUP BY device_id, device_fingerprint ORDER BY MIN(created_at_ms), MIN(id);
CREATE INDEX records_by_target_fingerprint
  ON records (workload_id, target_id, flush_cache, device_fingerprint) WHERE error_kind = 'NONE';
CREATE INDEX records_by_device_fingerprint
  ON records (workload_id, device_id, device_fingerprint) WHERE error_kind = 'NONE';
ALTER TABLE jobs ADD COLUMN reverify INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 12: a model job may tune a shape range (common/shape_range.h): its text, whose sizes
// are the job's tasks.
constexpr std::string_view kV12ShapeRanges = R"sql(
ALTER TABLE jobs ADD COLUMN shape_range TEXT NOT NULL DEFAULT '';
)sql";

}  // namespace

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> kMigrations = {
      {1, "tables", kV1Tables},
      {2, "indexes for best queries, per-job records and job dispatch", kV2Indexes},
      {3, "job options as columns; records keep their timing; best per target and cache state",
       kV3JobColumnsAndRecordContext},
      {4, "records say how the libraries their kernels called ran", kV4LibraryInfo},
      {5, "jobs may decline transfer; records by target", kV5Transfer},
      {6, "model jobs and their tasks", kV6ModelJobs},
      {7, "finalists' re-measurements and the decided best per workload and target", kV7Finalists},
      {8, "client tokens with roles", kV8Tokens},
      {9, "GPU records say how they were timed (graph or events) and keep the host's reading",
       kV9GpuClock},
      {10, "records name their artifact; code that crashed on two workers is quarantined",
       kV10Quarantine},
      {11,
       "each device's fingerprints in the order first seen; best prefers the newest; reverify jobs",
       kV11Fingerprints},
      {12, "jobs that tune a shape range", kV12ShapeRanges},
  };
  return kMigrations;
}

absl::StatusOr<int> ReadSchemaVersion(sqlite::Connection& db) {
  ASSIGN_OR_RETURN(
      sqlite::Statement count,
      db.Prepare("SELECT COUNT(*), COALESCE(SUM(name = 'schema_version'), 0) FROM sqlite_master "
                 "WHERE type = 'table'"));
  ASSIGN_OR_RETURN(bool row, count.Step());
  TUNE_CHECK(row) << "COUNT(*) returned no row";
  int64_t tables = count.ColumnInt64(0);
  bool has_version_table = count.ColumnInt64(1) > 0;
  if (tables == 0) {
    return 0;
  }
  if (!has_version_table) {
    return absl::FailedPreconditionError(StrCat(
        db.path(), ": holds ", tables, " tables but no schema_version table; not a tuning log"));
  }
  ASSIGN_OR_RETURN(sqlite::Statement max, db.Prepare("SELECT MAX(version) FROM schema_version"));
  ASSIGN_OR_RETURN(row, max.Step());
  if (!row || max.IsNull(0)) {
    return absl::FailedPreconditionError(StrCat(db.path(), ": the schema_version table is empty"));
  }
  return max.ColumnInt(0);
}

absl::StatusOr<int> MigrateSchema(sqlite::Connection& db) {
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(db));
  ASSIGN_OR_RETURN(int found, ReadSchemaVersion(db));
  if (found > kSchemaVersion) {
    return absl::FailedPreconditionError(StrCat(db.path(), ": schema version ", found,
                                                " is newer than this build's version ",
                                                kSchemaVersion, "; use a newer tune to open it"));
  }
  for (const Migration& step : Migrations()) {
    if (step.version <= found) {
      continue;
    }
    absl::Status status = db.Execute(step.sql);
    if (!status.ok()) {
      return absl::Status(status.code(), StrCat("migrating to schema version ", step.version, " (",
                                                step.name, "): ", std::string(status.message())));
    }
    ASSIGN_OR_RETURN(sqlite::Statement insert,
                     db.Prepare("INSERT INTO schema_version (version, applied_at_ms) "
                                "VALUES (?, ?)"));
    insert.BindAll(step.version, UnixNowMs());
    RETURN_IF_ERROR(insert.Run());
  }
  RETURN_IF_ERROR(txn.Commit());
  return found;
}

}  // namespace tune
