// tune-bench: tune's generated kernels next to OpenBLAS and the measured FMA peak, in one run.
//
// For each workload: the template's default config, the best of N random configs (searched
// once), OpenBLAS (im2col + sgemm for conv2d) and oneDNN at its best (every algorithm and layout
// it accepts, dnnl_baseline.h), each then re-measured in `--runs` interleaved rounds whose
// medians are reported. Kernels are measured through tune-server's measurement supervisor (the
// same child process, timing rule and correctness check as a tuning job); the libraries are
// timed in-process with the same rule. Prints a Markdown table with ratios, and names oneDNN's
// fastest algorithm.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/in_process_timing.h"
#include "bench/kernel_timer.h"
#include "bench/openblas_baseline.h"
#include "codegen/templates/catalog.h"
#ifdef TUNE_BENCH_DNNL
#include "bench/dnnl_baseline.h"
#endif
#include "bench/peak.h"
#include "codegen/compiler.h"
#include "common/host_cpu.h"
#include "common/logging.h"
#include "common/reference.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/tuning_log.h"
#include "proto/convert.h"
#include "rpc_server/artifact_cache.h"
#include "rpc_server/supervisor.h"
#include "search/config_space.h"

namespace tune::bench {
namespace {

struct Options {
  std::vector<std::string> workloads = {"gemm:M=512,N=512,K=512",
                                        "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"};
  std::string target = "llvm -mcpu=native -threads=1";
  int random = 64;
  int runs = 5;
  uint64_t seed = 1;
  std::string worker_binary = TUNE_SERVER_PATH;
  std::string db;  // when set, "best" is the tuning log's best record instead of a search
  std::string template_name;  // empty: every template of tune's own code that applies
  std::string config;         // when set (with template_name), "best" is this config
  TimingOptions timing{.number = 1, .repeat = 5, .min_repeat_ms = 50, .timeout_ms = 20000};
};

// The workloads of a suite file: one per line, blank lines and '#' comments skipped.
absl::StatusOr<std::vector<std::string>> ReadWorkloadList(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(StrCat("cannot read the suite file '", path, "'"));
  }
  std::vector<std::string> workloads;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) {
      workloads.push_back(line);
    }
  }
  if (workloads.empty()) {
    return absl::InvalidArgumentError(
        StrCat("the suite file '", path,
               "' names no workload (one per line, e.g. gemm:M=1,N=4096,K=4096)"));
  }
  return workloads;
}

// What a kernel of `threads` threads on ISA `p` is compared with: the one-thread median, or for
// T threads on a machine of C, T / C of the all-core median.
double PeakAt(const Peak& p, int threads) {
  const double share = std::min(1.0, static_cast<double>(threads) / p.threads);
  return threads <= 1 ? Median(p.one_core_runs) : Median(p.all_core_runs) * share;
}

// Prints each ISA's peak (median and range of its runs); returns the FP32 one f32 rows are
// compared with: the widest FP32 ISA's (PeakAt).
double PrintPeaks(const std::vector<Peak>& peaks, int threads) {
  double peak = 0;
  for (const Peak& p : peaks) {
    const std::vector<double>&one = p.one_core_runs, &all = p.all_core_runs;
    const char* unit = PeakIsInteger(p.isa) ? "GOPS" : "GFLOPS";
    std::printf(
        "measured %s peak (%s, %d chains): 1 thread %.1f %s (runs %.1f-%.1f), "
        "%d threads %.1f %s (runs %.1f-%.1f)\n",
        PeakDtype(p.isa), PeakIsaName(p.isa), p.chains, Median(one), unit,
        *std::ranges::min_element(one), *std::ranges::max_element(one), p.threads, Median(all),
        unit, *std::ranges::min_element(all), *std::ranges::max_element(all));
    if (std::string_view(PeakDtype(p.isa)) == "f32") {
      peak = std::max(peak, PeakAt(p, threads));
    }
  }
  return peak;
}

