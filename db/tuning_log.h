// TuningLog: the SQLite tuning log. Every trial (failures included) is a record; "best" is a
// query over the records, not a copy; jobs and their search state live beside them so the
// daemon can resume. One read-write TuningLog (the daemon's) per file, any number of read-only
// ones (tune-compile, tools); SQLite's WAL lets readers run while the writer commits.
//
// Thread-safe: calls on one TuningLog are serialized.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/fingerprints.h"
#include "db/job.h"
#include "db/quarantine.h"
#include "db/record.h"
#include "db/token_info.h"

namespace tune {

class ShapeRange;  // common/shape_range.h
namespace sqlite {
class Connection;
}  // namespace sqlite

/// A best query's answer by device time first (TuningLog::QueryTopKDeviceTimeFirst).
struct ClockedTopK {
  std::vector<Record> records;
  bool events_fallback = false;  // no record timed on the device: these are GPU records timed
                                 // call by call (events)
};

class TuningLog {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  /// Opens the database at `path` (created when kReadWrite and missing), enables WAL, a 5 s
  /// busy timeout, synchronous=FULL and foreign keys, and migrates the schema to
  /// kSchemaVersion. A newer schema, an older one in kReadOnly (it cannot be migrated) and a
  /// file with foreign tables are FailedPrecondition; a missing file in kReadOnly is NotFound.
  /// Every error names the path.
  ///
  /// kReadWrite trusts the file: the log, its -wal, -shm and -journal must each be owned by this
  /// process's user and writable by nobody else (its group may write when it is the process's
  /// own group), else FailedPrecondition naming the file, its owner and mode and the chown /
  /// chmod that fixes it (CheckTrustedPath). A new log is created with mode 0640 (less the
  /// umask), and SQLite gives its -wal and -shm the same. kReadOnly opens a log of any owner.
  static absl::StatusOr<std::unique_ptr<TuningLog>> Open(const std::string& path,
                                                         Mode mode = Mode::kReadWrite);
  ~TuningLog();
  TuningLog(const TuningLog&) = delete;
  TuningLog& operator=(const TuningLog&) = delete;

  /// The schema version of the open database (kSchemaVersion once open).
  int SchemaVersion() const { return schema_version_; }
  const std::string& path() const { return path_; }
  bool read_only() const { return mode_ == Mode::kReadOnly; }

  // --- Records ------------------------------------------------------------------------------

  /// Validates and canonicalizes the record (see CanonicalizeRecord), assigns a uid and
  /// created_at_ms when they are unset, and commits it durably: it is on disk when this
  /// returns OK. Returns the stored record with its id. A uid already in the log is
  /// AlreadyExists; a job_id naming no job is InvalidArgument; read-only is FailedPrecondition.
  absl::StatusOr<Record> CommitRecord(Record record);

  /// The best successful record for the query's workload in its context (exactly its target
  /// and cache state when it names a target, else any target of its device key) within its
  /// optional template / template version / tune version; nullopt when there is none. With a
  /// target, the decided best (BestDecision: its re-measured record) when there is one within
  /// the query; otherwise, and with a device key, the fastest record (lowest median, then
  /// lowest id). A workload or target that does not parse is InvalidArgument.
  absl::StatusOr<std::optional<Record>> QueryBest(const BestQuery& query);

  /// The k best successful records, at most one per config: QueryBest's answer first, then the
  /// fastest measurements of the other configs, fastest first. k < 1 is InvalidArgument.
  absl::StatusOr<std::vector<Record>> QueryTopK(const BestQuery& query, int k);

  /// QueryTopK that compares device time (the query's `clocks` is replaced): among CPU records
  /// and graph-timed GPU records first; only when there are none, among GPU records timed call
  /// by call (events: where capture was refused, and every GPU record measured before graph
  /// timing), and the answer says it fell back. Errors as QueryTopK.
  absl::StatusOr<ClockedTopK> QueryTopKDeviceTimeFirst(BestQuery query, int k);

