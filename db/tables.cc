#include "db/tables.h"

#include <charconv>

#include "common/clock.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "db/job.h"
#include "nlohmann/json.hpp"

namespace tune::tables {

std::vector<std::string> SplitTemplateNames(std::string_view text) {
  std::vector<std::string> names;
  for (std::string_view name : Split(text, ',', /*skip_empty=*/true)) {
    names.emplace_back(name);
  }
  return names;
}

namespace {

// Runs a query selecting one integer; nullopt when it returns no row.
template <typename... Args>
absl::StatusOr<std::optional<int64_t>> QueryId(sqlite::Connection& db, std::string_view sql,
                                               const Args&... args) {
  ASSIGN_OR_RETURN(sqlite::Statement stmt, db.Prepare(sql));
  stmt.BindAll(args...);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) {
    return std::nullopt;
  }
  return stmt.ColumnInt64(0);
}

// Runs an INSERT and returns the new row's id.
template <typename... Args>
absl::StatusOr<int64_t> InsertRow(sqlite::Connection& db, std::string_view sql,
                                  const Args&... args) {
  ASSIGN_OR_RETURN(sqlite::Statement stmt, db.Prepare(sql));
  stmt.BindAll(args...);
  RETURN_IF_ERROR(stmt.Run());
  return db.LastInsertRowId();
}

absl::StatusOr<int64_t> InternTarget(sqlite::Connection& db, const std::string& target) {
  ASSIGN_OR_RETURN(std::optional<int64_t> id, FindTargetId(db, target));
  if (id) {
    return *id;
  }
  // A target's own device is the one its text names, whichever device measured a record.
  absl::StatusOr<Target> parsed = Target::Parse(target);
  TUNE_CHECK(parsed.ok()) << "interning a target that does not parse: " << target;
  ASSIGN_OR_RETURN(int64_t device_id, InternDevice(db, parsed->DeviceKey()));
  return InsertRow(db, "INSERT INTO targets (text, device_id) VALUES (?, ?)", target, device_id);
}

absl::StatusOr<int64_t> InternConfig(sqlite::Connection& db, const std::string& template_name,
                                     int template_version, const std::string& config) {
  ASSIGN_OR_RETURN(std::optional<int64_t> id,
                   QueryId(db,
                           "SELECT id FROM configs WHERE template = ? AND template_version = ? "
                           "AND text = ?",
                           template_name, template_version, config));
  if (id) {
    return *id;
  }
  return InsertRow(db, "INSERT INTO configs (template, template_version, text) VALUES (?, ?, ?)",
                   template_name, template_version, config);
}

absl::Status DataLoss(int64_t id, std::string_view what) {
  return absl::DataLossError(StrCat("record ", id, ": ", what));
}

// Reading a record is most of a best query's time, so the two JSON columns are decoded
// without the general JSON parser where that gives the same answer.

// round_secs as InsertRecord stores it: a JSON array of numbers, e.g. [1.5e-05,1.52e-05].
// nullopt for any other text (the caller falls back to the JSON parser and its diagnostics).
std::optional<std::vector<double>> ParseNumberArray(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return std::nullopt;
  }
  std::vector<double> out;
  const char* p = text.data() + 1;
  const char* const end = text.data() + text.size() - 1;
  if (p == end) {
    return out;
  }
  auto digits = [&p, end] {
    const char* start = p;
    while (p < end && *p >= '0' && *p <= '9') {
      ++p;
    }
    return p > start;
  };
  while (true) {
    // One number in JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    const char* start = p;
    if (p < end && *p == '-') {
      ++p;
    }
    const char* int_start = p;
    if (!digits() || (*int_start == '0' && p - int_start > 1)) {
      return std::nullopt;
    }
    bool integer = true;
    if (p < end && *p == '.') {
      ++p;
      integer = false;
      if (!digits()) {
        return std::nullopt;
      }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      integer = false;
      if (p < end && (*p == '+' || *p == '-')) {
        ++p;
      }
      if (!digits()) {
        return std::nullopt;
      }
    }
    double value = 0;
    auto [next, ec] = std::from_chars(start, p, value);
    if (ec != std::errc() || next != p) {
      return std::nullopt;  // out of range: the JSON parser decides
    }
    // The JSON parser reads an integer as one, so "-0" is +0.
    out.push_back(integer && value == 0 ? 0.0 : value);
    if (p == end) {
      return out;
    }
    if (*p != ',') {
      return std::nullopt;
    }
    ++p;
  }
}

