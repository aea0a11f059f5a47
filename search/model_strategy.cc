// Model-based search ("xgb" and "auto"). A plan is made by fitting a CostModel (the one kXgb or
// kAuto names) on the observations so far and running simulated annealing under it
// (annealing_planner.h: walkers change one knob per step); it keeps the kPlanSize best-ranked
// configs visited. A batch takes the plan's best
// untaken candidates, with a bonus for (knob, value) pairs the plan's picks do not cover yet,
// plus an epsilon share of random picks so that a wrong model cannot starve whole regions.
// Suggested configs (a template's seeds, when a model learnt from other workloads' trials can
// rank them) start walkers of every plan, so the model decides when they are measured.
// A new plan is made once kRefitEvery new observations have arrived (or the plan is used up),
// so the model is refitted after every batch of trials, not after every trial. Until the model
// has enough data the batches are random: "xgb" needs 16 observations, "auto" 32. Random picks
// are covering draws: of a few uniform draws, the one holding the most knob values no config
// taken so far holds, so the first batches try every value of every knob (a space-filling
// design) and the model sees each before it must rank it.
//
// The saved state is the seed, the number of batches (each batch draws from its own random
// stream), every config taken, and which batch made the current plan on how many observations.
// The model is not saved: the daemon feeds the tuning log's records back through Observe when a
// job resumes, and the plan is rebuilt from the same observations and the same random stream,
// so a resumed search proposes what the uninterrupted one would have.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "search/annealing_planner.h"
#include "search/cost_model.h"
#include "search/features.h"
#include "search/proposal_pool.h"
#include "search/strategy_state.h"
#include "search/xgb_cost_model.h"

namespace tune::search_internal {
namespace {

// The model-based strategies: the name MakeStrategy knows, the observations (with lent
// samples) its model needs before the first plan, and the cost model it fits.
struct ModelEntry {
  std::string_view name;
  size_t warmup;
  CostModelFactory model;
};
constexpr ModelEntry kXgb = {"xgb", 16, &MakeXgbCostModel};
constexpr ModelEntry kAuto = {"auto", 32, &MakeXgbCostModel};

constexpr double kEpsilon = 0.15;         // share of a batch drawn uniformly
constexpr size_t kRefitEvery = 8;         // new observations that make a new plan
constexpr double kDiversityWeight = 0.2;  // weight of new (knob, value) pairs in a batch
constexpr int kCoverCandidates = 32;      // random configs a covering draw chooses among
constexpr size_t kMaxTransfer = 2000;     // lent samples kept (the latest)

class ModelStrategy final : public SearchStrategy {
 public:
  ModelStrategy(const ModelEntry& entry, const ConfigSpace& space, PoolState progress,
                FeatureFn features)
      : name_(entry.name),
        warmup_(entry.warmup),
        space_(space),
        pool_(space_),
        progress_(progress),
        features_(std::move(features)),
        model_(entry.model(progress.seed)) {
    if (!features_) {
      features_ = KnobFeatureFn(space_);
    }
  }
  ModelStrategy(const ModelStrategy&) = delete;
  ModelStrategy& operator=(const ModelStrategy&) = delete;

  ProposalPool& pool() { return pool_; }

  std::string_view name() const override { return name_; }

  std::vector<Config> Propose(int n) override {
    std::mt19937_64 rng(progress_.seed ^ (0x9E3779B97F4A7C15ull * ++progress_.batches));
    std::vector<Config> out;
    if (n <= 0) {
      return out;
    }
    const bool planned = UpdatePlan();
    std::set<std::pair<std::string_view, int64_t>> covered = PlanValuesTaken();
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    while (static_cast<int>(out.size()) < n) {
      std::optional<Config> pick;
      if (planned && coin(rng) >= kEpsilon) {
        pick = PickDiverse(covered);
      }
      if (!pick) {
        // Read off every config taken, this batch's picks included (they are taken): only
        // when a random pick is due, so most model picks cost no walk over the taken set.
        pick = DrawCovering(TakenValues(), rng);
      }
      if (!pick) {
        break;
      }
      for (const Knob& knob : space_.knobs()) {
        covered.emplace(knob.name, pick->at(knob.name));
      }
      out.push_back(std::move(*pick));
    }
    return out;
  }

