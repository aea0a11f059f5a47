// Random search, seeded and without replacement, in one of two modes chosen by the raw size:
// - "shuffle" (raw size <= kShuffleLimit): the valid configs are enumerated once and put in a
//   seeded random order; proposals walk that order. Exhaustion is exact.
// - "draw" (larger spaces): configs are drawn uniformly by rejection sampling and remembered;
//   the search is exhausted once kMissRunLimit draws in a row found nothing new.
// Neither order depends on the measured set (it only filters), so a resumed search, which
// usually knows more measured configs, continues the same sequence. Both states are small:
// the seed and a position or a draw count; a resumed "draw" search replays its draws.
#include <random>
#include <set>
#include <unordered_set>
#include <utility>

#include "common/status.h"
#include "common/strings.h"
#include "search/raw_cursor.h"
#include "search/strategy_state.h"

namespace tune::search_internal {
namespace {

constexpr std::string_view kRandom = "random";
constexpr std::string_view kShuffleMode = "shuffle";
constexpr std::string_view kDrawMode = "draw";
constexpr uint64_t kShuffleLimit = 200'000;
constexpr uint64_t kMissRunLimit = 50'000;

// The valid indices of `space` in a seeded random order (Fisher-Yates with UniformIndex, so the
// order is the same on every platform).
std::vector<uint64_t> ShuffledValidIndices(const ConfigSpace& space, uint64_t seed) {
  std::vector<uint64_t> order;
  for (RawCursor cursor(space, 0); !cursor.done(); cursor.Next()) {
    if (space.ConstraintsHold(cursor.config())) {
      order.push_back(cursor.index());
    }
  }
  std::mt19937_64 rng(seed);
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[UniformIndex(rng, i)]);
  }
  return order;
}

class ShuffledRandomStrategy final : public SearchStrategy {
 public:
  ShuffledRandomStrategy(const ConfigSpace& space, uint64_t seed, std::vector<uint64_t> order,
                         const std::vector<Config>& measured, uint64_t position, uint64_t observed)
      : space_(space),
        seed_(seed),
        order_(std::move(order)),
        position_(position),
        observed_(observed) {
    for (const Config& config : measured) {
      Exclude(config);
    }
  }

  std::string_view name() const override { return kRandom; }

  std::vector<Config> Propose(int n) override {
    std::vector<Config> out;
    while (static_cast<int>(out.size()) < n && SkipToCandidate()) {
      out.push_back(space_.ConfigAt(order_[position_]));
      ++position_;
    }
    return out;
  }

  void Observe(const std::vector<TrialOutcome>& outcomes) override {
    for (const TrialOutcome& outcome : outcomes) {
      if (IsVerdict(outcome.error)) {
        Exclude(outcome.config);
        ++observed_;
      }
    }
  }

  std::string SaveState() const override {
    nlohmann::json state = StateHeader(kRandom, space_);
    state["mode"] = kShuffleMode;
    state["seed"] = seed_;
    state["position"] = position_;
    state["observed"] = observed_;
    return state.dump();
  }

  bool Exhausted() const override { return !SkipToCandidate(); }

 private:
  void Exclude(const Config& config) {
    if (std::optional<uint64_t> index = space_.IndexOf(config)) {
      excluded_.insert(*index);
    }
  }

  // Moves past excluded configs (which could never be proposed, so const members may call it);
  // false when the order is used up.
  bool SkipToCandidate() const {
    while (position_ < order_.size() && excluded_.count(order_[position_])) {
      ++position_;
    }
    return position_ < order_.size();
  }

  const ConfigSpace space_;
  const uint64_t seed_;
  const std::vector<uint64_t> order_;
  mutable uint64_t position_;
  std::unordered_set<uint64_t> excluded_;
  uint64_t observed_;
};