absl::StatusOr<std::vector<double>> DecodeRoundSecs(int64_t id, const std::string& text) {
  if (std::optional<std::vector<double>> rounds = ParseNumberArray(text)) {
    return *std::move(rounds);
  }
  nlohmann::json rounds = nlohmann::json::parse(text, nullptr, false);
  if (!rounds.is_array()) {
    return DataLoss(id, "round_secs is not a JSON array");
  }
  std::vector<double> out;
  for (const nlohmann::json& secs : rounds) {
    if (!secs.is_number()) {
      return DataLoss(id, "round_secs holds a non-number");
    }
    out.push_back(secs.get<double>());
  }
  return out;
}

// A log holds few distinct timings (one per job's options): each thread keeps the last one it
// decoded.
absl::StatusOr<TimingOptions> DecodeTiming(const std::string& text) {
  thread_local std::string last_text;
  thread_local TimingOptions last;
  if (!last_text.empty() && text == last_text) {
    return last;
  }
  ASSIGN_OR_RETURN(TimingOptions timing, TimingFromJson(text));
  last_text = text;
  last = timing;
  return timing;
}

constexpr std::string_view kJobColumns = R"sql(
SELECT j.id, w.text, j.target, j.device_key, j.strategy, j.trials, j.priority, j.seed, j.timing,
  j.client, j.state, j.trials_done, j.trials_failed, j.search_state, j.error, j.created_at_ms,
  j.updated_at_ms, j.started_at_ms, j.finished_at_ms, j.templates, j.early_stopping, j.name, j.transfer,
  j.since_improvement, j.parent_id, j.weight, j.task_count,
  (SELECT b.id FROM records b WHERE b.job_id = j.id AND b.median_secs IS NOT NULL
   ORDER BY b.median_secs, b.id LIMIT 1),
  (SELECT MIN(b.median_secs) FROM records b WHERE b.job_id = j.id AND b.median_secs IS NOT NULL),
  j.reverify, j.shape_range
FROM jobs j CROSS JOIN workloads w ON w.id = j.workload_id
)sql";

absl::StatusOr<Job> ReadJob(const sqlite::Statement& row) {
  Job job;
  job.id = row.ColumnInt64(0);
  job.spec.workload = row.ColumnText(1);
  job.spec.target = row.ColumnText(2);
  job.spec.device_key = row.ColumnText(3);
  job.spec.strategy = row.ColumnText(4);
  job.spec.trials = row.ColumnInt(5);
  job.spec.priority = row.ColumnInt(6);
  job.spec.seed = static_cast<uint64_t>(row.ColumnInt64(7));
  absl::StatusOr<TimingOptions> timing = TimingFromJson(row.ColumnText(8));
  if (!timing.ok()) {
    return absl::DataLossError(
        StrCat("job ", job.id, ": ", std::string(timing.status().message())));
  }
  job.spec.timing = *timing;
  job.spec.client = row.ColumnText(9);
  std::string state = row.ColumnText(10);
  std::optional<JobState> parsed = ParseJobState(state);
  if (!parsed) {
    return absl::DataLossError(StrCat("job ", job.id, ": unknown state '", state, "'"));
  }
  job.state = *parsed;
  job.trials_done = row.ColumnInt(11);
  job.trials_failed = row.ColumnInt(12);
  job.search_state = row.ColumnText(13);
  job.error = row.ColumnText(14);
  job.created_at_ms = row.ColumnInt64(15);
  job.updated_at_ms = row.ColumnInt64(16);
  job.started_at_ms = row.ColumnInt64(17);
  job.finished_at_ms = row.ColumnInt64(18);
  job.spec.templates = SplitTemplateNames(row.ColumnText(19));
  job.spec.early_stopping = row.ColumnInt(20);
  job.spec.name = row.ColumnText(21);
  job.spec.transfer = row.ColumnInt(22) != 0;
  job.since_improvement = row.ColumnInt(23);
  job.spec.parent = row.ColumnOptionalInt64(24).value_or(0);
  job.spec.weight = row.ColumnDouble(25);
  job.spec.tasks.resize(row.ColumnInt(26));  // filled in by FillTasks
  job.best_record_id = row.ColumnOptionalInt64(27);
  job.best_secs = row.ColumnOptionalDouble(28);
  job.spec.reverify = row.ColumnInt(29) != 0;
  job.spec.range = row.ColumnText(30);
  return job;
}

}  // namespace

absl::StatusOr<int64_t> InternDevice(sqlite::Connection& db, const std::string& device_key) {
  ASSIGN_OR_RETURN(std::optional<int64_t> id, FindDeviceId(db, device_key));
  if (id) {
    return *id;
  }
  return InsertRow(db, "INSERT INTO devices (device_key) VALUES (?)", device_key);
}

