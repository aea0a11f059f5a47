// tune-bench-search: how fast each search strategy finds a template's best config, on real
// measurements. For each workload, every strategy runs `--seeds` times for `--trials` trials in
// batches, exactly as a tuning job drives it (Propose, measure, Observe), with the daemon's
// loop-nest features; a config is built and measured once (through tune-server's measurement
// supervisor, as a job does) and remembered in the `--table` file, so every strategy and every
// rerun sees the same time for it. The reference is the best time measured for the workload
// by any run, including a long xgb run of `--reference` trials, after the fastest configs were
// measured again (`--remeasure-top`, median of `--remeasure-passes` passes: the fastest single
// measurement of thousands is biased low by noise). "xgb+transfer" first learns from the
// table's measurements of the other workloads. "job" and "job+transfer" run what a tuning job
// of the xgb strategy runs (tuner::JobSearch: the default and the template's seeds first), the
// second lent the other workloads' measurements as the daemon lends a job the log's records of
// other shapes (the nearest workloads' best configs, and the cost model's training data). Random
// searches may run longer
// (`--random-trials`), to see how many trials random needs.
//
// Prints, per workload and strategy, the median over seeds of the trials needed to come within
// 5% of the reference and of the best found at 16, 32 and 64 trials; writes the median curves
// (reference time over best-so-far time, per trial) for plot_convergence.gp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/kernel_timer.h"
#include "bench/measure_table.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template_features.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "search/strategy.h"
#include "tuner/scheduler/job_search.h"

namespace tune::bench {
namespace {

constexpr std::string_view kTransfer = "xgb+transfer";
// A tuning job's search (tuner::JobSearch with the xgb strategy): the template's default and
// seeds first; with transfer, the nearest workloads' best configs and a cost model that learnt
// from the other workloads' measurements, as the daemon gives a job of a log that holds them.
constexpr std::string_view kJob = "job";
constexpr std::string_view kJobTransfer = "job+transfer";

bool IsBenchOnly(std::string_view strategy) {
  return strategy == kTransfer || strategy == kJob || strategy == kJobTransfer;
}
bool Transfers(std::string_view strategy) {
  return strategy == kTransfer || strategy == kJobTransfer;
}

struct Options {
  std::vector<std::string> workloads = {"gemm:M=128,N=768,K=768"};
  std::string template_name = "gemm.cpu.blocked";
  std::string target = "llvm -mcpu=native -threads=1";
  std::vector<std::string> strategies = {"random",
                                         "grid",
                                         "ga",
                                         "xgb",
                                         std::string(kTransfer),
                                         std::string(kJob),
                                         std::string(kJobTransfer)};
  int trials = 64;
  int seeds = 3;
  int batch = 8;
  int reference = 256;
  std::string table = "out/search-table.tsv";
  std::string curves = "out/search-curves.tsv";
  std::string worker_binary = TUNE_SERVER_PATH;
  int random_trials = 0;  // trials of each random search (0: --trials)
  size_t remeasure_top = 16;
  int remeasure_passes = 3;
  bool spaces_only = false;
  bool verbose = false;
};

class SearchBench {
 public:
  SearchBench(const Options& options, const KernelTemplate& tpl, KernelTimer& timer)
      : options_(options), tpl_(tpl), timer_(timer), times_(timer, options.table, false) {}

  // The time of `config`, measured once.
  std::optional<double> Measure(const Workload& w, const Config& config) {
    return times_.Measure(w, tpl_, config);
  }

  // The configs one search measured, in trial order.
  std::vector<Config> Run(const Workload& w, const std::vector<Workload>& others,
                          std::string_view strategy, uint64_t seed, int trials) {
    if (strategy == kJob || strategy == kJobTransfer) {
      return RunJob(w, strategy == kJobTransfer ? others : std::vector<Workload>{}, strategy, seed,
                    trials);
    }
    const Target& target = timer_.target();
    const bool transfer = strategy == kTransfer;
    auto search = MakeStrategy(transfer ? "xgb" : strategy, tpl_.space(w, target), seed, {}, "",
                               TemplateFeatureFn(tpl_, w, target));
    TUNE_CHECK(search.ok()) << search.status();
    if (transfer) {
      (*search)->Transfer(TransferSamples(others));
    }
    return Drive(
        w, strategy, seed, trials, [&](int n) { return (*search)->Propose(n); },
        [&](const std::vector<TrialOutcome>& outcomes) { (*search)->Observe(outcomes); });
  }

