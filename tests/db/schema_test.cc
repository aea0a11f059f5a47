// Opening, schema versions and migrations, read-only mode, reopening, and the query plans that
// keep lookups fast at scale.
#include "db/schema.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "db/sqlite.h"
#include "db/tables.h"
#include "db/tuning_log.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune {
namespace {

using ::testing::HasSubstr;
using testing::kDevice;
using testing::kGemm;
using ::testing::Not;
using testing::OpenLog;
using testing::SampleRecord;
using tune::TempDir;

// The scheduler state of one of this process's threads ('R' running, 'S' sleeping, ...), from
// /proc/self/task/<tid>/stat; '?' when it cannot be read.
char ThreadState(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

// Polls `done` until it holds; false after a minute, which only a broken test reaches.
bool WaitUntil(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

std::unique_ptr<sqlite::Connection> Raw(const std::string& path) {
  absl::StatusOr<std::unique_ptr<sqlite::Connection>> db =
      sqlite::Connection::Open(path, sqlite::Connection::Access::kReadWriteCreate);
  EXPECT_TRUE(db.ok()) << db.status();
  return std::move(*db);
}

int64_t QueryInt(sqlite::Connection& db, const std::string& sql) {
  absl::StatusOr<sqlite::Statement> stmt = db.Prepare(sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return stmt->ColumnInt64(0);
}

// The EXPLAIN QUERY PLAN lines of `sql` with its parameters bound.
template <typename... Args>
std::string Plan(sqlite::Connection& db, const std::string& sql, const Args&... args) {
  absl::StatusOr<sqlite::Statement> stmt = db.Prepare("EXPLAIN QUERY PLAN " + sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status();
  stmt->BindAll(args...);
  std::string plan;
  while (*stmt->Step()) {
    plan += stmt->ColumnText(3) + "\n";
  }
  return plan;
}

class SchemaTest : public ::testing::Test {
 protected:
  TempDir dir_ = TempDir::Create("tune-db-test-").value();
  std::string path_ = dir_.File("tuning.db");
};

TEST_F(SchemaTest, ANewLogHasTheCurrentSchemaInWalMode) {
  auto log = OpenLog(path_);
  EXPECT_EQ(log->SchemaVersion(), kSchemaVersion);
  auto raw = Raw(path_);
  EXPECT_EQ(QueryInt(*raw, "SELECT MAX(version) FROM schema_version"), kSchemaVersion);
  EXPECT_EQ(QueryInt(*raw, "SELECT COUNT(*) FROM schema_version"), kSchemaVersion);
  absl::StatusOr<sqlite::Statement> mode = raw->Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(*mode->Step());
  EXPECT_EQ(mode->ColumnText(0), "wal");
}

// The version-1 layout exactly as version 1 of tune wrote it (tables, no indexes).
constexpr char kVersion1[] = R"sql(
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL);
CREATE TABLE workloads (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE, op TEXT NOT NULL);
CREATE TABLE devices (id INTEGER PRIMARY KEY, device_key TEXT NOT NULL UNIQUE);
CREATE TABLE targets (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE,
  device_id INTEGER NOT NULL REFERENCES devices(id));
CREATE TABLE configs (id INTEGER PRIMARY KEY, template TEXT NOT NULL,
  template_version INTEGER NOT NULL, text TEXT NOT NULL, UNIQUE (template, template_version, text));
CREATE TABLE jobs (id INTEGER PRIMARY KEY, workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target TEXT NOT NULL, device_key TEXT NOT NULL, strategy TEXT NOT NULL, trials INTEGER NOT NULL,
  priority INTEGER NOT NULL, seed INTEGER NOT NULL, timing TEXT NOT NULL, client TEXT NOT NULL,
  state TEXT NOT NULL, trials_done INTEGER NOT NULL DEFAULT 0,
  trials_failed INTEGER NOT NULL DEFAULT 0, search_state TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '', created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL,
  started_at_ms INTEGER NOT NULL DEFAULT 0, finished_at_ms INTEGER NOT NULL DEFAULT 0);
CREATE TABLE records (id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  config_id INTEGER NOT NULL REFERENCES configs(id), error_kind TEXT NOT NULL,
  error_message TEXT NOT NULL, round_secs TEXT NOT NULL, number INTEGER NOT NULL,
  median_secs REAL, device_fingerprint TEXT NOT NULL, tune_version TEXT NOT NULL,
  llvm_version TEXT NOT NULL, job_id INTEGER REFERENCES jobs(id), worker TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL, CHECK ((error_kind = 'NONE') = (median_secs IS NOT NULL)));
INSERT INTO schema_version VALUES (1, 1700000000000);
INSERT INTO workloads VALUES (1, 'gemm:M=64,N=64,K=64', 'gemm');
INSERT INTO devices VALUES (1, 'cpu/x86_64/znver4');
INSERT INTO targets VALUES (1, 'llvm -mcpu=znver4 -threads=1', 1);
INSERT INTO configs VALUES (1, 'gemm.cpu.blocked', 1, '{"mc":32}');
INSERT INTO jobs (id, workload_id, target, device_key, strategy, trials, priority, seed, timing,
  client, state, trials_done, created_at_ms, updated_at_ms)
  VALUES (1, 1, 'llvm -mcpu=znver4 -threads=1', 'cpu/x86_64/znver4', 'random', 10, 0, 7,
  '{"number":1,"repeat":3}', 'bob', 'RUNNING', 1, 1700000000000, 1700000000000);
INSERT INTO records VALUES (1, 'old-record', 1, 1, 1, 1, 'NONE', '', '[0.002,0.001,0.003]', 10,
  0.002, 'old cpu', '0.0.9', '18.1.0', 1, 'w', 1700000000001);
)sql";

TEST_F(SchemaTest, AVersion1LogIsMigratedKeepingItsData) {
  ASSERT_TRUE(Raw(path_)->Execute(kVersion1).ok());
  absl::StatusOr<std::unique_ptr<TuningLog>> reader =
      TuningLog::Open(path_, TuningLog::Mode::kReadOnly);
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(reader.status().message()), HasSubstr("open it read-write once"));

  auto log = OpenLog(path_);
  EXPECT_EQ(log->SchemaVersion(), kSchemaVersion);

  std::vector<Record> records = *log->ListRecords();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].uid, "old-record");
  EXPECT_EQ(records[0].measurement.round_secs, (std::vector<double>{0.002, 0.001, 0.003}));
  EXPECT_EQ(records[0].tune_version, "0.0.9");
  absl::StatusOr<std::optional<Record>> best =
      log->QueryBest({.workload = kGemm, .device_key = kDevice});
  ASSERT_TRUE(best.ok() && best->has_value()) << best.status();
  EXPECT_EQ((*best)->uid, "old-record");
  absl::StatusOr<Job> job = log->GetJob(1);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state, JobState::kRunning);
  EXPECT_EQ(job->spec.timing.repeat, 3);
  EXPECT_EQ(job->spec.timing.timeout_ms, TimingOptions{}.timeout_ms);  // default filled in
  EXPECT_EQ(job->best_record_id, 1);

  auto raw = Raw(path_);
  EXPECT_EQ(QueryInt(*raw, "SELECT COUNT(*) FROM schema_version"), kSchemaVersion);
  EXPECT_EQ(QueryInt(*raw, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'records_best'"), 1);
  // New records go in beside the old ones.
  ASSERT_TRUE(log->CommitRecord(SampleRecord()).ok());
  EXPECT_EQ(*log->CountRecords(), 2);
}

TEST_F(SchemaTest, AVersion2LogMovesJobOptionsOutOfTheSearchStateIntoColumns) {
  // Version 2 kept a job's template restriction, early stopping, name and improvement count
  // inside its search state.
  {
    auto raw = Raw(path_);
    ASSERT_TRUE(raw->Execute(kVersion1).ok());
    for (const Migration& step : Migrations()) {
      if (step.version == 2) {
        ASSERT_TRUE(raw->Execute(step.sql).ok());
      }
    }
    ASSERT_TRUE(raw->Execute(R"sql(
      INSERT INTO schema_version VALUES (2, 1700000000000);
      UPDATE jobs SET search_state = '{"version":1,"templates":["gemm.cpu.blocked","x.y"],'
        || '"early_stopping":7,"name":"nightly","since_improvement":3,'
        || '"search":"{\"next\":1}"}' WHERE id = 1;
      INSERT INTO jobs (id, workload_id, target, device_key, strategy, trials, priority, seed,
        timing, client, state, created_at_ms, updated_at_ms)
        VALUES (2, 1, 'llvm -mcpu=znver4 -threads=1', 'cpu/x86_64/znver4', 'grid', 5, 0, 1,
        '{}', 'carol', 'QUEUED', 1700000000000, 1700000000000);)sql")
                    .ok());
  }
  auto log = OpenLog(path_);
  EXPECT_EQ(log->SchemaVersion(), kSchemaVersion);
  absl::StatusOr<Job> job = log->GetJob(1);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_THAT(job->spec.templates, ::testing::ElementsAre("gemm.cpu.blocked", "x.y"));
  EXPECT_EQ(job->spec.early_stopping, 7);
  EXPECT_EQ(job->spec.name, "nightly");
  EXPECT_EQ(job->since_improvement, 3);
  EXPECT_EQ(job->search_state, R"({"next":1})");
  absl::StatusOr<Job> fresh = log->GetJob(2);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_TRUE(fresh->spec.templates.empty());
  EXPECT_EQ(fresh->search_state, "");
  // The old record has no timing and counts as warm-cache for its target.
  absl::StatusOr<std::optional<Record>> best =
      log->QueryBest({.workload = kGemm, .target = testing::kTarget});
  ASSERT_TRUE(best.ok() && best->has_value()) << best.status();
  EXPECT_FALSE((*best)->timing.has_value());
  EXPECT_EQ((*best)->measurement.library_info, "") << "version 4: no library recorded";
}

TEST_F(SchemaTest, AVersion8LogReadsItsGpuRecordsAsTimedCallByCallAndBestPrefersGraphTiming) {
  // A log as version 8 wrote it: a CPU record and a GPU record, which was timed call by call.
  {
    auto raw = Raw(path_);
    ASSERT_TRUE(raw->Execute(kVersion1).ok());
    for (const Migration& step : Migrations()) {
      if (step.version >= 2 && step.version <= 8) {
        ASSERT_TRUE(raw->Execute(step.sql).ok()) << step.version;
        ASSERT_TRUE(
            raw->Execute(fmt::format("INSERT INTO schema_version VALUES ({}, 1)", step.version))
                .ok());
      }
    }
    ASSERT_TRUE(raw->Execute(R"sql(
      INSERT INTO devices VALUES (2, 'cuda/sm_90');
      INSERT INTO targets VALUES (2, 'cuda -arch=sm_90', 2);
      INSERT INTO configs VALUES (2, 'gemm.gpu.tiled', 1, '{"mc":8}');
      INSERT INTO records (id, uid, workload_id, target_id, device_id, config_id, error_kind,
        error_message, round_secs, number, median_secs, device_fingerprint, tune_version,
        llvm_version, job_id, worker, created_at_ms, flush_cache, timing, library_info, final)
        VALUES (2, 'old-gpu', 1, 2, 2, 2, 'NONE', '', '[2e-05,2e-05,2e-05]', 100, 2e-05,
        'NVIDIA H200', '0.1.0', '19.1.7', NULL, 'g', 1700000000002, 0, '', '', 0);)sql")
                    .ok());
  }
  auto log = OpenLog(path_);
  EXPECT_EQ(log->SchemaVersion(), kSchemaVersion);
  std::vector<Record> records = *log->ListRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].measurement.gpu_clock, GpuClock::kNone) << "a CPU record";
  EXPECT_EQ(records[1].measurement.gpu_clock, GpuClock::kEvents);
  EXPECT_TRUE(records[1].measurement.host_round_secs.empty()) << "not kept before version 9";

  // Only the old GPU record: best falls back to it and says so.
  const BestQuery gpu{.workload = kGemm, .target = testing::kGpuTarget};
  absl::StatusOr<ClockedTopK> top = log->QueryTopKDeviceTimeFirst(gpu, 5);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->records.size(), 1u);
  EXPECT_EQ(top->records[0].uid, "old-gpu");
  EXPECT_TRUE(top->events_fallback);
  // A graph-timed record, slower than the old reading, is preferred, and the old one is left out:
  // the two clocks are never compared.
  ASSERT_TRUE(log->CommitRecord(testing::GpuRecord(R"({"mc":16})", 3e-5, GpuClock::kGraph)).ok());
  top = log->QueryTopKDeviceTimeFirst(gpu, 5);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->records.size(), 1u);
  EXPECT_EQ(top->records[0].config, R"({"mc":16})");
  EXPECT_FALSE(top->events_fallback);
  // The same by device key; and a CPU target's records are all device time.
  top = log->QueryTopKDeviceTimeFirst({.workload = kGemm, .device_key = testing::kGpuDevice}, 5);
  ASSERT_TRUE(top.ok() && top->records.size() == 1u) << top.status();
  EXPECT_EQ(top->records[0].config, R"({"mc":16})");
  top = log->QueryTopKDeviceTimeFirst({.workload = kGemm, .target = testing::kTarget}, 5);
  ASSERT_TRUE(top.ok() && top->records.size() == 1u) << top.status();
  EXPECT_EQ(top->records[0].uid, "old-record");
  EXPECT_FALSE(top->events_fallback);
  // QueryTopK itself still sees every clock.
  absl::StatusOr<std::vector<Record>> any = log->QueryTopK(gpu, 5);
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->size(), 2u);
}