absl::StatusOr<std::optional<int64_t>> FindWorkloadId(sqlite::Connection& db,
                                                      const std::string& workload) {
  return QueryId(db, "SELECT id FROM workloads WHERE text = ?", workload);
}

absl::StatusOr<std::optional<int64_t>> FindDeviceId(sqlite::Connection& db,
                                                    const std::string& device_key) {
  return QueryId(db, "SELECT id FROM devices WHERE device_key = ?", device_key);
}

absl::StatusOr<std::optional<int64_t>> FindTargetId(sqlite::Connection& db,
                                                    const std::string& target) {
  return QueryId(db, "SELECT id FROM targets WHERE text = ?", target);
}

absl::StatusOr<int64_t> InternWorkload(sqlite::Connection& db, const std::string& workload) {
  ASSIGN_OR_RETURN(std::optional<int64_t> id, FindWorkloadId(db, workload));
  if (id) {
    return *id;
  }
  // The canonical text starts with the operator's name: "gemm:M=...".
  std::string op(workload.substr(0, workload.find(':')));
  return InsertRow(db, "INSERT INTO workloads (text, op) VALUES (?, ?)", workload, op);
}

absl::StatusOr<bool> HasRecordUid(sqlite::Connection& db, const std::string& uid) {
  ASSIGN_OR_RETURN(std::optional<int64_t> id,
                   QueryId(db, "SELECT id FROM records WHERE uid = ?", uid));
  return id.has_value();
}

absl::Status InsertRecord(sqlite::Connection& db, Record& record) {
  if (record.uid.empty()) {
    record.uid = NewRecordUid();
  }
  if (record.created_at_ms == 0) {
    record.created_at_ms = UnixNowMs();
  }
  if (record.job_id) {
    ASSIGN_OR_RETURN(std::optional<int64_t> job,
                     QueryId(db, "SELECT id FROM jobs WHERE id = ?", *record.job_id));
    if (!job) {
      return absl::InvalidArgumentError(
          StrCat("record.job_id: ", *record.job_id, " names no job in ", db.path()));
    }
  }
  ASSIGN_OR_RETURN(int64_t workload_id, InternWorkload(db, record.workload));
  ASSIGN_OR_RETURN(int64_t target_id, InternTarget(db, record.target));
  ASSIGN_OR_RETURN(int64_t device_id, InternDevice(db, record.device_key));
  ASSIGN_OR_RETURN(int64_t config_id,
                   InternConfig(db, record.template_name, record.template_version, record.config));
  const Measurement& m = record.measurement;
  std::optional<double> median;
  if (m.ok()) {
    median = m.MedianSecs();
  }
  absl::StatusOr<int64_t> id = InsertRow(
      db,
      "INSERT INTO records (uid, workload_id, target_id, device_id, config_id, error_kind, "
      "error_message, round_secs, number, median_secs, device_fingerprint, tune_version, "
      "llvm_version, job_id, worker, created_at_ms, flush_cache, timing, library_info, final, "
      "gpu_clock, host_round_secs, artifact_hash) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      record.uid, workload_id, target_id, device_id, config_id, ErrorKindName(m.error), m.message,
      nlohmann::json(m.round_secs).dump(), m.number, median, m.device_fingerprint,
      record.tune_version, record.llvm_version, record.job_id, record.worker, record.created_at_ms,
      ColdCache(record) ? 1 : 0, record.timing ? TimingToJson(*record.timing) : std::string(),
      m.library_info, record.final ? 1 : 0, GpuClockName(m.gpu_clock),
      nlohmann::json(m.host_round_secs).dump(), record.artifact_hash);
  if (id.status().code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(
        StrCat("record uid '", record.uid, "' is already in ", db.path()));
  }
  RETURN_IF_ERROR(id.status());
  record.id = *id;
  RETURN_IF_ERROR(
      NoteFingerprint(db, device_id, m.device_fingerprint, record.created_at_ms).status());
  return NoteQuarantine(db, record, device_id);
}

const std::string_view kRecordColumns =
    "r.id, r.uid, w.text, t.text, d.device_key, c.template, c.template_version, c.text, "
    "r.error_kind, r.error_message, r.round_secs, r.number, r.device_fingerprint, "
    "r.tune_version, r.llvm_version, r.job_id, r.worker, r.created_at_ms, r.timing, "
    "r.library_info, r.final, r.gpu_clock, r.host_round_secs, r.artifact_hash";

