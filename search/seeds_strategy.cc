// "seeds": a search of each space's default config and seeds alone (the composite search
// proposes those itself, search/composite_search.h), and nothing of its own. What a user runs to
// measure a template's best guesses, and what a reverify job runs over the configs it
// re-measures (given as the default and the seeds). Its saved state is the header alone.
#include "search/strategy_state.h"

namespace tune::search_internal {
namespace {

constexpr std::string_view kSeeds = "seeds";

class SeedsStrategy final : public SearchStrategy {
 public:
  explicit SeedsStrategy(const ConfigSpace& space) : space_(space) {}

  std::string_view name() const override { return kSeeds; }
  std::vector<Config> Propose(int /*n*/) override { return {}; }
  void Observe(const std::vector<TrialOutcome>& /*outcomes*/) override {}
  std::string SaveState() const override { return StateHeader(kSeeds, space_).dump(); }
  bool Exhausted() const override { return true; }

 private:
  const ConfigSpace space_;  // a copy: the caller's may not outlive the strategy
};

}  // namespace

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeSeedsStrategy(
    const ConfigSpace& space, uint64_t /*seed*/, const std::vector<Config>& /*measured*/,
    const nlohmann::json* /*state*/, FeatureFn /*features*/) {
  return std::make_unique<SeedsStrategy>(space);
}

}  // namespace tune::search_internal
