// tune-bench-cpu-peak: the peaks of this CPU per instruction set, measured (bench/peak.h): FP32
// FMA in AVX2 and AVX-512, and the matrix instructions of the ML element types (AVX512-FP16,
// AVX512-BF16, VNNI, AMX bf16 and int8), each on one thread and on every CPU at once. It is the
// limit quoted beside CPU tables of those types, as tune-bench-gpu-peak's is beside GPU ones.
//
//   tune-bench-cpu-peak [--isa NAME]... [--threads N] [--runs N] [--run-s S] [--warmup-s S]
//
// One line per ISA: "<isa> <dtype> <chains> chains: 1 thread <G> GFLOPS (runs <lo>-<hi>), <T>
// threads <G> GFLOPS (runs <lo>-<hi>)" (GOPS for the integer ones), or "<isa> <dtype>: not
// measured: <why>" where the CPU lacks it or the kernel refuses AMX's tile data.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/peak.h"
#include "common/stats.h"
#include "common/strings.h"

namespace tune::bench {
namespace {

int Main(int argc, char** argv) {
  CLI::App app{"tune-bench-cpu-peak: this CPU's peak per instruction set, one thread and all"};
  std::vector<std::string> names;
  std::vector<std::string> accepted;
  for (PeakIsa isa : AllPeakIsas()) {
    accepted.emplace_back(PeakIsaName(isa));
  }
  app.add_option("--isa", names, "measure only these (" + Join(accepted, ", ") + "); default all")
      ->check(CLI::IsMember(accepted));
  PeakOptions options;
  app.add_option("--threads", options.threads,
                 "threads of the all-core measurement (default: every CPU this process may use)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--runs", options.runs, "timed runs per measurement (median)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--run-s", options.run_s, "seconds per run")->check(CLI::Range(0.001, 60.0));
  app.add_option("--warmup-s", options.warmup_s, "seconds of warm-up before each measurement")
      ->check(CLI::Range(0.0, 60.0));
  CLI11_PARSE(app, argc, argv);

  for (PeakIsa isa : AllPeakIsas()) {
    if (!names.empty() && std::ranges::find(names, PeakIsaName(isa)) == names.end()) {
      continue;
    }
    std::string why_not;
    const std::optional<Peak> p = MeasurePeak(isa, options, &why_not);
    if (!p) {
      std::printf("%s %s: not measured: %s\n", PeakIsaName(isa), PeakDtype(isa), why_not.c_str());
      continue;
    }
    const char* unit = PeakIsInteger(isa) ? "GOPS" : "GFLOPS";
    const std::vector<double>&one = p->one_core_runs, &all = p->all_core_runs;
    std::printf(
        "%s %s %d chains: 1 thread %.1f %s (runs %.1f-%.1f), %d threads %.1f %s (runs "
        "%.1f-%.1f)\n",
        PeakIsaName(isa), PeakDtype(isa), p->chains, p->one_core_gops, unit,
        *std::ranges::min_element(one), *std::ranges::max_element(one), p->threads,
        p->all_core_gops, unit, *std::ranges::min_element(all), *std::ranges::max_element(all));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
