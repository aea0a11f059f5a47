// Scheduler: the daemon's heart. It ties together its pieces, each in a file of its own:
//   JobQueue        live jobs in dispatch order (job_queue.h)
//   WorkerRegistry  connected workers, their capabilities and liveness (worker_registry.h)
//   TrialPipeline   every trial from proposal to commit, and config claims (trial_pipeline.h)
//   EventHub        job progress fanned out to watchers (event_hub.h)
//   BuilderPool     supervised builder processes (builder_pool.h)
//   planner         a SerialExecutor that runs the searches (proposals)
//   log writer      a SerialExecutor through which every write to the tuning log goes
//   JobDriver       what each kind of job does next: SearchJob (its search, then its finalists)
//                   and ModelJob (its task jobs' budgets) (job_driver.h)
//
// Locking: one mutex (mu_) guards the in-memory bookkeeping of the first three pieces and the
// drivers' state, and no disk write, search work, build, artifact copy or formatting of a job's
// view ever happens while it is held: heartbeats and results take it for microseconds. Views
// for watchers and the dashboard are snapshots copied under it (JobView) and formatted after.
// A job's search has its own lock (in SearchJob), taken only by the planner and the log writer,
// never while mu_ is held; event streams have theirs, taken after mu_.
//
// Scheduling rules:
//   - Jobs run in priority order (higher first). Within a priority, clients share the workers
//     (ClientKey: a token's name, else the peer's host): the client with the fewest trials
//     outstanding proposes and is dispatched first, and a client's own jobs run FIFO. For each
//     device key, a job proposes new trials only when every job before it on that key of a
//     higher priority, or of its own client, has proposed its whole budget; a job waiting for
//     its turn or for a worker that can run it stays QUEUED and its message says why.
//   - A trial goes only to a worker with the job's device key, at least the target's -threads
//     on offer, and every library its artifact calls preloaded; among those, to one that has not
//     failed it before when there is such a worker. A library template (gemm.cpu.dnnl) proposes
//     only while some connected worker offers its library; the others go on without it, and the
//     job's message says which were skipped. A job all of whose templates call a library no
//     worker offers waits, QUEUED, saying which library it needs.
//   - The pipeline builds ahead: each job keeps up to its workers' total capacity of artifacts
//     built or building beyond those in flight.
//   - A config is never measured twice for one workload, target and timing: the search skips
//     what the log holds; a config that a trial of another job is measuring waits for that trial
//     (it is dropped once the trial is recorded, and becomes this job's trial if that one is
//     dropped); a running job learns of every record other jobs of its workload, target and
//     timing make, and a config its search proposed before learning of such a record is
//     dropped, not measured.
//   - The same code is not measured twice at once: a built trial whose artifact hash, device key
//     and timing equal those of a trial waiting for or on a worker (of any job) follows it, and
//     takes its measurement into a record of its own (trial_pipeline.h).
//   - Artifacts come from the artifact store when it holds them (artifact_store.h); every build
//     is added to it.
//   - Records are written in groups: trials that reach the log writer while it is busy are
//     committed together in one transaction (TuningLog::CommitTrials), each job's search state
//     saved once per group.
//   - A worker whose stream breaks, that sends nothing for the heartbeat deadline, or that
//     cannot measure a trial (a worker_error, or a measurement that is no verdict: IsVerdict)
//     gives the trial back to the front of its job's queue; after max_dispatch_attempts
//     attempts the trial is given up: recorded as WORKER_LOST, which no search learns from, no
//     job's budget counts and later jobs measure again. Its job proposes another config
//     instead, says which trials it gave up, and fails after max_given_up_in_a_row in a row.
//   - Code that crashed or computed wrong on two workers of a device key and fingerprint is
//     quarantined there (db/quarantine.h): no worker of that key and fingerprint gets it again,
//     from any job; a trial built to it is recorded without a measurement, as the entry's error
//     kind with a message that names the entry ("skipped: ... quarantined"), unless a worker of
//     another fingerprint can measure it. A crash or wrong answer from one worker, when another
//     connected worker of its device key and fingerprint can run the trial, is measured again
//     there before it becomes the verdict (one worker's crash may be a sick device); both
//     records are written, the first as no trial of the budget.
//   - Searches and cost models learn from verdicts only, running or resumed alike.
//   - Every trial is committed (record, counters and the search's saved state, outstanding
//     proposals included, in one transaction) before it counts.
//   - A finished job leaves memory once its final state is on disk and no trial of it remains.
//
// Thread-safe.
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
#include "tuner/builder/builder_pool.h"
#include "tuner/builder/feature_source.h"
#include "tuner/scheduler/daemon_metrics.h"
#include "tuner/scheduler/event_hub.h"
#include "tuner/scheduler/job_driver.h"
#include "tuner/scheduler/job_options.h"
#include "tuner/scheduler/job_queue.h"
#include "tuner/scheduler/job_view.h"
#include "tuner/scheduler/model_job.h"
#include "tuner/scheduler/quarantine_set.h"
#include "tuner/scheduler/scheduler_types.h"
#include "tuner/scheduler/search_job.h"
#include "tuner/scheduler/serial_executor.h"
#include "tuner/scheduler/trial_pipeline.h"
#include "tuner/scheduler/worker_channel.h"
#include "tuner/scheduler/worker_registry.h"