// The peak a row's best is divided by: the FP32 one for f32 workloads and for gemm.cpu.dot's
// f16 (converted to f32 and fused multiply-added); for the other typed ones that of the
// instruction its template runs (AMX tiles for gemm.cpu.amx and conv2d.cpu.amx, vdpbf16ps / VNNI
// for gemm.cpu.dot and conv2d.cpu.dot);
// 0 where none was measured.
double RowPeak(const std::vector<Peak>& peaks, int threads, const Workload& w, std::string_view tpl,
               double f32_peak) {
  if (w.dtype() == Dtype::kF32 || w.dtype() == Dtype::kF16) {
    return f32_peak;
  }
  const bool integer = IsIntegerDtype(w.dtype());
  PeakIsa isa = integer ? PeakIsa::kAvx512Vnni : PeakIsa::kAvx512Bf16;
  if (tpl == "gemm.cpu.amx" || tpl == "conv2d.cpu.amx") {
    isa = integer ? PeakIsa::kAmxInt8 : PeakIsa::kAmxBf16;
  }
  for (const Peak& p : peaks) {
    if (p.isa == isa) {
      return PeakAt(p, threads);
    }
  }
  return 0;
}

class Bench {
 public:
  Bench(const Options& options, Target target, std::unique_ptr<rpc::MeasureSupervisor> sup,
        std::unique_ptr<rpc::ArtifactCache> cache)
      : options_(options),
        target_(target),
        timer_(std::move(target), options.timing, std::move(sup), std::move(cache)) {}

  // Median seconds per call of one config through the supervisor; an error message otherwise.
  absl::StatusOr<double> MeasureConfig(const Workload& w, const KernelTemplate& tpl,
                                       const Config& config) {
    return timer_.MedianSecs(w, tpl, config);
  }

  // One row for each template of tune's own code that applies (or the one --template names).
  int RunWorkload(const Workload& w) {
    std::vector<const KernelTemplate*> own;
    std::vector<std::string> names;
    for (const KernelTemplate* t : Catalog::BuiltIn().TemplatesFor(w, target_)) {
      if (t->library.empty() && !t->uses_extern_kernel && t->build) {
        names.emplace_back(t->name);
        if (options_.template_name.empty() || t->name == options_.template_name) {
          own.push_back(t);
        }
      }
    }
    if (own.empty()) {
      std::fprintf(stderr, "tune-bench: no template%s%s for %s; these apply: %s\n",
                   options_.template_name.empty() ? "" : " called ", options_.template_name.c_str(),
                   w.ToString().c_str(), names.empty() ? "none" : Join(names, ", ").c_str());
      return 1;
    }
    for (const KernelTemplate* t : own) {
      if (int rc = RunTemplate(w, *t); rc != 0) {
        return rc;
      }
    }
    return 0;
  }

