#include "bench/model_bench.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "common/status.h"
#include "common/strings.h"
#include "search/strategy.h"

namespace tune::bench {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

std::vector<Policy> PoliciesOf(const std::vector<int>& first_chunks, int chunk,
                               const std::vector<int>& uniform_chunks) {
  std::vector<Policy> policies;
  for (int first : first_chunks) {
    policies.push_back({first_chunks.size() == 1 ? "gradient" : StrCat("gradient, first ", first),
                        search::TaskPolicy::kGradient,
                        {.first = first, .then = chunk}});
  }
  const std::vector<int> uniform =
      uniform_chunks.empty() ? std::vector<int>{chunk} : uniform_chunks;
  for (int size : uniform) {
    policies.push_back(
        {uniform.size() == 1 ? "round robin" : StrCat("round robin, chunks of ", size),
         search::TaskPolicy::kRoundRobin,
         {.first = size, .then = size}});
  }
  return policies;
}

ModelBench::ModelBench(const ModelBenchOptions& options, std::vector<Layer> layers,
                       const Target& target, KernelTimer& timer)
    : options_(options),
      layers_(std::move(layers)),
      target_(target),
      times_(timer, options.table, true) {}

Run ModelBench::RunModel(const Policy& policy, uint64_t seed, int budget) {
  std::vector<search::TaskInfo> infos;
  for (const Layer& layer : layers_) {
    infos.push_back(search::TaskInfoOf(layer.workload, layer.weight));
  }
  search::TaskScheduler scheduler(std::move(infos), policy.policy, policy.chunks);
  std::vector<std::unique_ptr<tuner::JobSearch>> searches;
  for (size_t i = 0; i < layers_.size(); ++i) {
    searches.push_back(NewSearch(i, seed + i));
  }
  Run run;
  run.trials.assign(layers_.size(), 0);
  while (static_cast<int>(run.totals.size()) < budget) {
    std::optional<int> next = scheduler.Next();
    if (!next) {
      break;  // every layer's search is exhausted
    }
    const int n = std::min(scheduler.ChunkOf(*next), budget - static_cast<int>(run.totals.size()));
    if (options_.verbose) {
      std::fprintf(stderr, "%s seed %llu after %zu trials: %d to %s (expected gain %.3g)\n",
                   std::string(policy.name).c_str(), static_cast<unsigned long long>(seed),
                   run.totals.size(), n, layers_[*next].workload.ToString().c_str(),
                   scheduler.ExpectedGain(*next));
    }
    scheduler.Allocate(*next, n);
    const int measured = MeasureChunk(*next, *searches[*next], n, seed, &scheduler, &searches);
    run.trials[*next] += measured;
    run.totals.insert(run.totals.end(), chunk_totals_.begin(), chunk_totals_.end());
    run.measured.insert(run.measured.end(), chunk_trials_.begin(), chunk_trials_.end());
    if (searches[*next]->Exhausted() || measured < n) {
      scheduler.Close(*next);
    }
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    run.best.push_back(scheduler.best(static_cast<int>(i)).value_or(kInf));
  }
  return run;
}

void ModelBench::RunLayer(size_t i, uint64_t seed, int trials) {
  std::unique_ptr<tuner::JobSearch> search = NewSearch(i, seed);
  int done = 0;
  while (done < trials) {
    const int n = std::min(options_.chunk, trials - done);
    const int measured = MeasureChunk(static_cast<int>(i), *search, n, seed, nullptr, nullptr);
    done += measured;
    if (measured < n || search->Exhausted()) {
      break;
    }
  }
}

int ModelBench::RemeasureFastest(size_t top, int passes) {
  int remeasured = 0;
  for (const Layer& layer : layers_) {
    for (const KernelTemplate* tpl : layer.templates) {
      remeasured += times_.Remeasure(layer.workload, *tpl, top, passes);
    }
  }
  return remeasured;
}

void ModelBench::Rescore(Run& run) const {
  std::vector<double> best(layers_.size(), kInf);
  run.totals.clear();
  for (const Trial& trial : run.measured) {
    if (std::optional<double> secs = TimeOf(trial)) {
      best[trial.layer] = std::min(best[trial.layer], *secs);
    }
    double total = 0;
    for (size_t i = 0; i < layers_.size(); ++i) {
      const bool unmeasured = best[i] == kInf;
      total += layers_[i].weight *
               (unmeasured && options_.unmeasured_at_default ? DefaultTime(i) : best[i]);
    }
    run.totals.push_back(total);
  }
  run.best = best;
}

std::optional<int> ModelBench::OracleTrials(const std::vector<const Run*>& runs,
                                            double fraction) const {
  const size_t n = layers_.size();
  std::vector<std::vector<double>> longest(n);  // per layer, the times of its longest sequence
  for (const Run* run : runs) {
    std::vector<std::vector<double>> of_layer(n);
    for (const Trial& trial : run->measured) {
      of_layer[trial.layer].push_back(TimeOf(trial).value_or(kInf));
    }
    for (size_t i = 0; i < n; ++i) {
      if (of_layer[i].size() > longest[i].size()) {
        longest[i] = std::move(of_layer[i]);
      }
    }
  }
  double reference_total = 0;
  // least[b]: the least weighted total of the layers so far, given b trials among them.
  std::vector<double> least = {0};
  for (size_t i = 0; i < n; ++i) {
    reference_total += layers_[i].weight * Reference(i);
    std::vector<double> cost;  // weight · best after k trials of layer i
    double best = DefaultTime(i);
    cost.push_back(layers_[i].weight * best);
    for (double secs : longest[i]) {
      best = std::min(best, secs);
      cost.push_back(layers_[i].weight * best);
    }
    std::vector<double> next(least.size() + cost.size() - 1, kInf);
    for (size_t b = 0; b < least.size(); ++b) {
      for (size_t k = 0; k < cost.size(); ++k) {
        next[b + k] = std::min(next[b + k], least[b] + cost[k]);
      }
    }
    least = std::move(next);
  }
  for (size_t b = 0; b < least.size(); ++b) {
    if (reference_total / least[b] >= fraction) {
      return static_cast<int>(b);
    }
  }
  return std::nullopt;
}

double ModelBench::Reference(size_t i) const {
  return times_.table().Best(layers_[i].workload.ToString());
}

double ModelBench::DefaultTime(size_t i) const {
  const Layer& layer = layers_[i];
  const KernelTemplate* first = layer.templates.front();
  return TimeOf({static_cast<int>(i), first, first->default_config(layer.workload, target_)})
      .value_or(kInf);
}

std::optional<double> ModelBench::TimeOf(const Trial& trial) const {
  const std::optional<double>* secs =
      times_.table().Find(layers_[trial.layer].workload.ToString(), std::string(trial.tpl->name),
                          ConfigToString(trial.config));
  return secs != nullptr ? *secs : std::nullopt;
}

std::unique_ptr<tuner::JobSearch> ModelBench::NewSearch(size_t i, uint64_t seed) const {
  absl::StatusOr<std::unique_ptr<tuner::JobSearch>> search = tuner::JobSearch::Create(
      layers_[i].workload, target_, layers_[i].templates, options_.strategy, seed, {}, "");
  TUNE_CHECK(search.ok()) << search.status();
  return std::move(*search);
}

int ModelBench::MeasureChunk(int i, tuner::JobSearch& search, int n, uint64_t seed,
                             search::TaskScheduler* scheduler,
                             std::vector<std::unique_ptr<tuner::JobSearch>>* siblings) {
  const Layer& layer = layers_[i];
  std::vector<tuner::Candidate> candidates = search.Propose(n);
  chunk_totals_.clear();
  chunk_trials_.clear();
  for (const tuner::Candidate& c : candidates) {
    std::optional<double> secs = times_.Measure(layer.workload, *c.tpl, c.config);
    if (options_.verbose) {
      std::fprintf(stderr, "seed %llu %s: %s %s %.4g s\n", static_cast<unsigned long long>(seed),
                   layer.workload.ToString().c_str(), std::string(c.tpl->name).c_str(),
                   ConfigToString(c.config).c_str(), secs.value_or(0));
    }
    // A failure of any kind but TIMEOUT is learnt as no time: RUNTIME_CRASH stands for it.
    const ErrorKind kind = secs ? ErrorKind::kNone : ErrorKind::kRuntimeCrash;
    search.Observe(c.tpl, TrialOutcome{c.config, kind, secs.value_or(0)});
    if (siblings != nullptr && options_.transfer) {
      const TemplateTrial lent{layer.workload.ToString(), ConfigToString(c.config), kind,
                               secs.value_or(0)};
      for (auto& sibling : *siblings) {
        if (sibling.get() != &search) {
          sibling->Lend(c.tpl, lent);
        }
      }
    }
    if (scheduler != nullptr) {
      scheduler->Observe(i, secs);
      chunk_totals_.push_back(scheduler->EstimatedTotal().value_or(kInf));
      chunk_trials_.push_back({i, c.tpl, c.config});
    }
  }
  return static_cast<int>(candidates.size());
}

}  // namespace tune::bench
