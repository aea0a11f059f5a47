#include "search/composite_search.h"

#include <algorithm>
#include <set>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "search/lent_trials.h"

namespace tune {
namespace {

using Json = nlohmann::json;
using search_internal::GroupOf;
using search_internal::LenderOf;
using search_internal::LenderRows;

// Layout of SaveState():
//   {"layout":2, "next":<space index>, "round":<rounds of turns>,
//    "defaults_proposed":["gemm.cpu.blocked", ...],
//    "seeds_pending":{"gemm.cpu.blocked":[{"kc":64,...}, ...], ...},
//    "seeds_to_model":["gemm.cpu.blocked", ...],
//    "strategies":{"gemm.cpu.blocked":{<the strategy's own state>}, ...},
//    "outstanding":[{"template":"gemm.cpu.blocked","config":{"kc":64,...}}, ...]}
// Spaces are named by SearchSpace::name (a template's name), under the keys of the layout that
// the daemon has written since it searched templates directly.
constexpr int kLayout = 2;

bool SameProposal(const Proposal& p, size_t space, const Config& config) {
  return p.space == space && p.config == config;
}

template <typename Container>
void EraseProposal(Container& v, size_t space, const Config& config) {
  auto it = std::find_if(v.begin(), v.end(),
                         [&](const Proposal& p) { return SameProposal(p, space, config); });
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

// The names listed in the array `key` of a saved state (none when absent).
std::set<std::string> NamesIn(const Json& saved, const char* key) {
  std::set<std::string> names;
  if (saved.is_object() && saved.contains(key) && saved[key].is_array()) {
    for (const Json& name : saved[key]) {
      if (name.is_string()) {
        names.insert(name.get<std::string>());
      }
    }
  }
  return names;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompositeSearch>> CompositeSearch::Create(
    std::string_view workload, std::vector<float> shape, std::vector<SearchSpace> spaces,
    std::string_view strategy, uint64_t seed, const std::vector<RecordedConfig>& measured,
    std::string_view saved_state, const std::vector<RecordedTrial>& history,
    const std::map<std::string, std::vector<LentTrial>, std::less<>>& transfer) {
  if (spaces.empty()) {
    return absl::InvalidArgumentError("spec.templates: the job has no template to search");
  }
  Json saved;
  if (!saved_state.empty()) {
    saved = Json::parse(saved_state, nullptr, /*allow_exceptions=*/false);
    if (!saved.is_object() || saved.value("layout", 0) != kLayout) {
      Logger("search")->warn(
          "the saved search state of {} has another layout; the search starts afresh (configs "
          "already recorded are still skipped)",
          workload);
      saved = Json();
    }
  }
  const Json* strategies =
      saved.is_object() && saved.contains("strategies") && saved["strategies"].is_object()
          ? &saved["strategies"]
          : nullptr;
  const std::set<std::string> defaults_proposed = NamesIn(saved, "defaults_proposed");
  const std::set<std::string> seeds_to_model = NamesIn(saved, "seeds_to_model");
  search_internal::TransferGroups groups;

  std::vector<Part> parts;
  std::vector<std::vector<Config>> seen_per_part;
  for (size_t i = 0; i < spaces.size(); ++i) {
    SearchSpace& desc = spaces[i];
    const ConfigSpace& space = desc.space;
    std::vector<Config> seen;
    for (const RecordedConfig& key : measured) {
      if (key.space != desc.name || key.version != desc.version) {
        continue;
      }
      absl::StatusOr<Config> config = ParseConfig(key.config);
      if (config.ok()) {
        seen.push_back(std::move(*config));
      }
    }
    const std::string name = desc.name;
    std::string state;
    if (strategies != nullptr && strategies->contains(name) && (*strategies)[name].is_object()) {
      state = (*strategies)[name].dump();
    }
    absl::StatusOr<std::unique_ptr<SearchStrategy>> made =
        MakeStrategy(strategy, space, seed + i, seen, state, desc.features);
    if (!made.ok() && !state.empty()) {
      Logger("search")->warn(
          "saved search state of template {} no longer applies ({}); starting it afresh", name,
          made.status().message());
      made = MakeStrategy(strategy, space, seed + i, seen, "", desc.features);
    }
    if (!made.ok()) {
      return absl::InvalidArgumentError(
          StrCat("spec.strategy: ", std::string(made.status().message())));
    }
    std::vector<TrialOutcome> known;
    std::optional<double> best;
    for (const RecordedTrial& trial : history) {
      if (trial.key.space != desc.name || trial.key.version != desc.version) {
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
    // then the space's seeds. When a cost model learnt from the log's trials of other workloads,
    // the seeds go to the model instead (SearchStrategy::Suggest), which ranks them with its own
    // candidates. On the bench GEMMs (bench/RESULTS.md) a job that measured the seeds first came
    // within 5% of the best in a median of 17 trials (25 on a second table), one that hands them
    // to the model in 5 (16). A resumed job hands them over again exactly when the saved state
    // says it did.
    Part part{std::move(desc), std::move(*made), false, {}, {}, false, best, {}};
    std::vector<Config> seeds;
    bool lent_to_model = false;
    if (auto trials = transfer.find(name); trials != transfer.end()) {
      search_internal::SpaceTransfer lent = search_internal::PrepareTransfer(
          part.desc, shape, trials->second, part.strategy->HasModel(), part.lenders, groups);
      if (!lent.samples.empty()) {
        part.strategy->Transfer(std::move(lent.samples));
        lent_to_model = true;
      }
      seeds = std::move(lent.nearest_best);
    }
    const bool suggest = saved.is_object() ? seeds_to_model.contains(name) : lent_to_model;
    part.seeds_to_model = suggest && part.strategy->Suggest(part.desc.seeds);
    if (!part.seeds_to_model) {
      seeds.insert(seeds.end(), part.desc.seeds.begin(), part.desc.seeds.end());
    }
    part.default_pending =
        !defaults_proposed.contains(name) &&
        std::find(seen.begin(), seen.end(), part.desc.default_config) == seen.end();
    for (Config& config : seeds) {
      if (config == part.desc.default_config || !part.desc.space.Validate(config).ok() ||
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
  std::deque<Proposal> replay;
  if (saved.is_object() && saved.contains("outstanding") && saved["outstanding"].is_array()) {
    for (const Json& entry : saved["outstanding"]) {
      if (!entry.is_object() || !entry.contains("template") || !entry["template"].is_string() ||
          !entry.contains("config") || !entry["config"].is_object()) {
        continue;
      }
      const std::string name = entry["template"].get<std::string>();
      auto part = std::find_if(parts.begin(), parts.end(),
                               [&](const Part& p) { return p.desc.name == name; });
      absl::StatusOr<Config> config = ParseConfig(entry["config"].dump());
      if (part == parts.end() || !config.ok()) {
        continue;  // a space the job no longer searches
      }
      const size_t index = static_cast<size_t>(part - parts.begin());
      const std::vector<Config>& seen = seen_per_part[index];
      if (std::find(seen.begin(), seen.end(), *config) != seen.end() ||
          !part->desc.space.Validate(*config).ok()) {
        continue;
      }
      // A seed proposed before the state was saved comes back as a replay, not as a seed.
      EraseConfig(part->seeds_pending, *config);
      replay.push_back(Proposal{index, std::move(*config)});
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
  return std::unique_ptr<CompositeSearch>(new CompositeSearch(
      workload, std::move(parts), next, round, std::move(replay), std::move(groups)));
}

bool CompositeSearch::SitsOut(const Part& part, const SpaceFilter& allowed) const {
  if (!part.best || round_ % kTrailingTurns == 0) {
    return false;
  }
  double best = *part.best;
  for (const Part& other : parts_) {
    if (other.best) {
      best = std::min(best, *other.best);
    }
  }
  if (*part.best <= kTrailingFactor * best) {
    return false;
  }
  for (size_t i = 0; i < parts_.size(); ++i) {
    const Part& other = parts_[i];
    const bool trails = other.best && *other.best > kTrailingFactor * best;
    const bool left = !other.seeds_pending.empty() || !other.strategy->Exhausted();
    if (&other != &part && !trails && left && allowed(i)) {
      return true;
    }
  }
  return false;
}

std::vector<Proposal> CompositeSearch::Propose(int n, const SpaceFilter& usable) {
  auto allowed = [&usable](size_t space) { return !usable || usable(space); };
  std::vector<Proposal> out;
  for (auto it = replay_.begin(); static_cast<int>(out.size()) < n && it != replay_.end();) {
    if (allowed(it->space)) {
      out.push_back(std::move(*it));
      it = replay_.erase(it);
    } else {
      ++it;
    }
  }
  for (size_t i = 0; i < parts_.size(); ++i) {
    Part& part = parts_[i];
    if (static_cast<int>(out.size()) < n && part.default_pending && allowed(i)) {
      part.default_pending = false;
      out.push_back(Proposal{i, part.desc.default_config});
    }
  }
  // The spaces' turns: a seed, else one config of the strategy. A space that sits out its turn
  // is not idle: one that does not trail proposes meanwhile.
  size_t idle = 0;  // turns in a row that had nothing to propose
  while (static_cast<int>(out.size()) < n && idle < parts_.size()) {
    const size_t index = next_;
    Part& part = parts_[index];
    const bool sits_out = allowed(index) && SitsOut(part, allowed);
    if (++next_ == parts_.size()) {
      next_ = 0;
      ++round_;
    }
    if (!allowed(index)) {
      ++idle;
      continue;
    }
    if (sits_out) {
      continue;
    }
    if (!part.seeds_pending.empty()) {
      idle = 0;
      out.push_back(Proposal{index, std::move(part.seeds_pending.front())});
      part.seeds_pending.pop_front();
      continue;
    }
    std::vector<Config> configs = part.strategy->Propose(1);
    if (configs.empty()) {
      ++idle;
      continue;
    }
    idle = 0;
    if (configs.front() == part.desc.default_config ||
        std::find(part.seeds.begin(), part.seeds.end(), configs.front()) != part.seeds.end()) {
      continue;  // proposed first already (or measured before this job)
    }
    out.push_back(Proposal{index, std::move(configs.front())});
  }
  outstanding_.insert(outstanding_.end(), out.begin(), out.end());
  return out;
}

void CompositeSearch::Observe(size_t space, const TrialOutcome& outcome) {
  TUNE_CHECK(IsVerdict(outcome.error))
      << "a search learns from verdicts only, not from " << ErrorKindName(outcome.error);
  TUNE_CHECK(space < parts_.size()) << "space " << space << " of " << parts_.size();
  EraseProposal(outstanding_, space, outcome.config);
  EraseProposal(replay_, space, outcome.config);
  Part& part = parts_[space];
  if (part.default_pending && part.desc.default_config == outcome.config) {
    part.default_pending = false;
  }
  // Measured by another job meanwhile: no need to propose it.
  EraseConfig(part.seeds_pending, outcome.config);
  part.strategy->Observe({outcome});
  if (outcome.ok() && (!part.best || outcome.secs < *part.best)) {
    part.best = outcome.secs;
  }
}

void CompositeSearch::GiveUp(size_t space, const Config& config) {
  EraseProposal(outstanding_, space, config);
  EraseProposal(replay_, space, config);
}

std::string CompositeSearch::SaveState() const {
  Json strategies = Json::object();
  Json defaults_proposed = Json::array();
  Json seeds_pending = Json::object();
  Json seeds_to_model = Json::array();
  for (const Part& part : parts_) {
    const std::string& name = part.desc.name;
    strategies[name] = Json::parse(part.strategy->SaveState());
    if (part.seeds_to_model) {
      seeds_to_model.push_back(name);
    }
    if (!part.default_pending) {
      defaults_proposed.push_back(name);
    }
    Json pending = Json::array();
    for (const Config& config : part.seeds_pending) {
      pending.push_back(Json::parse(ConfigToString(config)));
    }
    seeds_pending[name] = std::move(pending);
  }
  Json outstanding = Json::array();
  auto add = [&](const Proposal& p) {
    outstanding.push_back({{"template", parts_[p.space].desc.name},
                           {"config", Json::parse(ConfigToString(p.config))}});
  };
  for (const Proposal& p : replay_) {
    add(p);
  }
  for (const Proposal& p : outstanding_) {
    add(p);
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

void CompositeSearch::Lend(size_t space, const LentTrial& trial) {
  if (space >= parts_.size() || trial.workload == workload_) {
    return;
  }
  Part& part = parts_[space];
  if (!part.strategy->HasModel()) {
    return;
  }
  const std::optional<LendingWorkload>& lender =
      LenderOf(part.lenders, part.desc.lending, trial.workload);
  absl::StatusOr<Config> config = ParseConfig(trial.config);
  if (!lender || !config.ok() || !lender->space.IsValid(*config)) {
    return;
  }
  std::vector<float> features = std::move(LenderRows(*lender, {*config})[0]);
  part.strategy->Transfer({TransferSample{std::move(features), trial.error, trial.secs,
                                          GroupOf(groups_, trial.workload)}});
}

bool CompositeSearch::Exhausted() const {
  if (!replay_.empty()) {
    return false;
  }
  for (const Part& part : parts_) {
    if (part.default_pending || !part.seeds_pending.empty() || !part.strategy->Exhausted()) {
      return false;
    }
  }
  return true;
}

}  // namespace tune