  /// Stores the decided best of a workload on a target and cache state, replacing the earlier
  /// one. Its record must be a record of that workload, target and cache state
  /// (InvalidArgument otherwise).
  absl::Status SetBestDecision(const BestDecision& decision);
  /// The decided best of a workload on a target and cache state, if any.
  absl::StatusOr<std::optional<BestDecision>> GetBestDecision(std::string_view workload,
                                                              std::string_view target,
                                                              bool flush_cache);

  /// The record with local id `id`, if there is one.
  absl::StatusOr<std::optional<Record>> GetRecord(int64_t id);
  /// Records of any outcome matching `filter`, in id order.
  absl::StatusOr<std::vector<Record>> ListRecords(const RecordFilter& filter = {});
  /// How many records match `filter` (after_id applies; limit does not).
  absl::StatusOr<int64_t> CountRecords(const RecordFilter& filter = {});

  // --- Fingerprints (fingerprints.h) ---------------------------------------------------------

  /// Notes that a worker of `device_key` runs under `fingerprint` (it registered): the log sees
  /// it now, unless it has before. Says whether it is new and which newest one it supersedes.
  absl::StatusOr<FingerprintNote> NoteFingerprint(const std::string& device_key,
                                                  const std::string& fingerprint);
  /// The fingerprints of `device_key` (empty: of every device), by device key, newest first.
  absl::StatusOr<std::vector<SeenFingerprint>> ListFingerprints(std::string_view device_key = "");
  /// Every workload with a successful record on `target` (resolved), sorted.
  absl::StatusOr<std::vector<std::string>> WorkloadsMeasuredOn(const std::string& target);
  /// The sizes of `range` with a successful record (any record: !successful_only) on
  /// `device_key` (empty: any device), ascending (range_log.cc).
  absl::StatusOr<std::vector<int64_t>> RangeSizesMeasured(const ShapeRange& range,
                                                          const std::string& device_key,
                                                          bool successful_only = true);
  /// The newest fingerprint of `device_key`, or nullopt when the log has seen none.
  absl::StatusOr<std::optional<std::string>> NewestFingerprint(const std::string& device_key);

  /// Every config with a verdict (IsVerdict) for (workload, target), of any outcome (a trial
  /// given up is not a verdict: it is worth measuring again), once each, in the order
  /// they were first measured, under the newest fingerprint of the device that measured it
  /// (fingerprints.h: after a driver or library upgrade, configs are worth measuring again).
  /// Lets a search skip what it already tried. The target must be resolved (no -mcpu=native).
  absl::StatusOr<std::vector<ConfigKey>> MeasuredConfigs(const std::string& workload,
                                                         const std::string& target);

  /// The newest `limit` trials of template `template_name` (that version) on `target` (resolved)
  /// in one cache state, of every workload but `except_workload`, newest first, verdicts only
  /// (IsVerdict): what a new search of another shape learns from (transfer).
  absl::StatusOr<std::vector<TemplateTrial>> TrialsOfTemplate(
      const std::string& template_name, int template_version, const std::string& target,
      bool flush_cache, const std::string& except_workload, int limit);

  // --- Jobs ---------------------------------------------------------------------------------

  /// Validates the spec (see CanonicalizeJobSpec) and stores a new job in state Queued, with
  /// every field of the spec, in one transaction.
  /// A model job (spec.tasks) is stored with one task job per workload in the same
  /// transaction; the returned job lists their ids.
  absl::StatusOr<Job> CreateJob(const JobSpec& spec);
  /// NotFound naming the id when there is no such job.
  absl::StatusOr<Job> GetJob(int64_t id);
  /// Sets a job's trial budget (a model job raises its tasks' budgets as it allocates trials).
  /// NotFound for unknown ids.
  absl::Status SetJobTrials(int64_t id, int trials);
  /// Every job (or every job in `state`), in id order.
  absl::StatusOr<std::vector<Job>> ListJobs(std::optional<JobState> state = std::nullopt);
  /// Queued and running jobs in dispatch order: priority descending, then id (FIFO).
  absl::StatusOr<std::vector<Job>> ActiveJobs();

