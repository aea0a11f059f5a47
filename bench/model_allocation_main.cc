// tune-bench-model: how a model job's task scheduler (search/task_scheduler.h) spends a trial
// budget over a model's layers, on real measurements: the gradient policy (Ansor-style) against
// round robin (uniform allocation).
//
// Each run drives the layers as the daemon drives a model job's tasks (tuner/scheduler_models.cc):
// TaskScheduler::Next() picks a layer, Allocate(layer, ChunkOf(layer)), the layer's search proposes
// that many configs, each is measured and given to both the search and the scheduler (Observe). A
// layer's search is what a task job of a fresh tuning log runs: tuner::JobSearch over the templates
// that apply to the layer (the first template's default first, then the templates' seeds, then the
// strategy), seeded with the run's seed plus the layer's position, as the log seeds a model job's
// tasks. Every policy runs with the same seeds, so a layer's search proposes the same sequence
// under each and only the allocation differs. `--first-chunk 2,8` runs the gradient policy once
// with each size of a layer's first chunk; round robin gives every decision `--chunk` trials. A
// config is built and measured once (through tune-server's measurement supervisor, as a job does)
// and remembered in the `--table` file, so every run and every rerun sees the same time for it.
//
// The reference for each layer is the fastest time the table holds for it after every run,
// including a per-layer run of `--reference` trials with the same strategy, once the fastest
// configs of each layer's templates were measured again (`--remeasure-top`, the median of
// `--remeasure-passes` passes: the fastest single measurement of thousands is biased low by
// noise); the reference total is Σ weight · reference. After every trial a run's weighted total
// Σ weight · best is computed from the same table (infinite until every layer has a best, or with
// `--unmeasured default` a layer without a trial counting at its untuned default's time). Prints,
// per policy, the median over seeds of the trials needed to reach 95%, 90% and 98% (--levels) of
// the reference performance (95%: total
// <= reference total / 0.95), and the performance (reference total / total) at a few budgets; per
// layer, the reference, the untuned default, the share of the reference total and the trials each
// policy gave it; writes the median performance curves for plot_model_allocation.gp. --verbose
// prints every decision (layer, expected gain) and every trial.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/kernel_timer.h"
#include "bench/measure_table.h"
#include "codegen/templates/template.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/workload_list.h"
#include "search/strategy.h"
#include "search/task_scheduler.h"
#include "tuner/job_search.h"

namespace tune::bench {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Options {
  std::string model = "resnet50";
  std::string workloads_file;
  std::string target = "llvm -mcpu=native -threads=1";
  int budget = 1152;
  int seeds = 5;
  std::string strategy = "auto";
  int reference = 64;
  std::string table = "out/model-table.tsv";
  std::string curves = "out/model-curves.tsv";
  std::vector<double> levels = {95, 90, 98};  // percent of the reference performance
  std::vector<int> report_at;
  std::string worker_binary = TUNE_SERVER_PATH;
  bool verbose = false;
  bool transfer = true;  // layers lend their trials to each other's cost models
  size_t remeasure_top = 8;
  int remeasure_passes = 3;
  // Trials per decision, as the daemon gives a model job's tasks (search::TaskChunks): a layer's
  // first decision under the gradient policy (one run per value), then every later one.
  std::vector<int> first_chunks = {search::TaskChunks{}.first};
  int chunk = search::TaskChunks{}.then;
  // A layer with no trial yet counts in the total at its untuned default's time, as tune-compile
  // builds a workload the log does not hold; when false, the total is undefined (+inf) until
  // every layer has a trial.
  bool unmeasured_at_default = false;
};

struct Layer {
  Workload workload;
  double weight = 1;
  std::vector<const KernelTemplate*> templates;
};

struct Policy {
  std::string name;
  search::TaskPolicy policy;
  search::TaskChunks chunks;
};

// The gradient policy once per first-chunk size, then round robin (uniform allocation in chunks
// of `chunk`), which every gradient variant is compared with.
std::vector<Policy> PoliciesOf(const std::vector<int>& first_chunks, int chunk) {
  std::vector<Policy> policies;
  for (int first : first_chunks) {
    policies.push_back({first_chunks.size() == 1 ? "gradient" : StrCat("gradient, first ", first),
                        search::TaskPolicy::kGradient,
                        {.first = first, .then = chunk}});
  }
  policies.push_back(
      {"round robin", search::TaskPolicy::kRoundRobin, {.first = chunk, .then = chunk}});
  return policies;
}

// One measured trial of a run.
struct Trial {
  int layer = 0;
  const KernelTemplate* tpl = nullptr;
  Config config;
};

// One run of a model job.
struct Run {
  std::vector<double> totals;   // Σ weight · best after each trial (Options::unmeasured_at_default)
  std::vector<int> trials;      // trials each layer got
  std::vector<double> best;     // each layer's best at the end (+inf: none)
  std::vector<Trial> measured;  // in trial order
};

class ModelBench {
 public:
  ModelBench(const Options& options, std::vector<Layer> layers, const Target& target,
             KernelTimer& timer)
      : options_(options),
        layers_(std::move(layers)),
        target_(target),
        times_(timer, options.table, true) {}

