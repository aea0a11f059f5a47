// Scheduler: the daemon's heart. It owns the job queue (persisted in the tuning log), the worker
// registry with liveness, the per-job searches, the build pool and the dispatch of artifacts to
// workers, and it commits every trial to the log before counting it.
//
// Scheduling rules:
//   - Jobs run in priority order (higher first), FIFO within a priority. For each device key, a
//     job proposes new trials only when every job before it on that key has proposed its whole
//     budget; a job waiting for its turn or for a worker with its device key stays QUEUED and
//     its message says why.
//   - A job's trials go only to workers whose device key equals the job's.
//   - The build pool builds ahead: each device key keeps up to its workers' total capacity of
//     artifacts built or building beyond those in flight, so the next artifact is ready before
//     a worker frees up.
//   - A config is never proposed twice for one workload and target: the search skips what the
//     log holds, and configs claimed by a running job are skipped by others.
//   - A worker whose stream breaks, or that sends nothing for the heartbeat deadline, is
//     dropped and its in-flight trials go back to the front of their job's queue (after
//     kMaxDispatchAttempts lost workers a trial is recorded as RUNTIME_CRASH instead).
//   - Every trial is committed with TuningLog::CommitTrial (record, job counters and search
//     state in one transaction) before the job's progress counts it.
//
// Thread-safe. Locks: commit_mu_ (serialises commits) is taken before mu_; the tuning log's
// own lock after either.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "db/tuning_log.h"
#include "tune/v1/tuner.pb.h"
#include "tune/v1/worker.pb.h"
#include "tuner/build_pool.h"
#include "tuner/job_options.h"
#include "tuner/scheduler_types.h"
#include "tuner/worker_channel.h"

