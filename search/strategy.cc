#include "search/strategy.h"

#include <utility>

#include "common/status.h"
#include "common/strings.h"
#include "search/strategy_state.h"

namespace tune {
namespace search_internal {

nlohmann::json StateHeader(std::string_view strategy, const ConfigSpace& space) {
  return nlohmann::json{{"strategy", std::string(strategy)},
                        {"version", kStateVersion},
                        {"space", space.Fingerprint()}};
}

absl::Status StateError(std::string_view problem) {
  return absl::InvalidArgumentError(StrCat("saved_state: ", problem));
}

absl::StatusOr<nlohmann::json> ParseState(std::string_view text, std::string_view strategy,
                                          const ConfigSpace& space) {
  nlohmann::json state = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (state.is_discarded() || !state.is_object()) {
    return StateError(StrCat("not a JSON object; accepted form: the SaveState() text of a '",
                             strategy, "' search"));
  }
  ASSIGN_OR_RETURN(std::string saved_strategy, StateString(state, "strategy"));
  if (saved_strategy != strategy) {
    return StateError(
        StrCat("saved by a '", saved_strategy, "' search, not by a '", strategy, "' search"));
  }
  ASSIGN_OR_RETURN(uint64_t version, StateUint(state, "version"));
  if (version != kStateVersion) {
    return StateError(
        StrCat("layout version ", version, " is not the supported version ", kStateVersion));
  }
  ASSIGN_OR_RETURN(std::string fingerprint, StateString(state, "space"));
  if (fingerprint != space.Fingerprint()) {
    return StateError(StrCat("saved for another config space (fingerprint ", fingerprint,
                             ", this space has ", space.Fingerprint(), ")"));
  }
  return state;
}

absl::StatusOr<uint64_t> StateUint(const nlohmann::json& state, std::string_view key) {
  auto it = state.find(std::string(key));
  if (it == state.end() || !it->is_number_unsigned()) {
    return StateError(StrCat("field '", key, "' is missing or not a non-negative integer"));
  }
  return it->get<uint64_t>();
}

absl::StatusOr<bool> StateBool(const nlohmann::json& state, std::string_view key) {
  auto it = state.find(std::string(key));
  if (it == state.end() || !it->is_boolean()) {
    return StateError(StrCat("field '", key, "' is missing or not a boolean"));
  }
  return it->get<bool>();
}

absl::StatusOr<std::string> StateString(const nlohmann::json& state, std::string_view key) {
  auto it = state.find(std::string(key));
  if (it == state.end() || !it->is_string()) {
    return StateError(StrCat("field '", key, "' is missing or not a string"));
  }
  return it->get<std::string>();
}

}  // namespace search_internal

namespace {

struct StrategyEntry {
  std::string_view name;
  search_internal::StrategyFactory make;
};

// Every strategy MakeStrategy knows, in the order StrategyNames lists them.
constexpr StrategyEntry kStrategies[] = {
    {"grid", &search_internal::MakeGridStrategy}, {"random", &search_internal::MakeRandomStrategy},
    {"ga", &search_internal::MakeGaStrategy},     {"xgb", &search_internal::MakeXgbStrategy},
    {"auto", &search_internal::MakeAutoStrategy}, {"seeds", &search_internal::MakeSeedsStrategy},
};

}  // namespace

std::vector<std::string> StrategyNames() {
  std::vector<std::string> names;
  for (const StrategyEntry& entry : kStrategies) {
    names.emplace_back(entry.name);
  }
  return names;
}

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeStrategy(
    std::string_view name, const ConfigSpace& space, uint64_t seed,
    const std::vector<Config>& measured, std::string_view saved_state, FeatureFn features) {
  for (const StrategyEntry& entry : kStrategies) {
    if (entry.name != name) {
      continue;
    }
    if (saved_state.empty()) {
      return entry.make(space, seed, measured, nullptr, std::move(features));
    }
    ASSIGN_OR_RETURN(nlohmann::json state,
                     search_internal::ParseState(saved_state, entry.name, space));
    return entry.make(space, seed, measured, &state, std::move(features));
  }
  return absl::InvalidArgumentError(
      StrCat("search strategy '", name, "' is unknown; accepted: ", Join(StrategyNames(), ", ")));
}

}  // namespace tune
