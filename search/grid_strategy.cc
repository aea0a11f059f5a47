// Grid search: valid configs in index order (ConfigSpace::ConfigAt), skipping invalid and
// measured ones. The raw space is walked lazily, so a huge space costs nothing up front; the
// saved state is the next index to look at.
#include <unordered_set>
#include <utility>

#include "common/status.h"
#include "common/strings.h"
#include "search/raw_cursor.h"
#include "search/strategy_state.h"

namespace tune::search_internal {
namespace {

constexpr std::string_view kGrid = "grid";

class GridStrategy final : public SearchStrategy {
 public:
  GridStrategy(const ConfigSpace& space, const std::vector<Config>& measured, uint64_t next,
               uint64_t observed)
      : space_(space), cursor_(space_, next), observed_(observed) {
    for (const Config& config : measured) {
      Exclude(config);
    }
  }
  GridStrategy(const GridStrategy&) = delete;
  GridStrategy& operator=(const GridStrategy&) = delete;

  std::string_view name() const override { return kGrid; }

  std::vector<Config> Propose(int n) override {
    std::vector<Config> out;
    while (static_cast<int>(out.size()) < n && SkipToCandidate()) {
      out.push_back(cursor_.config());
      Advance();
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
    nlohmann::json state = StateHeader(kGrid, space_);
    state["next"] = cursor_.index();
    state["observed"] = observed_;
    return state.dump();
  }

  bool Exhausted() const override { return !SkipToCandidate(); }

 private:
  // Configs at indices the cursor has passed are never looked at again, so only later ones
  // need remembering.
  void Exclude(const Config& config) {
    std::optional<uint64_t> index = space_.IndexOf(config);
    if (index && *index >= cursor_.index()) {
      excluded_.insert(*index);
    }
  }

  void Advance() const {
    excluded_.erase(cursor_.index());
    cursor_.Next();
    at_candidate_ = false;
  }

  // Moves the cursor to the next valid, unexcluded point; false when none remains. Moving the
  // cursor past points that could never be proposed changes nothing observable, so this is
  // callable from const members.
  bool SkipToCandidate() const {
    while (!cursor_.done()) {
      if (!excluded_.count(cursor_.index()) &&
          (at_candidate_ || space_.ConstraintsHold(cursor_.config()))) {
        at_candidate_ = true;
        return true;
      }
      Advance();
    }
    return false;
  }

  const ConfigSpace space_;
  mutable RawCursor cursor_;
  mutable bool at_candidate_ = false;  // cursor_ is known to point at a valid config
  mutable std::unordered_set<uint64_t> excluded_;
  uint64_t observed_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeGridStrategy(
    const ConfigSpace& space, uint64_t /*seed*/, const std::vector<Config>& measured,
    const nlohmann::json* state, FeatureFn /*features*/) {
  uint64_t next = 0;
  uint64_t observed = 0;
  if (state != nullptr) {
    ASSIGN_OR_RETURN(next, StateUint(*state, "next"));
    ASSIGN_OR_RETURN(observed, StateUint(*state, "observed"));
    if (next > space.RawSize()) {
      return StateError(
          StrCat("field 'next' is ", next, ", beyond the space of ", space.RawSize(), " points"));
    }
  }
  return std::make_unique<GridStrategy>(space, measured, next, observed);
}

}  // namespace tune::search_internal
