// JobSearch: the search of one job over the config spaces of all its templates. It first
// proposes each template's default config (so a job's best is never worse than what
// tune-compile would pick without tuning); then the templates take turns, and a template's turn
// proposes its next seed (with transfer the best configs of the nearest other workloads, then
// KernelTemplate::seeds) or, once those are spent, one config of its SearchStrategy. Every
// config already recorded for the job's workload and target (of the same template version) is
// skipped. Where a strategy's cost model learnt from the log's trials of other workloads, the
// template's seeds go to the model (SearchStrategy::Suggest) rather than first in line.
//
// Turns follow the templates' results: a template whose best trails the job's best (the fastest
// trial of any template) by more than kTrailingFactor takes one turn in kTrailingTurns rounds,
// as long as a template that does not trail can still propose. On ResNet-50's layers the direct
// template never overtook Winograd on 3x3 filters (it ended 1.45-2.59x behind) nor the pointwise
// template on 1x1 (1.03-1.56x), yet took 40-50% of those layers' trials (bench/RESULTS.md,
// 2026-11-28).
//
// Resume without loss: every proposal stays *outstanding* until its outcome is observed, and the
// saved state holds the outstanding proposals next to the strategies' cursors and the seeds still
// to come. A search created from a saved state proposes its outstanding configs again first
// (those recorded meanwhile excepted), then the seeds that were still to come, then continues
// each strategy where it stopped, so a job killed at any point measures the same configs an
// uninterrupted run with the same seed would.
//
// Not thread-safe: the daemon serialises the calls of one job.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/templates/template.h"
#include "common/target.h"
#include "common/workload.h"
#include "db/record.h"
#include "search/strategy.h"
#include "tuner/builder/feature_source.h"

namespace tune::tuner {

/// One config of one template, proposed for measurement.
struct Candidate {
  const KernelTemplate* tpl = nullptr;
  Config config;
};

/// A trial the tuning log already holds for the job's workload and target.
struct PastTrial {
  ConfigKey key;
  ErrorKind error = ErrorKind::kNone;  // a verdict (IsVerdict)
  double secs = 0;  // LearnedSecs: the median when ok, the deadline of a TIMEOUT, else 0
  bool ok() const { return error == ErrorKind::kNone; }
};

/// How many of the nearest other workloads lend their best config to a new search.
inline constexpr size_t kNearestWorkloads = 3;

/// A template whose best is slower than the job's best by more than this factor trails: it
/// takes one turn in kTrailingTurns rounds (its seeds and its strategy alike).
inline constexpr double kTrailingFactor = 1.1;
inline constexpr uint64_t kTrailingTurns = 4;

/// Numbers the other workloads whose trials a search learns from, 1, 2, ... in order of first
/// sight (0 is the search's own workload): a cost model compares trials of one number only.
class TransferGroups {
 public:
  uint32_t Of(std::string_view workload);

 private:
  std::map<std::string, uint32_t, std::less<>> ids_;
};

/// Which templates may propose now (e.g. those whose library some worker offers); empty: all.
using TemplateFilter = std::function<bool(const KernelTemplate*)>;

class JobSearch {
 public:
  /// One strategy `strategy` per template over its space for (workload, target), seeded with
  /// `seed` plus the template's position, never proposing a config of `measured` (records of
  /// any outcome) with the same template name and version. `saved_state` is an earlier
  /// SaveState() or empty; a state of another layout, or a template's state that no longer fits
  /// its space (the template changed), is dropped with a warning and that part starts afresh.
  /// `history` (the log's trials of the workload and target, in the order they were recorded)
  /// is observed by each template's strategy before its first proposal, so that a model-based
  /// strategy starts from what the log knows and a resumed one refits on the same data.
  /// `transfer` (per template name, the log's trials of that template on other workloads of
  /// the same target, TuningLog::TrialsOfTemplate) is what a cost model learns from before its
  /// first proposal; the best configs of the kNearestWorkloads nearest workloads (by size) that
  /// are valid here are proposed right after the default, and when the model learnt from
  /// lent trials and can rank configs, the template's seeds are suggested to it instead of
  /// being proposed first. Empty: no transfer. `features`
  /// (which must outlive the search) computes the cost models' features of tune's own
  /// templates; null: in this process.
  /// An unknown strategy is InvalidArgument; `templates` must not be empty (InvalidArgument).
  static absl::StatusOr<std::unique_ptr<JobSearch>> Create(
      const Workload& workload, const Target& target,
      const std::vector<const KernelTemplate*>& templates, std::string_view strategy, uint64_t seed,
      const std::vector<ConfigKey>& measured, std::string_view saved_state,
      const std::vector<PastTrial>& history = {},
      const std::map<std::string, std::vector<TemplateTrial>, std::less<>>& transfer = {},
      FeatureSource* features = nullptr);