  const std::vector<Layer>& layers() const { return layers_; }
  const MeasuredTimes& times() const { return times_; }

  // A model job of `budget` trials under `policy`; layer i's search is seeded with seed + i.
  // Only measured trials count against the budget: the part of a chunk that an exhausted search
  // cannot propose is not spent (its layer is closed, as the daemon closes such a task).
  Run RunModel(const Policy& policy, uint64_t seed, int budget) {
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
      const int n =
          std::min(scheduler.ChunkOf(*next), budget - static_cast<int>(run.totals.size()));
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

  // A long search of one layer alone, for the reference.
  void RunLayer(size_t i, uint64_t seed, int trials) {
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

  // Measures the `top` fastest configs of each layer's templates again (MeasuredTimes::Remeasure,
  // median of `passes` passes). Returns how many.
  int RemeasureFastest(size_t top, int passes) {
    int remeasured = 0;
    for (const Layer& layer : layers_) {
      for (const KernelTemplate* tpl : layer.templates) {
        remeasured += times_.Remeasure(layer.workload, *tpl, top, passes);
      }
    }
    return remeasured;
  }

  // Recomputes a run's totals and bests from the table's times of its trials (after
  // RemeasureFastest, the re-measured configs count with their re-measured time).
  void Rescore(Run& run) const {
    std::vector<double> best(layers_.size(), kInf);
    run.totals.clear();
    for (const Trial& trial : run.measured) {
      const Layer& layer = layers_[trial.layer];
      const std::optional<double>* secs = times_.table().Find(
          layer.workload.ToString(), std::string(trial.tpl->name), ConfigToString(trial.config));
      if (secs != nullptr && secs->has_value()) {
        best[trial.layer] = std::min(best[trial.layer], **secs);
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

  // The fastest time the table holds for layer i.
  double Reference(size_t i) const { return times_.table().Best(layers_[i].workload.ToString()); }

  // The time of layer i's untuned default (the first template's default config; +inf if it
  // failed or was not measured).
  double DefaultTime(size_t i) const {
    const Layer& layer = layers_[i];
    const KernelTemplate& first = *layer.templates.front();
    const std::optional<double>* secs =
        times_.table().Find(layer.workload.ToString(), std::string(first.name),
                            ConfigToString(first.default_config(layer.workload, target_)));
    return secs != nullptr && secs->has_value() ? **secs : kInf;
  }

 private:
  std::unique_ptr<tuner::JobSearch> NewSearch(size_t i, uint64_t seed) const {
    absl::StatusOr<std::unique_ptr<tuner::JobSearch>> search = tuner::JobSearch::Create(
        layers_[i].workload, target_, layers_[i].templates, options_.strategy, seed, {}, "");
    TUNE_CHECK(search.ok()) << search.status();
    return std::move(*search);
  }

  // Proposes up to n configs of layer i, measures each and reports it to the search and (when
  // given) the scheduler, keeping the scheduler's total after each in chunk_totals_, and lends
  // it to the other layers' searches (when given and transfer is on, as the daemon lends a
  // task's trials to its sibling tasks). Returns how many were proposed.
  int MeasureChunk(int i, tuner::JobSearch& search, int n, uint64_t seed,
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
      search.Observe(c.tpl, TrialOutcome{c.config, secs.has_value(), secs.value_or(0)});
      if (siblings != nullptr && options_.transfer) {
        const TemplateTrial lent{layer.workload.ToString(), ConfigToString(c.config),
                                 secs.has_value(), secs.value_or(0)};
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

  const Options& options_;
  std::vector<Layer> layers_;
  Target target_;
  MeasuredTimes times_;
  std::vector<double> chunk_totals_;
  std::vector<Trial> chunk_trials_;
};

// The first trial (1-based) whose total is within `fraction` of the reference performance, or
// +inf.
double TrialsTo(const std::vector<double>& totals, double reference_total, double fraction) {
  for (size_t t = 0; t < totals.size(); ++t) {
    if (totals[t] <= reference_total / fraction) {
      return static_cast<double>(t + 1);
    }
  }
  return kInf;
}

std::string TrialsText(double trials, int budget) {
  return std::isinf(trials) ? StrCat("> ", budget) : StrCat(static_cast<int>(trials));
}

// reference total / total after `trial` trials (0 while the total is undefined).
double PerformanceAt(const std::vector<double>& totals, double reference_total, int trial) {
  if (totals.empty()) {
    return 0;
  }
  const double total = totals[std::min<size_t>(trial, totals.size()) - 1];
  return std::isinf(total) ? 0 : reference_total / total;
}

std::string Ratio(double gradient, double uniform, int budget) {
  if (std::isinf(gradient) && std::isinf(uniform)) {
    return "neither reached it";
  }
  if (std::isinf(uniform)) {
    return StrCat("< ", fmt::format("{:.2f}", gradient / budget), " (round robin: not within ",
                  budget, ")");
  }
  if (std::isinf(gradient)) {
    return StrCat("> ", fmt::format("{:.2f}", budget / uniform), " (gradient: not within ", budget,
                  ")");
  }
  return fmt::format("{:.2f}", gradient / uniform);
}

int Main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "tune-bench-model: how a model job's task scheduler spends its trials (gradient against "
      "round robin)"};
  CLI::Option* model = app.add_option(
      "--model", options.model, StrCat("a built-in model: ", Join(BuiltinModelNames(), ", ")));
  app.add_option("--workloads-file", options.workloads_file,
                 "a workload list (workload and weight per line) instead of --model")
      ->excludes(model);
  app.add_option("--target", options.target, "CPU target");
  app.add_option("--budget", options.budget, "trials of each model job")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--seeds", options.seeds, "model jobs per policy")->check(CLI::Range(1, 100));
  app.add_option("--strategy", options.strategy,
                 StrCat("each layer's search strategy: ", Join(StrategyNames(), ", ")));
  app.add_option("--reference", options.reference,
                 "trials of each layer's own search that joins the reference (0: none)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--levels", options.levels,
                 "performance levels (percent of the reference) to count trials to; the first "
                 "is also given per seed")
      ->delimiter(',')
      ->check(CLI::Range(1.0, 100.0));
  app.add_option("--report-at", options.report_at,
                 "trial counts at which to print the performance (default: a quarter, half and "
                 "all of the budget)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--table", options.table, "measured times, reused and extended (TSV)");
  app.add_option("--curves", options.curves, "median curves for plot_model_allocation.gp (TSV)");
  app.add_option("--worker-binary", options.worker_binary, "tune-server (the measurement child)");
  app.add_option("--remeasure-top", options.remeasure_top,
                 "before the report, measure this many of the fastest configs of each layer's "
                 "templates again and keep the median (0: none)");
  app.add_option("--remeasure-passes", options.remeasure_passes,
                 "passes of that re-measurement, each measuring every one once")
      ->check(CLI::Range(1, 100));
  app.add_option("--first-chunk", options.first_chunks,
                 "trials of a layer's first decision under the gradient policy; several values "
                 "run the gradient policy once for each")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--chunk", options.chunk,
                 "trials of every later decision, and of every decision of round robin")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--unmeasured", options.unmeasured_at_default,
                 "what a layer without a trial yet counts in the total: 'default' (its untuned "
                 "default's time, which is what tune-compile builds for a workload the log does "
                 "not hold) or 'none' (the total is undefined until every layer has a trial)")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, bool>{{"default", true}, {"none", false}}))
      ->default_str("none");
  app.add_flag("--transfer,!--no-transfer", options.transfer,
               "layers lend their trials to each other's cost models, as a model job's tasks do "
               "(default: on)");
  app.add_flag(
      "--verbose", options.verbose,
      "print every decision (policy, seed, layer, expected gain) and every trial (seed, layer, "
      "template, config, time)");
  CLI11_PARSE(app, argc, argv);
  (void)SetLogLevel("warn");

  absl::StatusOr<Target> parsed = Target::Parse(options.target);
  if (!parsed.ok()) {
    std::fprintf(stderr, "tune-bench-model: --target: %s\n",
                 std::string(parsed.status().message()).c_str());
    return 2;
  }
  // "native" means this host, as the daemon resolves it for a job.
  const Target target = parsed->Resolved();
  {
    std::vector<std::string> names = StrategyNames();
    if (std::find(names.begin(), names.end(), options.strategy) == names.end()) {
      std::fprintf(stderr, "tune-bench-model: --strategy: '%s' is unknown; accepted: %s\n",
                   options.strategy.c_str(), Join(names, ", ").c_str());
      return 2;
    }
  }
  absl::StatusOr<std::vector<WeightedWorkload>> list =
      options.workloads_file.empty() ? BuiltinModel(options.model)
                                     : ReadWorkloadList(options.workloads_file);
  if (!list.ok()) {
    std::fprintf(stderr, "tune-bench-model: %s: %s\n",
                 options.workloads_file.empty() ? "--model" : "--workloads-file",
                 std::string(list.status().message()).c_str());
    return 2;
  }
  const std::string model_name =
      options.workloads_file.empty() ? options.model : options.workloads_file;
  std::vector<Layer> layers;
  for (const WeightedWorkload& ww : *list) {
    Layer layer{ww.workload, ww.weight, {}};
    // A library template needs its library preloaded in the measurement child, which the
    // bench's timer does not do: only the templates tune generates code for.
    for (const KernelTemplate* tpl : TemplatesFor(ww.workload, target)) {
      if (!LibraryOf(*tpl, target) && (tpl->build || tpl->build_object)) {
        layer.templates.push_back(tpl);
      }
    }
    if (layer.templates.empty()) {
      std::fprintf(stderr, "tune-bench-model: no template tune generates builds '%s' for '%s'\n",
                   ww.workload.ToString().c_str(), target.ToString().c_str());
      return 2;
    }
    layers.push_back(std::move(layer));
  }
  if (options.report_at.empty()) {
    options.report_at = {std::max(1, options.budget / 4), std::max(1, options.budget / 2),
                         options.budget};
  }

  absl::StatusOr<std::unique_ptr<KernelTimer>> timer =
      OpenKernelTimer(target, options.worker_binary);
  if (!timer.ok()) {
    std::fprintf(stderr, "tune-bench-model: %s\n", std::string(timer.status().message()).c_str());
    return 1;
  }
  CreateParentDirectories({options.table, options.curves});
  ModelBench bench(options, std::move(layers), target, **timer);
  const size_t n_layers = bench.layers().size();

  std::printf(
      "%s: %zu layers, target '%s', strategy %s, %d trials per job in chunks of %d (a "
      "layer's first under the gradient policy: %s), %d seeds, layers lend trials to each "
      "other: %s\n",
      model_name.c_str(), n_layers, target.ToString().c_str(), options.strategy.c_str(),
      options.budget, options.chunk,
      fmt::format("{}", fmt::join(options.first_chunks, ", ")).c_str(), options.seeds,
      options.transfer ? "yes" : "no");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // First every run (so that the reference includes what they found), then the report.
  if (options.reference > 0) {
    for (size_t i = 0; i < n_layers; ++i) {
      bench.RunLayer(i, 1000 + i, options.reference);
    }
    std::fprintf(stderr, "reference runs: %d configs measured, %.0f s\n", bench.times().measured(),
                 elapsed());
  }
  const std::vector<Policy> policies = PoliciesOf(options.first_chunks, options.chunk);
  const size_t uniform = policies.size() - 1;
  std::vector<std::vector<Run>> runs(policies.size());
  for (int seed = 1; seed <= options.seeds; ++seed) {
    for (size_t p = 0; p < policies.size(); ++p) {
      runs[p].push_back(bench.RunModel(policies[p], static_cast<uint64_t>(seed), options.budget));
      std::fprintf(stderr, "seed %d %s: %zu trials; %d configs measured so far, %.0f s\n", seed,
                   policies[p].name.c_str(), runs[p].back().totals.size(), bench.times().measured(),
                   elapsed());
    }
  }

  const int remeasured = bench.RemeasureFastest(options.remeasure_top, options.remeasure_passes);
  for (std::vector<Run>& of_policy : runs) {
    for (Run& run : of_policy) {
      bench.Rescore(run);
    }
  }
  std::fprintf(stderr,
               "re-measured the %zu fastest configs of each layer's templates: %d, %.0f s\n",
               options.remeasure_top, remeasured, elapsed());
  std::vector<double> reference(n_layers);
  double reference_total = 0;
  for (size_t i = 0; i < n_layers; ++i) {
    reference[i] = bench.Reference(i);
    reference_total += bench.layers()[i].weight * reference[i];
  }

  // The policies.
  std::string header =
      StrCat("| policy | trials to ", options.levels.front(), "% (median of ", options.seeds, ")");
  for (size_t l = 1; l < options.levels.size(); ++l) {
    header += StrCat(" | to ", options.levels[l], "%");
  }
  header += StrCat(" | trials to ", options.levels.front(), "%, each seed");
  for (int at : options.report_at) {
    header += StrCat(" | at ", at);
  }
  std::string rule = "|---|";
  for (size_t c = 0; c < options.levels.size() + 1 + options.report_at.size(); ++c) {
    rule += "---|";
  }
  std::printf("\n%s |\n%s\n", header.c_str(), rule.c_str());
  // median_to[p][l]: the median over seeds of policy p's trials to level l.
  std::vector<std::vector<double>> median_to(policies.size());
  std::ofstream curves(options.curves);
  curves << "model\tpolicy\ttrial\tmedian_performance\n";
  for (size_t p = 0; p < policies.size(); ++p) {
    std::string row = StrCat("| ", policies[p].name);
    for (double level : options.levels) {
      std::vector<double> to;
      for (const Run& run : runs[p]) {
        to.push_back(TrialsTo(run.totals, reference_total, level / 100));
      }
      median_to[p].push_back(MedianOf(to));
      row += StrCat(" | ", TrialsText(median_to[p].back(), options.budget));
    }
    std::vector<std::string> each;
    for (const Run& run : runs[p]) {
      each.push_back(TrialsText(TrialsTo(run.totals, reference_total, options.levels.front() / 100),
                                options.budget));
    }
    row += StrCat(" | ", Join(each, ", "));
    for (int at : options.report_at) {
      std::vector<double> perf;
      for (const Run& run : runs[p]) {
        perf.push_back(PerformanceAt(run.totals, reference_total, at));
      }
      row += fmt::format(" | {:.3f}", MedianOf(perf));
    }
    std::printf("%s |\n", row.c_str());
    for (int t = 1; t <= options.budget; ++t) {
      std::vector<double> perf;
      for (const Run& run : runs[p]) {
        if (t <= static_cast<int>(run.totals.size())) {
          perf.push_back(PerformanceAt(run.totals, reference_total, t));
        }
      }
      if (!perf.empty()) {
        curves << model_name << '\t' << policies[p].name << '\t' << t << '\t' << MedianOf(perf)
               << '\n';
      }
    }
  }
  std::printf("\n");
  for (size_t p = 0; p < uniform; ++p) {
    std::vector<std::string> ratios;
    for (size_t l = 0; l < options.levels.size(); ++l) {
      ratios.push_back(StrCat("to ", options.levels[l], "%: ",
                              Ratio(median_to[p][l], median_to[uniform][l], options.budget)));
    }
    std::printf("%s / round robin, trials %s\n", policies[p].name.c_str(),
                Join(ratios, "; ").c_str());
  }
  std::printf("(performance: reference total / weighted total Σ weight · best; %s)\n",
              options.unmeasured_at_default
                  ? "a layer without a trial counts at its untuned default's time"
                  : "0 until every layer has a best");

  // The layers.
  double default_total = 0;
  for (size_t i = 0; i < n_layers; ++i) {
    default_total += bench.layers()[i].weight * bench.DefaultTime(i);
  }
  std::printf(
      "\nreference total %.3f ms (Σ weight · the fastest time the table holds per layer; "
      "%d configs measured in this run, table %s); untuned defaults %.3f ms (performance "
      "%.3f)\n\n",
      reference_total * 1e3, bench.times().measured(), options.table.c_str(), default_total * 1e3,
      reference_total / default_total);
  std::string layer_header =
      "| layer | weight | templates | reference ms | GFLOPS | share of total | default/reference";
  std::string layer_rule = "|---|---|---|---|---|---|---|";
  for (const char* what : {"trials", "best/reference at the end"}) {
    for (const Policy& policy : policies) {
      layer_header += StrCat(" | ", what, ", ", policy.name);
      layer_rule += "---|";
    }
  }
  std::printf("%s |\n%s\n", layer_header.c_str(), layer_rule.c_str());
  for (size_t i = 0; i < n_layers; ++i) {
    const Layer& layer = bench.layers()[i];
    std::vector<std::string> names;
    for (const KernelTemplate* tpl : layer.templates) {
      names.push_back(std::string(tpl->name));
    }
    std::string row = fmt::format("| `{}` | {:g} | {} | {:.4f} | {:.1f} | {:.3f} | {:.3f}",
                                  layer.workload.ToString(), layer.weight, Join(names, ", "),
                                  reference[i] * 1e3, layer.workload.Flops() / reference[i] * 1e-9,
                                  layer.weight * reference[i] / reference_total,
                                  bench.DefaultTime(i) / reference[i]);
    std::string ratios;
    for (size_t p = 0; p < policies.size(); ++p) {
      std::vector<double> trials, ratio;
      for (const Run& run : runs[p]) {
        trials.push_back(run.trials[i]);
        ratio.push_back(run.best[i] / reference[i]);
      }
      row += fmt::format(" | {:g}", MedianOf(trials));
      ratios += fmt::format(" | {:.3f}", MedianOf(ratio));
    }
    std::printf("%s%s |\n", row.c_str(), ratios.c_str());
  }
  std::printf("\n(trials and best/reference: medians over seeds; %.0f s in all)\n", elapsed());
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