  int RunTemplate(const Workload& w, const KernelTemplate& tpl) {
    ConfigSpace space = tpl.space(w, target_);
    Config def = tpl.default_config(w, target_);

    Config best = def;
    std::string best_label = StrCat("best of ", options_.random);
    if (!options_.db.empty()) {
      size_t trials = 0;
      absl::StatusOr<std::optional<Config>> logged = BestFromLog(w, tpl, &trials);
      if (!logged.ok()) {
        std::fprintf(stderr, "tune-bench: %s\n", std::string(logged.status().message()).c_str());
        return 1;
      }
      if (!*logged) {
        std::fprintf(stderr, "tune-bench: the tuning log has no %s record for %s on %s\n",
                     std::string(tpl.name).c_str(), w.ToString().c_str(),
                     target_.DeviceKey().c_str());
        return 1;
      }
      best = **logged;
      best_label = StrCat("tuning log's best of ", trials, " trials");
    } else if (!options_.config.empty()) {
      absl::StatusOr<Config> given = ParseConfig(options_.config);
      absl::Status valid = given.ok() ? space.Validate(*given) : given.status();
      if (!valid.ok()) {
        std::fprintf(stderr, "tune-bench: --config '%s' for %s: %s\n", options_.config.c_str(),
                     std::string(tpl.name).c_str(), std::string(valid.message()).c_str());
        return 2;
      }
      best = *given;
      best_label = "the given config";
    }

    // Phase 1: search once over `--random` trials (not when the best comes from the log), in the
    // order of a tuning job: the default, the template's seeds, then random configs.
    std::mt19937_64 rng(options_.seed);
    std::vector<Config> sampled;
    const int wanted = options_.db.empty() && options_.config.empty() ? options_.random : 0;
    auto add = [&](const Config& c) {
      if (static_cast<int>(sampled.size()) < wanted && space.IsValid(c) &&
          std::find(sampled.begin(), sampled.end(), c) == sampled.end()) {
        sampled.push_back(c);
      }
    };
    add(def);
    if (tpl.seeds) {
      for (const Config& c : tpl.seeds(w, target_)) {
        add(c);
      }
    }
    const size_t seeded = sampled.size();
    for (int tries = 0; static_cast<int>(sampled.size()) < wanted && tries < 100000; ++tries) {
      std::optional<Config> c = space.Sample(rng);
      if (!c) {
        break;
      }
      add(*c);
    }
    double best_secs = 1e30;
    int failures = 0;
    for (const Config& c : sampled) {
      absl::StatusOr<double> secs = MeasureConfig(w, tpl, c);
      if (!secs.ok()) {
        ++failures;
        std::fprintf(stderr, "  config %s failed: %s\n", ConfigToString(c).c_str(),
                     std::string(secs.status().message()).c_str());
        continue;
      }
      if (*secs < best_secs) {
        best_secs = *secs;
        best = c;
      }
    }
    if (wanted > 0) {
      best_label = StrCat("best of ", sampled.size());
      std::fprintf(stderr, "%s: %zu trials (the default and %zu seeds, then random; %d failed)\n",
                   w.ToString().c_str(), sampled.size(), seeded - std::min<size_t>(seeded, 1),
                   failures);
    }

    // Phase 2: re-measure default, best and OpenBLAS in interleaved runs. The libraries compute
    // the same operator from plain tensors (oneDNN's blocked variant reorders them once).
    const Workload base = w.InPlainLayout();
    TensorSet tensors(base, options_.seed);
    // OpenBLAS multiplies f32 only: typed workloads are compared with oneDNN alone.
    const bool with_blas = base.dtype() == Dtype::kF32;
    OpenblasKernel blas(base);
    const std::vector<const float*> inputs =
        with_blas ? tensors.InputPointers() : std::vector<const float*>{};
    std::vector<double> t_def, t_best, t_blas;
#ifdef TUNE_BENCH_DNNL
    // oneDNN at its best, on its own buffers: every algorithm it accepts, on canonical tensors
    // and in its preferred layouts. With weights=prepared, tune's preparation runs once before
    // timing; oneDNN's weights are then prepacked once too, like for like.
    TensorSet dnnl_tensors(base, options_.seed);
    std::vector<float*> dnnl_args;
    for (void* p : dnnl_tensors.AbiPointers()) {
      dnnl_args.push_back(static_cast<float*>(p));
    }
    // Like for like with canonical weights: oneDNN on the tensors as they are, and for conv2d
    // also reordered into its preferred layouts inside the call (where it runs only its reference
    // loops on them as they are: typed convolutions).
    std::vector<DnnlLayout> dnnl_plain_layouts = {DnnlLayout::kPlain};
    if (w.prepared_weights()) {
      dnnl_plain_layouts = {DnnlLayout::kPlainPackedWeights};
    } else if (w.op() == OpKind::kConv2d) {
      dnnl_plain_layouts.push_back(DnnlLayout::kReorderedInCall);
    }
    std::vector<DnnlLayout> dnnl_layouts = dnnl_plain_layouts;
    dnnl_layouts.push_back(DnnlLayout::kBlocked);
    absl::StatusOr<DnnlSweep> dnnl =
        DnnlSweep::Create(base, dnnl_layouts, target_.threads, dnnl_args);
    if (!dnnl.ok()) {
      std::fprintf(stderr, "tune-bench: %s\n", std::string(dnnl.status().message()).c_str());
      return 1;
    }
#endif
    for (int run = 0; run < options_.runs; ++run) {
      absl::StatusOr<double> d = MeasureConfig(w, tpl, def);
      absl::StatusOr<double> b = MeasureConfig(w, tpl, best);
      if (!d.ok() || !b.ok()) {
        std::fprintf(stderr, "tune-bench: re-measuring failed: %s\n",
                     std::string((d.ok() ? b.status() : d.status()).message()).c_str());
        return 1;
      }
      t_def.push_back(*d);
      t_best.push_back(*b);
      if (with_blas) {
        t_blas.push_back(
            TimeInProcess([&] { blas.Run(inputs, tensors.output()); }, options_.timing));
      }
#ifdef TUNE_BENCH_DNNL
      dnnl->MeasureRun(options_.timing);
#endif
    }
    // The baseline's answer is checked like ours.
    if (with_blas) {
      std::vector<float> want(tensors.output_size());
      RunReference(base, inputs, want.data());
      CompareResult cmp =
          CompareOutputs(base, tensors.output(), want.data(), tensors.output_size());
      if (!cmp.ok) {
        std::fprintf(stderr, "tune-bench: OpenBLAS baseline is wrong: %s\n", cmp.message.c_str());
        return 1;
      }
    }
    double gf = w.Flops() / 1e9;
    rows_.push_back(Row{w.ToString(), tpl.name, ConfigToString(def), ConfigToString(best),
                        best_label, gf / Median(t_def), gf / Median(t_best),
                        with_blas ? gf / Median(t_blas) : 0, 0, 0, 0, "", ""});
    auto range = [gf](const std::vector<double>& secs) {
      const auto [fastest, slowest] = std::minmax_element(secs.begin(), secs.end());
      return std::pair<double, double>(gf / *slowest, gf / *fastest);
    };
    rows_.back().runs_default = range(t_def);
    rows_.back().runs_best = range(t_best);
#ifdef TUNE_BENCH_DNNL
    // Each layout's fastest algorithm, the fastest of all named, and every variant's reading.
    const DnnlSweep::Variant* plain = dnnl->FastestOf(dnnl_plain_layouts);
    const DnnlSweep::Variant* blocked = dnnl->Fastest(DnnlLayout::kBlocked);
    const DnnlSweep::Variant* fastest = dnnl->Fastest();
    Row& row = rows_.back();
    row.gflops_dnnl = plain != nullptr ? gf / Median(plain->secs) : 0;
    row.gflops_dnnl_blocked = blocked != nullptr ? gf / Median(blocked->secs) : 0;
    row.gflops_dnnl_best = gf / Median(fastest->secs);
    row.dnnl_winner = fastest->Name();
    row.dnnl_variants = dnnl->Summary(gf);
#endif
    return 0;
  }

