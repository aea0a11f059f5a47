// tune-bench-candidates: every kind of candidate next to the libraries called directly, in one
// run. For each workload and each template that applies to a target naming OpenBLAS, oneDNN and
// the example micro-kernel (plus the example codegen plugin's family): the default config and
// `--random` random configs are measured through tune-server's measurement supervisor (the
// same child process, timing rule and correctness check as a tuning job), the best config of
// each template (and of each `epilogue` choice of library templates) kept. Then the best of each
// template and the libraries called directly (OpenBLAS; oneDNN at its best on plain and on
// blocked tensors, dnnl_baseline.h) are measured `--runs` times, interleaved, and their medians
// printed as Markdown tables: GFLOPS, the log's best with libraries against the faster library,
// each library candidate against the same library called directly, and the epilogue trade-off.
// OpenBLAS, here and in the measurement children, runs the kernels of this CPU's widest vectors
// (RestartForBestOpenblasCoretype).
//
//   build/bin/tune-bench-candidates --random 8 --runs 3
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/dnnl_baseline.h"
#include "bench/in_process_timing.h"
#include "bench/kernel_timer.h"
#include "bench/openblas_baseline.h"
#include "codegen/compiler.h"
#include "codegen/plugins/plugin.h"
#include "codegen/templates/catalog.h"
#include "common/extern_kernels.h"
#include "common/logging.h"
#include "common/reference.h"
#include "common/runtime_libs.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "rpc_server/artifact_cache.h"
#include "rpc_server/supervisor.h"

namespace tune::bench {
namespace {

struct Options {
  std::vector<std::string> workloads = {
      "gemm:M=512,N=512,K=512", "gemm:M=128,N=768,K=768,epilogue=bias",
      "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,epilogue=bias_relu",
      "conv2d:N=1,C=64,H=56,W=56,K=256,R=1,S=1,epilogue=bias_relu",
      "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,epilogue=bias_relu"};
  int threads = 1;
  int random = 8;
  int runs = 3;
  uint64_t seed = 1;
  std::string manifest = TUNE_EXAMPLE_UKERNEL_MANIFEST;
  std::string plugin = TUNE_C_CODEGEN_PLUGIN;
  TimingOptions timing{.number = 1, .repeat = 5, .min_repeat_ms = 50, .timeout_ms = 60000};
};

double Gflops(const Workload& w, double secs) { return secs > 0 ? w.Flops() / secs / 1e9 : 0; }

struct Candidate {
  const KernelTemplate* tpl = nullptr;
  Config config;
  double searched = 0;  // seconds per call when it was found
  std::vector<double> runs;
};

class Bench {
 public:
  Bench(const Options& options, Catalog catalog, Target target,
        std::unique_ptr<rpc::MeasureSupervisor> sup, std::unique_ptr<rpc::ArtifactCache> cache)
      : options_(options),
        catalog_(std::move(catalog)),
        target_(target),
        timer_(std::move(target), options.timing, std::move(sup), std::move(cache)) {}

  absl::StatusOr<double> Measure(const Workload& w, const KernelTemplate& tpl,
                                 const Config& config) {
    return timer_.MedianSecs(w, tpl, config);
  }

  void RunWorkload(const Workload& w) {
    std::fprintf(stderr, "%s\n", w.ToString().c_str());
    std::mt19937_64 rng(options_.seed);
    // The best of each template, and of each epilogue choice of the library templates.
    std::map<std::string, Candidate> best;
    for (const KernelTemplate* tpl : catalog_.TemplatesFor(w, target_)) {
      ConfigSpace space = tpl->space(w, target_);
      std::vector<Config> configs = {tpl->default_config(w, target_)};
      for (int i = 0; i < options_.random; ++i) {
        if (std::optional<Config> c = space.Sample(rng)) {
          configs.push_back(*c);
        }
      }
      for (const Config& c : configs) {
        absl::StatusOr<double> secs = Measure(w, *tpl, c);
        if (!secs.ok()) {
          std::fprintf(stderr, "  %s %s: %s\n", std::string(tpl->name).c_str(),
                       ConfigToString(c).c_str(), std::string(secs.status().message()).c_str());
          continue;
        }
        std::vector<std::string> keys = {std::string(tpl->name)};
        if (auto e = c.find("epilogue"); e != c.end()) {
          keys.push_back(StrCat(tpl->name, e->second == 0 ? " (separate)" : " (library)"));
        }
        for (const std::string& key : keys) {
          Candidate& slot = best[key];
          if (slot.tpl == nullptr || *secs < slot.searched) {
            slot = Candidate{tpl, c, *secs, {}};
          }
        }
      }
    }

    // Re-measure the winners and the direct libraries, interleaved.
    TensorSet tensors(w, options_.seed);
    std::vector<void*> abi = tensors.AbiPointers();
    std::vector<float*> args;
    for (void* p : abi) {
      args.push_back(static_cast<float*>(p));
    }
    OpenblasKernel blas(w);
    // oneDNN at its best in each layout: the fastest of the algorithms it accepts.
    absl::StatusOr<DnnlSweep> dnnl =
        DnnlSweep::Create(w, {DnnlLayout::kPlain, DnnlLayout::kBlocked}, options_.threads, args);
    if (!dnnl.ok()) {
      std::fprintf(stderr, "  %s\n", std::string(dnnl.status().message()).c_str());
      return;
    }
    std::vector<const float*> inputs = tensors.InputPointers();
    std::vector<double> t_blas;
    for (int run = 0; run < options_.runs; ++run) {
      for (auto& [key, cand] : best) {
        if (absl::StatusOr<double> secs = Measure(w, *cand.tpl, cand.config); secs.ok()) {
          cand.runs.push_back(*secs);
        }
      }
      t_blas.push_back(TimeInProcess([&] { blas.Run(inputs, tensors.output()); }, options_.timing));
      dnnl->MeasureRun(options_.timing);
    }
    const DnnlSweep::Variant* plain = dnnl->Fastest(DnnlLayout::kPlain);
    const DnnlSweep::Variant* blocked = dnnl->Fastest(DnnlLayout::kBlocked);
    Row row{w,
            {},
            Median(t_blas),
            plain != nullptr ? Median(plain->secs) : 0,
            blocked != nullptr ? Median(blocked->secs) : 0,
            plain != nullptr ? plain->Name() : "refused",
            blocked != nullptr ? blocked->Name() : "refused",
            dnnl->Summary(w.Flops() / 1e9)};
    for (auto& [key, cand] : best) {
      if (!cand.runs.empty()) {
        row.candidates[key] = {Median(cand.runs), ConfigToString(cand.config)};
      }
    }
    rows_.push_back(std::move(row));
  }