  void Observe(const std::vector<TrialOutcome>& outcomes) override {
    for (const TrialOutcome& outcome : outcomes) {
      std::optional<uint64_t> index = space_.IndexOf(outcome.config);
      if (!index || !IsVerdict(outcome.error)) {
        continue;
      }
      pool_.Take(outcome.config);
      observations_.push_back(Observation{*index, outcome.error, outcome.secs});
    }
  }

  std::string SaveState() const override {
    nlohmann::json state = StateHeader(name_, space_);
    WritePoolState(state, progress_, pool_);
    state["plan_batch"] = plan_.batch;
    state["plan_observations"] = plan_.observations;
    return state.dump();
  }

  bool Exhausted() const override { return pool_.Exhausted(); }

  bool HasModel() const override { return true; }

  void Transfer(std::vector<TransferSample> samples) override {
    const size_t width = FeaturesOf(space_.ConfigAt(0)).size();
    for (TransferSample& sample : samples) {
      if (sample.features.size() == width && sample.group >= 1 && IsVerdict(sample.error)) {
        transfer_.push_back(std::move(sample));
      }
    }
    // A long model job lends every task thousands of its siblings' trials: keep the latest, so
    // that a fit stays within about a second.
    if (transfer_.size() > kMaxTransfer) {
      transfer_.erase(transfer_.begin(), transfer_.begin() + static_cast<std::ptrdiff_t>(
                                                                 transfer_.size() - kMaxTransfer));
    }
  }

  bool Suggest(const std::vector<Config>& configs) override {
    if (!EnoughData(observations_.size())) {
      return false;
    }
    for (const Config& config : configs) {
      std::optional<uint64_t> index = space_.IndexOf(config);
      if (index && space_.ConstraintsHold(config) &&
          std::find(suggested_.begin(), suggested_.end(), *index) == suggested_.end()) {
        suggested_.push_back(*index);
      }
    }
    return true;
  }

  // The plan of a saved state, rebuilt at the first Propose after a resume.
  void RestorePlan(uint64_t batch, uint64_t observations) {
    plan_.batch = batch;
    plan_.observations = observations;
    plan_.built = false;
  }

 private:
  // True when the first `count` observations, with the transferred samples, can train a model:
  // warmup_ samples in all, and two different successful times within one workload.
  bool EnoughData(size_t count) const {
    const std::map<uint32_t, std::pair<double, double>> range = TimeRanges(count);
    return count + transfer_.size() >= warmup_ &&
           std::any_of(range.begin(), range.end(),
                       [](const auto& r) { return r.second.second > r.second.first; });
  }

  // Per workload (group 0: this one, over its first `count` observations; the others from the
  // transferred samples), the fastest and slowest successful times.
  std::map<uint32_t, std::pair<double, double>> TimeRanges(size_t count) const {
    std::map<uint32_t, std::pair<double, double>> range;
    auto note = [&](uint32_t group, ErrorKind error, double secs) {
      if (error == ErrorKind::kNone && secs > 0) {
        auto [it, fresh] = range.emplace(group, std::make_pair(secs, secs));
        it->second = {std::min(it->second.first, secs), std::max(it->second.second, secs)};
      }
    };
    for (size_t i = 0; i < count; ++i) {
      note(0, observations_[i].error, observations_[i].secs);
    }
    for (const TransferSample& t : transfer_) {
      note(t.group, t.error, t.secs);
    }
    return range;
  }