TEST_F(SchemaTest, ANewerSchemaIsRefusedInBothModesNamingBothVersions) {
  OpenLog(path_);
  ASSERT_TRUE(
      Raw(path_)
          ->Execute(fmt::format("INSERT INTO schema_version VALUES ({}, 0)", kSchemaVersion + 5))
          .ok());
  for (TuningLog::Mode mode : {TuningLog::Mode::kReadWrite, TuningLog::Mode::kReadOnly}) {
    absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(path_, mode);
    EXPECT_EQ(log.status().code(), absl::StatusCode::kFailedPrecondition);
    std::string message(log.status().message());
    EXPECT_THAT(message, HasSubstr(path_));
    EXPECT_THAT(message, HasSubstr(fmt::format("version {}", kSchemaVersion + 5)));
    EXPECT_THAT(message, HasSubstr(fmt::format("version {}", kSchemaVersion)));
  }
}

TEST_F(SchemaTest, ForeignDatabasesAndMissingFilesAreRefused) {
  ASSERT_TRUE(Raw(path_)->Execute("CREATE TABLE photos (id INTEGER)").ok());
  absl::StatusOr<std::unique_ptr<TuningLog>> foreign = TuningLog::Open(path_);
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(foreign.status().message()), HasSubstr("not a tuning log"));

  std::string missing = dir_.File("missing.db");
  absl::StatusOr<std::unique_ptr<TuningLog>> ro =
      TuningLog::Open(missing, TuningLog::Mode::kReadOnly);
  EXPECT_EQ(ro.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(ro.status().message()), HasSubstr(missing));
  EXPECT_FALSE(std::filesystem::exists(missing));

  std::string not_sqlite = dir_.File("notes.txt");
  {
    std::ofstream(not_sqlite) << "this is not an SQLite database, not even close............\n";
  }
  absl::StatusOr<std::unique_ptr<TuningLog>> garbage = TuningLog::Open(not_sqlite);
  EXPECT_FALSE(garbage.ok());
  EXPECT_THAT(std::string(garbage.status().message()), HasSubstr(not_sqlite));
}