  void Print() const {
    const std::vector<std::pair<std::string, std::string>> columns = {
        {"generated", ""},
        {"gemm.cpu.openblas", "conv2d.cpu.im2col_openblas"},
        {"gemm.cpu.dnnl", "conv2d.cpu.dnnl"},
        {"gemm.cpu.ukernel", "conv2d.cpu.ukernel"},
        {"gemm.cpu.c_codegen", ""}};
    std::printf("OpenBLAS core '%s' (here and in the measurement children), threads %d\n\n",
                OpenblasCoreName().c_str(), options_.threads);
    std::printf(
        "| workload | generated | OpenBLAS cand. | oneDNN cand. | ukernel cand. | plugin cand. | "
        "OpenBLAS direct | oneDNN plain | oneDNN blocked | best with libs / faster library (plain)"
        " | OpenBLAS cand. / direct | oneDNN cand. / plain direct |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row& r : rows_) {
      const bool gemm = r.workload.op() == OpKind::kGemm;
      auto secs_of = [&](const std::string& name) -> double {
        auto it = r.candidates.find(name);
        return it == r.candidates.end() ? 0 : it->second.first;
      };
      const double generated = secs_of(gemm ? "gemm.cpu.blocked" : "conv2d.cpu.direct");
      const double cand_blas = secs_of(gemm ? "gemm.cpu.openblas" : "conv2d.cpu.im2col_openblas");
      const double cand_dnnl = secs_of(gemm ? "gemm.cpu.dnnl" : "conv2d.cpu.dnnl");
      const double ukernel = secs_of(gemm ? "gemm.cpu.ukernel" : "conv2d.cpu.ukernel");
      const double plugin = gemm ? secs_of("gemm.cpu.c_codegen") : 0;
      double best = 0;
      for (double s : {generated, cand_blas, cand_dnnl, ukernel, plugin}) {
        if (s > 0 && (best == 0 || s < best)) {
          best = s;
        }
      }
      const double faster_lib = std::min(r.blas, r.dnnl_plain);
      auto g = [&](double s) { return s > 0 ? fmt::format("{:.1f}", Gflops(r.workload, s)) : "-"; };
      std::printf("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %.3f | %.3f |\n",
                  r.workload.ToString().c_str(), g(generated).c_str(), g(cand_blas).c_str(),
                  g(cand_dnnl).c_str(), g(ukernel).c_str(), g(plugin).c_str(), g(r.blas).c_str(),
                  g(r.dnnl_plain).c_str(), g(r.dnnl_blocked).c_str(), faster_lib / best,
                  cand_blas > 0 ? r.blas / cand_blas : 0,
                  cand_dnnl > 0 ? r.dnnl_plain / cand_dnnl : 0);
    }
    std::printf("\nEpilogue trade-off (GFLOPS of the best config of each choice):\n\n");
    std::printf("| workload | template | separate pass | library post-op | generated fused |\n");
    std::printf("|---|---|---|---|---|\n");
    for (const Row& r : rows_) {
      if (r.workload.epilogue() == Epilogue::kNone) {
        continue;
      }
      const bool gemm = r.workload.op() == OpKind::kGemm;
      auto secs_of = [&](const std::string& name) -> double {
        auto it = r.candidates.find(name);
        return it == r.candidates.end() ? 0 : it->second.first;
      };
      const double fused = secs_of(gemm ? "gemm.cpu.blocked" : "conv2d.cpu.direct");
      for (const char* tpl :
           gemm ? std::vector<const char*>{"gemm.cpu.openblas", "gemm.cpu.dnnl"}
                : std::vector<const char*>{"conv2d.cpu.im2col_openblas", "conv2d.cpu.dnnl"}) {
        auto g = [&](double s) {
          return s > 0 ? fmt::format("{:.1f}", Gflops(r.workload, s)) : "-";
        };
        std::printf("| `%s` | %s | %s | %s | %s |\n", r.workload.ToString().c_str(), tpl,
                    g(secs_of(StrCat(tpl, " (separate)"))).c_str(),
                    g(secs_of(StrCat(tpl, " (library)"))).c_str(), g(fused).c_str());
      }
    }
    std::printf("\nBest configs:\n\n");
    for (const Row& r : rows_) {
      for (const auto& [name, value] : r.candidates) {
        std::printf("- `%s` %s: %.1f GFLOPS `%s`\n", r.workload.ToString().c_str(), name.c_str(),
                    Gflops(r.workload, value.first), value.second.c_str());
      }
      std::printf("- `%s` oneDNN's fastest: plain `%s`, blocked `%s`; each variant (GFLOPS): %s\n",
                  r.workload.ToString().c_str(), r.dnnl_plain_impl.c_str(),
                  r.dnnl_blocked_impl.c_str(), r.dnnl_variants.c_str());
    }
  }