// CROSS JOIN keeps records as the outer loop, so the records indexes drive every query.
const std::string_view kRecordFrom =
    "records r CROSS JOIN workloads w ON w.id = r.workload_id "
    "CROSS JOIN targets t ON t.id = r.target_id "
    "CROSS JOIN devices d ON d.id = r.device_id "
    "CROSS JOIN configs c ON c.id = r.config_id";

absl::StatusOr<Record> ReadRecord(const sqlite::Statement& row) {
  Record r;
  r.id = row.ColumnInt64(0);
  r.uid = row.ColumnText(1);
  r.workload = row.ColumnText(2);
  r.target = row.ColumnText(3);
  r.device_key = row.ColumnText(4);
  r.template_name = row.ColumnText(5);
  r.template_version = row.ColumnInt(6);
  r.config = row.ColumnText(7);
  std::string kind = row.ColumnText(8);
  std::optional<ErrorKind> error = ParseErrorKind(kind);
  if (!error) {
    return DataLoss(r.id, StrCat("unknown error kind '", kind, "'"));
  }
  r.measurement.error = *error;
  r.measurement.message = row.ColumnText(9);
  ASSIGN_OR_RETURN(r.measurement.round_secs, DecodeRoundSecs(r.id, row.ColumnText(10)));
  r.measurement.number = row.ColumnInt(11);
  r.measurement.device_fingerprint = row.ColumnText(12);
  r.tune_version = row.ColumnText(13);
  r.llvm_version = row.ColumnText(14);
  r.job_id = row.ColumnOptionalInt64(15);
  r.worker = row.ColumnText(16);
  r.created_at_ms = row.ColumnInt64(17);
  if (std::string timing = row.ColumnText(18); !timing.empty()) {
    absl::StatusOr<TimingOptions> parsed = DecodeTiming(timing);
    if (!parsed.ok()) {
      return DataLoss(r.id, std::string(parsed.status().message()));
    }
    r.timing = *parsed;
  }
  r.measurement.library_info = row.ColumnText(19);
  r.final = row.ColumnInt(20) != 0;
  std::string clock = row.ColumnText(21);
  std::optional<GpuClock> gpu_clock = ParseGpuClock(clock);
  if (!gpu_clock) {
    return DataLoss(r.id, StrCat("unknown gpu_clock '", clock, "' (expected '', events or graph)"));
  }
  r.measurement.gpu_clock = *gpu_clock;
  ASSIGN_OR_RETURN(r.measurement.host_round_secs, DecodeRoundSecs(r.id, row.ColumnText(22)));
  r.artifact_hash = row.ColumnText(23);
  return r;
}

std::string BestRecordsSql(BestScope scope) {
  std::string_view context =
      scope == BestScope::kTarget ? "r.target_id = ?2 AND r.flush_cache = ?6" : "r.device_id = ?2";
  return StrCat("SELECT ", kRecordColumns, ", r.config_id FROM ", kRecordFrom,
                " WHERE r.workload_id = ?1 AND ", context,
                " AND r.error_kind = 'NONE'"
                " AND (?3 IS NULL OR c.template = ?3)"
                " AND (?4 IS NULL OR c.template_version = ?4)"
                " AND (?5 IS NULL OR r.tune_version = ?5)"
                " AND (?7 IS NULL OR (r.gpu_clock = 'events') = ?7)"
                " AND (?8 IS NULL OR r.device_fingerprint = ?8)"
                " ORDER BY r.median_secs, r.id");
}

std::string NewestFingerprintWithBestSql(BestScope scope) {
  std::string_view context =
      scope == BestScope::kTarget ? "r.target_id = ?2 AND r.flush_cache = ?6" : "r.device_id = ?2";
  return StrCat(
      "SELECT f.text FROM fingerprints f WHERE f.device_id = ?8 AND EXISTS ("
      "SELECT 1 FROM records r CROSS JOIN configs c ON c.id = r.config_id"
      " WHERE r.workload_id = ?1 AND ",
      context,
      " AND r.error_kind = 'NONE' AND r.device_fingerprint = f.text"
      " AND (?3 IS NULL OR c.template = ?3)"
      " AND (?4 IS NULL OR c.template_version = ?4)"
      " AND (?5 IS NULL OR r.tune_version = ?5)"
      " AND (?7 IS NULL OR (r.gpu_clock = 'events') = ?7))"
      " ORDER BY f.first_seen_ms DESC, f.id DESC LIMIT 1");
}

std::optional<int> EventsClockParameter(ClockScope clocks) {
  switch (clocks) {
    case ClockScope::kAny:
      return std::nullopt;
    case ClockScope::kDeviceTime:
      return 0;
    case ClockScope::kEvents:
      return 1;
  }
  return std::nullopt;
}

