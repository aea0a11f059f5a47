// JobSearch: the search of one job over the config spaces of all its templates, as the daemon
// sees it. The search itself is CompositeSearch (search/composite_search.h: defaults, seeds,
// transfer, template turns, replay), which may not see the templates; this adapter describes
// each template's space for the job's workload and target (SearchSpaceOf), names proposals by
// template and hands the search the tuning log's records in its own plain form.
//
// Not thread-safe: the daemon serialises the calls of one job.
#pragma once

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
#include "search/composite_search.h"
#include "search/search_space.h"
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

/// Configs to measure in place of each template's default and seeds, in order (a reverify job's
/// search: strategy "seeds" proposes nothing else).
using GivenConfigs = std::map<const KernelTemplate*, std::vector<Config>>;

/// Which templates may propose now (e.g. those whose library some worker offers); empty: all.
using TemplateFilter = std::function<bool(const KernelTemplate*)>;

/// `tpl`'s space for (`workload`, `target`) as a search sees it: its name, version, knobs,
/// default and seeds; its configs' features are read off the IR each builds, by `features`
/// (which must outlive the description), except for the test-only fault templates, whose
/// builds abort or hang by design and which are described by their knobs. Another workload of
/// the same operator lends its trials, described alike (LendingWorkload::shape:
/// WorkloadFeatures).
SearchSpace SearchSpaceOf(const KernelTemplate& tpl, const Workload& workload, const Target& target,
                          FeatureSource& features);

class JobSearch {
 public:
  /// CompositeSearch::Create over SearchSpaceOf each of `templates`, for `workload` on `target`;
  /// `measured` and `history` are the log's records of the workload and target, `transfer`
  /// (per template name, TuningLog::TrialsOfTemplate) its trials of other workloads. `features`
  /// computes the cost models' features of tune's own templates (it must outlive the search);
  /// null: in this process. `given`, when set, holds the configs of every template, which
  /// replace its default and seeds. Errors as CompositeSearch::Create's.
  static absl::StatusOr<std::unique_ptr<JobSearch>> Create(
      const Workload& workload, const Target& target,
      const std::vector<const KernelTemplate*>& templates, std::string_view strategy, uint64_t seed,
      const std::vector<ConfigKey>& measured, std::string_view saved_state,
      const std::vector<PastTrial>& history = {},
      const std::map<std::string, std::vector<TemplateTrial>, std::less<>>& transfer = {},
      FeatureSource* features = nullptr, const GivenConfigs* given = nullptr);

  /// CompositeSearch::Propose, by template.
  std::vector<Candidate> Propose(int n, const TemplateFilter& usable = {});

  /// CompositeSearch::Observe; a template the job does not search is ignored.
  void Observe(const KernelTemplate* tpl, const TrialOutcome& outcome);

  /// CompositeSearch::GiveUp; a template the job does not search is ignored.
  void GiveUp(const KernelTemplate* tpl, const Config& config);

  /// CompositeSearch::Lend; a template the job does not search is ignored.
  void Lend(const KernelTemplate* tpl, const TemplateTrial& trial);

  /// CompositeSearch::SaveState (JSON text).
  std::string SaveState() const { return search_->SaveState(); }

  /// True when no template has an unproposed config left and nothing waits to be proposed again.
  bool Exhausted() const { return search_->Exhausted(); }

  /// Candidates proposed and not observed yet, in proposal order.
  std::vector<Candidate> outstanding() const;

 private:
  JobSearch(std::vector<const KernelTemplate*> templates, std::unique_ptr<CompositeSearch> search)
      : templates_(std::move(templates)), search_(std::move(search)) {}

  // The position of `tpl` among the searched templates.
  std::optional<size_t> IndexOf(const KernelTemplate* tpl) const;

  const std::vector<const KernelTemplate*> templates_;  // CompositeSearch's spaces, in order
  const std::unique_ptr<CompositeSearch> search_;
};

}  // namespace tune::tuner