 private:
  struct Row {
    Workload workload;
    std::map<std::string, std::pair<double, std::string>> candidates;  // secs, config
    double blas = 0, dnnl_plain = 0, dnnl_blocked = 0;
    std::string dnnl_plain_impl, dnnl_blocked_impl;  // each layout's fastest variant
    std::string dnnl_variants;                       // DnnlSweep::Summary
  };
  const Options& options_;
  Catalog catalog_;
  Target target_;
  KernelTimer timer_;
  std::vector<Row> rows_;
};

int Main(int argc, char** argv) {
  RestartForBestOpenblasCoretype("tune-bench-candidates", argv);
  Options options;
  CLI::App app{"tune-bench-candidates: every kind of candidate next to the libraries, one run"};
  app.add_option("--workload", options.workloads, "workloads (canonical text)");
  app.add_option("--threads", options.threads, "-threads of the target")->check(CLI::Range(1, 256));
  app.add_option("--random", options.random, "random configs per template")
      ->check(CLI::Range(0, 10000));
  app.add_option("--runs", options.runs, "interleaved re-measurements (medians reported)")
      ->check(CLI::Range(1, 100));
  app.add_option("--seed", options.seed, "seed of the random configs and inputs");
  app.add_option("--extern-kernels", options.manifest, "the micro-kernel manifest");
  app.add_option("--codegen-plugin", options.plugin, "the codegen plugin");
  CLI11_PARSE(app, argc, argv);
  InitLoggingFromEnv();
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "tune-bench-candidates: %s\n", std::string(s.message()).c_str());
    return 1;
  };
  absl::StatusOr<Catalog> catalog = LoadCatalog(
      {.extern_kernel_manifests = {options.manifest}, .codegen_plugins = {options.plugin}});
  if (!catalog.ok()) {
    return fail(catalog.status());
  }
  const ExternKernel* ukernel = &catalog->extern_kernels().front();
  absl::StatusOr<Target> target = catalog->ParseTarget(StrCat(
      "llvm -mcpu=native -threads=", options.threads, " -libs=dnnl,openblas,", ukernel->name));
  if (!target.ok()) {
    return fail(target.status());
  }
  SetOpenblasThreads(options.threads);
  rpc::SupervisorOptions sup_options;
  sup_options.child_executable = TUNE_SERVER_PATH;
  sup_options.child_env = {StrCat("OMP_NUM_THREADS=", options.threads),
                           StrCat("OPENBLAS_NUM_THREADS=", options.threads)};
  for (std::string_view lib : {"openblas", "dnnl"}) {
    absl::StatusOr<std::string> path = RuntimeLibraryPath(*FindRuntimeLibrary(lib));
    if (!path.ok()) {
      return fail(path.status());
    }
    sup_options.preload_paths.push_back(*path);
  }
  sup_options.preload_paths.push_back(ukernel->library_path);
  absl::StatusOr<std::unique_ptr<rpc::MeasureSupervisor>> sup =
      rpc::MeasureSupervisor::Create(sup_options);
  if (!sup.ok()) {
    return fail(sup.status());
  }
  absl::StatusOr<std::unique_ptr<rpc::ArtifactCache>> cache =
      rpc::ArtifactCache::Open(rpc::DefaultArtifactCacheDir());
  if (!cache.ok()) {
    return fail(cache.status());
  }
  Bench bench(options, *catalog, target->Resolved(), std::move(*sup), std::move(*cache));
  for (const std::string& text : options.workloads) {
    absl::StatusOr<Workload> w = Workload::Parse(text);
    if (!w.ok()) {
      return fail(w.status());
    }
    bench.RunWorkload(*w);
  }
  bench.Print();
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