class DrawnRandomStrategy final : public SearchStrategy {
 public:
  // Replays `draws` draws from `seed`, so that the configs drawn before are known again.
  DrawnRandomStrategy(const ConfigSpace& space, uint64_t seed, const std::vector<Config>& measured,
                      uint64_t draws, uint64_t miss_run, bool exhausted, uint64_t observed)
      : space_(space),
        seed_(seed),
        rng_(seed),
        draws_(draws),
        miss_run_(miss_run),
        exhausted_(exhausted),
        observed_(observed) {
    for (uint64_t i = 0; i < draws; ++i) {
      Config config = space_.SampleRaw(rng_);
      if (space_.ConstraintsHold(config)) {
        excluded_.insert(std::move(config));
      }
    }
    excluded_.insert(measured.begin(), measured.end());
  }

  std::string_view name() const override { return kRandom; }

  std::vector<Config> Propose(int n) override {
    std::vector<Config> out;
    while (static_cast<int>(out.size()) < n && !exhausted_) {
      Config config = space_.SampleRaw(rng_);
      ++draws_;
      if (space_.ConstraintsHold(config) && excluded_.insert(config).second) {
        out.push_back(std::move(config));
        miss_run_ = 0;
      } else if (++miss_run_ >= kMissRunLimit) {
        exhausted_ = true;
      }
    }
    return out;
  }

  void Observe(const std::vector<TrialOutcome>& outcomes) override {
    for (const TrialOutcome& outcome : outcomes) {
      if (IsVerdict(outcome.error)) {
        excluded_.insert(outcome.config);
        ++observed_;
      }
    }
  }

  std::string SaveState() const override {
    nlohmann::json state = StateHeader(kRandom, space_);
    state["mode"] = kDrawMode;
    state["seed"] = seed_;
    state["draws"] = draws_;
    state["miss_run"] = miss_run_;
    state["exhausted"] = exhausted_;
    state["observed"] = observed_;
    return state.dump();
  }

  bool Exhausted() const override { return exhausted_; }

 private:
  const ConfigSpace space_;
  const uint64_t seed_;
  std::mt19937_64 rng_;
  uint64_t draws_;
  uint64_t miss_run_;
  bool exhausted_;
  std::set<Config> excluded_;  // measured, observed and every valid config drawn so far
  uint64_t observed_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeRandomStrategy(
    const ConfigSpace& space, uint64_t seed, const std::vector<Config>& measured,
    const nlohmann::json* state, FeatureFn /*features*/) {
  const std::string_view mode = space.RawSize() <= kShuffleLimit ? kShuffleMode : kDrawMode;
  uint64_t observed = 0;
  if (state != nullptr) {
    ASSIGN_OR_RETURN(std::string saved_mode, StateString(*state, "mode"));
    if (saved_mode != mode) {
      return StateError(
          StrCat("mode '", saved_mode, "' does not fit this space, which uses '", mode, "'"));
    }
    ASSIGN_OR_RETURN(seed, StateUint(*state, "seed"));
    ASSIGN_OR_RETURN(observed, StateUint(*state, "observed"));
  }

  if (mode == kShuffleMode) {
    std::vector<uint64_t> order = ShuffledValidIndices(space, seed);
    uint64_t position = 0;
    if (state != nullptr) {
      ASSIGN_OR_RETURN(position, StateUint(*state, "position"));
      if (position > order.size()) {
        return StateError(StrCat("field 'position' is ", position, ", beyond the ", order.size(),
                                 " valid configs of the space"));
      }
    }
    return std::make_unique<ShuffledRandomStrategy>(space, seed, std::move(order), measured,
                                                    position, observed);
  }

  uint64_t draws = 0;
  uint64_t miss_run = 0;
  bool exhausted = false;
  if (state != nullptr) {
    ASSIGN_OR_RETURN(draws, StateUint(*state, "draws"));
    ASSIGN_OR_RETURN(miss_run, StateUint(*state, "miss_run"));
    ASSIGN_OR_RETURN(exhausted, StateBool(*state, "exhausted"));
  }
  return std::make_unique<DrawnRandomStrategy>(space, seed, measured, draws, miss_run, exhausted,
                                               observed);
}

}  // namespace tune::search_internal