bool InClockScope(const Record& record, ClockScope clocks) {
  const bool events = record.measurement.gpu_clock == GpuClock::kEvents;
  switch (clocks) {
    case ClockScope::kAny:
      return true;
    case ClockScope::kDeviceTime:
      return !events;
    case ClockScope::kEvents:
      return events;
  }
  return true;
}

absl::StatusOr<std::optional<sqlite::Statement>> PrepareRecordQuery(sqlite::Connection& db,
                                                                    const RecordFilter& filter,
                                                                    bool count_only) {
  // Filters become bound parameters ?1.. in a fixed order; only the filters that are set
  // appear in the SQL, so each combination has its own plan (and cached statement).
  std::string where = "r.id > ?1";
  std::optional<int64_t> workload_id, device_id;
  if (filter.workload) {
    ASSIGN_OR_RETURN(std::string workload, CanonicalWorkload(*filter.workload, "filter.workload"));
    ASSIGN_OR_RETURN(workload_id, FindWorkloadId(db, workload));
    if (!workload_id) {
      return std::nullopt;
    }
    where += " AND r.workload_id = ?2";
  }
  if (filter.device_key) {
    ASSIGN_OR_RETURN(device_id, FindDeviceId(db, *filter.device_key));
    if (!device_id) {
      return std::nullopt;
    }
    where += " AND r.device_id = ?3";
  }
  if (filter.job_id) {
    where += " AND r.job_id = ?4";
  }
  std::string sql = count_only ? StrCat("SELECT COUNT(*) FROM records r WHERE ", where)
                               : StrCat("SELECT ", kRecordColumns, " FROM ", kRecordFrom, " WHERE ",
                                        where, " ORDER BY r.id LIMIT ?5");
  ASSIGN_OR_RETURN(sqlite::Statement stmt, db.Prepare(sql));
  stmt.Bind(1, filter.after_id);
  if (workload_id) {
    stmt.Bind(2, *workload_id);
  }
  if (device_id) {
    stmt.Bind(3, *device_id);
  }
  if (filter.job_id) {
    stmt.Bind(4, *filter.job_id);
  }
  if (!count_only) {
    stmt.Bind(5, filter.limit.value_or(-1));
  }
  return std::optional<sqlite::Statement>(std::move(stmt));
}

std::string JobsSql(std::string_view tail) { return StrCat(kJobColumns, tail); }

// A model job's tasks: its task jobs' workloads, weights and ids, in id order.
absl::Status FillTasks(sqlite::Connection& db, Job& job) {
  if (job.spec.tasks.empty()) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(sqlite::Statement stmt,
                   db.Prepare("SELECT t.id, w.text, t.weight FROM jobs t CROSS JOIN workloads w "
                              "ON w.id = t.workload_id WHERE t.parent_id = ?1 ORDER BY t.id"));
  stmt.Bind(1, job.id);
  std::vector<JobTask> tasks;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    tasks.push_back(JobTask{stmt.ColumnText(1), stmt.ColumnDouble(2), stmt.ColumnInt64(0)});
  }
  if (tasks.size() != job.spec.tasks.size()) {
    return absl::DataLossError(StrCat("job ", job.id, ": a model job of ", job.spec.tasks.size(),
                                      " tasks has ", tasks.size(), " task jobs"));
  }
  job.spec.tasks = std::move(tasks);
  return absl::OkStatus();
}

absl::StatusOr<Job> FetchJob(sqlite::Connection& db, int64_t id) {
  ASSIGN_OR_RETURN(sqlite::Statement stmt, db.Prepare(JobsSql("WHERE j.id = ?1")));
  stmt.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) {
    return absl::NotFoundError(StrCat("job ", id, " is not in ", db.path()));
  }
  ASSIGN_OR_RETURN(Job job, ReadJob(stmt));
  RETURN_IF_ERROR(FillTasks(db, job));
  return job;
}

absl::StatusOr<std::vector<Job>> FetchJobs(sqlite::Connection& db, std::string_view tail,
                                           std::optional<std::string_view> state) {
  ASSIGN_OR_RETURN(sqlite::Statement stmt, db.Prepare(JobsSql(tail)));
  if (state) {
    stmt.Bind(1, *state);
  }
  std::vector<Job> jobs;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    ASSIGN_OR_RETURN(Job job, ReadJob(stmt));
    jobs.push_back(std::move(job));
  }
  for (Job& job : jobs) {
    RETURN_IF_ERROR(FillTasks(db, job));
  }
  return jobs;
}

}  // namespace tune::tables
