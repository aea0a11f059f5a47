// Search strategies: what to measure next in a ConfigSpace. The daemon's search loop asks a
// strategy for a batch of configs (Propose), measures them, reports the results (Observe) and
// stores SaveState() with the job so that a restarted daemon resumes where it stopped. The shape
// follows TVM MetaSchedule's SearchStrategy (GenerateMeasureCandidates / NotifyRunnerResults).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/measurement.h"
#include "search/config_space.h"
#include "search/features.h"

namespace tune {

/// The result of measuring one proposed config: a verdict on it (IsVerdict). Strategies ignore
/// an outcome of any other kind (the caller never passes one: a trial its workers could not
/// measure says nothing of its config).
struct TrialOutcome {
  Config config;
  ErrorKind error = ErrorKind::kNone;
  double secs = 0;  // LearnedSecs: the median when ok, the deadline of a TIMEOUT, else 0

  bool ok() const { return error == ErrorKind::kNone; }
};

/// A measured config of another workload of the same template and device, for a cost model to
/// learn from before the search has data of its own (transfer learning). Its features were
/// made for its own workload (see features.h); `group` tells the workloads apart, as times are
/// compared only within one workload.
struct TransferSample {
  std::vector<float> features;
  ErrorKind error = ErrorKind::kNone;  // a verdict, as TrialOutcome's
  double secs = 0;                     // as TrialOutcome's
  uint32_t group = 1;                  // >= 1, one per workload
};

/// One search over one ConfigSpace. Not thread-safe: the caller serialises calls.
class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;

  /// The name MakeStrategy accepts for this strategy ("grid", "random", ...).
  virtual std::string_view name() const = 0;

  /// Up to `n` configs, each valid, never proposed before by this strategy and never in the
  /// `measured` set it was created with. Fewer (possibly none) when the space is exhausted.
  virtual std::vector<Config> Propose(int n) = 0;

  /// Feeds back verdicts (model-based strategies learn from them; grid/random note them and
  /// never propose their configs afterwards); outcomes that are no verdict are ignored. Outcomes
  /// of configs this strategy did not propose are allowed: a new strategy may be warmed up with
  /// records of earlier jobs.
  virtual void Observe(const std::vector<TrialOutcome>& outcomes) = 0;

  /// True for strategies that learn a cost model (and so use Transfer and features).
  virtual bool HasModel() const { return false; }

  /// Measurements of other workloads to learn from, given before the first Propose or at any
  /// time after (a model job's sibling tasks lend theirs as they are recorded); the model learns
  /// from them at its next fit, the latest 2,000 at most. Samples whose feature width differs
  /// from this space's, or that are no verdict, are ignored. Strategies without a model ignore all
  /// of them.
  virtual void Transfer(std::vector<TransferSample> samples) { (void)samples; }

  /// Configs worth measuring early that the caller would otherwise propose before the
  /// strategy's own (a template's seeds). A strategy whose cost model can rank configs already
  /// (it learnt from lent or observed trials) keeps them among its candidates from its next plan
  /// on, so that they are measured when the model ranks them high, and returns true. Otherwise
  /// it ignores them and returns false: the caller proposes them itself. The suggestions are not
  /// part of SaveState(): a resumed search is given them again.
  virtual bool Suggest(const std::vector<Config>& configs) {
    (void)configs;
    return false;
  }

  /// Serialised state (JSON text) so a restarted daemon resumes the search where it stopped.
  virtual std::string SaveState() const = 0;

  /// True when no unproposed valid config remains. Exact for grid and for random over small
  /// spaces; for random over large spaces it becomes true once a long run of draws finds
  /// nothing new.
  virtual bool Exhausted() const = 0;
};

/// name: "grid", "random", "ga", "xgb" or "auto" (anything else: InvalidArgument listing the
/// accepted names). "ga" breeds the fastest configs observed; "xgb" ranks candidates with a
/// cost model refitted on every observation; "auto" is xgb that stays random until the model
/// has enough data.
/// `measured`: configs already measured for this workload and target (from the tuning log);
/// they are never proposed. Configs that are not points of `space` are ignored.
/// `saved_state`: SaveState() of an earlier instance, or empty. A saved state carries its own
/// seed, which then replaces `seed`, so the resumed search continues the same sequence; a state
/// that is not valid JSON of this strategy, or was saved for another space (another
/// ConfigSpace::Fingerprint()), is InvalidArgument naming `saved_state`.
/// `features`: what the cost model of "xgb"/"auto" learns from (empty: the knob values); the
/// other strategies ignore it. The strategy keeps its own copy of `space`.
absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeStrategy(std::string_view name,
                                                             const ConfigSpace& space,
                                                             uint64_t seed,
                                                             const std::vector<Config>& measured,
                                                             std::string_view saved_state = "",
                                                             FeatureFn features = {});

/// The names MakeStrategy accepts, in a fixed order.
std::vector<std::string> StrategyNames();

}  // namespace tune
