// CompositeSearch: the search of one job over several spaces (the config spaces of all its
// templates, described by SearchSpace). It first proposes each space's default config (so a
// job's best is never worse than what tune-compile would pick without tuning); then the spaces
// take turns, and a space's turn proposes its next seed (with transfer the best configs of the
// nearest other workloads, then SearchSpace::seeds) or, once those are spent, one config of its
// SearchStrategy. Every config already recorded for the job's workload and target (of the same
// space version) is skipped. Where a strategy's cost model learnt from the log's trials of other
// workloads, the space's seeds go to the model (SearchStrategy::Suggest) rather than first in
// line.
//
// Turns follow the spaces' results: a space whose best trails the job's best (the fastest trial
// of any space) by more than kTrailingFactor takes one turn in kTrailingTurns rounds, as long as
// a space that does not trail can still propose. On ResNet-50's layers the direct template never
// overtook Winograd on 3x3 filters (it ended 1.45-2.59x behind) nor the pointwise template on 1x1
// (1.03-1.56x), yet took 40-50% of those layers' trials (bench/RESULTS.md, 2026-11-28).
//
// Resume without loss: every proposal stays *outstanding* until its outcome is observed, and the
// saved state holds the outstanding proposals next to the strategies' cursors and the seeds still
// to come. A search created from a saved state proposes its outstanding configs again first
// (those recorded meanwhile excepted), then the seeds that were still to come, then continues
// each strategy where it stopped, so a job killed at any point measures the same configs an
// uninterrupted run with the same seed would.
//
// Not thread-safe: the caller serialises the calls of one search.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "search/search_space.h"
#include "search/strategy.h"

namespace tune {

/// One config of one space (its position in the search's spaces), proposed for measurement.
struct Proposal {
  size_t space = 0;
  Config config;
};

/// Which spaces may propose now (by position; e.g. those whose library some worker offers);
/// empty: all.
using SpaceFilter = std::function<bool(size_t space)>;

/// How many of the nearest other workloads lend their best config to a new search.
inline constexpr size_t kNearestWorkloads = 3;

/// A space whose best is slower than the job's best by more than this factor trails: it takes
/// one turn in kTrailingTurns rounds (its seeds and its strategy alike).
inline constexpr double kTrailingFactor = 1.1;
inline constexpr uint64_t kTrailingTurns = 4;

class CompositeSearch {
 public:
  /// One strategy `strategy` per space, seeded with `seed` plus the space's position, never
  /// proposing a config of `measured` (records of any outcome) with the same space name and
  /// version. `workload` is the canonical text of the job's workload (trials lent from it are
  /// ignored) and `shape` its size (LendingWorkload::shape). `saved_state` is an earlier
  /// SaveState() or empty; a state of another layout, or a space's state that no longer fits its
  /// space (the template changed), is dropped with a warning and that part starts afresh.
  /// `history` (the log's trials of the workload and target, in the order they were recorded)
  /// is observed by each space's strategy before its first proposal, so that a model-based
  /// strategy starts from what the log knows and a resumed one refits on the same data.
  /// `transfer` (per space name, the log's trials of that space on other workloads of the same
  /// target) is what a cost model learns from before its first proposal; the best configs of the
  /// kNearestWorkloads nearest workloads that are valid here are proposed right after the
  /// default, and when the model learnt from lent trials and can rank configs, the space's seeds
  /// are suggested to it instead of being proposed first. Empty: no transfer.
  /// An unknown strategy is InvalidArgument naming spec.strategy; `spaces` must not be empty
  /// (InvalidArgument naming spec.templates).
  static absl::StatusOr<std::unique_ptr<CompositeSearch>> Create(
      std::string_view workload, std::vector<float> shape, std::vector<SearchSpace> spaces,
      std::string_view strategy, uint64_t seed, const std::vector<RecordedConfig>& measured,
      std::string_view saved_state, const std::vector<RecordedTrial>& history = {},
      const std::map<std::string, std::vector<LentTrial>, std::less<>>& transfer = {});