  /// Up to `n` new candidates: the outstanding ones of a saved state first, then each
  /// template's default, then the templates' turns (a seed, else one config of the strategy; a
  /// trailing template one turn in kTrailingTurns); fewer when the spaces are exhausted. Only
  /// templates that `usable` allows propose (the others keep their place and their saved
  /// outstanding candidates for later). Each candidate is outstanding until Observe() reports it.
  std::vector<Candidate> Propose(int n, const TemplateFilter& usable = {});

  /// Reports the verdict on a config of template `tpl` (IsVerdict; anything else is a bug,
  /// checked): a trial of this job, or a record that another job made of a config this search
  /// may have proposed. It stops being outstanding and its strategy learns of it (and never
  /// proposes it).
  void Observe(const KernelTemplate* tpl, const TrialOutcome& outcome);

  /// A proposed config of `tpl` that was given up without a verdict (its workers were lost or
  /// could not measure it): it stops being outstanding and nothing learns of it. The strategy
  /// does not propose it again; later jobs, which do not find it among the measured configs,
  /// do.
  void GiveUp(const KernelTemplate* tpl, const Config& config);

  /// Lends a trial of template `tpl` on another workload of the same target (a sibling task of
  /// a model job, recorded while this search runs) to that template's cost model, as Create's
  /// `transfer` lends the log's: the model learns from it at its next fit. Ignored when the
  /// template is not searched here or has no model, or the trial is of this workload, of
  /// another operator, or of a config that is not valid for its workload.
  void Lend(const KernelTemplate* tpl, const TemplateTrial& trial);

  /// JSON text of the whole search: each strategy's state, the turn, which defaults were
  /// proposed and every outstanding candidate.
  std::string SaveState() const;

  /// True when no template has an unproposed config left and nothing waits to be proposed again.
  bool Exhausted() const;

  /// Candidates proposed and not observed yet, in proposal order.
  const std::vector<Candidate>& outstanding() const { return outstanding_; }

 private:
  struct PerTemplate {
    const KernelTemplate* tpl;
    std::unique_ptr<SearchStrategy> strategy;
    Config default_config;
    bool default_pending = false;      // the default is neither measured nor proposed yet
    std::vector<Config> seeds;         // the template's valid seeds (tpl->seeds), in order
    std::deque<Config> seeds_pending;  // those neither measured nor proposed yet
    bool seeds_to_model = false;       // the template's seeds went to the strategy's model
    std::optional<double> best;        // its fastest trial of this workload (seconds)
  };
  // Another workload whose trials are lent: its shape and the template's space for it.
  struct Lender {
    Workload workload;
    ConfigSpace space;
  };
  JobSearch(const Workload& workload, const Target& target, std::vector<PerTemplate> parts,
            size_t next, uint64_t round, std::deque<Candidate> replay, TransferGroups groups,
            FeatureSource* source)
      : source_(source),
        workload_(workload),
        workload_text_(workload.ToString()),
        target_(target),
        parts_(std::move(parts)),
        next_(next),
        round_(round),
        replay_(std::move(replay)),
        groups_(std::move(groups)) {}

  FeatureSource* const source_;
  const Workload workload_;
  const std::string workload_text_;
  const Target target_;
  std::vector<PerTemplate> parts_;
  // Whether `part` trails the job's best and sits out this round: only while another template
  // that `allowed` lets propose does not trail and has configs left.
  bool SitsOut(const PerTemplate& part, const TemplateFilter& allowed) const;

  size_t next_ = 0;                     // the template whose turn is next
  uint64_t round_ = 0;                  // full rounds of turns so far
  std::deque<Candidate> replay_;        // outstanding in the saved state, to propose first
  std::vector<Candidate> outstanding_;  // proposed and not observed, in proposal order
  TransferGroups groups_;
  // By (template name, workload text); nullopt: a workload that lends nothing here.
  std::map<std::pair<std::string, std::string>, std::optional<Lender>> lenders_;
};

}  // namespace tune::tuner
