#include "search/proposal_pool.h"

#include <algorithm>

#include "common/status.h"
#include "search/raw_cursor.h"
#include "search/strategy_state.h"

namespace tune::search_internal {

ProposalPool::ProposalPool(const ConfigSpace& space) : space_(&space) {
  if (space.RawSize() <= kEnumerateLimit) {
    enumerated_ = true;
    for (RawCursor cursor(space, 0); !cursor.done(); cursor.Next()) {
      if (space.ConstraintsHold(cursor.config())) {
        free_.push_back(cursor.index());
      }
    }
  }
}

bool ProposalPool::Taken(const Config& config) const {
  std::optional<uint64_t> index = space_->IndexOf(config);
  if (!index || taken_.contains(*index)) {
    return true;
  }
  return enumerated_ ? !std::binary_search(free_.begin(), free_.end(), *index)
                     : !space_->ConstraintsHold(config);
}

bool ProposalPool::Take(const Config& config) {
  std::optional<uint64_t> index = space_->IndexOf(config);
  if (!index || !taken_.insert(*index).second) {
    return false;
  }
  if (enumerated_) {
    auto it = std::lower_bound(free_.begin(), free_.end(), *index);
    if (it != free_.end() && *it == *index) {
      free_.erase(it);
    }
  }
  return true;
}

std::optional<Config> ProposalPool::Draw(std::mt19937_64& rng) {
  if (enumerated_) {
    if (free_.empty()) {
      return std::nullopt;
    }
    Config config = space_->ConfigAt(free_[UniformIndex(rng, free_.size())]);
    Take(config);
    return config;
  }
  for (uint64_t misses = 0; !gave_up_; ++misses) {
    if (misses >= kMissRunLimit) {
      gave_up_ = true;
      break;
    }
    Config config = space_->SampleRaw(rng);
    if (space_->ConstraintsHold(config) && Take(config)) {
      return config;
    }
  }
  return std::nullopt;
}

bool ProposalPool::Exhausted() const { return enumerated_ ? free_.empty() : gave_up_; }

nlohmann::json ProposalPool::Save() const {
  std::vector<uint64_t> indices(taken_.begin(), taken_.end());
  std::sort(indices.begin(), indices.end());
  return indices;
}

bool ProposalPool::Load(const nlohmann::json& saved) {
  if (!saved.is_array()) {
    return false;
  }
  for (const nlohmann::json& entry : saved) {
    if (!entry.is_number_unsigned() || entry.get<uint64_t>() >= space_->RawSize()) {
      return false;
    }
    Take(space_->ConfigAt(entry.get<uint64_t>()));
  }
  return true;
}

absl::StatusOr<PoolState> ReadPoolState(const nlohmann::json* state, uint64_t seed) {
  PoolState progress{seed, 0};
  if (state != nullptr) {
    ASSIGN_OR_RETURN(progress.seed, StateUint(*state, "seed"));
    ASSIGN_OR_RETURN(progress.batches, StateUint(*state, "batches"));
  }
  return progress;
}

absl::Status FillPool(ProposalPool& pool, const nlohmann::json* state,
                      const std::vector<Config>& measured) {
  if (state != nullptr && (!state->contains("taken") || !pool.Load((*state)["taken"]))) {
    return StateError("field 'taken' is missing or not an array of raw config indices");
  }
  for (const Config& config : measured) {
    pool.Take(config);
  }
  return absl::OkStatus();
}

void WritePoolState(nlohmann::json& state, const PoolState& progress, const ProposalPool& pool) {
  state["seed"] = progress.seed;
  state["batches"] = progress.batches;
  state["taken"] = pool.Save();
}

}  // namespace tune::search_internal