namespace tune::tuner {

struct SchedulerOptions {
  int build_threads = 1;
  /// Sent to workers in Registered: how often they send a heartbeat.
  int heartbeat_interval_ms = 1000;
  /// A worker that sends nothing for this long is dropped.
  int heartbeat_deadline_ms = 5000;
  /// Accept the test-only fault templates (tuner/fault_templates.h).
  bool allow_fault_templates = false;
  /// A trial whose worker was lost this many times is recorded as RUNTIME_CRASH.
  int max_dispatch_attempts = 3;
};

class Scheduler {
 public:
  /// `log` must outlive the scheduler and be writable.
  Scheduler(TuningLog* log, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Loads the queued and running jobs of the log (running ones go back to QUEUED and resume
  /// from their stored search state), then starts the build pool and the liveness monitor. A
  /// job that can no longer run (its template is gone) is marked FAILED. A log error is
  /// returned as is.
  absl::Status Start();

  /// Refuses new work from now on (no dispatch, no new workers) without closing any stream, so
  /// that local workers can be stopped first and leave quietly. Idempotent.
  void StopAcceptingWork();

  /// First half of stopping: refuses new work, wakes every watcher and closes every worker
  /// stream. Idempotent.
  void BeginShutdown();

  /// Second half: stops the build pool and the monitor and puts running jobs back to QUEUED in
  /// the log so that the next daemon resumes them. Call after the gRPC server stopped.
  void Shutdown();

  // --- tune.v1.Tuner ------------------------------------------------------------------------

  /// Validates (ValidateJobSpec; nothing is written when it fails), stores and queues a job.
  absl::StatusOr<v1::Job> SubmitJob(const v1::JobSpec& spec, std::string_view client);
  /// NotFound for an unknown id.
  absl::StatusOr<v1::Job> GetJob(uint64_t id);
  /// Newest first; only `states` when not empty; at most `limit` (0: 100).
  absl::StatusOr<std::vector<v1::Job>> ListJobs(const std::vector<JobState>& states, int limit);
  /// Cancels a queued or running job: its queued and in-flight trials are dropped (and
  /// cancelled on their workers); recorded trials stay. FailedPrecondition when the job had
  /// already finished; NotFound for an unknown id.
  absl::StatusOr<v1::Job> CancelJob(uint64_t id);

  /// Gives `sink` one event with the job's current state, then one per finished trial or
  /// state change, until an event with a final state (then OK), `sink` returns false or
  /// `cancelled()` turns true (Cancelled), or the daemon stops (Unavailable). NotFound for an
  /// unknown id.
  absl::Status WatchJob(uint64_t id, const std::function<bool(const v1::JobEvent&)>& sink,
                        const std::function<bool()>& cancelled);

  /// Connected workers (and, with `include_lost`, those lost since start), sorted by name.
  std::vector<v1::WorkerInfo> ListWorkers(bool include_lost);

  // --- tune.v1.WorkerLink -------------------------------------------------------------------

  /// Registers a worker that sent `reg` and queues Registered on `channel` (before any
  /// request). A Register without name or device key, or with a negative capacity, is
  /// InvalidArgument naming the field; a stopping daemon answers Unavailable. Returns the
  /// worker id.
  absl::StatusOr<std::string> AddWorker(const v1::Register& reg, std::string peer,
                                        std::shared_ptr<WorkerChannel> channel);
  /// Notes that the worker is alive; re-queues trials it should hold but does not list.
  void OnHeartbeat(const std::string& worker_id, const v1::Heartbeat& heartbeat);
  /// Commits the result of a trial in flight on this worker (results of trials it does not
  /// hold are ignored), then counts it. A result with worker_error set is not recorded: the
  /// trial goes back to its queue for another attempt (see max_dispatch_attempts).
  void OnResult(const std::string& worker_id, const v1::MeasureResult& result);
  /// Answers the worker's FetchArtifact with the code of a trial in flight on it, or with an
  /// error when it holds no trial with that artifact.
  void OnFetch(const std::string& worker_id, const v1::FetchArtifact& fetch);
  /// Drops a worker (stream ended): its in-flight trials go back to their queues.
  void RemoveWorker(const std::string& worker_id, std::string_view reason);

 private:
  // The jobs, trials and workers that need committing once mu_ is released.
  using Commits = std::vector<PendingCommit>;

  // --- scheduler.cc: the loop ---
  /// Proposes, builds, dispatches and finishes jobs after any change.
  void PumpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ProposeLocked(JobRuntime& job, int n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SendTrialLocked(WorkerEntry& worker, Trial& trial) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnBuilt(uint64_t trial_id, absl::StatusOr<Artifact> artifact);
  /// Commits (outside mu_) the outcomes collected while it was held.
  void CommitAll(Commits commits);
  void Commit(const PendingCommit& pending);
  /// Moves a job to a state, in the log then in memory, and tells watchers.
  void SetStateLocked(JobRuntime& job, JobState state, std::string_view error = "")
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FinishLocked(JobRuntime& job, JobState state, std::string_view why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PushEventLocked(JobRuntime& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Drops a trial (cancelled job): off its worker, its queue and the claimed set.
  void DropTrialLocked(uint64_t trial_id, std::string_view reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Puts an in-flight trial back at the front of its job's queue, or records it as lost.
  void RequeueLocked(Trial& trial, std::string_view why, Commits* commits)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- scheduler_jobs.cc: jobs for clients ---
  /// A job's runtime from its log row (search state, measured configs, best record).
  absl::StatusOr<std::unique_ptr<JobRuntime>> LoadRuntime(const Job& row);
  v1::Job JobProtoLocked(const JobRuntime& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// A finished job known only to the log.
  absl::StatusOr<v1::Job> JobProtoFromLog(const Job& row);
  v1::JobEvent EventLocked(const JobRuntime& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- scheduler_workers.cc: liveness ---
  void RemoveWorkerLocked(WorkerEntry& worker, std::string_view reason, Commits* commits)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MonitorLoop();

  TuningLog* const log_;
  const SchedulerOptions options_;

  std::mutex commit_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable std::mutex mu_;
  std::condition_variable events_cv_;  // a job event was pushed, or shutting down
  std::condition_variable monitor_cv_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool streams_closed_ ABSL_GUARDED_BY(mu_) = false;
  std::map<int64_t, std::unique_ptr<JobRuntime>> jobs_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Trial> trials_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<WorkerEntry>> workers_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::WorkerInfo> lost_workers_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> claimed_ ABSL_GUARDED_BY(mu_);  // ClaimKey of configs being measured
  uint64_t next_trial_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_worker_id_ ABSL_GUARDED_BY(mu_) = 1;

  std::unique_ptr<BuildPool> pool_;
  std::thread monitor_;
  bool stopped_ = false;  // Shutdown() ran (only touched by the owner thread)
};

}  // namespace tune::tuner
