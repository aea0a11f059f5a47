#include "search/annealing_planner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace tune::search_internal {
namespace {

constexpr double kNoveltyBonus = 1.0;  // rank bonus (in score deviations) for a config holding
                                       // a knob value no observation has
constexpr int kChains = 64;            // annealing walkers
constexpr int kSteps = 32;             // annealing steps per plan
constexpr int kStartFromBest = 16;     // walkers that start at the best measured configs

// The mean and standard deviation of `value(v)` over `values` (0 and 0 when empty).
template <typename Range, typename Value>
std::pair<double, double> MeanAndDeviation(const Range& values, Value value) {
  const double n = static_cast<double>(std::size(values));
  double mean = 0, spread = 0;
  for (const auto& v : values) {
    mean += value(v) / n;
  }
  for (const auto& v : values) {
    spread += (value(v) - mean) * (value(v) - mean) / n;
  }
  return {mean, std::sqrt(spread)};
}

// `config` with one knob moved to another of its values, valid; `config` itself when a few
// tries found no valid neighbour.
Config Mutate(const ConfigSpace& space, const Config& config, std::mt19937_64& rng) {
  const std::vector<Knob>& knobs = space.knobs();
  for (int attempt = 0; attempt < 8; ++attempt) {
    const Knob& knob = knobs[UniformIndex(rng, knobs.size())];
    if (knob.values.size() < 2) {
      continue;
    }
    Config next = config;
    next[knob.name] = knob.values[UniformIndex(rng, knob.values.size())];
    if (next != config && space.ConstraintsHold(next)) {
      return next;
    }
  }
  return config;
}

}  // namespace

std::vector<std::pair<double, Config>> AnnealPlan(const ConfigSpace& space, uint64_t seed,
                                                  uint64_t batch,
                                                  std::span<const Observation> observations,
                                                  std::span<const uint64_t> suggested_indices,
                                                  const ScoreFn& score) {
  std::mt19937_64 rng(seed ^ (0xBF58476D1CE4E5B9ull * batch));
  std::set<uint64_t> observed;
  for (const Observation& o : observations) {
    observed.insert(o.index);
  }
  std::vector<Config> walkers;
  std::vector<const Observation*> best;
  for (const Observation& o : observations) {
    if (o.ok()) {
      best.push_back(&o);
    }
  }
  std::sort(best.begin(), best.end(),
            [](const Observation* a, const Observation* b) { return a->secs < b->secs; });
  for (size_t i = 0; i < best.size() && static_cast<int>(walkers.size()) < kStartFromBest; ++i) {
    walkers.push_back(space.ConfigAt(best[i]->index));
  }
  // The suggested configs are ranked (as walkers' starting points, or as visited) like every
  // config the walkers reach.
  std::vector<Config> suggested;
  for (uint64_t index : suggested_indices) {
    suggested.push_back(space.ConfigAt(index));
    if (static_cast<int>(walkers.size()) < kChains) {
      walkers.push_back(suggested.back());
    }
  }
  while (static_cast<int>(walkers.size()) < kChains) {
    std::optional<Config> config = space.Sample(rng, 1000);
    if (!config) {
      break;
    }
    walkers.push_back(std::move(*config));
  }
  std::map<uint64_t, double> visited;  // unproposed configs seen, with their scores
  auto visit = [&](const std::vector<Config>& configs, const std::vector<double>& scores) {
    for (size_t i = 0; i < configs.size(); ++i) {
      const uint64_t index = *space.IndexOf(configs[i]);
      if (!observed.contains(index)) {
        visited[index] = scores[i];
      }
    }
  };
  visit(suggested, score(suggested));
  std::vector<double> scores = score(walkers);
  visit(walkers, scores);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (int step = 0; step < kSteps; ++step) {
    std::vector<Config> next;
    next.reserve(walkers.size());
    for (const Config& config : walkers) {
      next.push_back(Mutate(space, config, rng));
    }
    std::vector<double> next_scores = score(next);
    visit(next, next_scores);
    const double deviation = MeanAndDeviation(scores, [](double s) { return s; }).second;
    const double temperature =
        (1.0 - static_cast<double>(step) / kSteps) * std::max(deviation, 1e-6);
    for (size_t i = 0; i < walkers.size(); ++i) {
      const double gain = next_scores[i] - scores[i];
      if (gain >= 0 || coin(rng) < std::exp(gain / temperature)) {
        walkers[i] = std::move(next[i]);
        scores[i] = next_scores[i];
      }
    }
  }
  // Rank by the model's score in standard deviations of the visited configs' scores, plus
  // kNoveltyBonus for a config holding a knob value none of the observations has: the model
  // knows nothing of such a value, and a search that only exploits never tries it. Ties go
  // by a hash of the index, not by the index (which would favour one corner of the space).
  const auto [mean, deviation] =
      MeanAndDeviation(visited, [](const auto& entry) { return entry.second; });
  const double scale = std::max(deviation, 1e-9);
  std::set<std::pair<size_t, int64_t>> seen_values;
  for (const Observation& o : observations) {
    const Config config = space.ConfigAt(o.index);
    for (size_t k = 0; k < space.knobs().size(); ++k) {
      seen_values.emplace(k, config.at(space.knobs()[k].name));
    }
  }
  std::vector<std::tuple<double, uint64_t, uint64_t>> order;  // (key, tie-break, index)
  for (const auto& [index, s] : visited) {
    const Config config = space.ConfigAt(index);
    bool novel = false;
    for (size_t k = 0; k < space.knobs().size() && !novel; ++k) {
      novel = !seen_values.contains({k, config.at(space.knobs()[k].name)});
    }
    order.emplace_back((s - mean) / scale + (novel ? kNoveltyBonus : 0.0),
                       (index + 1) * 0x9E3779B97F4A7C15ull ^ batch, index);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b)
                                            : std::get<1>(a) < std::get<1>(b);
  });
  std::vector<std::pair<double, Config>> ranked;
  for (size_t i = 0; i < order.size() && i < kPlanSize; ++i) {
    ranked.emplace_back(std::get<0>(order[i]), space.ConfigAt(std::get<2>(order[i])));
  }
  return ranked;
}

}  // namespace tune::search_internal
