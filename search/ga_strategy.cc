// Evolutionary search ("ga"), in the manner of AutoTVM's GATuner but without replacement: the
// population is the kPopulation fastest configs observed so far; a child takes each knob from
// one of two parents picked by tournament (the faster of two random members), then moves each
// knob to a random value with probability kMutation. Children that are invalid or were already
// taken are discarded; after kTries fruitless children a uniform random config fills the slot.
// Until kWarmup configs have been measured successfully, batches are uniformly random.
//
// The saved state is the seed, the number of batches and every config taken; the population is
// rebuilt from the observations the daemon feeds back from the tuning log on resume.
#include <algorithm>
#include <utility>

#include "common/status.h"
#include "search/proposal_pool.h"
#include "search/strategy_state.h"

namespace tune::search_internal {
namespace {

constexpr std::string_view kGa = "ga";
constexpr size_t kPopulation = 16;
constexpr size_t kWarmup = 4;
constexpr double kMutation = 0.1;
constexpr int kTries = 64;

class GaStrategy final : public SearchStrategy {
 public:
  GaStrategy(const ConfigSpace& space, PoolState progress)
      : space_(space), pool_(space_), progress_(progress) {}
  GaStrategy(const GaStrategy&) = delete;
  GaStrategy& operator=(const GaStrategy&) = delete;

  ProposalPool& pool() { return pool_; }

  std::string_view name() const override { return kGa; }

  std::vector<Config> Propose(int n) override {
    std::mt19937_64 rng(progress_.seed ^ (0xD1B54A32D192ED03ull * ++progress_.batches));
    std::vector<Config> out;
    while (static_cast<int>(out.size()) < n) {
      std::optional<Config> child = population_.size() >= kWarmup ? Breed(rng) : std::nullopt;
      if (!child) {
        child = pool_.Draw(rng);
      }
      if (!child) {
        break;
      }
      out.push_back(std::move(*child));
    }
    return out;
  }

  void Observe(const std::vector<TrialOutcome>& outcomes) override {
    for (const TrialOutcome& outcome : outcomes) {
      if (!IsVerdict(outcome.error)) {
        continue;
      }
      pool_.Take(outcome.config);
      if (outcome.ok() && outcome.secs > 0 && space_.IndexOf(outcome.config)) {
        population_.emplace_back(outcome.secs, outcome.config);
      }
    }
    std::stable_sort(population_.begin(), population_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (population_.size() > kPopulation) {
      population_.resize(kPopulation);
    }
  }

  std::string SaveState() const override {
    nlohmann::json state = StateHeader(kGa, space_);
    WritePoolState(state, progress_, pool_);
    return state.dump();
  }

  bool Exhausted() const override { return pool_.Exhausted(); }

 private:
  const Config& Tournament(std::mt19937_64& rng) const {
    const size_t a = UniformIndex(rng, population_.size());
    const size_t b = UniformIndex(rng, population_.size());
    return population_[std::min(a, b)].second;  // sorted fastest first
  }

  std::optional<Config> Breed(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    for (int attempt = 0; attempt < kTries; ++attempt) {
      const Config& mother = Tournament(rng);
      const Config& father = Tournament(rng);
      Config child;
      for (const Knob& knob : space_.knobs()) {
        child[knob.name] = (coin(rng) < 0.5 ? mother : father).at(knob.name);
        if (coin(rng) < kMutation) {
          child[knob.name] = knob.values[UniformIndex(rng, knob.values.size())];
        }
      }
      if (!pool_.Taken(child) && space_.ConstraintsHold(child)) {
        pool_.Take(child);
        return child;
      }
    }
    return std::nullopt;
  }

  const ConfigSpace space_;
  ProposalPool pool_;
  PoolState progress_;
  std::vector<std::pair<double, Config>> population_;  // fastest first, at most kPopulation
};

}  // namespace

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeGaStrategy(const ConfigSpace& space,
                                                               uint64_t seed,
                                                               const std::vector<Config>& measured,
                                                               const nlohmann::json* state,
                                                               FeatureFn /*features*/) {
  ASSIGN_OR_RETURN(PoolState progress, ReadPoolState(state, seed));
  auto strategy = std::make_unique<GaStrategy>(space, progress);
  RETURN_IF_ERROR(FillPool(strategy->pool(), state, measured));
  return strategy;
}

}  // namespace tune::search_internal
