// SearchJob: the driver of a job that searches one workload's configs (job_driver.h). It owns
// the job's templates and search, what the job learnt from its trials (its best, its run
// without improvement, its trials given up), and its last phase, the re-measurement of its
// finalists (finalist_phase.h). A task of a model job is a search job whose budget its model
// job gives it a chunk at a time (model_job.h); it also notes its untuned default's time.
//
// Its steps (SearchJob::Next; the pump's admission says whether it may propose):
//
//   searching ──kPropose n──▶ searching (RUNNING while it has trials outstanding and workers)
//       │ its budget allocated, its search exhausted or stopped early, nothing outstanding
//       ├──(a task whose model job may give it more)──▶ kWaiting: "waiting for model job N ..."
//       ▼
//   finalists ──kPlanFinalists / kMeasureFinalists / kDecide (FinalistPhase)──▶ decided
//       ▼
//   kEnded DONE, saying why it stopped short of its budget and what its finalists decided
//
// Locking: the search is used by the planner and the log writer under the job's own search
// lock (Propose, Observe, GiveUp, Lend and SaveState take it), never while the scheduler's lock
// is held; everything else is guarded by the scheduler's lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "codegen/templates/catalog.h"
#include "db/tuning_log.h"
#include "tuner/builder/feature_source.h"
#include "tuner/scheduler/finalist_phase.h"
#include "tuner/scheduler/job_driver.h"
#include "tuner/scheduler/job_queue.h"
#include "tuner/scheduler/job_search.h"
#include "tuner/scheduler/reverify.h"
#include "tuner/scheduler/worker_registry.h"

namespace tune::tuner {

/// The log's verdicts (IsVerdict) on configs of the job's workload on its exact target and cache
/// state, oldest first: what its search learns from before proposing, as a running search learns
/// from them (Scheduler::WriteTrials). With `given_up`, also the job's own trials given up
/// (WORKER_LOST records, as "<template> <config>: <why>") and how many of them came after its
/// latest verdict, as a running job counts them.
absl::StatusOr<std::vector<PastTrial>> PastTrials(TuningLog& log, const Job& row,
                                                  std::vector<std::string>* given_up = nullptr,
                                                  int* given_up_in_a_row = nullptr);

/// The time of a task job's untuned default (its first template's default config) as the log
/// holds it for its workload and target; nullopt when unmeasured or its templates are gone.
absl::StatusOr<std::optional<double>> DefaultSecsFromLog(TuningLog& log, const Job& task,
                                                         const Catalog& catalog);

struct SearchJobOptions {
  /// The templates and libraries the job's names refer to (the daemon's catalog).
  Catalog catalog;
  /// FinalistPhase's `enabled` (SchedulerOptions::remeasure_finalists).
  bool remeasure_finalists = true;
  /// Computes the cost models' features; must outlive the job. Null: in this process.
  FeatureSource* features = nullptr;
};

class SearchJob final : public JobDriver {
 public:
  /// Loads the job `row`'s search from the log: its templates (ResolveTemplates), the configs
  /// the log measured for its workload and target, its saved search state, the verdicts to learn
  /// from (PastTrials) and, with transfer, its templates' trials on other workloads; its trials
  /// given up so far and its best. A job that can no longer run (its template is gone) and log
  /// errors are returned as errors.
  static absl::StatusOr<std::unique_ptr<SearchJob>> Load(TuningLog& log, const Job& row,
                                                         const SearchJobOptions& options);

  SearchJob* AsSearch() override { return this; }
  const SearchJob* AsSearch() const override { return this; }
  void Snapshot(const JobRuntime& job, const JobQueue& jobs, JobView& view) const override;

  // --- Set when loaded, then read-only ---
  const Workload& workload() const { return workload_; }
  const Target& target() const { return target_; }
  /// What one of its templates calls on its target (Catalog::LibraryOf when it was loaded).
  std::optional<TemplateLibrary> LibraryOf(const KernelTemplate& tpl) const;
  /// The CPU features a worker must report to run one of its templates' kernels
  /// (KernelTemplate::worker_features when it was loaded); empty when any worker of the key does.
  const std::vector<std::string>& FeaturesOf(const KernelTemplate& tpl) const;
  /// What a worker must offer for `tpl`, for messages: its library and its features, ", "-joined
  /// ("dnnl", "amx-tile, amx-bf16"); empty when nothing beyond the device key.
  std::string NeedsOf(const KernelTemplate& tpl) const;
  const std::vector<const KernelTemplate*>& templates() const { return templates_; }
  /// True when `tpl` is one of the job's templates.
  bool Searches(const KernelTemplate* tpl) const;
  /// The model job whose task this job is; 0 for other jobs.
  int64_t model_id() const { return model_id_; }
  /// What a trial of the job needs of a worker (`trial`'s libraries once it is built, its
  /// template's features).
  WorkerNeeds Needs(const JobRuntime& job, const Trial* trial) const;

