// tune-bench-model: how a model job's task scheduler (search/task_scheduler.h) spends a trial
// budget over a model's layers, on real measurements: the gradient policy (each trial where its
// expected gain is largest) against round robin (uniform allocation).
//
// The runs are ModelBench's (model_bench.h). Every policy runs with the same seeds, so a layer's
// search proposes the same sequence under each and only the allocation differs. `--first-chunk
// 1,2` runs the gradient policy once with each size of a layer's first chunk; round robin gives
// every decision `--chunk` trials (`--uniform-chunk 8,2,1`: one run per size).
//
// The reference for each layer is the fastest time the table holds for it after every run,
// including a per-layer run of `--reference` trials with the same strategy, once the fastest
// configs of each layer's templates were measured again (`--remeasure-top`, the median of
// `--remeasure-passes` passes: the fastest single measurement of thousands is biased low by
// noise); the reference total is Σ weight · reference. After every trial a run's weighted total
// Σ weight · best is computed from the same table (infinite until every layer has a best, or with
// `--unmeasured default` a layer without a trial counting at its untuned default's time). Prints,
// per policy, the median over seeds of the trials needed to reach 95%, 90% and 98% (--levels) of
// the reference performance (95%: total <= reference total / 0.95), and the performance
// (reference total / total) at a few budgets; per layer, the reference, the untuned default, the
// share of the reference total and the trials each policy gave it; writes the median performance
// curves for plot_model_allocation.gp. --verbose prints every decision (layer, expected gain) and
// every trial.
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
#include "bench/model_bench.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/workload_list.h"
#include "search/strategy.h"
#include "search/task_scheduler.h"
#include "tuner/scheduler/job_search.h"