  // `peaks`: each ISA's peak, measured before and after the kernels; the widest ISA's median
  // over both, at the target's thread count, is what "best/peak" divides by.
  void Print(const std::vector<Peak>& peaks) const {
    const HostCpu& cpu = GetHostCpu();
    std::printf("machine: %s (%d logical CPUs), target `%s`, OpenBLAS core '%s', threads %d\n",
                cpu.name.c_str(), cpu.cores, target_.ToString().c_str(), OpenblasCoreName().c_str(),
                target_.threads);
    const double f32_peak = PrintPeaks(peaks, target_.threads);
    std::printf("timing: median of %d runs, each the median of %d rounds >= %d ms\n", options_.runs,
                options_.timing.repeat, options_.timing.min_repeat_ms);
    std::printf(
        "oneDNN plain: canonical tensors, for conv2d also reordered into its preferred layouts "
        "in the call (with weights=prepared: its weights prepacked once, before timing); oneDNN "
        "blocked: its preferred layouts for every tensor, reordered before timing; each the "
        "fastest "
        "of its algorithms (conv2d: auto, direct, Winograd where oneDNN accepts it; GEMM: matmul, "
        "and dnnl_sgemm on plain matrices), the fastest of all named below\n\n");
    std::printf(
        "| workload | tune default GFLOPS | tune best GFLOPS | OpenBLAS GFLOPS | oneDNN plain "
        "GFLOPS | oneDNN blocked GFLOPS | default/OpenBLAS | best/OpenBLAS | best/oneDNN plain | "
        "best/oneDNN blocked | best/oneDNN best | best/peak |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    auto ratio = [](double a, double b) { return b > 0 ? fmt::format("{:.2f}", a / b) : "-"; };
    auto g = [](double v) { return v > 0 ? fmt::format("{:.1f}", v) : "-"; };
    for (const Row& r : rows_) {
      std::printf(
          "| `%s` | %.1f | %.1f (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
          r.workload.c_str(), r.gflops_default, r.gflops_best, r.best_label.c_str(),
          g(r.gflops_blas).c_str(), g(r.gflops_dnnl).c_str(), g(r.gflops_dnnl_blocked).c_str(),
          ratio(r.gflops_default, r.gflops_blas).c_str(),
          ratio(r.gflops_best, r.gflops_blas).c_str(), ratio(r.gflops_best, r.gflops_dnnl).c_str(),
          ratio(r.gflops_best, r.gflops_dnnl_blocked).c_str(),
          ratio(r.gflops_best, r.gflops_dnnl_best).c_str(),
          ratio(r.gflops_best,
                RowPeak(peaks, target_.threads, *Workload::Parse(r.workload), r.tpl, f32_peak))
              .c_str());
    }
    std::printf("\n");
    for (const Row& r : rows_) {
      std::printf(
          "- `%s` (%s): default %s; best %s; runs %.1f-%.1f GFLOPS (default), %.1f-%.1f "
          "(best)%s\n",
          r.workload.c_str(), std::string(r.tpl).c_str(), r.default_config.c_str(),
          r.best_config.c_str(), r.runs_default.first, r.runs_default.second, r.runs_best.first,
          r.runs_best.second,
          r.dnnl_winner.empty() ? ""
                                : StrCat("; oneDNN's fastest: ", r.dnnl_winner,
                                         "; each variant (GFLOPS): ", r.dnnl_variants)
                                      .c_str());
    }
  }

 private:
  struct Row {
    std::string workload;
    std::string_view tpl;
    std::string default_config, best_config, best_label;
    double gflops_default, gflops_best, gflops_blas;
    // oneDNN's fastest algorithm on canonical tensors, in its preferred layouts, and of all
    // (0: built without oneDNN, or none accepted in that layout).
    double gflops_dnnl = 0, gflops_dnnl_blocked = 0, gflops_dnnl_best = 0;
    std::string dnnl_winner;    // the fastest: algorithm, layout, implementation
    std::string dnnl_variants;  // every variant's GFLOPS, or that oneDNN refused it
    // The slowest and fastest run of the default and the best (GFLOPS): how far one reading can
    // stray from the median on this machine.
    std::pair<double, double> runs_default = {}, runs_best = {};
  };

  // The best record of `tpl` for the workload as tune-compile picks it: the target's (its
  // decided best, re-measured, when a job decided one; else its fastest), else the fastest on
  // this target's device. `*trials`: the records of the workload on this device, every template.
  absl::StatusOr<std::optional<Config>> BestFromLog(const Workload& w, const KernelTemplate& tpl,
                                                    size_t* trials) {
    ASSIGN_OR_RETURN(std::unique_ptr<TuningLog> log,
                     TuningLog::Open(options_.db, TuningLog::Mode::kReadOnly));
    ASSIGN_OR_RETURN(
        std::vector<Record> records,
        log->ListRecords({.workload = w.ToString(), .device_key = target_.DeviceKey()}));
    // The re-measurements of finalists are no trials.
    *trials =
        std::count_if(records.begin(), records.end(), [](const Record& r) { return !r.final; });
    BestQuery query;
    query.workload = w.ToString();
    query.target = target_.ToString();
    query.template_name = std::string(tpl.name);
    query.template_version = tpl.version;
    ASSIGN_OR_RETURN(std::optional<Record> record, log->QueryBest(query));
    if (!record) {
      query.target.clear();
      query.device_key = target_.DeviceKey();
      ASSIGN_OR_RETURN(record, log->QueryBest(query));
    }
    if (!record) {
      return std::optional<Config>();
    }
    ASSIGN_OR_RETURN(Config config, ParseConfig(record->config));
    return std::optional<Config>(std::move(config));
  }
  const Options& options_;
  Target target_;
  KernelTimer timer_;
  std::vector<Row> rows_;
};

int Main(int argc, char** argv) {
  RestartForBestOpenblasCoretype("tune-bench", argv);
  Options options;
  CLI::App app{"tune-bench: tune's kernels next to OpenBLAS and the FMA peak, in one run"};
  app.add_option("--workload", options.workloads, "workloads (canonical text)");
  std::string suite;
  app.add_option("--suite", suite,
                 "a file of workloads, one per line ('#' starts a comment), e.g. "
                 "bench/cpu_workloads.txt; replaces --workload")
      ->check(CLI::ExistingFile);
  app.add_option("--target", options.target, "CPU target");
  app.add_option("--template", options.template_name,
                 "only this template (e.g. conv2d.cpu.winograd); default: a row for each of "
                 "tune's own templates that applies");
  app.add_option("--trials,--random", options.random,
                 "trials per workload: the default, the template's seeds, then random configs")
      ->check(CLI::Range(0, 100000));
  app.add_option("--runs", options.runs, "re-measurement runs (medians reported)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--seed", options.seed, "seed of the random configs and inputs");
  app.add_option("--min-repeat-ms", options.timing.min_repeat_ms, "minimum round length")
      ->check(CLI::Range(1, 60000));
  app.add_option("--worker-binary", options.worker_binary, "tune-server (the measurement child)");
  app.add_option("--db", options.db,
                 "take each workload's best config from this tuning log instead of searching");
  app.add_option("--config", options.config,
                 "measure this config (JSON, e.g. '{\"mr\":6,\"nr\":64,...}') as \"best\" "
                 "instead of searching; needs --template");
  bool peak_only = false;
  app.add_flag("--peak-only", peak_only, "measure and print the FP32 peak, nothing else");
  CLI11_PARSE(app, argc, argv);
  InitLoggingFromEnv();
  if (!options.config.empty() && (options.template_name.empty() || !options.db.empty())) {
    std::fprintf(stderr,
                 "tune-bench: --config needs --template NAME (the template whose knobs it sets) "
                 "and no --db\n");
    return 2;
  }

  absl::StatusOr<Target> parsed = Target::Parse(options.target);
  if (!parsed.ok()) {
    std::fprintf(stderr, "tune-bench: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  Target target = parsed->Resolved();
  if (target.threads > GetHostCpu().cores) {
    std::fprintf(stderr,
                 "tune-bench: --target '%s': -threads=%d is more than this machine's %d cores; "
                 "accepted: -threads=1 to -threads=%d\n",
                 options.target.c_str(), target.threads, GetHostCpu().cores, GetHostCpu().cores);
    return 2;
  }
  if (!suite.empty()) {
    absl::StatusOr<std::vector<std::string>> lines = ReadWorkloadList(suite);
    if (!lines.ok()) {
      std::fprintf(stderr, "tune-bench: %s\n", std::string(lines.status().message()).c_str());
      return 2;
    }
    options.workloads = *std::move(lines);
  }
  std::vector<Workload> workloads;
  for (const std::string& text : options.workloads) {
    absl::StatusOr<Workload> w = Workload::Parse(text);
    if (!w.ok()) {
      std::fprintf(stderr, "tune-bench: %s\n", std::string(w.status().message()).c_str());
      return 2;
    }
    workloads.push_back(*w);
  }
  // The peak is measured next to the kernels: before and after them, one thread and every
  // CPU, each ISA.
  const PeakOptions peak_options;
  // The matrix instructions' peaks only where a workload is typed (they take a few seconds).
  const bool typed = std::any_of(workloads.begin(), workloads.end(),
                                 [](const Workload& w) { return w.dtype() != Dtype::kF32; });
  std::vector<PeakIsa> isas = {PeakIsa::kAvx2, PeakIsa::kAvx512};
  if (typed) {
    isas = AllPeakIsas();
  }
  auto measure_peaks = [&] {
    std::vector<Peak> peaks;
    for (PeakIsa isa : isas) {
      if (std::optional<Peak> p = MeasurePeak(isa, peak_options)) {
        peaks.push_back(*std::move(p));
      }
    }
    return peaks;
  };
  std::vector<Peak> peaks = measure_peaks();
  if (peak_only) {
    PrintPeaks(peaks, target.threads);
    return 0;
  }
  SetOpenblasThreads(target.threads);
  rpc::SupervisorOptions sup_options;
  sup_options.child_executable = options.worker_binary;
  sup_options.child_env = {StrCat("OMP_NUM_THREADS=", target.threads)};
  absl::StatusOr<std::unique_ptr<rpc::MeasureSupervisor>> sup =
      rpc::MeasureSupervisor::Create(sup_options);
  if (!sup.ok()) {
    std::fprintf(stderr, "tune-bench: %s\n", std::string(sup.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<rpc::ArtifactCache>> cache =
      rpc::ArtifactCache::Open(rpc::DefaultArtifactCacheDir());
  if (!cache.ok()) {
    std::fprintf(stderr, "tune-bench: %s\n", std::string(cache.status().message()).c_str());
    return 1;
  }
  Bench bench(options, target, std::move(*sup), std::move(*cache));
  // A workload that fails (a measurement that times out, a baseline that is wrong) is named and
  // skipped: the other rows of a long suite are still measured and printed.
  std::vector<std::string> failed;
  for (const Workload& w : workloads) {
    if (bench.RunWorkload(w) != 0) {
      std::fprintf(stderr, "tune-bench: %s: not measured (the reason is above)\n",
                   w.ToString().c_str());
      failed.push_back(w.ToString());
    }
  }
  std::vector<Peak> after = measure_peaks();
  for (size_t i = 0; i < peaks.size() && i < after.size(); ++i) {
    peaks[i].one_core_runs.insert(peaks[i].one_core_runs.end(), after[i].one_core_runs.begin(),
                                  after[i].one_core_runs.end());
    peaks[i].all_core_runs.insert(peaks[i].all_core_runs.end(), after[i].all_core_runs.begin(),
                                  after[i].all_core_runs.end());
  }
  bench.Print(peaks);
  if (!failed.empty()) {
    std::printf("\nNot measured (tune-bench's errors say why):\n");
    for (const std::string& text : failed) {
      std::printf("- `%s`\n", text.c_str());
    }
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
