// Reverify: after a driver or library upgrade (a new device fingerprint, db/fingerprints.h), a
// reverify job re-measures the log's best configs of its workload and target on workers of the
// device's newest fingerprint: the winner the log answered with before and its runners-up, at
// most the job's budget, nothing else (strategy "seeds" over these configs, no transfer, no
// finalist pass). It ends saying whether the winner is confirmed (still the fastest of them) or
// changed. Nothing in the log is rewritten: the new measurements are records of the newest
// fingerprint, which "best" prefers from then on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/templates/template.h"
#include "db/tuning_log.h"
#include "tuner/scheduler/job_search.h"
#include "tuner/scheduler/job_view.h"

namespace tune::tuner {

/// What a reverify job re-measures, and the winner it judges.
struct ReverifyPlan {
  std::string fingerprint;  // the device's newest: only its workers measure the job's trials
  std::string previous;     // the fingerprint whose records the configs come from
  Record winner;            // the best the log answered with, under `previous`
  std::vector<const KernelTemplate*> templates;  // those with configs, in the job's order
  GivenConfigs given;                            // their configs, the winner first
  int count = 0;                                 // configs in all
  std::optional<double> winner_now;  // the winner's re-measured time, once the job measured it
};

/// The plan of reverify job `row` among `templates` (the job's, at their current versions):
/// the best configs of the newest fingerprint that has successful records of the workload and
/// target (whose records "best" answers with), the decided best first, at most row.spec.trials
/// (a model job's task: its model's trials per workload). When that is the device's newest
/// fingerprint, its workers measured them already: the job measures nothing and confirms.
/// FailedPrecondition naming the workload and target when the log has no successful record of them
/// from a template of the job.
absl::StatusOr<ReverifyPlan> PlanReverify(TuningLog& log, const Job& row,
                                          const std::vector<const KernelTemplate*>& templates);

/// "reverify: confirmed ..." when `now` (the job's fastest re-measurement) is the plan's
/// winner's config or the winner's re-measurement is within 2% of it (the noise of repeated
/// medians), or when the plan's configs come from the newest fingerprint itself (already
/// measured there: the job measures nothing); "reverify: changed ..." naming both and their
/// times otherwise; "reverify: nothing re-measured" without a measurement (its trials failed).
/// `measured`: how many of the plan's configs the job re-measured.
std::string ReverifyVerdict(const ReverifyPlan& plan, const std::optional<BestSoFar>& now,
                            int measured);

}  // namespace tune::tuner