namespace tune::tuner {

struct SchedulerOptions {
  /// Builder processes (each one builds one config at a time).
  int build_threads = 1;
  /// The binary the builders run (`<builder_executable> --build-child`): tune-daemon.
  std::string builder_executable = "/proc/self/exe";
  /// A build that runs longer is a BUILD_ERROR and its builder is replaced.
  int build_timeout_ms = 300000;
  /// Sent to workers in Registered: how often they send a heartbeat.
  int heartbeat_interval_ms = 1000;
  /// A worker that sends nothing for this long is dropped.
  int heartbeat_deadline_ms = 5000;
  /// The templates and libraries jobs may name: the daemon's catalog (its micro-kernels and
  /// plugins, which the builders load too, and its program's own templates, which the builder
  /// executable has as well).
  Catalog catalog = {};
  /// A trial whose workers were lost or could not measure it (a worker_error, or a measurement
  /// that is no verdict: WORKER_ERROR) this many times is given up: recorded as WORKER_LOST, it
  /// is no trial of its job's budget, and the job proposes another config instead.
  int max_dispatch_attempts = 3;
  /// A job that gives up this many trials in a row (with no verdict between them) fails, saying
  /// so: its workers cannot measure its trials.
  int max_given_up_in_a_row = 8;
  /// The artifact store's directory (tuner/artifact_store.h); empty or a bound of 0: none.
  std::string artifact_store_dir = {};
  uint64_t artifact_store_bytes = 0;
  /// Re-measure a job's finalists once its budget is spent (tuner/finalists.h); tests of other
  /// behaviour that answer each trial by hand turn it off.
  bool remeasure_finalists = true;
  /// A trial built to code that this daemon is measuring (same MeasureKey) follows that trial
  /// and takes its answer; one built to code measured before takes that answer
  /// (TrialPipeline::Recall). Either way no worker measures the same code twice. Off, every
  /// trial is measured: tests that count one request per trial of configs that build to the
  /// same code turn it off, since whether such a trial follows depends on timing.
  bool share_measurements = true;
};

class Scheduler {
 public:
  /// `log` must outlive the scheduler and be writable.
  Scheduler(TuningLog* log, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Loads the queued and running jobs of the log (running ones go back to QUEUED and resume
  /// from their stored search state), then starts the builders, the planner, the log writer and
  /// the liveness monitor. A job that can no longer run (its template is gone) is marked
  /// FAILED. A log error is returned as is.
  absl::Status Start();

  /// Refuses new work from now on (no dispatch, no new workers) without closing any stream, so
  /// that local workers can be stopped first and leave quietly. Idempotent.
  void StopAcceptingWork();

  /// First half of stopping: refuses new work, ends every watcher and closes every worker
  /// stream. Idempotent.
  void BeginShutdown();

  /// Second half: stops the monitor, the builders and the planner, writes what the log writer
  /// holds, and puts running jobs back to QUEUED in the log so that the next daemon resumes
  /// them. Call after the gRPC server stopped.
  void Shutdown();

  // --- tune.v1.Tuner ------------------------------------------------------------------------

  /// Validates (ValidateJobSpec; nothing is written when it fails), stores (one transaction)
  /// and queues a job.
  absl::StatusOr<v1::Job> SubmitJob(const v1::JobSpec& spec, std::string_view client);
  /// Queues a reverify job (tuner/scheduler/reverify.h) for the request's workloads, those of
  /// them with successful records on its target: InvalidArgument naming the field for a bad
  /// request (not exactly one of workload, tasks and all; trials out of range; what
  /// ValidateJobSpec refuses), FailedPrecondition when none of them has a record to re-measure
  /// or no worker of the target's device key is connected.
  absl::StatusOr<v1::Job> Reverify(const v1::ReverifyRequest& request, std::string_view client);
  /// Every device's fingerprints, newest first (TuningLog::ListFingerprints).
  absl::StatusOr<std::vector<SeenFingerprint>> ListFingerprints();
  /// NotFound for an unknown id.
  absl::StatusOr<v1::Job> GetJob(uint64_t id);
  /// Newest first; only `states` when not empty; at most `limit` (0: 100).
  absl::StatusOr<std::vector<v1::Job>> ListJobs(const std::vector<JobState>& states, int limit);
  /// Cancels a queued or running job: its queued and in-flight trials are dropped (and
  /// cancelled on their workers); recorded trials stay. Returns once CANCELLED is on disk.
  /// FailedPrecondition when the job had already finished; NotFound for an unknown id.
  absl::StatusOr<v1::Job> CancelJob(uint64_t id);

  /// Gives `sink` one event with the job's current state, then one per finished trial or
  /// state change, until an event with a final state (then OK), `sink` returns false or
  /// `cancelled()` turns true (Cancelled), or the daemon stops (Unavailable). NotFound for an
  /// unknown id.
  absl::Status WatchJob(uint64_t id, const std::function<bool(const v1::JobEvent&)>& sink,
                        const std::function<bool()>& cancelled);

  /// Connected workers (and, with `include_lost`, those lost since start), sorted by name.
  std::vector<v1::WorkerInfo> ListWorkers(bool include_lost);

  /// The log's quarantine entries matching `filter` (db/quarantine.h).
  absl::StatusOr<std::vector<QuarantineEntry>> ListQuarantine(const QuarantineFilter& filter);
  /// Lifts entry `id` in the log and for dispatch, naming who lifted it (a token's name);
  /// NotFound when no entry of that id holds.
  absl::StatusOr<QuarantineEntry> LiftQuarantine(int64_t id, std::string_view by);

  // --- Snapshots for the dashboard and /metrics (tuner/http_server.h) ----------------------

  /// Estimated seconds until each live job's budget is spent, from the rate of its latest
  /// trials (WatchJob's eta_seconds): by job id, negative when unknown, 0 for a finished job.
  /// Jobs that left memory (finished) are absent.
  std::map<uint64_t, double> Etas();
  /// Live jobs by state and their trials by stage.
  QueueDepth Depth();
  /// Counters and histograms the scheduler keeps up to date (the queue and worker gauges are
  /// set by whoever reads them, from Depth and ListWorkers).
  DaemonMetrics& metrics() { return metrics_; }

  // --- tune.v1.WorkerLink -------------------------------------------------------------------

  /// Registers a worker that sent `reg` and queues Registered on `channel` (before any
  /// request). A Register without name or device key, or with a negative capacity or thread
  /// count, is InvalidArgument naming the field; a stopping daemon answers Unavailable. Returns
  /// the worker id.
  absl::StatusOr<std::string> AddWorker(const v1::Register& reg, std::string peer,
                                        std::shared_ptr<WorkerChannel> channel);
  /// Notes that the worker is alive; re-queues trials it should hold but does not list.
  void OnHeartbeat(const std::string& worker_id, const v1::Heartbeat& heartbeat);
  /// Takes the result of a trial in flight on this worker (results of trials it does not hold
  /// are ignored): its record is written by the log writer, then it counts. A result with
  /// worker_error set is not recorded: the trial goes back to its queue for another attempt.
  void OnResult(const std::string& worker_id, const v1::MeasureResult& result);
  /// Answers the worker's FetchArtifact with the code of a trial in flight on it, or with an
  /// error when it holds no trial with that artifact.
  void OnFetch(const std::string& worker_id, const v1::FetchArtifact& fetch);
  /// Drops a worker (stream ended): its in-flight trials go back to their queues.
  void RemoveWorker(const std::string& worker_id, std::string_view reason);

  // --- For tests --------------------------------------------------------------------------

  /// Returns once every durable write decided so far is on disk and every proposal asked of
  /// the planner has been made.
  void Quiesce();
  /// Quiesce, and also every build asked so far has been built and taken (for tests).
  void QuiesceWithBuilds();
  /// Live jobs, trials and claims held in memory.
  struct MemoryUse {
    size_t jobs = 0;
    size_t trials = 0;
    size_t claims = 0;
  };
  MemoryUse Memory();

  /// The templates and libraries jobs may name (SchedulerOptions::catalog).
  const Catalog& catalog() const { return options_.catalog; }

 private:
  using JobPtr = std::shared_ptr<JobRuntime>;

  // --- scheduler.cc: the loop ---
  /// After any change: the admission policy (which jobs may propose, Admission), then each
  /// live job's driver says what the job does next (ApplyStepLocked does it), then dispatch.
  void PumpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// A search job's turn in the pump: its admission and its step.
  void PumpSearchLocked(JobRuntime& job, SearchJob& search, Admission& admission)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SendTrialLocked(WorkerEntry& worker, Trial& trial, JobRuntime& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// The job's library templates whose library no connected worker (of its device key and
  /// threads) has loaded.
  std::set<const KernelTemplate*> UnusableTemplatesLocked(const JobRuntime& job,
                                                          const SearchJob& search) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- scheduler_steps.cc: doing what a driver decided ---
  /// Takes `step`'s action, then sets the job's standing (running, waiting, or ended).
  void ApplyStepLocked(JobRuntime& job, JobStep step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// On the planner: picks a search job's finalists from the log, then admits the first pass.
  void PlanFinals(const JobPtr& job, const std::set<const KernelTemplate*>& unusable);
  /// Queues a pass of re-measurements of a search job's finalists, in the pass's order, and
  /// admits the first as a trial (AdmitQueuedFinalistLocked).
  void AdmitFinalistsLocked(JobRuntime& job, const std::vector<Candidate>& finalists)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Admits the next queued re-measurement once the one before it has left for a worker (or
  /// ended without one): a pass reaches the workers in its order, whatever its builds take, and
  /// the next build overlaps the measurement before it.
  void AdmitQueuedFinalistLocked(JobRuntime& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// On the log writer: decides a search job's best from the re-measurements.
  void DecideFinals(const JobPtr& job);
  /// The live model job of a task job; null for other jobs or once the model job left memory.
  JobRuntime* ModelOfLocked(const JobRuntime& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// True for a task job whose model job may still give it trials: it waits instead of ending
  /// when its budget is spent.
  bool AwaitsChunkLocked(const JobRuntime& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// A task job's trial was counted: notes the untuned default's time, tells its model job and
  /// lends the trial to the sibling tasks' cost models that search the same template (and
  /// transfer), on the planner: the tasks of one model learn from each other as they run.
  void OnTaskTrialLocked(JobRuntime& task, const Trial& trial, const TrialOutcome& outcome,
                         ErrorKind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CancelModelTasksLocked(JobRuntime& model, std::string_view why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- scheduler_trials.cc: proposals, builds, claims ---
  /// Asks the planner for `n` more candidates of `job`.
  void ProposeLocked(JobRuntime& job, int n, std::set<const KernelTemplate*> unusable)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// On the planner: runs the search and admits its candidates.
  void Plan(const JobPtr& job, int n, const std::set<const KernelTemplate*>& unusable);
  /// A candidate becomes a trial (building), or waits on the trial that holds its claim.
  void AdmitLocked(JobRuntime& job, Candidate candidate) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SubmitBuildLocked(JobRuntime& job, const Trial& trial) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnBuilt(uint64_t trial_id, BuildOutcome outcome);
  /// A trial's claim was released: wakes the candidates of other jobs that waited on it.
  /// `recorded` says whether the config is now in the log.
  void ReleaseClaimLocked(const std::string& claim, bool recorded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Tells the searches of the other live jobs of this workload and target about a record.
  void ShareRecordLocked(const JobRuntime& source, const Trial& trial, const TrialOutcome& outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Puts an in-flight trial back at the front of its job's queue, or hands it to the log
  /// writer as WORKER_LOST when its attempts are used up.
  void RequeueLocked(Trial& trial, WorkerEntry* worker, std::string_view worker_name,
                     std::string why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// A trial leaves without a verdict on its code: the trials that followed it (waiting for its
  /// measurement) go back to be measured, the first leading the others.
  void RejoinFollowersLocked(Trial& trial) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Commits `verdict` for `leader` and a copy for each trial that follows it (same code, device
  /// and timing), which then leave the pipeline like it.
  void CommitWithFollowersLocked(Trial& leader, PendingCommit verdict)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Quarantine (scheduler_quarantine.cc).
  /// The entry that keeps `trial`'s code from `worker`, or null.
  const QuarantineEntry* QuarantinedForLocked(const WorkerEntry& worker, const Trial& trial) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Whether a connected worker other than `first`, of its device key and fingerprint, can run
  /// `trial` and has not answered it yet: the one to confirm `first`'s crash or wrong answer.
  bool SecondOpinionLocked(const WorkerEntry& first, const Trial& trial, const JobRuntime& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Records a taken trial (and its followers) whose code `entry` keeps from its workers,
  /// without measuring it.
  void SkipQuarantinedLocked(Trial& trial, JobRuntime& job, const QuarantineEntry& entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// After a commit (on the log writer): takes the entries the committed crashes made.
  void NoteQuarantineOf(const std::vector<absl::StatusOr<Record>>& committed);
  /// Notes a registering worker's fingerprint in the log (TuningLog::NoteFingerprint) and says
  /// in the daemon's log when it is a new one of its device key, and what changed. Not under
  /// mu_ (a write to the log).
  /// SubmitJob's second half: stores and queues a validated job.
  absl::StatusOr<v1::Job> SubmitValidated(ValidatedJob valid, std::string_view client);
  void NoteFingerprintOf(const v1::Register& reg);
  /// Drops a trial (its job ended): off its worker (cancelled there), its queue and its claim.
  void DropTrialLocked(Trial& trial, std::string_view reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- scheduler_commits.cc: the log writer ---
  /// Posts a write to the log writer after the trials handed to it so far (closing the open
  /// commit group, so that writes reach the log in the order they were decided).
  bool PostWriteLocked(std::function<void()> write) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Hands a trial in stage committing to the log writer: it joins the open commit group, or
  /// opens one.
  void CommitLocked(PendingCommit pending) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// On the log writer: observes the group's trials in their jobs' searches, writes their
  /// records and their jobs' progress in one transaction (a group commit), then counts them.
  void WriteTrials(const std::shared_ptr<CommitGroup>& group);
  /// Counts one trial of a group once the log has answered for it (`committed`), or fails its
  /// job when it could not be recorded.
  void CountTrialLocked(JobRuntime& job, const PreparedTrial& prepared,
                        const absl::StatusOr<Record>& committed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// TuningLog::CommitTrials, retried while the log's disk is full (storage_paused_), until it
  /// is written, fails otherwise (then each trial is tried alone, so that one bad record fails
  /// only itself), or the daemon stops (then the disk-full error). One result per trial.
  std::vector<absl::StatusOr<Record>> CommitWhenSpaceAllows(
      std::vector<TuningLog::TrialCommit> trials) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::vector<Record>> CommitGroupWhenSpaceAllows(
      const std::vector<TuningLog::TrialCommit>& trials) ABSL_LOCKS_EXCLUDED(mu_);
  /// A trial given up (recorded as WORKER_LOST) leaves: no trial of its job's budget, noted in
  /// the job's message; the job fails after max_given_up_in_a_row in a row.
  void GiveUpLocked(JobRuntime& job, Trial& trial, const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- scheduler_states.cc: a job's state, its ending and its events ---
  /// Moves a live job to QUEUED or RUNNING: in memory at once, on disk through the writer.
  void SetActiveStateLocked(JobRuntime& job, JobState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Says why a job that is not running waits (empty: it does not), once: a RUNNING job that
  /// now waits goes back to QUEUED; otherwise watchers get an event.
  void SetWaitingLocked(JobRuntime& job, std::string waiting) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Ends a job: drops its trials that are not committing, and writes the final state through
  /// the writer; the job leaves memory once that is done and its last trial is counted.
  /// `done` (optional) runs on the writer once the state is on disk.
  void FinishLocked(JobRuntime& job, JobState state, std::string_view why,
                    std::function<void()> done = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Removes a finished job whose state is on disk and whose trials are all counted.
  void PruneLocked(JobRuntime& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Gives the job's watchers (and its model job's) a snapshot of it.
  void PushEventLocked(JobRuntime& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// A snapshot of a live job (job_view.h), formatted later outside the lock.
  JobView ViewLocked(const JobRuntime& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- scheduler_jobs.cc: loading jobs, and the client-facing calls ---
  /// A job's runtime and driver, loaded from its row (its search, or its model's allocation).
  absl::StatusOr<JobPtr> LoadRuntime(const Job& row);
  /// The build pool's settings (and those of the feature source's builder).
  static BuilderOptions BuilderOptionsOf(const SchedulerOptions& options);

  // --- scheduler_workers.cc: liveness ---
  void RemoveWorkerLocked(const std::string& worker_id, std::string_view reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MonitorLoop();

  TuningLog* const log_;
  const SchedulerOptions options_;
  DaemonMetrics metrics_;

  // The cost models' features, computed in a builder process of their own (feature_source.h).
  // Declared before the jobs, whose searches point to it, so that it outlives them.
  std::unique_ptr<BuilderFeatureSource> features_;

  mutable std::mutex mu_;
  std::condition_variable monitor_cv_;  // also wakes a log writer waiting for disk space
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  // Why trials cannot be recorded now (the log's disk is full), empty otherwise: no job proposes
  // new trials meanwhile, every active job's message says so, and the writer retries the
  // trial in hand until it is recorded or the daemon stops.
  std::string storage_paused_ ABSL_GUARDED_BY(mu_);
  bool streams_closed_ ABSL_GUARDED_BY(mu_) = false;
  JobQueue jobs_ ABSL_GUARDED_BY(mu_);
  WorkerRegistry workers_ ABSL_GUARDED_BY(mu_);
  TrialPipeline trials_ ABSL_GUARDED_BY(mu_);
  QuarantineSet quarantine_ ABSL_GUARDED_BY(mu_);
  EventHub events_;

  std::unique_ptr<ArtifactStore> store_;  // before the builders, which use it
  std::unique_ptr<BuilderPool> builders_;
  std::unique_ptr<SerialExecutor> planner_;
  std::unique_ptr<SerialExecutor> writer_;
  // The commit group the log writer has been asked to write and has not taken yet: trials that
  // reach committing meanwhile join it, so that a busy writer commits many in one transaction.
  std::shared_ptr<CommitGroup> open_group_ ABSL_GUARDED_BY(mu_);
  std::thread monitor_;
  bool stopped_ = false;  // Shutdown() ran (only touched by the owner thread)
};

}  // namespace tune::tuner