TEST_F(SchemaTest, ReadOnlyLogReadsWhileTheWriterCommitsButCannotWrite) {
  auto writer = OpenLog(path_);
  ASSERT_TRUE(writer->CommitRecord(SampleRecord(R"({"mc":1})")).ok());
  absl::StatusOr<std::unique_ptr<TuningLog>> reader =
      TuningLog::Open(path_, TuningLog::Mode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->read_only());
  EXPECT_EQ(*(*reader)->CountRecords(), 1);
  ASSERT_TRUE(writer->CommitRecord(SampleRecord(R"({"mc":2})")).ok());
  EXPECT_EQ(*(*reader)->CountRecords(), 2);

  absl::StatusOr<Record> write = (*reader)->CommitRecord(SampleRecord(R"({"mc":3})"));
  EXPECT_EQ(write.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(write.status().message()), HasSubstr("read-only"));
  JobSpec spec{.workload = kGemm,
               .target = "llvm -mcpu=znver4",
               .device_key = kDevice,
               .strategy = "random",
               .trials = 1};
  EXPECT_EQ((*reader)->CreateJob(spec).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(*writer->CountRecords(), 2);
}

TEST_F(SchemaTest, ReopeningKeepsRecordsAndJobs) {
  int64_t job_id;
  Record committed;
  {
    auto log = OpenLog(path_);
    JobSpec spec{.workload = kGemm,
                 .target = "llvm -mcpu=znver4",
                 .device_key = kDevice,
                 .strategy = "random",
                 .trials = 5};
    job_id = log->CreateJob(spec)->id;
    Record r = SampleRecord();
    r.job_id = job_id;
    committed = *log->CommitTrial(r, {"saved-state"});
  }
  auto log = OpenLog(path_);
  std::vector<Record> records = *log->ListRecords();
  ASSERT_EQ(records.size(), 1u);
  testing::ExpectSameRecord(records[0], committed);
  Job job = *log->GetJob(job_id);
  EXPECT_EQ(job.trials_done, 1);
  EXPECT_EQ(job.search_state, "saved-state");
}

TEST_F(SchemaTest, AWaitingWriterGetsTheLockWithinTheBusyTimeout) {
  auto log = OpenLog(path_);
  auto other = Raw(path_);
  ASSERT_TRUE(other->Execute("BEGIN IMMEDIATE").ok());
  std::atomic<pid_t> writer_tid{0};
  absl::StatusOr<Record> stored = absl::UnknownError("not run");
  std::thread writer([&] {
    writer_tid = gettid();
    stored = log->CommitRecord(SampleRecord());
  });
  // Release the lock only once the writer waits for it: its thread then sleeps in SQLite's
  // busy handler (an event observed in /proc, not a guessed delay).
  EXPECT_TRUE(WaitUntil([&] { return writer_tid != 0 && ThreadState(writer_tid) == 'S'; }));
  EXPECT_TRUE(other->Execute("COMMIT").ok());
  writer.join();
  EXPECT_TRUE(stored.ok()) << stored.status();
}

TEST_F(SchemaTest, ConcurrentCommitsFromManyThreadsAreAllKept) {
  auto log = OpenLog(path_);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        absl::StatusOr<Record> r =
            log->CommitRecord(SampleRecord(fmt::format(R"({{"mc":{}}})", t * 100 + i)));
        EXPECT_TRUE(r.ok()) << r.status();
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(*log->CountRecords(), 40);
  EXPECT_EQ(log->MeasuredConfigs(kGemm, testing::kTarget)->size(), 40u);
}

// ~200k records over 100 workloads: the best query, the per-job listing and a job's best trial
// must search indexes, never scan the records or sort them (timings are not asserted).
TEST_F(SchemaTest, QueriesStayIndexedAtScale) {
  auto log = OpenLog(path_);
  ASSERT_TRUE(log->CommitRecord(SampleRecord()).ok());  // interns device, target and config 1
  JobSpec spec{.workload = kGemm,
               .target = "llvm -mcpu=znver4",
               .device_key = kDevice,
               .strategy = "random",
               .trials = 9};
  int64_t job_id = log->CreateJob(spec)->id;
  auto raw = Raw(path_);
  ASSERT_TRUE(raw->Execute(fmt::format(R"sql(
    BEGIN;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 99)
    INSERT INTO workloads (text, op) SELECT printf('gemm:M=%d,N=32,K=32', i), 'gemm' FROM n;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
    INSERT INTO records (uid, workload_id, target_id, device_id, config_id, error_kind,
      error_message, round_secs, number, median_secs, device_fingerprint, tune_version,
      llvm_version, job_id, worker, created_at_ms)
    SELECT printf('bulk-%d', i), 1 + i % 100, 1, 1, 1,
      CASE WHEN i % 5 = 0 THEN 'TIMEOUT' ELSE 'NONE' END, '', '[0.5]', 1,
      CASE WHEN i % 5 = 0 THEN NULL ELSE 1e-6 * (1 + (i * 7919) % 100003) END,
      'cpu', '0.1.0', '19', CASE WHEN i % 1000 = 1 THEN {} ELSE NULL END, 'w', i FROM n;
    COMMIT;)sql",
                                       job_id))
                  .ok());
  ASSERT_EQ(*log->CountRecords(), 200001);

  std::string workload = "gemm:M=7,N=32,K=32";
  int64_t workload_id = QueryInt(*raw, "SELECT id FROM workloads WHERE text = '" + workload + "'");
  for (bool analyzed : {false, true}) {
    SCOPED_TRACE(analyzed ? "with ANALYZE statistics" : "without statistics");
    if (analyzed) {
      ASSERT_TRUE(raw->Execute("ANALYZE").ok());
    }
    std::optional<std::string> any_text;
    std::optional<int> any_version;
    const std::string by_device = tables::BestRecordsSql(tables::BestScope::kDevice);
    const std::string by_target = tables::BestRecordsSql(tables::BestScope::kTarget);
    std::string best =
        Plan(*raw, by_device, workload_id, int64_t{1}, any_text, any_version, any_text);
    EXPECT_THAT(best, HasSubstr("SEARCH r USING INDEX records_best (workload_id=? AND "
                                "device_id=?)"));
    // (Tiny lookup tables may be scanned per row when statistics say they hold one row.)
    EXPECT_THAT(best, Not(HasSubstr("SCAN r")));
    EXPECT_THAT(best, Not(HasSubstr("TEMP B-TREE")));
    std::string filtered = Plan(*raw, by_device, workload_id, int64_t{1},
                                std::optional<std::string>("gemm.cpu.blocked"),
                                std::optional<int>(1), std::optional<std::string>("0.1.0"));
    EXPECT_THAT(filtered, HasSubstr("USING INDEX records_best"));
    EXPECT_THAT(filtered, Not(HasSubstr("SCAN r")));
    EXPECT_THAT(filtered, Not(HasSubstr("TEMP B-TREE")));
    std::string exact =
        Plan(*raw, by_target, workload_id, int64_t{1}, any_text, any_version, any_text, int64_t{0});
    EXPECT_THAT(exact, HasSubstr("SEARCH r USING INDEX records_best_by_target (workload_id=? AND "
                                 "target_id=? AND flush_cache=?)"));
    EXPECT_THAT(exact, Not(HasSubstr("SCAN r")));
    EXPECT_THAT(exact, Not(HasSubstr("TEMP B-TREE")));

    // Which fingerprint answers: one index probe per fingerprint of the device, never a scan.
    for (tables::BestScope scope : {tables::BestScope::kTarget, tables::BestScope::kDevice}) {
      std::string newest =
          Plan(*raw, tables::NewestFingerprintWithBestSql(scope), workload_id, int64_t{1}, any_text,
               any_version, any_text, int64_t{0}, std::optional<int>(), int64_t{1});
      EXPECT_THAT(newest, HasSubstr(scope == tables::BestScope::kTarget
                                        ? "USING INDEX records_by_target_fingerprint"
                                        : "USING INDEX records_by_device_fingerprint"))
          << newest;
      EXPECT_THAT(newest, Not(HasSubstr("SCAN r")));
    }

    absl::StatusOr<std::optional<sqlite::Statement>> by_job =
        tables::PrepareRecordQuery(*raw, {.job_id = job_id}, /*count_only=*/false);
    ASSERT_TRUE(by_job.ok() && by_job->has_value());
    std::string listing =
        Plan(*raw, (*by_job)->sql(), int64_t{0}, int64_t{0}, int64_t{0}, job_id, int64_t{-1});
    EXPECT_THAT(listing, HasSubstr("USING INDEX records_by_job"));
    EXPECT_THAT(listing, Not(HasSubstr("SCAN r")));

    std::string job = Plan(*raw, tables::JobsSql("WHERE j.id = ?1"), job_id);
    EXPECT_THAT(job, HasSubstr("SEARCH b USING COVERING INDEX records_by_job (job_id=? AND "
                               "median_secs>?)"));
    EXPECT_THAT(job, Not(HasSubstr("SCAN b")));
  }

  // And the answers are right.
  absl::StatusOr<std::optional<Record>> best =
      log->QueryBest({.workload = workload, .device_key = kDevice});
  ASSERT_TRUE(best.ok() && best->has_value()) << best.status();
  absl::StatusOr<std::optional<Record>> exact =
      log->QueryBest({.workload = workload, .target = "llvm -mcpu=znver4"});
  ASSERT_TRUE(exact.ok() && exact->has_value()) << exact.status();
  EXPECT_EQ((*exact)->id, (*best)->id);
  absl::StatusOr<sqlite::Statement> min = raw->Prepare(
      "SELECT MIN(median_secs) FROM records WHERE workload_id = ? AND error_kind = 'NONE'");
  min->Bind(1, workload_id);
  ASSERT_TRUE(*min->Step());
  absl::StatusOr<sqlite::Statement> median =
      raw->Prepare("SELECT median_secs FROM records WHERE id = ?");
  median->Bind(1, (*best)->id);
  ASSERT_TRUE(*median->Step());
  EXPECT_EQ(median->ColumnDouble(0), min->ColumnDouble(0));
  absl::StatusOr<Job> job = log->GetJob(job_id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_TRUE(job->best_secs.has_value());
  EXPECT_EQ(log->ListRecords({.job_id = job_id})->size(), 200u);
}

}  // namespace
}  // namespace tune
