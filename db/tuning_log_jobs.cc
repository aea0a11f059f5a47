// TuningLog's jobs: creation, state changes, progress, and CommitTrial (record + job counters
// in one transaction).
#include <algorithm>

#include "common/clock.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/sqlite.h"
#include "db/tables.h"
#include "db/tuning_log.h"

namespace tune {

namespace {

// Inserts one row of the jobs table; returns its id.
absl::StatusOr<int64_t> InsertJob(sqlite::Connection& db, const JobSpec& spec, int64_t now) {
  ASSIGN_OR_RETURN(int64_t workload_id, tables::InternWorkload(db, spec.workload));
  ASSIGN_OR_RETURN(
      sqlite::Statement insert,
      db.Prepare("INSERT INTO jobs (workload_id, target, device_key, strategy, "
                 "trials, priority, seed, timing, client, state, created_at_ms, "
                 "updated_at_ms, templates, early_stopping, name, transfer, "
                 "parent_id, weight, task_count, reverify, shape_range) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  // The seed is stored as the int64 with the same bits (SQLite integers are signed).
  insert.BindAll(workload_id, spec.target, spec.device_key, spec.strategy, spec.trials,
                 spec.priority, static_cast<int64_t>(spec.seed), TimingToJson(spec.timing),
                 spec.client, JobStateName(JobState::kQueued), now, now,
                 tables::JoinTemplateNames(spec.templates), spec.early_stopping, spec.name,
                 spec.transfer ? 1 : 0);
  if (spec.parent != 0) {
    insert.Bind(17, spec.parent);
  }
  insert.Bind(18, spec.weight);
  insert.Bind(19, static_cast<int64_t>(spec.tasks.size()));
  insert.Bind(20, spec.reverify ? 1 : 0);
  insert.Bind(21, spec.range);
  RETURN_IF_ERROR(insert.Run());
  return db.LastInsertRowId();
}

}  // namespace

absl::StatusOr<Job> TuningLog::CreateJob(const JobSpec& spec) {
  RETURN_IF_ERROR(RequireWritable("create a job"));
  JobSpec canonical = spec;
  RETURN_IF_ERROR(CanonicalizeJobSpec(canonical));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(*db_));
  int64_t now = UnixNowMs();
  ASSIGN_OR_RETURN(int64_t id, InsertJob(*db_, canonical, now));
  // A model job's tasks: jobs of their own, with the model's options and no budget yet (the
  // model job's task scheduler allocates it), each seeded apart.
  for (size_t i = 0; i < canonical.tasks.size(); ++i) {
    JobSpec task = canonical;
    task.tasks.clear();
    task.workload = canonical.tasks[i].workload;
    task.weight = canonical.tasks[i].weight;
    task.parent = id;
    task.trials = 0;
    task.seed = canonical.seed + i;
    task.name.clear();
    RETURN_IF_ERROR(InsertJob(*db_, task, now).status());
  }
  ASSIGN_OR_RETURN(Job job, tables::FetchJob(*db_, id));
  RETURN_IF_ERROR(txn.Commit());
  return job;
}

absl::Status TuningLog::SetJobTrials(int64_t id, int trials) {
  RETURN_IF_ERROR(RequireWritable("change a job's budget"));
  if (trials < 0) {
    return absl::InvalidArgumentError(StrCat("job.trials: ", trials, " is negative"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement update,
                   db_->Prepare("UPDATE jobs SET trials = ?, updated_at_ms = ? WHERE id = ?"));
  update.BindAll(trials, UnixNowMs(), id);
  RETURN_IF_ERROR(update.Run());
  if (db_->Changes() == 0) {
    return absl::NotFoundError(StrCat("job ", id, " is not in ", path_));
  }
  return absl::OkStatus();
}

absl::StatusOr<Job> TuningLog::GetJob(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  return tables::FetchJob(*db_, id);
}

absl::StatusOr<std::vector<Job>> TuningLog::ListJobs(std::optional<JobState> state) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!state) {
    return tables::FetchJobs(*db_, "ORDER BY j.id");
  }
  return tables::FetchJobs(*db_, "WHERE j.state = ?1 ORDER BY j.id", JobStateName(*state));
}

absl::StatusOr<std::vector<Job>> TuningLog::ActiveJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  // The WHERE clause matches the partial index jobs_active, whose order is the dispatch order.
  return tables::FetchJobs(*db_,
                           "WHERE j.state IN ('QUEUED', 'RUNNING') ORDER BY j.priority DESC, j.id");
}

absl::Status TuningLog::UpdateJobState(int64_t id, JobState state, std::string_view error) {
  RETURN_IF_ERROR(RequireWritable("change a job's state"));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(*db_));
  ASSIGN_OR_RETURN(Job job, tables::FetchJob(*db_, id));
  if (IsTerminal(job.state)) {
    if (job.state == state) {
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(StrCat("job ", id, " is ", JobStateName(job.state),
                                                ", which is final; it cannot become ",
                                                JobStateName(state)));
  }
  int64_t now = UnixNowMs();
  if (state == JobState::kRunning && job.started_at_ms == 0) {
    job.started_at_ms = now;
  }
  if (IsTerminal(state)) {
    job.finished_at_ms = now;
  }
  ASSIGN_OR_RETURN(sqlite::Statement update,
                   db_->Prepare("UPDATE jobs SET state = ?, error = ?, updated_at_ms = ?, "
                                "started_at_ms = ?, finished_at_ms = ? WHERE id = ?"));
  update.BindAll(JobStateName(state), error, now, job.started_at_ms, job.finished_at_ms, id);
  RETURN_IF_ERROR(update.Run());
  return txn.Commit();
}

absl::Status TuningLog::SaveJobProgress(int64_t id, const JobProgress& progress) {
  RETURN_IF_ERROR(RequireWritable("save a job's progress"));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement update,
                   db_->Prepare("UPDATE jobs SET search_state = ?, since_improvement = ?, "
                                "updated_at_ms = ? WHERE id = ?"));
  update.BindAll(progress.search_state, progress.since_improvement, UnixNowMs(), id);
  RETURN_IF_ERROR(update.Run());
  if (db_->Changes() == 0) {
    return absl::NotFoundError(StrCat("job ", id, " is not in ", path_));
  }
  return absl::OkStatus();
}

