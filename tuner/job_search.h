// JobSearch: the search of one job over the config spaces of all its templates. It first
// proposes each template's default config (so a job's best is never worse than what
// tune-compile would pick without tuning), then keeps one SearchStrategy per template and
// proposes from them in turn, skips every config already recorded
// for the job's workload and target (of the same template version), and saves one JSON state
// holding every strategy's state so that a restarted daemon continues the same sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/templates/template.h"
#include "common/target.h"
#include "common/workload.h"
#include "db/record.h"
#include "search/strategy.h"

namespace tune::tuner {

/// One config of one template, proposed for measurement.
struct Candidate {
  const KernelTemplate* tpl = nullptr;
  Config config;
};

class JobSearch {
 public:
  /// One strategy `strategy` per template over its space for (workload, target), seeded with
  /// `seed` plus the template's position, never proposing a config of `measured` (records of
  /// any outcome) with the same template name and version. `saved_state` is an earlier
  /// SaveState() or empty; a template's saved state that no longer fits its space (the
  /// template changed) is dropped with a warning and that template starts afresh. An unknown
  /// strategy is InvalidArgument; `templates` must not be empty (InvalidArgument).
  static absl::StatusOr<std::unique_ptr<JobSearch>> Create(
      const Workload& workload, const Target& target,
      const std::vector<const KernelTemplate*>& templates, std::string_view strategy, uint64_t seed,
      const std::vector<ConfigKey>& measured, std::string_view saved_state);

  /// Up to `n` new candidates, taking one from each template in turn; fewer when the spaces
  /// are exhausted.
  std::vector<Candidate> Propose(int n);

  /// Reports the outcome of a candidate of template `tpl` to that template's strategy.
  void Observe(const KernelTemplate* tpl, const TrialOutcome& outcome);

  /// JSON text with the state of every template's strategy and the turn.
  std::string SaveState() const;

  /// True when no template has an unproposed config left.
  bool Exhausted() const;

 private:
  struct PerTemplate {
    const KernelTemplate* tpl;
    std::unique_ptr<SearchStrategy> strategy;
    Config default_config;
    bool default_pending = false;  // the default is neither measured nor proposed yet
  };
  explicit JobSearch(std::vector<PerTemplate> parts, size_t next)
      : parts_(std::move(parts)), next_(next) {}

  std::vector<PerTemplate> parts_;
  size_t next_ = 0;  // the template that proposes next
};

}  // namespace tune::tuner
