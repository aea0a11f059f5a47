#include "search/lent_trials.h"

#include <algorithm>
#include <utility>

#include "common/status.h"
#include "search/composite_search.h"

namespace tune::search_internal {

uint32_t GroupOf(TransferGroups& groups, std::string_view workload) {
  auto [it, fresh] = groups.try_emplace(std::string(workload), 0);
  if (fresh) {
    it->second = static_cast<uint32_t>(groups.size());
  }
  return it->second;
}

const std::optional<LendingWorkload>& LenderOf(Lenders& lenders, const LendingWorkloadFn& lending,
                                               std::string_view workload) {
  auto [it, fresh] = lenders.try_emplace(std::string(workload));
  if (fresh && lending) {
    it->second = lending(workload);
  }
  return it->second;
}

std::vector<std::vector<float>> LenderRows(const LendingWorkload& lender,
                                           const std::vector<Config>& configs) {
  return lender.features ? lender.features(configs) : KnobFeatureFn(lender.space)(configs);
}

SpaceTransfer PrepareTransfer(const SearchSpace& desc, std::span<const float> shape,
                              const std::vector<LentTrial>& trials, bool for_model,
                              Lenders& lenders, TransferGroups& groups) {
  struct Other {
    const LendingWorkload* lender;
    uint32_t group;
    std::optional<std::pair<double, Config>> best;
    std::vector<Config> configs;       // valid configs of its trials, in order
    std::vector<const LentTrial*> of;  // the trial of each
  };
  std::map<std::string, std::optional<Other>, std::less<>> others;
  SpaceTransfer out;
  for (const LentTrial& trial : trials) {
    auto [it, fresh] = others.try_emplace(trial.workload);
    if (fresh) {
      const std::optional<LendingWorkload>& lender =
          LenderOf(lenders, desc.lending, trial.workload);
      if (lender) {
        it->second = Other{&*lender, GroupOf(groups, trial.workload), {}, {}, {}};
      }
    }
    if (!it->second) {
      continue;
    }
    Other& other = *it->second;
    absl::StatusOr<Config> config = ParseConfig(trial.config);
    if (!config.ok() || !other.lender->space.IsValid(*config)) {
      continue;
    }
    if (trial.error == ErrorKind::kNone && (!other.best || trial.secs < other.best->first)) {
      other.best = std::make_pair(trial.secs, *config);
    }
    other.configs.push_back(*std::move(config));
    other.of.push_back(&trial);
  }
  for (auto& [text, other] : others) {
    if (!for_model || !other || other->configs.empty()) {
      continue;
    }
    std::vector<std::vector<float>> rows = LenderRows(*other->lender, other->configs);
    for (size_t i = 0; i < rows.size(); ++i) {
      out.samples.push_back(
          {std::move(rows[i]), other->of[i]->error, other->of[i]->secs, other->group});
    }
  }
  std::vector<std::pair<double, const Config*>> nearest;
  for (const auto& [text, other] : others) {
    if (other && other->best && desc.space.IsValid(other->best->second)) {
      const std::vector<float>& there = other->lender->shape;
      TUNE_CHECK(there.size() == shape.size())
          << "workload " << text << " has a shape of " << there.size() << " numbers, expected "
          << shape.size();
      double distance = 0;
      for (size_t i = 0; i < shape.size(); ++i) {
        distance += (shape[i] - there[i]) * (shape[i] - there[i]);
      }
      nearest.emplace_back(distance, &other->best->second);
    }
  }
  std::stable_sort(nearest.begin(), nearest.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < nearest.size() && i < kNearestWorkloads; ++i) {
    out.nearest_best.push_back(*nearest[i].second);
  }
  return out;
}

}  // namespace tune::search_internal
