#include "tuner/scheduler/job_search.h"

#include <algorithm>
#include <utility>

#include "codegen/templates/template_features.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::tuner {
namespace {

// The feature source of searches not given one.
FeatureSource* InProcessSource() {
  static InProcessFeatureSource* const source = new InProcessFeatureSource();
  return source;
}

// The features of `tpl`'s configs for (workload, target) in `space`; empty (the knob values)
// for templates not described by their IR.
FeatureFn FeaturesOf(const KernelTemplate& tpl, const Workload& workload, const Target& target,
                     const ConfigSpace& space, FeatureSource& source) {
  // A template whose builds may abort or hang by design (KernelTemplate::ir_features) is
  // described by its knobs: a builder process runs its builds, never the daemon.
  if (!tpl.ir_features) {
    return FeatureFn();
  }
  return
      [source = &source, tpl = &tpl, workload, target, space](const std::vector<Config>& configs) {
        return source->Rows(*tpl, workload, target, space, configs);
      };
}

}  // namespace

SearchSpace SearchSpaceOf(const KernelTemplate& tpl, const Workload& workload, const Target& target,
                          FeatureSource& features) {
  SearchSpace desc;
  desc.name = std::string(tpl.name);
  desc.version = tpl.version;
  desc.space = tpl.space(workload, target);
  desc.default_config = tpl.default_config(workload, target);
  if (tpl.seeds) {
    desc.seeds = tpl.seeds(workload, target);
  }
  desc.features = FeaturesOf(tpl, workload, target, desc.space, features);
  desc.lending = [tpl = &tpl, op = workload.op(), target,
                  source = &features](std::string_view text) -> std::optional<LendingWorkload> {
    absl::StatusOr<Workload> other = Workload::Parse(text);
    if (!other.ok() || other->op() != op) {
      return std::nullopt;
    }
    LendingWorkload lender{tpl->space(*other, target), {}, WorkloadFeatures(*other)};
    lender.features = FeaturesOf(*tpl, *other, target, lender.space, *source);
    return lender;
  };
  return desc;
}

absl::StatusOr<std::unique_ptr<JobSearch>> JobSearch::Create(
    const Workload& workload, const Target& target,
    const std::vector<const KernelTemplate*>& templates, std::string_view strategy, uint64_t seed,
    const std::vector<ConfigKey>& measured, std::string_view saved_state,
    const std::vector<PastTrial>& history,
    const std::map<std::string, std::vector<TemplateTrial>, std::less<>>& transfer,
    FeatureSource* features, const GivenConfigs* given) {
  FeatureSource& source = features != nullptr ? *features : *InProcessSource();
  std::vector<SearchSpace> spaces;
  spaces.reserve(templates.size());
  for (const KernelTemplate* tpl : templates) {
    spaces.push_back(SearchSpaceOf(*tpl, workload, target, source));
    if (given != nullptr) {
      auto it = given->find(tpl);
      if (it == given->end() || it->second.empty()) {
        return absl::InvalidArgumentError(
            StrCat("no configs given for template ", tpl->name, " of a search of given configs"));
      }
      spaces.back().default_config = it->second.front();
      spaces.back().seeds.assign(it->second.begin() + 1, it->second.end());
    }
  }
  std::vector<RecordedConfig> recorded;
  recorded.reserve(measured.size());
  for (const ConfigKey& key : measured) {
    recorded.push_back({key.template_name, key.template_version, key.config});
  }
  std::vector<RecordedTrial> known;
  known.reserve(history.size());
  for (const PastTrial& trial : history) {
    known.push_back({{trial.key.template_name, trial.key.template_version, trial.key.config},
                     trial.error,
                     trial.secs});
  }
  std::map<std::string, std::vector<LentTrial>, std::less<>> lent;
  for (const auto& [name, trials] : transfer) {
    std::vector<LentTrial>& out = lent[name];
    out.reserve(trials.size());
    for (const TemplateTrial& trial : trials) {
      out.push_back({trial.workload, trial.config, trial.error, trial.secs});
    }
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<CompositeSearch> search,
      CompositeSearch::Create(workload.ToString(), WorkloadFeatures(workload), std::move(spaces),
                              strategy, seed, recorded, saved_state, known, lent));
  return std::unique_ptr<JobSearch>(new JobSearch(templates, std::move(search)));
}

std::optional<size_t> JobSearch::IndexOf(const KernelTemplate* tpl) const {
  auto it = std::find(templates_.begin(), templates_.end(), tpl);
  if (it == templates_.end()) {
    return std::nullopt;
  }
  return static_cast<size_t>(it - templates_.begin());
}

std::vector<Candidate> JobSearch::Propose(int n, const TemplateFilter& usable) {
  SpaceFilter allowed;
  if (usable) {
    allowed = [&](size_t space) { return usable(templates_[space]); };
  }
  std::vector<Candidate> out;
  for (Proposal& p : search_->Propose(n, allowed)) {
    out.push_back(Candidate{templates_[p.space], std::move(p.config)});
  }
  return out;
}

void JobSearch::Observe(const KernelTemplate* tpl, const TrialOutcome& outcome) {
  if (std::optional<size_t> space = IndexOf(tpl)) {
    search_->Observe(*space, outcome);
  }
}

void JobSearch::GiveUp(const KernelTemplate* tpl, const Config& config) {
  if (std::optional<size_t> space = IndexOf(tpl)) {
    search_->GiveUp(*space, config);
  }
}

void JobSearch::Lend(const KernelTemplate* tpl, const TemplateTrial& trial) {
  if (std::optional<size_t> space = IndexOf(tpl)) {
    search_->Lend(*space, {trial.workload, trial.config, trial.error, trial.secs});
  }
}

std::vector<Candidate> JobSearch::outstanding() const {
  std::vector<Candidate> out;
  for (const Proposal& p : search_->outstanding()) {
    out.push_back(Candidate{templates_[p.space], p.config});
  }
  return out;
}

}  // namespace tune::tuner