  // --- The search: on the planner and the log writer, never under the scheduler's lock ---
  /// JobSearch::Propose over the templates that are not `unusable`.
  std::vector<Candidate> Propose(int n, const std::set<const KernelTemplate*>& unusable);
  /// JobSearch::Observe, GiveUp, Lend and SaveState.
  void Observe(const KernelTemplate* tpl, const TrialOutcome& outcome);
  void GiveUp(const KernelTemplate* tpl, const Config& config);
  void Lend(const KernelTemplate* tpl, const TemplateTrial& trial);
  std::string SaveState();

  // --- Under the scheduler's lock ---
  /// What the job does next (the diagram above). `ticket`: the pump's admission; `unusable`:
  /// its library templates that no connected worker offers (left out for now, and named in its
  /// message); `awaits_chunk`: it is a task whose model job may give it more trials.
  JobStep Next(const JobRuntime& job, const Admission::Ticket& ticket,
               const std::set<const KernelTemplate*>& unusable, bool awaits_chunk);
  /// True while the job may propose more trials.
  bool WantsMore(const JobRuntime& job) const;
  /// Its search stopped early: spec.early_stopping trials in a row without improvement.
  bool EarlyStopped(const JobRuntime& job) const;
  bool exhausted() const { return exhausted_; }
  /// The planner answered `got` candidates of `asked`: fewer means its space is used up.
  void Proposed(int asked, int got);

  /// The job's best and its run without improvement, as counted so far.
  const std::optional<BestSoFar>& best() const { return best_; }
  int since_improvement() const { return since_improvement_; }
  /// A verdict of its budget was recorded: `improved` (its new best, of record `uid`) or not.
  void Counted(const Trial& trial, const TrialOutcome& outcome, bool improved,
               const std::string& uid);
  /// A trial was given up (recorded as WORKER_LOST, no trial of its budget), because of `why`.
  /// Returns how many in a row since its latest verdict.
  int GaveUp(const Trial& trial, const std::string& why);
  const std::vector<std::string>& given_up() const { return given_up_; }
  /// "skipped gemm.cpu.dnnl (no worker with dnnl)": templates left out for want of a worker
  /// with their library or CPU features, as the latest pump found them; empty when none.
  const std::string& skipped() const { return skipped_; }
  /// A task's trial was counted: notes the untuned default's time when it is that config.
  void NoteDefault(const Trial& trial, const TrialOutcome& outcome);
  std::optional<double> default_secs() const { return default_secs_; }

  /// Another job recorded the config of `claim` while this job ran: its search learns of it on
  /// the planner, and a proposal made before that is dropped (TakeSharedRecord).
  void NoteSharedRecord(const std::string& claim) { shared_records_.insert(claim); }
  /// True (and forgotten) when `claim` was recorded by another job since this job proposed it.
  bool TakeSharedRecord(const std::string& claim) {
    return !shared_records_.empty() && shared_records_.erase(claim) > 0;
  }

  FinalistPhase& finals() { return finals_; }
  const FinalistPhase& finals() const { return finals_; }
  /// A reverify job's verdict after `measured` re-measurements (ReverifyVerdict); empty for
  /// other jobs.
  std::string reverify_verdict(int measured) const {
    return reverify_ ? ReverifyVerdict(*reverify_, best_, measured) : std::string();
  }
  /// Its finalists' phase ended with `decision` (nullopt: nothing decided): its best rests on
  /// the re-measured figure.
  void FinalsDecided(const std::optional<FinalistPhase::Decision>& decision);

 private:
  SearchJob(Workload workload, Target target, std::vector<const KernelTemplate*> templates,
            std::map<const KernelTemplate*, TemplateLibrary> libraries,
            std::map<const KernelTemplate*, std::vector<std::string>> features,
            bool remeasure_finalists)
      : workload_(std::move(workload)),
        target_(std::move(target)),
        templates_(std::move(templates)),
        libraries_(std::move(libraries)),
        features_(std::move(features)),
        finals_(remeasure_finalists) {}

  const Workload workload_;
  const Target target_;
  const std::vector<const KernelTemplate*> templates_;
  const std::map<const KernelTemplate*, TemplateLibrary> libraries_;
  const std::map<const KernelTemplate*, std::vector<std::string>> features_;  // non-empty only
  int64_t model_id_ = 0;
  std::string default_config_;  // a task's untuned default: its first template's default config

  std::mutex search_mu_;
  std::unique_ptr<JobSearch> search_ ABSL_GUARDED_BY(search_mu_);

  // Guarded by the scheduler's lock.
  bool exhausted_ = false;  // the search has nothing left to propose
  int since_improvement_ = 0;
  std::optional<BestSoFar> best_;
  // Its trials given up without a verdict (WORKER_LOST records: no trial of its budget), as
  // "<template> <config>: <why>", oldest first; and how many of them came after its latest
  // verdict.
  std::vector<std::string> given_up_;
  int given_up_in_a_row_ = 0;
  std::string skipped_;  // library templates left out for want of a worker
  // Claim keys of configs that other jobs recorded while this job ran.
  std::set<std::string> shared_records_;
  std::optional<double> default_secs_;  // a task's untuned default's time, once measured
  FinalistPhase finals_;
  std::optional<ReverifyPlan> reverify_;  // a reverify job's plan (reverify.h)
};

}  // namespace tune::tuner