  /// Up to `n` new proposals: the outstanding ones of a saved state first, then each space's
  /// default, then the spaces' turns (a seed, else one config of the strategy; a trailing space
  /// one turn in kTrailingTurns); fewer when the spaces are exhausted. Only spaces that `usable`
  /// allows propose (the others keep their place and their saved outstanding proposals for
  /// later). Each proposal is outstanding until Observe() reports it.
  std::vector<Proposal> Propose(int n, const SpaceFilter& usable = {});

  /// Reports the verdict on a config of space `space` (IsVerdict; anything else is a bug,
  /// checked): a trial of this job, or a record that another job made of a config this search
  /// may have proposed. It stops being outstanding and its strategy learns of it (and never
  /// proposes it).
  void Observe(size_t space, const TrialOutcome& outcome);

  /// A proposed config of `space` that was given up without a verdict (its workers were lost or
  /// could not measure it): it stops being outstanding and nothing learns of it. The strategy
  /// does not propose it again; later jobs, which do not find it among the measured configs, do.
  void GiveUp(size_t space, const Config& config);

  /// Lends a trial of space `space` on another workload of the same target (a sibling task of a
  /// model job, recorded while this search runs) to that space's cost model, as Create's
  /// `transfer` lends the log's: the model learns from it at its next fit. Ignored when the
  /// space has no model or no SearchSpace::lending, or the trial is of this workload, of a
  /// workload that lends nothing (LendingWorkloadFn), or of a config that is not valid for its
  /// workload.
  void Lend(size_t space, const LentTrial& trial);

  /// JSON text of the whole search: each strategy's state, the turn, which defaults were
  /// proposed and every outstanding proposal.
  std::string SaveState() const;

  /// True when no space has an unproposed config left and nothing waits to be proposed again.
  bool Exhausted() const;

  /// Proposals made and not observed yet, in proposal order.
  const std::vector<Proposal>& outstanding() const { return outstanding_; }

  /// The spaces, in the order Create was given them.
  size_t size() const { return parts_.size(); }
  const SearchSpace& space(size_t i) const { return parts_[i].desc; }

 private:
  struct Part {
    SearchSpace desc;
    std::unique_ptr<SearchStrategy> strategy;
    bool default_pending = false;      // the default is neither measured nor proposed yet
    std::vector<Config> seeds;         // the valid seeds proposed first, in order
    std::deque<Config> seeds_pending;  // those neither measured nor proposed yet
    bool seeds_to_model = false;       // the space's seeds went to the strategy's model
    std::optional<double> best;        // its fastest trial of this workload (seconds)
    // Other workloads, by canonical text, as SearchSpace::lending describes them (nullopt: one
    // that lends nothing).
    std::map<std::string, std::optional<LendingWorkload>, std::less<>> lenders;
  };

  CompositeSearch(std::string_view workload, std::vector<Part> parts, size_t next, uint64_t round,
                  std::deque<Proposal> replay, std::map<std::string, uint32_t, std::less<>> groups)
      : workload_(workload),
        parts_(std::move(parts)),
        next_(next),
        round_(round),
        replay_(std::move(replay)),
        groups_(std::move(groups)) {}

  // Whether `part` trails the job's best and sits out this round: only while another space
  // that `allowed` lets propose does not trail and has configs left.
  bool SitsOut(const Part& part, const SpaceFilter& allowed) const;

  const std::string workload_;
  std::vector<Part> parts_;
  size_t next_ = 0;                    // the space whose turn is next
  uint64_t round_ = 0;                 // full rounds of turns so far
  std::deque<Proposal> replay_;        // outstanding in the saved state, to propose first
  std::vector<Proposal> outstanding_;  // proposed and not observed, in proposal order
  // The lending workloads numbered 1, 2, ... in order of first sight (0 is this search's own
  // workload): a cost model compares trials of one number only.
  std::map<std::string, uint32_t, std::less<>> groups_;
};

}  // namespace tune
