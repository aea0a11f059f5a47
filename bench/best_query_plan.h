// The shape of tune-bench-best-query's tuning log (best_query_main.cc): the templates, targets
// and workloads its records name, which (workload, target) pairs jobs tuned, and the jobs, all
// from the seed and the record count alone (so --reuse can rebuild the plan of a log it filled).
// The templates' names, versions and knobs are read from tune's template table.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "search/config_space.h"

namespace tune::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
inline double Micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

inline double Uniform(std::mt19937_64& rng) {
  return std::uniform_real_distribution<double>(0, 1)(rng);
}
inline size_t Index(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }
template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[Index(rng, v.size())];
}

// --- What the log holds ---------------------------------------------------------------------

// A template as the log sees it: its name, version and knobs (names and candidates of the
// template's space in tune's table, for a typical workload and target of its kind; constraints
// are not applied, a record's config need only be a flat object of integers), and how often a
// search picks it.
struct TemplateSpec {
  std::string_view name;
  int version;
  std::vector<Knob> knobs;
  double weight;
  std::string_view library_info = {};
};

// The templates the log's records name.
struct TemplateSpecs {
  TemplateSpec gemm_blocked, gemm_openblas, gemm_dnnl;
  TemplateSpec conv_direct, conv_blocked, conv_winograd, conv_pointwise, conv_im2col, conv_dnnl;
  TemplateSpec gemm_gpu_tiled, gemm_cublas, conv_gpu_direct, conv_gpu_implicit, conv_cudnn;
};

struct TargetSpec {
  std::string text;  // canonical
  std::string device_key;
  std::string fingerprint;
  bool gpu;
  bool libs;              // -libs= names the libraries
  double gflops;          // what a good kernel reaches, for plausible times
  double tuned_fraction;  // share of the workloads tuned on it
};

struct WorkloadSpec {
  std::string text;  // canonical
  bool gemm;
  bool pointwise;  // 1x1 stride-1 conv2d
  bool winograd;   // 3x3 stride-1 conv2d
  bool blocked;    // conv2d in a blocked layout
  double flops;
};

// One (workload, target) that jobs tuned.
struct Context {
  size_t workload;
  size_t target;
  std::vector<const TemplateSpec*> templates;  // the first one's default is its first trial
  double popularity;                           // how often it is tuned again
};

struct JobPlan {
  size_t context;
  int trials;
  bool cold;       // timed with flush_cache
  bool finalists;  // ends by re-measuring its 3 fastest configs and deciding the best
};

// The log's shape, from the seed and the record count alone (so --reuse can rebuild it).
struct Plan {
  std::unique_ptr<const TemplateSpecs> templates;  // what contexts point into
  std::vector<WorkloadSpec> workloads;
  std::vector<TargetSpec> targets;
  std::vector<Context> contexts;
  std::vector<JobPlan> jobs;
  std::vector<size_t> tuned;          // contexts with a warm-cache job: best queries hit
  std::vector<std::string> unknown;   // workloads the log does not hold: misses
  std::vector<size_t> untuned_pairs;  // workload * targets + target never tuned: misses
  int64_t records = 0;
};

// The plan of a log of `records` records drawn from `seed`. An error when a template the log
// names is not in tune's table, or a workload or target text does not parse.
absl::StatusOr<Plan> MakePlan(uint64_t seed, int64_t records);

}  // namespace tune::bench