absl::StatusOr<Record> TuningLog::CommitTrial(Record record, const JobProgress& progress) {
  std::vector<TrialCommit> one;
  one.push_back(TrialCommit{std::move(record), progress});
  ASSIGN_OR_RETURN(std::vector<Record> committed, CommitTrials(std::move(one)));
  return std::move(committed.front());
}

absl::StatusOr<std::vector<Record>> TuningLog::CommitTrials(std::vector<TrialCommit> trials) {
  RETURN_IF_ERROR(RequireWritable("commit a trial"));
  // What each job's row gains, in the order the jobs first appear.
  struct JobUpdate {
    int64_t id = 0;
    int done = 0;
    int failed = 0;
    const JobProgress* last_counted = nullptr;
  };
  std::vector<JobUpdate> updates;
  const bool several = trials.size() > 1;
  for (size_t i = 0; i < trials.size(); ++i) {
    Record& record = trials[i].record;
    const std::string which = several ? StrCat("trial ", i, ": ") : "";
    if (!record.job_id) {
      return absl::InvalidArgumentError(
          StrCat(which, "record.job_id: CommitTrial needs the job's id"));
    }
    if (absl::Status valid = CanonicalizeRecord(record); !valid.ok()) {
      return absl::Status(valid.code(), StrCat(which, valid.message()));
    }
    auto it = std::find_if(updates.begin(), updates.end(),
                           [&](const JobUpdate& u) { return u.id == *record.job_id; });
    if (it == updates.end()) {
      it = updates.insert(updates.end(), JobUpdate{*record.job_id});
    }
    if (trials[i].progress.counts) {
      // A trial given up (no verdict) is recorded, but is no trial of the job's budget.
      const bool verdict = IsVerdict(record.measurement.error);
      it->done += verdict ? 1 : 0;
      it->failed += verdict && !record.measurement.ok() ? 1 : 0;
      it->last_counted = &trials[i].progress;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(*db_));
  ASSIGN_OR_RETURN(sqlite::Statement update,
                   db_->Prepare("UPDATE jobs SET trials_done = trials_done + ?, "
                                "trials_failed = trials_failed + ?, search_state = "
                                "CASE WHEN ? THEN ? ELSE search_state END, since_improvement = "
                                "CASE WHEN ? THEN ? ELSE since_improvement END, updated_at_ms = ? "
                                "WHERE id = ?"));
  const int64_t now = UnixNowMs();
  static const JobProgress kUncounted{};
  for (const JobUpdate& job : updates) {
    const JobProgress& progress = job.last_counted ? *job.last_counted : kUncounted;
    const int counted = job.last_counted ? 1 : 0;
    update.BindAll(job.done, job.failed, counted, progress.search_state, counted,
                   progress.since_improvement, now, job.id);
    RETURN_IF_ERROR(update.Run());
    if (db_->Changes() == 0) {
      return absl::NotFoundError(StrCat("job ", job.id, " is not in ", path_));
    }
  }
  std::vector<Record> committed;
  committed.reserve(trials.size());
  for (TrialCommit& trial : trials) {
    RETURN_IF_ERROR(tables::InsertRecord(*db_, trial.record));
    committed.push_back(std::move(trial.record));
  }
  RETURN_IF_ERROR(txn.Commit());
  return committed;
}

}  // namespace tune