  // Fits the model on the transferred samples and the first `count` observations (labels:
  // RankingLabels). False, with a warning, when XGBoost fails.
  bool Fit(size_t count) {
    std::vector<Config> observed;
    for (size_t i = 0; i < count; ++i) {
      observed.push_back(space_.ConfigAt(observations_[i].index));
    }
    ComputeFeatures(observed);
    FeatureMatrix x(FeaturesOf(space_.ConfigAt(0)).size());
    std::vector<RankingSample> samples;
    std::vector<uint32_t> groups;
    for (const TransferSample& t : transfer_) {
      x.Append(t.features);
      samples.push_back({t.error, t.secs, t.group});
      groups.push_back(t.group);
    }
    for (size_t i = 0; i < count; ++i) {
      const Observation& o = observations_[i];
      x.Append(FeaturesOf(space_.ConfigAt(o.index)));
      samples.push_back({o.error, o.secs, 0});
      groups.push_back(0);
    }
    const std::vector<float> labels = RankingLabels(samples);
    // The search's own workload weighs as much as all the lent ones together: a model fitted on
    // thousands of lent trials would otherwise all but ignore the few of its own workload, and
    // keep exploiting where the other shapes were fast.
    const float own = static_cast<float>(std::max<size_t>(1, transfer_.size())) /
                      static_cast<float>(std::max<size_t>(1, count));
    absl::Status fitted = model_->Fit(x, labels, groups, {{0u, std::max(1.0f, own)}});
    scores_.clear();
    if (!fitted.ok()) {
      Logger("search")->warn("{} search: {}; proposing at random", name_, fitted.message());
      return false;
    }
    return true;
  }

  // The (knob, value) pairs of every config taken so far (proposed, observed or excluded).
  std::set<std::pair<std::string_view, int64_t>> TakenValues() const {
    std::set<std::pair<std::string_view, int64_t>> values;
    for (uint64_t index : pool_.taken()) {
      const Config config = space_.ConfigAt(index);
      for (const Knob& knob : space_.knobs()) {
        values.emplace(knob.name, config.at(knob.name));
      }
    }
    return values;
  }

  // The (knob, value) pairs of the current plan's candidates taken so far: what the picks from
  // this plan cover, whether they were asked for in one batch or one at a time (the daemon asks
  // for as many as it has room for). A function of the plan and of the configs taken, so a
  // resumed search computes the same.
  std::set<std::pair<std::string_view, int64_t>> PlanValuesTaken() const {
    std::set<std::pair<std::string_view, int64_t>> values;
    for (const auto& [score, config] : plan_.ranked) {
      if (pool_.Taken(config)) {
        for (const Knob& knob : space_.knobs()) {
          values.emplace(knob.name, config.at(knob.name));
        }
      }
    }
    return values;
  }

  // A random pick that favours knob values no config taken so far holds: of kCoverCandidates
  // uniform draws, the untaken one holding the most such values (the first on ties); taken.
  // So the random batches before the model, and its epsilon share after, spread over every
  // value of every knob (a space-filling design) instead of leaving a value untried by chance.
  std::optional<Config> DrawCovering(const std::set<std::pair<std::string_view, int64_t>>& ever,
                                     std::mt19937_64& rng) {
    std::optional<Config> best;
    int best_fresh = -1;
    for (int i = 0; i < kCoverCandidates; ++i) {
      std::optional<Config> candidate = space_.Sample(rng, 1000);
      if (!candidate || pool_.Taken(*candidate)) {
        continue;
      }
      int fresh = 0;
      for (const Knob& knob : space_.knobs()) {
        fresh += ever.contains({knob.name, candidate->at(knob.name)}) ? 0 : 1;
      }
      if (fresh > best_fresh) {
        best_fresh = fresh;
        best = std::move(candidate);
      }
    }
    if (!best) {
      return pool_.Draw(rng);
    }
    pool_.Take(*best);
    return best;
  }