  /// Moves a job to `state`, stamping started_at_ms (first time Running) and finished_at_ms
  /// (final states); `error` is stored as the job's error: why it failed, stopped short of its
  /// budget or was cancelled (empty for the active states). Done, Failed and
  /// Cancelled are final: leaving one is FailedPrecondition naming both states (asking for
  /// the state a job is already in succeeds and changes nothing). NotFound for unknown ids.
  absl::Status UpdateJobState(int64_t id, JobState state, std::string_view error = "");

  /// Stores what a job needs to resume. NotFound for unknown ids.
  absl::Status SaveJobProgress(int64_t id, const JobProgress& progress);

  /// In ONE transaction: commits the record (as CommitRecord), adds one to its job's
  /// trials_done (and trials_failed when the trial failed) when the record is a verdict
  /// (IsVerdict: a trial given up is no trial of the budget) and stores `progress` (unless
  /// `progress.counts` is false: a finalist's re-measurement only updates the job's time). Either
  /// all of it is on disk when this returns OK, or none of it. The record's job_id is required
  /// (InvalidArgument) and must name a job (NotFound).
  absl::StatusOr<Record> CommitTrial(Record record, const JobProgress& progress);

  /// One trial of a group commit: the record and its job's progress, as CommitTrial takes them.
  struct TrialCommit {
    Record record;
    JobProgress progress;
  };
  /// CommitTrial for many trials in ONE transaction (a group commit: one sync of the log for
  /// all of them). Each job's counters grow by its trials; its search state and
  /// since_improvement become those of its last counted trial in `trials`, so the earlier ones
  /// may leave `progress.search_state` empty. All or none: any invalid record or unknown job
  /// fails the whole group (the error names the trial's index), leaving the log unchanged.
  /// Returns the committed records in the order given.
  absl::StatusOr<std::vector<Record>> CommitTrials(std::vector<TrialCommit> trials);

  // --- Client tokens (tokens.cc) -------------------------------------------------------------

  /// Stores a new token. Its id must be new (AlreadyExists) and its name 1-64 characters of
  /// [A-Za-z0-9._@-] (InvalidArgument naming the accepted form).
  absl::Status AddToken(const TokenInfo& token);
  /// Marks a token revoked now; revoked tokens stay listed. NotFound naming the id; revoking a
  /// revoked token changes nothing.
  absl::Status RevokeToken(std::string_view id);
  /// Every token, revoked ones included, in creation order.
  absl::StatusOr<std::vector<TokenInfo>> ListTokens();

  // --- Quarantine (quarantine.h, quarantine.cc) ----------------------------------------------
  /// The entries matching `filter` (those that hold, unless include_lifted), in id order.
  absl::StatusOr<std::vector<QuarantineEntry>> ListQuarantine(const QuarantineFilter& filter = {});
  /// Lifts the entry `id`, naming who did; returns it. NotFound when no entry of that id holds.
  absl::StatusOr<QuarantineEntry> LiftQuarantine(int64_t id, std::string_view by);

  // --- Export / import (record_json.h gives the line format) ---------------------------------

  /// Writes the records matching `filter` as JSON lines, in id order. A failed write is
  /// Unavailable.
  absl::Status ExportJsonl(std::ostream& out, const RecordFilter& filter = {});

  struct ImportStats {
    int64_t imported = 0;
    int64_t skipped_duplicates = 0;  // uid already present (or earlier in the same input)
  };
  /// Imports JSON lines in one transaction; blank lines are ignored. Records whose uid is
  /// already present are skipped, so merging logs never duplicates. A malformed or invalid
  /// line fails the whole import, leaving the log unchanged, with InvalidArgument
  /// "line N: <problem>".
  absl::StatusOr<ImportStats> ImportJsonl(std::istream& in);

 private:
  TuningLog(std::unique_ptr<sqlite::Connection> db, std::string path, Mode mode, int version);

  absl::Status RequireWritable(std::string_view operation) const;

  std::unique_ptr<sqlite::Connection> db_;
  std::string path_;
  Mode mode_;
  int schema_version_;
  std::mutex mu_;  // guards db_ and its statements
};

}  // namespace tune
