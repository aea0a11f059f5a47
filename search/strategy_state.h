// Shared pieces of the search strategies' saved states (JSON objects) and the factory of each
// strategy. Used inside search/ only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "search/config_space.h"
#include "search/features.h"
#include "search/strategy.h"

namespace tune::search_internal {

/// Version of the saved-state layout; a state of another version is rejected.
inline constexpr int kStateVersion = 1;

/// A saved state's common fields: {"strategy":name,"version":1,"space":fingerprint}.
nlohmann::json StateHeader(std::string_view strategy, const ConfigSpace& space);

/// Parses `text` and checks the common fields against `strategy` and `space`.
/// InvalidArgument naming `saved_state` on any mismatch.
absl::StatusOr<nlohmann::json> ParseState(std::string_view text, std::string_view strategy,
                                          const ConfigSpace& space);

/// The unsigned integer field `key` of a parsed state; InvalidArgument when absent or of
/// another type.
absl::StatusOr<uint64_t> StateUint(const nlohmann::json& state, std::string_view key);
/// The boolean field `key`; InvalidArgument when absent or of another type.
absl::StatusOr<bool> StateBool(const nlohmann::json& state, std::string_view key);
/// The string field `key`; InvalidArgument when absent or of another type.
absl::StatusOr<std::string> StateString(const nlohmann::json& state, std::string_view key);

/// InvalidArgument "saved_state: <problem>".
absl::Status StateError(std::string_view problem);

/// Factories behind MakeStrategy. `state` is null for a fresh search, else a state that
/// ParseState accepted for this strategy and space. `features` describes a config to a cost
/// model (empty: its knob values); strategies without a model ignore it.
using StrategyFactory = absl::StatusOr<std::unique_ptr<SearchStrategy>> (*)(
    const ConfigSpace& space, uint64_t seed, const std::vector<Config>& measured,
    const nlohmann::json* state, FeatureFn features);

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeGridStrategy(
    const ConfigSpace& space, uint64_t seed, const std::vector<Config>& measured,
    const nlohmann::json* state, FeatureFn features);
absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeRandomStrategy(
    const ConfigSpace& space, uint64_t seed, const std::vector<Config>& measured,
    const nlohmann::json* state, FeatureFn features);
absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeGaStrategy(const ConfigSpace& space,
                                                               uint64_t seed,
                                                               const std::vector<Config>& measured,
                                                               const nlohmann::json* state,
                                                               FeatureFn features);
absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeXgbStrategy(const ConfigSpace& space,
                                                                uint64_t seed,
                                                                const std::vector<Config>& measured,
                                                                const nlohmann::json* state,
                                                                FeatureFn features);
absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeSeedsStrategy(
    const ConfigSpace& space, uint64_t seed, const std::vector<Config>& measured,
    const nlohmann::json* state, FeatureFn features);
absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeAutoStrategy(
    const ConfigSpace& space, uint64_t seed, const std::vector<Config>& measured,
    const nlohmann::json* state, FeatureFn features);

}  // namespace tune::search_internal