  // Makes sure the plan (the candidates the model ranks best) is current: a new one is fitted
  // and annealed when kRefitEvery observations arrived since the last, or when every candidate
  // of the last was taken. A plan is a function of its batch number and of the observations it
  // was fitted on, so a resumed search rebuilds the plan of its saved state exactly. False
  // while the data cannot train a model (the batch is then drawn at random).
  bool UpdatePlan() {
    if (!plan_.built && plan_.batch != 0) {
      const size_t count = std::min<size_t>(plan_.observations, observations_.size());
      plan_.built = true;
      if (EnoughData(count) && Fit(count)) {
        plan_.ranked = MakePlan(plan_.batch, count);
      }
    }
    if (!EnoughData(observations_.size())) {
      return false;
    }
    if (plan_.batch == 0 || observations_.size() >= plan_.observations + kRefitEvery ||
        !PlanHasCandidates()) {
      plan_ = Plan{progress_.batches, observations_.size(), {}, true};
      if (!Fit(observations_.size())) {
        return false;
      }
      plan_.ranked = MakePlan(plan_.batch, plan_.observations);
    }
    return PlanHasCandidates();
  }

  bool PlanHasCandidates() const {
    return std::any_of(plan_.ranked.begin(), plan_.ranked.end(),
                       [&](const auto& c) { return !pool_.Taken(c.second); });
  }

  const std::vector<float>& FeaturesOf(const Config& config) {
    ComputeFeatures({config});
    return features_cache_.at(*space_.IndexOf(config));
  }

  // Makes sure the features of every config of `configs` are cached, computing the missing ones
  // in one call of the FeatureFn.
  void ComputeFeatures(const std::vector<Config>& configs) {
    std::vector<Config> missing;
    std::vector<uint64_t> indices;
    for (const Config& config : configs) {
      const uint64_t index = *space_.IndexOf(config);
      if (!features_cache_.contains(index) &&
          std::find(indices.begin(), indices.end(), index) == indices.end()) {
        missing.push_back(config);
        indices.push_back(index);
      }
    }
    if (missing.empty()) {
      return;
    }
    std::vector<std::vector<float>> rows = features_(missing);
    TUNE_CHECK(rows.size() == missing.size())
        << "a FeatureFn gave " << rows.size() << " rows for " << missing.size() << " configs";
    for (size_t i = 0; i < missing.size(); ++i) {
      features_cache_.emplace(indices[i], std::move(rows[i]));
    }
  }

  // The model's scores of `configs` (cached per config until the next fit).
  std::vector<double> Score(const std::vector<Config>& configs) {
    std::vector<double> out(configs.size(), 0.0);
    std::vector<size_t> missing;
    for (size_t i = 0; i < configs.size(); ++i) {
      auto it = scores_.find(*space_.IndexOf(configs[i]));
      if (it != scores_.end()) {
        out[i] = it->second;
      } else {
        missing.push_back(i);
      }
    }
    if (missing.empty()) {
      return out;
    }
    std::vector<Config> unscored;
    for (size_t i : missing) {
      unscored.push_back(configs[i]);
    }
    ComputeFeatures(unscored);
    FeatureMatrix x(FeaturesOf(configs[missing.front()]).size());
    for (size_t i : missing) {
      x.Append(FeaturesOf(configs[i]));
    }
    absl::StatusOr<std::vector<float>> predicted = model_->Predict(x);
    for (size_t k = 0; k < missing.size(); ++k) {
      const double score = predicted.ok() ? (*predicted)[k] : 0.0;
      out[missing[k]] = score;
      scores_[*space_.IndexOf(configs[missing[k]])] = score;
    }
    return out;
  }

  // The annealing planner's ranking under the model fitted on the first `count` observations
  // (a function of `batch` and those observations only, so that a resumed search rebuilds it;
  // configs proposed since are skipped when picking).
  std::vector<std::pair<double, Config>> MakePlan(uint64_t batch, size_t count) {
    return AnnealPlan(space_, progress_.seed, batch,
                      std::span<const Observation>(observations_.data(), count), suggested_,
                      [this](const std::vector<Config>& configs) { return Score(configs); });
  }