  // The configs a tuning job of the xgb strategy measured, in trial order: tuner::JobSearch over
  // this template, lent the table's measurements of `others` (none: no transfer).
  std::vector<Config> RunJob(const Workload& w, const std::vector<Workload>& others,
                             std::string_view name, uint64_t seed, int trials) {
    std::map<std::string, std::vector<TemplateTrial>, std::less<>> transfer;
    for (const Workload& other : others) {
      for (const Table::Entry& entry : times_.table().Of(other.ToString())) {
        // A failure of any kind but TIMEOUT is learnt as no time: RUNTIME_CRASH stands for it.
        transfer[std::string(tpl_.name)].push_back(TemplateTrial{
            other.ToString(), entry.config,
            entry.secs ? ErrorKind::kNone : ErrorKind::kRuntimeCrash, entry.secs.value_or(0)});
      }
    }
    absl::StatusOr<std::unique_ptr<tuner::JobSearch>> search =
        tuner::JobSearch::Create(w, timer_.target(), {&tpl_}, "xgb", seed, {}, "", {}, transfer);
    TUNE_CHECK(search.ok()) << search.status();
    return Drive(
        w, name, seed, trials,
        [&](int n) {
          std::vector<Config> configs;
          for (tuner::Candidate& c : (*search)->Propose(n)) {
            configs.push_back(std::move(c.config));
          }
          return configs;
        },
        [&](const std::vector<TrialOutcome>& outcomes) {
          for (const TrialOutcome& outcome : outcomes) {
            (*search)->Observe(&tpl_, outcome);
          }
        });
  }

  // The loop of a job: batches of up to --batch configs from `propose`, each measured (once per
  // table) and reported to `observe`, until `trials` were measured or nothing is proposed.
  std::vector<Config> Drive(const Workload& w, std::string_view name, uint64_t seed, int trials,
                            const std::function<std::vector<Config>(int)>& propose,
                            const std::function<void(const std::vector<TrialOutcome>&)>& observe) {
    std::vector<Config> measured;
    while (static_cast<int>(measured.size()) < trials) {
      std::vector<Config> configs =
          propose(std::min(options_.batch, trials - static_cast<int>(measured.size())));
      if (configs.empty()) {
        break;
      }
      std::vector<TrialOutcome> outcomes;
      for (const Config& config : configs) {
        std::optional<double> secs = Measure(w, config);
        if (options_.verbose) {
          std::fprintf(stderr, "%s seed %llu trial %zu: %s %.4g s\n", std::string(name).c_str(),
                       static_cast<unsigned long long>(seed), measured.size() + 1,
                       ConfigToString(config).c_str(), secs.value_or(0));
        }
        measured.push_back(config);
        // A config that failed is a verdict on it (the table keeps no error kind).
        outcomes.push_back(TrialOutcome{config, secs ? ErrorKind::kNone : ErrorKind::kRuntimeCrash,
                                        secs.value_or(0)});
      }
      observe(outcomes);
    }
    return measured;
  }

  // The best-so-far time after each of `configs` (measured: their times are in the table, the
  // re-measured ones with their re-measured time).
  std::vector<double> BestSoFar(const Workload& w, const std::vector<Config>& configs) {
    std::vector<double> best_so_far;
    double best = std::numeric_limits<double>::infinity();
    for (const Config& config : configs) {
      best = std::min(best, Measure(w, config).value_or(best));
      best_so_far.push_back(best);
    }
    return best_so_far;
  }

  // Re-measures the fastest configs of `w` (MeasuredTimes::Remeasure).
  int Remeasure(const Workload& w) {
    return times_.Remeasure(w, tpl_, options_.remeasure_top, options_.remeasure_passes);
  }

  // The fastest time the table holds for `w`.
  double Reference(const Workload& w) const { return times_.table().Best(w.ToString()); }

  int measured() const { return times_.measured(); }

 private:
  std::vector<TransferSample> TransferSamples(const std::vector<Workload>& others) const {
    std::vector<TransferSample> samples;
    uint32_t group = 1;
    for (const Workload& other : others) {
      const ConfigSpace space = tpl_.space(other, timer_.target());
      for (const Table::Entry& entry : times_.table().Of(other.ToString())) {
        absl::StatusOr<Config> config = ParseConfig(entry.config);
        if (config.ok() && space.IsValid(*config)) {
          samples.push_back({TemplateFeatures(tpl_, other, timer_.target(), space, *config),
                             entry.secs ? ErrorKind::kNone : ErrorKind::kRuntimeCrash,
                             entry.secs.value_or(0), group});
        }
      }
      ++group;
    }
    return samples;
  }

