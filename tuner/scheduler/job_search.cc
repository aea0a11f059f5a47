#include "tuner/scheduler/job_search.h"

#include <algorithm>
#include <set>

#include "codegen/templates/template_features.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "tuner/builder/fault_templates.h"

namespace tune::tuner {
namespace {

using Json = nlohmann::json;

// Layout of SaveState():
//   {"layout":2, "next":<template index>, "round":<rounds of turns>,
//    "defaults_proposed":["gemm.cpu.blocked", ...],
//    "seeds_pending":{"gemm.cpu.blocked":[{"kc":64,...}, ...], ...},
//    "strategies":{"gemm.cpu.blocked":{<the strategy's own state>}, ...},
//    "outstanding":[{"template":"gemm.cpu.blocked","config":{"kc":64,...}}, ...]}
constexpr int kLayout = 2;

bool SameCandidate(const Candidate& c, const KernelTemplate* tpl, const Config& config) {
  return c.tpl == tpl && c.config == config;
}

void EraseCandidate(std::vector<Candidate>& v, const KernelTemplate* tpl, const Config& config) {
  auto it = std::find_if(v.begin(), v.end(),
                         [&](const Candidate& c) { return SameCandidate(c, tpl, config); });
  if (it != v.end()) {
    v.erase(it);
  }
}

void EraseConfig(std::deque<Config>& configs, const Config& config) {
  auto it = std::find(configs.begin(), configs.end(), config);
  if (it != configs.end()) {
    configs.erase(it);
  }
}

// The feature source of searches not given one.
FeatureSource* InProcessSource() {
  static InProcessFeatureSource* const source = new InProcessFeatureSource();
  return source;
}

// Whether a cost model may describe the configs of `tpl` by the loop nest each builds (tune's own
// templates). The fault templates' builds abort or hang by design (a builder process runs them,
// never the daemon), so their configs are described by their knobs only.
bool DescribedByIr(const KernelTemplate& tpl, OpKind op) {
  return FindFaultTemplate(tpl.name, op) != &tpl;
}

}  // namespace

uint32_t TransferGroups::Of(std::string_view workload) {
  auto [it, fresh] = ids_.try_emplace(std::string(workload), 0);
  if (fresh) {
    it->second = static_cast<uint32_t>(ids_.size());
  }
  return it->second;
}

namespace {

// What a template's search takes from other workloads' trials: samples for its cost model (when
// it has one) and the best config of each of the nearest workloads, valid for `workload`.
struct TemplateTransfer {
  std::vector<TransferSample> samples;
  std::vector<Config> nearest_best;
};

TemplateTransfer PrepareTransfer(const KernelTemplate& tpl, const Workload& workload,
                                 const Target& target, const ConfigSpace& space,
                                 const std::vector<TemplateTrial>& trials, bool for_model,
                                 TransferGroups& groups, FeatureSource& source) {
  const bool from_ir = DescribedByIr(tpl, workload.op());
  struct Other {
    Workload workload;
    ConfigSpace space;
    uint32_t group;
    std::optional<std::pair<double, Config>> best;
    std::vector<Config> configs;           // valid configs of its trials, in order
    std::vector<const TemplateTrial*> of;  // the trial of each
  };
  std::map<std::string, std::optional<Other>, std::less<>> others;
  TemplateTransfer out;
  for (const TemplateTrial& trial : trials) {
    auto [it, fresh] = others.try_emplace(trial.workload);
    if (fresh) {
      absl::StatusOr<Workload> w = Workload::Parse(trial.workload);
      if (w.ok() && w->op() == workload.op()) {
        it->second = Other{*w, tpl.space(*w, target), groups.Of(trial.workload), {}, {}, {}};
      }
    }
    if (!it->second) {
      continue;
    }
    Other& other = *it->second;
    absl::StatusOr<Config> config = ParseConfig(trial.config);
    if (!config.ok() || !other.space.IsValid(*config)) {
      continue;
    }
    if (trial.error == ErrorKind::kNone && (!other.best || trial.secs < other.best->first)) {
      other.best = std::make_pair(trial.secs, *config);
    }
    other.configs.push_back(*std::move(config));
    other.of.push_back(&trial);
  }
  for (auto& [text, other] : others) {
    if (!for_model || !other || other->configs.empty()) {
      continue;
    }
    std::vector<std::vector<float>> rows =
        from_ir ? source.Rows(tpl, other->workload, target, other->space, other->configs)
                : KnobFeatureFn(other->space)(other->configs);
    for (size_t i = 0; i < rows.size(); ++i) {
      out.samples.push_back(
          {std::move(rows[i]), other->of[i]->error, other->of[i]->secs, other->group});
    }
  }
  const std::vector<float> here = WorkloadFeatures(workload);
  std::vector<std::pair<double, const Config*>> nearest;
  for (const auto& [text, other] : others) {
    if (other && other->best && space.IsValid(other->best->second)) {
      const std::vector<float> there = WorkloadFeatures(other->workload);
      double distance = 0;
      for (size_t i = 0; i < here.size(); ++i) {
        distance += (here[i] - there[i]) * (here[i] - there[i]);
      }
      nearest.emplace_back(distance, &other->best->second);
    }
  }
  std::stable_sort(nearest.begin(), nearest.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < nearest.size() && i < kNearestWorkloads; ++i) {
    out.nearest_best.push_back(*nearest[i].second);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobSearch>> JobSearch::Create(
    const Workload& workload, const Target& target,
    const std::vector<const KernelTemplate*>& templates, std::string_view strategy, uint64_t seed,
    const std::vector<ConfigKey>& measured, std::string_view saved_state,
    const std::vector<PastTrial>& history,
    const std::map<std::string, std::vector<TemplateTrial>, std::less<>>& transfer,
    FeatureSource* source) {
  if (templates.empty()) {
    return absl::InvalidArgumentError("spec.templates: the job has no template to search");
  }
  Json saved;
  if (!saved_state.empty()) {
    saved = Json::parse(saved_state, nullptr, /*allow_exceptions=*/false);
    if (!saved.is_object() || saved.value("layout", 0) != kLayout) {
      Logger("daemon")->warn(
          "the saved search state of {} has another layout; the search starts afresh (configs "
          "already recorded are still skipped)",
          workload.ToString());
      saved = Json();
    }
  }
  const Json* strategies =
      saved.is_object() && saved.contains("strategies") && saved["strategies"].is_object()
          ? &saved["strategies"]
          : nullptr;
  std::set<std::string> defaults_proposed;
  TransferGroups groups;
  if (source == nullptr) {
    source = InProcessSource();
  }
  if (saved.is_object() && saved.contains("defaults_proposed") &&
      saved["defaults_proposed"].is_array()) {
    for (const Json& name : saved["defaults_proposed"]) {
      if (name.is_string()) {
        defaults_proposed.insert(name.get<std::string>());
      }
    }
  }

  std::set<std::string> seeds_to_model;
  if (saved.is_object() && saved.contains("seeds_to_model") && saved["seeds_to_model"].is_array()) {
    for (const Json& name : saved["seeds_to_model"]) {
      if (name.is_string()) {
        seeds_to_model.insert(name.get<std::string>());
      }
    }
  }

  std::vector<PerTemplate> parts;
  std::vector<std::vector<Config>> seen_per_part;
  for (size_t i = 0; i < templates.size(); ++i) {
    const KernelTemplate* tpl = templates[i];
    ConfigSpace space = tpl->space(workload, target);
    std::vector<Config> seen;
    for (const ConfigKey& key : measured) {
      if (key.template_name != tpl->name || key.template_version != tpl->version) {
        continue;
      }
      absl::StatusOr<Config> config = ParseConfig(key.config);
      if (config.ok()) {
        seen.push_back(std::move(*config));
      }
    }
    const std::string name(tpl->name);
    std::string state;
    if (strategies != nullptr && strategies->contains(name) && (*strategies)[name].is_object()) {
      state = (*strategies)[name].dump();
    }
    const FeatureFn features =
        DescribedByIr(*tpl, workload.op())
            ? FeatureFn([source, tpl, workload, target, space](const std::vector<Config>& configs) {
                return source->Rows(*tpl, workload, target, space, configs);
              })
            : FeatureFn();
    absl::StatusOr<std::unique_ptr<SearchStrategy>> made =
        MakeStrategy(strategy, space, seed + i, seen, state, features);
    if (!made.ok() && !state.empty()) {
      Logger("daemon")->warn(
          "saved search state of template {} no longer applies ({}); starting it afresh", name,
          made.status().message());
      made = MakeStrategy(strategy, space, seed + i, seen, "", features);
    }
    if (!made.ok()) {
      return absl::InvalidArgumentError(
          StrCat("spec.strategy: ", std::string(made.status().message())));
    }
    std::vector<TrialOutcome> known;
    std::optional<double> best;
    for (const PastTrial& trial : history) {
      if (trial.key.template_name != tpl->name || trial.key.template_version != tpl->version) {
        continue;
      }
      absl::StatusOr<Config> config = ParseConfig(trial.key.config);
      if (config.ok()) {
        known.push_back(TrialOutcome{*std::move(config), trial.error, trial.secs});
        if (trial.ok() && (!best || trial.secs < *best)) {
          best = trial.secs;
        }
      }
    }
    (*made)->Observe(known);
    // The configs proposed right after the default: the nearest workloads' best (with transfer),
    // then the template's seeds. When a cost model learnt from the log's trials of other
    // workloads, the seeds go to the model instead (SearchStrategy::Suggest), which ranks them
    // with its own candidates. On the bench GEMMs (bench/RESULTS.md) a job that measured the
    // seeds first came within 5% of the best in a median of 17 trials (25 on a second table),
    // one that hands them to the model in 5 (16). A resumed job hands them over again exactly
    // when the saved state says it did.
    std::vector<Config> template_seeds;
    if (tpl->seeds) {
      template_seeds = tpl->seeds(workload, target);
    }
    std::vector<Config> seeds;
    bool lent_to_model = false;
    if (auto trials = transfer.find(name); trials != transfer.end()) {
      TemplateTransfer lent = PrepareTransfer(*tpl, workload, target, space, trials->second,
                                              (*made)->HasModel(), groups, *source);
      if (!lent.samples.empty()) {
        (*made)->Transfer(std::move(lent.samples));
        lent_to_model = true;
      }
      seeds = std::move(lent.nearest_best);
    }
    const bool suggest = saved.is_object() ? seeds_to_model.contains(name) : lent_to_model;
    const bool suggested = suggest && (*made)->Suggest(template_seeds);
    if (!suggested) {
      seeds.insert(seeds.end(), template_seeds.begin(), template_seeds.end());
    }
    Config default_config = tpl->default_config(workload, target);
    const bool default_done = defaults_proposed.contains(name) ||
                              std::find(seen.begin(), seen.end(), default_config) != seen.end();
    PerTemplate part{
        tpl, std::move(*made), std::move(default_config), !default_done, {}, {}, suggested, best};
    for (Config& config : seeds) {
      if (config == part.default_config || !space.Validate(config).ok() ||
          std::find(part.seeds.begin(), part.seeds.end(), config) != part.seeds.end()) {
        continue;
      }
      part.seeds.push_back(config);
      if (std::find(seen.begin(), seen.end(), config) == seen.end()) {
        part.seeds_pending.push_back(std::move(config));
      }
    }
    // The seeds that were still to come when the state was saved (a state without them, from
    // before seeds were saved: every seed not recorded).
    if (saved.is_object() && saved.contains("seeds_pending") &&
        saved["seeds_pending"].is_object() && saved["seeds_pending"].contains(name) &&
        saved["seeds_pending"][name].is_array()) {
      std::deque<Config> pending;
      for (const Json& entry : saved["seeds_pending"][name]) {
        absl::StatusOr<Config> config = ParseConfig(entry.dump());
        if (config.ok() && std::find(part.seeds_pending.begin(), part.seeds_pending.end(),
                                     *config) != part.seeds_pending.end()) {
          pending.push_back(*std::move(config));
        }
      }
      part.seeds_pending = std::move(pending);
    }
    parts.push_back(std::move(part));
    seen_per_part.push_back(std::move(seen));
  }

  // Outstanding proposals of the saved state come first again, unless recorded meanwhile.
  std::deque<Candidate> replay;
  if (saved.is_object() && saved.contains("outstanding") && saved["outstanding"].is_array()) {
    for (const Json& entry : saved["outstanding"]) {
      if (!entry.is_object() || !entry.contains("template") || !entry["template"].is_string() ||
          !entry.contains("config") || !entry["config"].is_object()) {
        continue;
      }
      const std::string name = entry["template"].get<std::string>();
      auto part = std::find_if(parts.begin(), parts.end(),
                               [&](const PerTemplate& p) { return p.tpl->name == name; });
      absl::StatusOr<Config> config = ParseConfig(entry["config"].dump());
      if (part == parts.end() || !config.ok()) {
        continue;  // a template the job no longer searches
      }
      const std::vector<Config>& seen = seen_per_part[part - parts.begin()];
      if (std::find(seen.begin(), seen.end(), *config) != seen.end() ||
          !part->tpl->space(workload, target).Validate(*config).ok()) {
        continue;
      }
      // A seed proposed before the state was saved comes back as a replay, not as a seed.
      EraseConfig(part->seeds_pending, *config);
      replay.push_back(Candidate{part->tpl, std::move(*config)});
    }
  }
  size_t next = 0;
  if (saved.is_object() && saved.contains("next") && saved["next"].is_number_unsigned()) {
    next = saved["next"].get<size_t>() % parts.size();
  }
  uint64_t round = 0;  // a state from before rounds were saved: the first
  if (saved.is_object() && saved.contains("round") && saved["round"].is_number_unsigned()) {
    round = saved["round"].get<uint64_t>();
  }
  return std::unique_ptr<JobSearch>(new JobSearch(workload, target, std::move(parts), next, round,
                                                  std::move(replay), std::move(groups), source));
}

bool JobSearch::SitsOut(const PerTemplate& part, const TemplateFilter& allowed) const {
  if (!part.best || round_ % kTrailingTurns == 0) {
    return false;
  }
  double best = *part.best;
  for (const PerTemplate& other : parts_) {
    if (other.best) {
      best = std::min(best, *other.best);
    }
  }
  if (*part.best <= kTrailingFactor * best) {
    return false;
  }
  return std::any_of(parts_.begin(), parts_.end(), [&](const PerTemplate& other) {
    const bool trails = other.best && *other.best > kTrailingFactor * best;
    const bool left = !other.seeds_pending.empty() || !other.strategy->Exhausted();
    return &other != &part && !trails && left && allowed(other.tpl);
  });
}

std::vector<Candidate> JobSearch::Propose(int n, const TemplateFilter& usable) {
  auto allowed = [&usable](const KernelTemplate* tpl) { return !usable || usable(tpl); };
  std::vector<Candidate> out;
  for (auto it = replay_.begin(); static_cast<int>(out.size()) < n && it != replay_.end();) {
    if (allowed(it->tpl)) {
      out.push_back(std::move(*it));
      it = replay_.erase(it);
    } else {
      ++it;
    }
  }
  for (PerTemplate& part : parts_) {
    if (static_cast<int>(out.size()) < n && part.default_pending && allowed(part.tpl)) {
      part.default_pending = false;
      out.push_back(Candidate{part.tpl, part.default_config});
    }
  }
  // The templates' turns: a seed, else one config of the strategy. A template that sits out
  // its turn is not idle: one that does not trail proposes meanwhile.
  size_t idle = 0;  // turns in a row that had nothing to propose
  while (static_cast<int>(out.size()) < n && idle < parts_.size()) {
    PerTemplate& part = parts_[next_];
    const bool sits_out = allowed(part.tpl) && SitsOut(part, allowed);
    if (++next_ == parts_.size()) {
      next_ = 0;
      ++round_;
    }
    if (!allowed(part.tpl)) {
      ++idle;
      continue;
    }
    if (sits_out) {
      continue;
    }
    if (!part.seeds_pending.empty()) {
      idle = 0;
      out.push_back(Candidate{part.tpl, std::move(part.seeds_pending.front())});
      part.seeds_pending.pop_front();
      continue;
    }
    std::vector<Config> configs = part.strategy->Propose(1);
    if (configs.empty()) {
      ++idle;
      continue;
    }
    idle = 0;
    if (configs.front() == part.default_config ||
        std::find(part.seeds.begin(), part.seeds.end(), configs.front()) != part.seeds.end()) {
      continue;  // proposed first already (or measured before this job)
    }
    out.push_back(Candidate{part.tpl, std::move(configs.front())});
  }
  outstanding_.insert(outstanding_.end(), out.begin(), out.end());
  return out;
}

void JobSearch::Observe(const KernelTemplate* tpl, const TrialOutcome& outcome) {
  TUNE_CHECK(IsVerdict(outcome.error))
      << "a search learns from verdicts only, not from " << ErrorKindName(outcome.error);
  EraseCandidate(outstanding_, tpl, outcome.config);
  auto replayed = std::find_if(replay_.begin(), replay_.end(), [&](const Candidate& c) {
    return SameCandidate(c, tpl, outcome.config);
  });
  if (replayed != replay_.end()) {
    replay_.erase(replayed);
  }
  for (PerTemplate& part : parts_) {
    if (part.tpl == tpl) {
      if (part.default_pending && part.default_config == outcome.config) {
        part.default_pending = false;
      }
      // Measured by another job meanwhile: no need to propose it.
      EraseConfig(part.seeds_pending, outcome.config);
      part.strategy->Observe({outcome});
      if (outcome.ok() && (!part.best || outcome.secs < *part.best)) {
        part.best = outcome.secs;
      }
    }
  }
}

void JobSearch::GiveUp(const KernelTemplate* tpl, const Config& config) {
  EraseCandidate(outstanding_, tpl, config);
  auto replayed = std::find_if(replay_.begin(), replay_.end(),
                               [&](const Candidate& c) { return SameCandidate(c, tpl, config); });
  if (replayed != replay_.end()) {
    replay_.erase(replayed);
  }
}

std::string JobSearch::SaveState() const {
  Json strategies = Json::object();
  Json defaults_proposed = Json::array();
  Json seeds_pending = Json::object();
  Json seeds_to_model = Json::array();
  for (const PerTemplate& part : parts_) {
    strategies[std::string(part.tpl->name)] = Json::parse(part.strategy->SaveState());
    if (part.seeds_to_model) {
      seeds_to_model.push_back(std::string(part.tpl->name));
    }
    if (!part.default_pending) {
      defaults_proposed.push_back(std::string(part.tpl->name));
    }
    Json pending = Json::array();
    for (const Config& config : part.seeds_pending) {
      pending.push_back(Json::parse(ConfigToString(config)));
    }
    seeds_pending[std::string(part.tpl->name)] = std::move(pending);
  }
  Json outstanding = Json::array();
  auto add = [&](const Candidate& c) {
    outstanding.push_back({{"template", std::string(c.tpl->name)},
                           {"config", Json::parse(ConfigToString(c.config))}});
  };
  for (const Candidate& c : replay_) {
    add(c);
  }
  for (const Candidate& c : outstanding_) {
    add(c);
  }
  return Json{{"layout", kLayout},
              {"next", next_},
              {"round", round_},
              {"defaults_proposed", defaults_proposed},
              {"seeds_pending", seeds_pending},
              {"seeds_to_model", seeds_to_model},
              {"strategies", strategies},
              {"outstanding", outstanding}}
      .dump();
}

void JobSearch::Lend(const KernelTemplate* tpl, const TemplateTrial& trial) {
  auto part = std::find_if(parts_.begin(), parts_.end(),
                           [&](const PerTemplate& p) { return p.tpl == tpl; });
  if (part == parts_.end() || !part->strategy->HasModel() || trial.workload == workload_text_) {
    return;
  }
  auto [it, fresh] = lenders_.try_emplace({std::string(tpl->name), trial.workload});
  if (fresh) {
    absl::StatusOr<Workload> other = Workload::Parse(trial.workload);
    if (other.ok() && other->op() == workload_.op()) {
      it->second = Lender{*other, tpl->space(*other, target_)};
    }
  }
  absl::StatusOr<Config> config = ParseConfig(trial.config);
  if (!it->second || !config.ok() || !it->second->space.IsValid(*config)) {
    return;
  }
  const Lender& lender = *it->second;
  std::vector<float> features =
      DescribedByIr(*tpl, workload_.op())
          ? std::move(source_->Rows(*tpl, lender.workload, target_, lender.space, {*config})[0])
          : KnobFeatures(lender.space, *config);
  part->strategy->Transfer(
      {TransferSample{std::move(features), trial.error, trial.secs, groups_.Of(trial.workload)}});
}

bool JobSearch::Exhausted() const {
  if (!replay_.empty()) {
    return false;
  }
  for (const PerTemplate& part : parts_) {
    if (part.default_pending || !part.seeds_pending.empty() || !part.strategy->Exhausted()) {
      return false;
    }
  }
  return true;
}

}  // namespace tune::tuner