namespace tune::bench {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Options {
  ModelBenchOptions run;  // strategy, table, chunk, verbose, transfer, unmeasured_at_default
  std::string model = "resnet50";
  std::string workloads_file;
  std::string target = "llvm -mcpu=native -threads=1";
  int budget = 1152;
  int seeds = 5;
  int first_seed = 1;  // the seeds are first_seed .. first_seed + seeds - 1
  int reference = 64;
  std::string curves = "out/model-curves.tsv";
  std::vector<double> levels = {95, 90, 98};  // percent of the reference performance
  std::vector<int> report_at;
  std::string worker_binary = TUNE_SERVER_PATH;
  size_t remeasure_top = 8;
  int remeasure_passes = 3;
  // Trials of a layer's first decision under the gradient policy (one run per value), as the
  // daemon gives a model job's tasks (search::TaskChunks); every later one: run.chunk.
  std::vector<int> first_chunks = {search::TaskChunks{}.first};
  // Round robin's chunk sizes, one run of it per value (empty: run.chunk).
  std::vector<int> uniform_chunks;
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

// The layers of `list`, each with the templates that tune generates code for (a library
// template needs its library preloaded in the measurement child, which the bench's timer does
// not do); InvalidArgument naming a workload that no such template builds.
absl::StatusOr<std::vector<Layer>> LayersOf(const std::vector<WeightedWorkload>& list,
                                            const Target& target) {
  std::vector<Layer> layers;
  for (const WeightedWorkload& ww : list) {
    Layer layer{ww.workload, ww.weight, {}};
    for (const KernelTemplate* tpl : Catalog::BuiltIn().TemplatesFor(ww.workload, target)) {
      if (!Catalog::BuiltIn().LibraryOf(*tpl, target) && (tpl->build || tpl->build_object)) {
        layer.templates.push_back(tpl);
      }
    }
    if (layer.templates.empty()) {
      return absl::InvalidArgumentError(StrCat("no template tune generates builds '",
                                               ww.workload.ToString(), "' for '", target.ToString(),
                                               "'"));
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

// Per policy: the median trials to each level, each seed's trials to the first level and the
// performance at each of --report-at; then each gradient variant's ratio to each round robin
// (the policies after the gradient variants). Writes the median curves to --curves.
void PrintPolicies(const Options& options, const std::string& model_name,
                   const std::vector<Policy>& policies, const std::vector<std::vector<Run>>& runs,
                   double reference_total) {
  const size_t gradients = options.first_chunks.size();  // round robin's runs follow
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
  for (size_t p = 0; p < gradients; ++p) {
    for (size_t u = gradients; u < policies.size(); ++u) {
      std::vector<std::string> ratios;
      for (size_t l = 0; l < options.levels.size(); ++l) {
        ratios.push_back(StrCat("to ", options.levels[l],
                                "%: ", Ratio(median_to[p][l], median_to[u][l], options.budget)));
      }
      std::printf("%s / %s, trials %s\n", policies[p].name.c_str(), policies[u].name.c_str(),
                  Join(ratios, "; ").c_str());
    }
  }
  std::printf("(performance: reference total / weighted total Σ weight · best; %s)\n",
              options.run.unmeasured_at_default
                  ? "a layer without a trial counts at its untuned default's time"
                  : "0 until every layer has a best");
}

// Per level, each seed's trials to it for an allocation that knew each layer's search in advance
// (ModelBench::OracleTrials over every policy's run of that seed).
void PrintOracle(const Options& options, const ModelBench& bench,
                 const std::vector<std::vector<Run>>& runs) {
  std::vector<std::string> levels;
  for (double level : options.levels) {
    std::vector<std::string> each;
    for (int s = 0; s < options.seeds; ++s) {
      std::vector<const Run*> of_seed;
      for (const std::vector<Run>& of_policy : runs) {
        of_seed.push_back(&of_policy[s]);
      }
      std::optional<int> trials = bench.OracleTrials(of_seed, level / 100);
      each.push_back(trials ? std::to_string(*trials) : "none");
    }
    levels.push_back(StrCat("to ", level, "%: ", Join(each, ", ")));
  }
  std::printf(
      "an allocation that knew each layer's search in advance (per seed: prefixes of the longest "
      "sequence any policy measured for each layer), trials %s\n",
      Join(levels, "; ").c_str());
}

// Per layer: the reference, its share of the reference total, the untuned default and, per
// policy, the trials it got and its best against the reference at the end (medians over seeds).
void PrintLayers(const Options& options, const ModelBench& bench,
                 const std::vector<Policy>& policies, const std::vector<std::vector<Run>>& runs,
                 const std::vector<double>& reference) {
  const size_t n_layers = bench.layers().size();
  double reference_total = 0;
  for (size_t i = 0; i < n_layers; ++i) {
    reference_total += bench.layers()[i].weight * reference[i];
  }
  double default_total = 0;
  for (size_t i = 0; i < n_layers; ++i) {
    default_total += bench.layers()[i].weight * bench.DefaultTime(i);
  }
  std::printf(
      "\nreference total %.3f ms (Σ weight · the fastest time the table holds per layer; "
      "%d configs measured in this run, table %s); untuned defaults %.3f ms (performance "
      "%.3f)\n\n",
      reference_total * 1e3, bench.times().measured(), options.run.table.c_str(),
      default_total * 1e3, reference_total / default_total);
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
  app.add_option("--first-seed", options.first_seed,
                 "the first of the seeds (another invocation on the same table with new seeds "
                 "samples the searches again instead of replaying them)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--strategy", options.run.strategy,
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
  app.add_option("--table", options.run.table, "measured times, reused and extended (TSV)");
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
  app.add_option("--chunk", options.run.chunk,
                 "trials of every later decision, and of every decision of round robin")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--uniform-chunk", options.uniform_chunks,
                 "round robin's trials per decision instead of --chunk; several values run round "
                 "robin once for each, and each gradient run is compared with each")
      ->delimiter(',')
      ->check(CLI::Range(1, 1000));
  app.add_option("--unmeasured", options.run.unmeasured_at_default,
                 "what a layer without a trial yet counts in the total: 'default' (its untuned "
                 "default's time, which is what tune-compile builds for a workload the log does "
                 "not hold) or 'none' (the total is undefined until every layer has a trial)")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, bool>{{"default", true}, {"none", false}}))
      ->default_str("none");
  app.add_flag("--transfer,!--no-transfer", options.run.transfer,
               "layers lend their trials to each other's cost models, as a model job's tasks do "
               "(default: on)");
  app.add_flag(
      "--verbose", options.run.verbose,
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
    if (std::find(names.begin(), names.end(), options.run.strategy) == names.end()) {
      std::fprintf(stderr, "tune-bench-model: --strategy: '%s' is unknown; accepted: %s\n",
                   options.run.strategy.c_str(), Join(names, ", ").c_str());
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
  absl::StatusOr<std::vector<Layer>> layers = LayersOf(*list, target);
  if (!layers.ok()) {
    std::fprintf(stderr, "tune-bench-model: %s\n", std::string(layers.status().message()).c_str());
    return 2;
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
  CreateParentDirectories({options.run.table, options.curves});
  ModelBench bench(options.run, *std::move(layers), target, **timer);
  const size_t n_layers = bench.layers().size();

  const std::string uniform_chunks =
      options.uniform_chunks.empty() ? std::to_string(options.run.chunk)
                                     : fmt::format("{}", fmt::join(options.uniform_chunks, ", "));
  std::printf(
      "%s: %zu layers, target '%s', strategy %s, %d trials per job in chunks of %d (a "
      "layer's first under the gradient policy: %s; round robin's: %s), %d seeds from %d, layers "
      "lend trials to each other: %s\n",
      model_name.c_str(), n_layers, target.ToString().c_str(), options.run.strategy.c_str(),
      options.budget, options.run.chunk,
      fmt::format("{}", fmt::join(options.first_chunks, ", ")).c_str(), uniform_chunks.c_str(),
      options.seeds, options.first_seed, options.run.transfer ? "yes" : "no");
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
  const std::vector<Policy> policies =
      PoliciesOf(options.first_chunks, options.run.chunk, options.uniform_chunks);
  std::vector<std::vector<Run>> runs(policies.size());
  for (int seed = options.first_seed; seed < options.first_seed + options.seeds; ++seed) {
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

  PrintPolicies(options, model_name, policies, runs, reference_total);
  PrintOracle(options, bench, runs);
  PrintLayers(options, bench, policies, runs, reference);
  std::printf("\n(trials and best/reference: medians over seeds; %.0f s in all)\n", elapsed());
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