  const Options& options_;
  const KernelTemplate& tpl_;
  KernelTimer& timer_;
  MeasuredTimes times_;
};

// The raw and (estimated) valid sizes of the template's space for `w`.
std::string SpaceSize(const KernelTemplate& tpl, const Workload& w, const Target& target) {
  const ConfigSpace space = tpl.space(w, target);
  const uint64_t raw = space.RawSize();
  std::mt19937_64 rng(1);
  constexpr int kDraws = 20000;
  int valid = 0;
  for (int i = 0; i < kDraws; ++i) {
    valid += space.ConstraintsHold(space.SampleRaw(rng)) ? 1 : 0;
  }
  return StrCat(space.knobs().size(), " knobs, ", raw, " raw configs, about ",
                static_cast<uint64_t>(static_cast<double>(raw) * valid / kDraws), " valid");
}

int Main(int argc, char** argv) {
  Options options;
  CLI::App app{"tune-bench-search: how fast each search strategy finds a template's best config"};
  app.add_option("--workload", options.workloads, "workloads (canonical text)");
  app.add_option("--template", options.template_name, "the template whose space is searched");
  app.add_option("--target", options.target, "CPU target");
  app.add_option("--strategies", options.strategies,
                 "strategies to compare (names of tune-client submit --strategy, "
                 "xgb+transfer, job and job+transfer)")
      ->delimiter(',');
  app.add_option("--trials", options.trials, "trials per search")->check(CLI::Range(1, 100000));
  app.add_option("--seeds", options.seeds, "searches per strategy")->check(CLI::Range(1, 100));
  app.add_option("--batch", options.batch, "configs per Propose")->check(CLI::Range(1, 1000));
  app.add_option("--reference", options.reference,
                 "trials of the long xgb run that sets the reference best (0: none)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--random-trials", options.random_trials,
                 "trials of each random search, to see how many random needs (default: --trials)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--remeasure-top", options.remeasure_top,
                 "before the report, measure this many of each workload's fastest configs again "
                 "and keep the median (0: none)");
  app.add_option("--remeasure-passes", options.remeasure_passes,
                 "passes of that re-measurement, each measuring every one once")
      ->check(CLI::Range(1, 100));
  app.add_option("--table", options.table, "measured times, reused and extended (TSV)");
  app.add_option("--curves", options.curves, "median curves for plot_convergence.gp (TSV)");
  app.add_option("--worker-binary", options.worker_binary, "tune-server (the measurement child)");
  app.add_flag("--spaces", options.spaces_only, "print the size of each space and stop");
  app.add_flag("--verbose", options.verbose, "print every trial (strategy, seed, config, time)");
  CLI11_PARSE(app, argc, argv);
  (void)SetLogLevel("warn");

  absl::StatusOr<Target> target = Target::Parse(options.target);
  if (!target.ok()) {
    std::fprintf(stderr, "tune-bench-search: --target: %s\n",
                 std::string(target.status().message()).c_str());
    return 2;
  }
  const KernelTemplate* tpl =
      Catalog::BuiltIn().FindTemplate(options.template_name, TargetKind::kLlvm);
  if (tpl == nullptr || !tpl->build) {
    std::fprintf(stderr,
                 "tune-bench-search: --template: '%s' is not a CPU template that builds IR (e.g. "
                 "gemm.cpu.blocked)\n",
                 options.template_name.c_str());
    return 2;
  }
  std::vector<Workload> workloads;
  for (const std::string& text : options.workloads) {
    absl::StatusOr<Workload> w = Workload::Parse(text);
    std::vector<const KernelTemplate*> applicable;
    if (w.ok()) {
      applicable = Catalog::BuiltIn().TemplatesFor(*w, *target);
    }
    if (!w.ok() || std::find(applicable.begin(), applicable.end(), tpl) == applicable.end()) {
      std::fprintf(stderr, "tune-bench-search: --workload '%s': %s\n", text.c_str(),
                   w.ok() ? StrCat(tpl->name, " does not build it").c_str()
                          : std::string(w.status().message()).c_str());
      return 2;
    }
    workloads.push_back(*w);
  }
  for (const std::string& s : options.strategies) {
    std::vector<std::string> names = StrategyNames();
    if (!IsBenchOnly(s) && std::find(names.begin(), names.end(), s) == names.end()) {
      std::fprintf(stderr,
                   "tune-bench-search: --strategies: '%s' is unknown; accepted: %s, %s, %s, %s\n",
                   s.c_str(), Join(names, ", ").c_str(), std::string(kTransfer).c_str(),
                   std::string(kJob).c_str(), std::string(kJobTransfer).c_str());
      return 2;
    }
  }
  for (const Workload& w : workloads) {
    std::printf("%s (%s): %s\n", w.ToString().c_str(), std::string(tpl->name).c_str(),
                SpaceSize(*tpl, w, *target).c_str());
  }
  if (options.spaces_only) {
    return 0;
  }

  absl::StatusOr<std::unique_ptr<KernelTimer>> timer =
      OpenKernelTimer(*target, options.worker_binary);
  if (!timer.ok()) {
    std::fprintf(stderr, "tune-bench-search: %s\n", std::string(timer.status().message()).c_str());
    return 1;
  }
  CreateParentDirectories({options.table, options.curves});
  SearchBench bench(options, *tpl, **timer);
  std::ofstream curves(options.curves);
  curves << "workload\tstrategy\ttrial\tmedian_reference_over_best\n";
  std::printf(
      "\n| workload | strategy | trials to 5%% (median of %d) | each seed | best at 16 | at 32 | "
      "at 64 |\n"
      "|---|---|---|---|---|---|---|\n",
      options.seeds);
  // First every search (so that the reference includes what they found), then the report.
  std::map<std::pair<size_t, std::string>, std::vector<std::vector<Config>>> runs;
  // Transfer runs come last, when the table holds every other workload's measurements.
  for (bool transfer : {false, true}) {
    for (size_t wi = 0; wi < workloads.size(); ++wi) {
      std::vector<Workload> others = workloads;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(wi));
      if (!transfer && options.reference > 0) {
        bench.Run(workloads[wi], others, "xgb", 1000, options.reference);
      }
      for (const std::string& strategy : options.strategies) {
        if (Transfers(strategy) != transfer) {
          continue;
        }
        const int trials = strategy == "random" && options.random_trials > 0 ? options.random_trials
                                                                             : options.trials;
        for (int seed = 1; seed <= options.seeds; ++seed) {
          runs[{wi, strategy}].push_back(
              bench.Run(workloads[wi], others, strategy, static_cast<uint64_t>(seed), trials));
        }
      }
    }
  }
  int remeasured = 0;
  for (const Workload& w : workloads) {
    remeasured += bench.Remeasure(w);
  }
  for (size_t wi = 0; wi < workloads.size(); ++wi) {
    const double reference = bench.Reference(workloads[wi]);
    for (const std::string& strategy : options.strategies) {
      const int trials = strategy == "random" && options.random_trials > 0 ? options.random_trials
                                                                           : options.trials;
      std::vector<std::vector<double>> curves_of;
      for (const std::vector<Config>& run : runs[{wi, strategy}]) {
        curves_of.push_back(bench.BestSoFar(workloads[wi], run));
      }
      std::vector<double> to_5, at16, at32, at64;
      for (const std::vector<double>& curve : curves_of) {
        if (curve.empty()) {
          continue;
        }
        auto hit = std::find_if(curve.begin(), curve.end(),
                                [&](double b) { return b <= 1.05 * reference; });
        to_5.push_back(hit == curve.end() ? std::numeric_limits<double>::infinity()
                                          : static_cast<double>(hit - curve.begin() + 1));
        auto at = [&](size_t n) { return reference / curve[std::min(n, curve.size()) - 1]; };
        at16.push_back(at(16));
        at32.push_back(at(32));
        at64.push_back(at(64));
      }
      auto text = [trials](double to) {
        return std::isinf(to) ? StrCat("> ", trials) : StrCat(to);
      };
      std::vector<std::string> each;
      for (double to : to_5) {
        each.push_back(text(to));
      }
      std::printf("| `%s` | %s | %s | %s | %.2f | %.2f | %.2f |\n",
                  workloads[wi].ToString().c_str(), strategy.c_str(), text(MedianOf(to_5)).c_str(),
                  Join(each, ", ").c_str(), MedianOf(at16), MedianOf(at32), MedianOf(at64));
      for (int t = 0; t < trials; ++t) {
        std::vector<double> ratios;
        for (const std::vector<double>& curve : curves_of) {
          if (t < static_cast<int>(curve.size())) {
            ratios.push_back(reference / curve[t]);
          }
        }
        curves << workloads[wi].ToString() << '\t' << strategy << '\t' << t + 1 << '\t'
               << MedianOf(ratios) << '\n';
      }
    }
  }
  std::printf(
      "\nreference: the fastest config measured for each workload (%d configs measured "
      "in this run; table %s); the %zu fastest of each were measured again in %d passes before "
      "the report (%d in all) and count with the median of those\n",
      bench.measured(), options.table.c_str(), options.remeasure_top, options.remeasure_passes,
      remeasured);
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
