// FinalistPhase: the last phase of a search job (finalists.h says what finalists are). Once the
// job's budget is spent and all its trials are in, the phase has the planner pick the configs
// the first pass screens, has them re-measured as trials of the job (they build, dispatch and
// commit as any trial, but count in no budget), has the planner choose the finalists from the
// screen's figures, has them re-measured pass by pass, then decides the best from those figures
// and stores the decision, which the job's best and message then show.
//
//   searching ──Next: nothing of its own to stand behind (no best, no trial, or off)──▶ decided
//       │ Next: kPlan (the planner picks the screen: Pick)
//       ▼
//   planning ──Planned: fewer than two to screen (or finalists: none), or a log error──▶ decided
//       │ Planned: the screen's (or the finalists') first pass that a run cut short by a
//       │ restart did not record
//       ▼
//   measuring pass p ──Next, once every re-measurement of pass p is in: kMeasure pass p+1──┐
//       │   │ Next after the screen (pass 0): kPlan (the planner chooses the finalists   ◀──┘
//       │   └──────────────────────▶ planning   from the screen's figures: Pick)
//       │ Next: no pass left: kDecide (the log writer decides: Decide)
//       ▼
//   deciding ──Decided──▶ decided: the job may end
//
// Pick (on the planner) and Decide (on the log writer) read and write the log off the
// scheduler's lock; every transition is made under it. Everything they choose comes from the log,
// so a restart picks up where the last run stopped. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "db/job.h"
#include "db/tuning_log.h"
#include "tuner/scheduler/finalists.h"
#include "tuner/scheduler/job_search.h"

namespace tune::tuner {

/// A finalist and the passes over it that the log already holds (by a run of this phase that
/// a restart cut short).
using PlannedFinalist = std::pair<Candidate, int>;

class FinalistPhase {
 public:
  using Stage = FinalsProgress::Stage;
  /// What the job does about its finalists now.
  enum class Step : uint8_t {
    kNone,      // decided (or never to be): the job may end
    kUnderWay,  // planning or deciding: it waits for that
    kPlan,      // pick the finalists (Pick, on the planner), then Planned
    kMeasure,   // admit the re-measurements of the current pass (PassCandidates)
    kDecide,    // decide the best (Decide, on the log writer), then Decided
  };

  /// `enabled` false (SchedulerOptions::remeasure_finalists): a job ends on its search's best.
  explicit FinalistPhase(bool enabled) : enabled_(enabled) {}

  /// Asked once the job's budget is spent and nothing of it is outstanding. `stands_behind`:
  /// the job has a best and trials of its own.
  Step Next(bool stands_behind);
  /// planning → measuring: the screen (pass 0) when it is not over, else the finalists' first
  /// pass with something left to measure; → decided when there are fewer than two configs to
  /// screen, no finalist, or an error (the job ends on its search's best). Returns the
  /// re-measurements to admit now (empty: none; the next Next moves on).
  std::vector<Candidate> Planned(std::optional<std::vector<PlannedFinalist>> finalists);
  /// deciding → decided; `verdict` (empty: none) is what the re-measurement decided, for people.
  void Decided(std::string verdict);
  /// The re-measurements of the current pass not recorded before, in the order the workers
  /// get them: the screen's in the planner's order; the finalists' in the planner's order
  /// (fastest first) in odd passes and in reverse in even ones, so that a machine drifting
  /// within a pass (a GPU slowing as it heats) favours no finalist over two passes.
  std::vector<Candidate> PassCandidates() const;

  bool decided() const { return stage_ == Stage::kDecided; }
  /// Whether the screen is over: the next Pick chooses the finalists.
  bool screened() const { return screened_; }
  FinalsProgress Progress() const { return {stage_, finalists_.size(), pass_, screened_}; }
  const std::string& verdict() const { return verdict_; }

  /// On the planner. Before the screen (`screened` false): the log's kScreened fastest configs
  /// for the job's workload and target (the decided best first) that `templates` build and are
  /// not `unusable`, and beside them the fastest config of a library template among them. After
  /// it: the finalists, chosen by the screen's figures (the first of the job's re-measurements of
  /// each config): kFinalists, and up to kMaxFinalists those within kFinalistWindow of the
  /// kFinalists-th (finalists.h), the incumbent and the library's fastest (its other configs
  /// compete like the rest). Each comes with the passes over
  /// it that the job's records already hold. A log error is returned as is.
  static absl::StatusOr<std::vector<PlannedFinalist>> Pick(
      TuningLog& log, int64_t job_id, const JobSpec& spec,
      const std::vector<const KernelTemplate*>& templates,
      const std::set<const KernelTemplate*>& unusable, bool screened);

  /// What Decide decided.
  struct Decision {
    Verdict verdict;
    Finalist winner;
  };
  /// On the log writer: the best of the job's finalists, those it re-measured in more than the
  /// screen, on the passes after it (Decide in finalists.h, the decided best of the workload and
  /// target as the incumbent), stored as the new decided best (TuningLog::SetBestDecision) when
  /// it was compared with the incumbent or there is none. nullopt when nothing was decided or
  /// the log failed (logged).
  static std::optional<Decision> Decide(TuningLog& log, int64_t job_id, const JobSpec& spec);

 private:
  const bool enabled_;
  Stage stage_ = Stage::kSearching;
  std::vector<PlannedFinalist> finalists_;
  int pass_ = 0;
  bool screened_ = false;
  std::string verdict_;
};

}  // namespace tune::tuner
