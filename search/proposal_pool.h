// ProposalPool: which configs of a space a search may still propose, shared by the strategies
// that generate configs themselves (xgb, auto, ga). It remembers every config proposed or
// excluded (measured earlier, observed) and draws uniformly among the rest: from the enumerated
// valid configs when the raw space is small (exact exhaustion), else by rejection sampling
// (exhausted after a long run of fruitless draws). Used inside search/ only.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "search/config_space.h"

namespace tune::search_internal {

class ProposalPool {
 public:
  /// `space` must outlive the pool.
  explicit ProposalPool(const ConfigSpace& space);

  /// True when `config` was proposed or excluded (or is not a valid point of the space).
  bool Taken(const Config& config) const;
  /// Marks `config` as proposed or measured; configs that are not points of the space are
  /// ignored. Returns true when it was not taken before.
  bool Take(const Config& config);

  /// A uniformly drawn valid config not taken yet (not taken by the draw itself); nullopt once
  /// none is left.
  std::optional<Config> Draw(std::mt19937_64& rng);

  bool Exhausted() const;

  /// The raw indices of every taken config, in no particular order.
  const std::unordered_set<uint64_t>& taken() const { return taken_; }

  /// The raw indices of every taken config, for a saved state.
  nlohmann::json Save() const;
  /// Takes the configs at the raw indices of Save()'s output; false when `saved` is not an
  /// array of indices of this space.
  bool Load(const nlohmann::json& saved);

 private:
  static constexpr uint64_t kEnumerateLimit = 200'000;
  static constexpr uint64_t kMissRunLimit = 50'000;

  const ConfigSpace* space_;
  std::unordered_set<uint64_t> taken_;
  // Small spaces: the valid indices not taken yet, ascending, so that a draw depends on which
  // configs were taken and not on the order they were taken in (a resumed search draws as the
  // uninterrupted one would).
  bool enumerated_ = false;
  std::vector<uint64_t> free_;
  // Large spaces: set when a long run of draws found nothing new.
  bool gave_up_ = false;
};

/// The saved fields every pool-based strategy shares besides "taken": its seed and how many
/// batches it proposed (each batch draws from its own random stream).
struct PoolState {
  uint64_t seed = 0;
  uint64_t batches = 0;
};

/// Reads "seed" and "batches" of a saved state; a fresh search (null `state`) starts at `seed`
/// with no batch.
absl::StatusOr<PoolState> ReadPoolState(const nlohmann::json* state, uint64_t seed);

/// Takes the configs of the saved state's "taken" (when `state` is not null) and `measured`.
/// InvalidArgument naming the field when "taken" is missing or malformed.
absl::Status FillPool(ProposalPool& pool, const nlohmann::json* state,
                      const std::vector<Config>& measured);

/// Adds "seed", "batches" and "taken" to a state being saved.
void WritePoolState(nlohmann::json& state, const PoolState& progress, const ProposalPool& pool);

}  // namespace tune::search_internal
