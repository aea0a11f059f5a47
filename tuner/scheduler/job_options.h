// What a client may ask of the daemon, checked: the JobSpec of tune.v1 validated into the tuning
// log's JobSpec.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/target.h"
#include "common/workload.h"
#include "db/job.h"
#include "tune/v1/tuner.pb.h"

namespace tune::tuner {

/// Accepted priorities (higher runs first).
inline constexpr int kMinPriority = -1000;
inline constexpr int kMaxPriority = 1000;
/// Largest trial budget of one job.
inline constexpr int kMaxTrials = 1000000;
/// Strategy of a job that names none.
inline constexpr std::string_view kDefaultStrategy = "auto";

/// A submitted job, checked and canonical.
struct ValidatedJob {
  JobSpec spec;  // canonical workload, resolved canonical target, its device key, defaults set
  Workload workload;
  Target target;  // resolved (no -mcpu=native)
  std::vector<const KernelTemplate*> templates;
};

struct ValidationOptions {
  /// The templates and libraries that exist (the daemon's catalog).
  Catalog catalog;
};

/// Checks a submitted spec: the workload parses; the target parses, names libraries the catalog
/// has for its kind (Catalog::CheckTarget) and a template exists for it ("-mcpu=native" is resolved
/// to the daemon host's CPU); trials in [1, kMaxTrials]; the strategy is one of StrategyNames()
/// (empty: kDefaultStrategy); priority in [kMinPriority, kMaxPriority]; timing fields >= 0; named
/// templates exist and apply; early_stopping >= 0. Any problem is InvalidArgument "spec.<field>:
/// <problem>; <accepted form>".
absl::StatusOr<ValidatedJob> ValidateJobSpec(const v1::JobSpec& spec,
                                             const ValidationOptions& options);

/// The templates a job searches: each of `names` (which must exist in `catalog` and build the
/// workload on the target; a template not offered is found by its name), or every template the
/// catalog offers when `names` is empty. InvalidArgument naming `spec.templates` or
/// `spec.target` when there is none.
absl::StatusOr<std::vector<const KernelTemplate*>> ResolveTemplates(
    const Catalog& catalog, const Workload& workload, const Target& target,
    const std::vector<std::string>& names);

}  // namespace tune::tuner