  // The plan's untaken candidate with the highest rank-based score (1 for the best, falling
  // linearly) plus kDiversityWeight times its share of (knob, value) pairs the batch does not
  // cover yet; taken. nullopt when every candidate is taken.
  std::optional<Config> PickDiverse(const std::set<std::pair<std::string_view, int64_t>>& covered) {
    const std::vector<std::pair<double, Config>>& ranked = plan_.ranked;
    double best_gain = -1;
    size_t best = ranked.size();
    for (size_t i = 0; i < ranked.size(); ++i) {
      if (pool_.Taken(ranked[i].second)) {
        continue;
      }
      int fresh = 0;
      for (const Knob& knob : space_.knobs()) {
        fresh += covered.contains({knob.name, ranked[i].second.at(knob.name)}) ? 0 : 1;
      }
      const double gain = 1.0 - static_cast<double>(i) / static_cast<double>(ranked.size()) +
                          kDiversityWeight * fresh /
                              static_cast<double>(std::max<size_t>(1, space_.knobs().size()));
      if (gain > best_gain) {
        best_gain = gain;
        best = i;
      }
    }
    if (best == ranked.size()) {
      return std::nullopt;
    }
    pool_.Take(ranked[best].second);
    return ranked[best].second;
  }

  struct Plan {
    uint64_t batch = 0;                             // the batch that made it (0: none yet)
    size_t observations = 0;                        // how many observations the model was fitted on
    std::vector<std::pair<double, Config>> ranked;  // best first
    bool built = false;  // false: restored from a saved state, to be rebuilt
  };

  const std::string_view name_;
  const size_t warmup_;
  const ConfigSpace space_;
  ProposalPool pool_;
  PoolState progress_;
  FeatureFn features_;
  const std::unique_ptr<CostModel> model_;
  std::vector<Observation> observations_;
  std::vector<TransferSample> transfer_;
  std::vector<uint64_t> suggested_;  // raw indices of the configs Suggest() was given
  Plan plan_;
  std::unordered_map<uint64_t, std::vector<float>> features_cache_;
  std::unordered_map<uint64_t, double> scores_;
};

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeModelStrategy(
    const ModelEntry& entry, const ConfigSpace& space, uint64_t seed,
    const std::vector<Config>& measured, const nlohmann::json* state, FeatureFn features) {
  ASSIGN_OR_RETURN(PoolState progress, ReadPoolState(state, seed));
  uint64_t plan_batch = 0, plan_observations = 0;
  if (state != nullptr) {
    ASSIGN_OR_RETURN(plan_batch, StateUint(*state, "plan_batch"));
    ASSIGN_OR_RETURN(plan_observations, StateUint(*state, "plan_observations"));
  }
  auto strategy = std::make_unique<ModelStrategy>(entry, space, progress, std::move(features));
  strategy->RestorePlan(plan_batch, plan_observations);
  RETURN_IF_ERROR(FillPool(strategy->pool(), state, measured));
  return strategy;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeXgbStrategy(const ConfigSpace& space,
                                                                uint64_t seed,
                                                                const std::vector<Config>& measured,
                                                                const nlohmann::json* state,
                                                                FeatureFn features) {
  return MakeModelStrategy(kXgb, space, seed, measured, state, std::move(features));
}

absl::StatusOr<std::unique_ptr<SearchStrategy>> MakeAutoStrategy(
    const ConfigSpace& space, uint64_t seed, const std::vector<Config>& measured,
    const nlohmann::json* state, FeatureFn features) {
  return MakeModelStrategy(kAuto, space, seed, measured, state, std::move(features));
}

}  // namespace tune::search_internal
