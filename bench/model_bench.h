// ModelBench: the model jobs of tune-bench-model (model_allocation_main.cc), run on real
// measurements. A run drives a model's layers as the daemon drives a model job's tasks
// (tuner/scheduler/scheduler_models.cc): TaskScheduler::Next() picks a layer, Allocate(layer,
// ChunkOf(layer)), the layer's search proposes that many configs, each is measured and given to
// the search and the scheduler (Observe) and lent to the other layers' searches. A layer's search
// is what a task job of a fresh tuning log runs: tuner::JobSearch over the templates that apply
// to the layer, seeded with the run's seed plus the layer's position. A config is built and
// measured once (through tune-server's measurement supervisor, as a job does) and remembered in
// the table file, so every run and every rerun sees the same time for it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/kernel_timer.h"
#include "bench/measure_table.h"
#include "codegen/templates/template.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/task_scheduler.h"
#include "tuner/scheduler/job_search.h"

namespace tune::bench {

struct ModelBenchOptions {
  std::string strategy = "auto";  // each layer's search strategy
  std::string table = "out/model-table.tsv";
  int chunk = search::TaskChunks{}.then;  // trials per step of a layer's reference run
  bool verbose = false;                   // print every decision and every trial
  bool transfer = true;                   // layers lend their trials to each other's cost models
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

/// The gradient policy once per first-chunk size (every later chunk `chunk`), then round robin
/// (uniform allocation) once per size in `uniform_chunks` (empty: `chunk`), which every gradient
/// variant is compared with. With one round robin it is named "round robin", with several
/// "round robin, chunks of N".
std::vector<Policy> PoliciesOf(const std::vector<int>& first_chunks, int chunk,
                               const std::vector<int>& uniform_chunks = {});

/// One measured trial of a run.
struct Trial {
  int layer = 0;
  const KernelTemplate* tpl = nullptr;
  Config config;
};

/// One run of a model job.
struct Run {
  std::vector<double> totals;   // Σ weight · best after each trial (unmeasured_at_default)
  std::vector<int> trials;      // trials each layer got
  std::vector<double> best;     // each layer's best at the end (+inf: none)
  std::vector<Trial> measured;  // in trial order
};

class ModelBench {
 public:
  /// `options` and `timer` must outlive the bench.
  ModelBench(const ModelBenchOptions& options, std::vector<Layer> layers, const Target& target,
             KernelTimer& timer);

  const std::vector<Layer>& layers() const { return layers_; }
  const MeasuredTimes& times() const { return times_; }

  /// A model job of `budget` trials under `policy`; layer i's search is seeded with seed + i.
  /// Only measured trials count against the budget: the part of a chunk that an exhausted search
  /// cannot propose is not spent (its layer is closed, as the daemon closes such a task).
  Run RunModel(const Policy& policy, uint64_t seed, int budget);

  /// A long search of layer i alone (`trials` trials), for the reference.
  void RunLayer(size_t i, uint64_t seed, int trials);

  /// Measures the `top` fastest configs of each layer's templates again (MeasuredTimes::Remeasure,
  /// median of `passes` passes). Returns how many.
  int RemeasureFastest(size_t top, int passes);

  /// Recomputes a run's totals and bests from the table's times of its trials (after
  /// RemeasureFastest, the re-measured configs count with their re-measured time).
  void Rescore(Run& run) const;

  /// The fewest trials in which an allocation that knew each layer's search in advance reaches
  /// `fraction` of the reference performance (Σ weight · Reference over Σ weight · best): each
  /// layer takes a prefix of the longest sequence of trials that any of `runs` measured for it
  /// (with none it counts at its untuned default), the prefixes chosen by a knapsack over the
  /// layers. A bound on what any policy could do with these searches, not a policy. nullopt
  /// when no choice of prefixes reaches it.
  std::optional<int> OracleTrials(const std::vector<const Run*>& runs, double fraction) const;

  /// The fastest time the table holds for layer i.
  double Reference(size_t i) const;

  /// The time of layer i's untuned default (the first template's default config; +inf if it
  /// failed or was not measured).
  double DefaultTime(size_t i) const;

 private:
  std::unique_ptr<tuner::JobSearch> NewSearch(size_t i, uint64_t seed) const;
  // The table's time of a trial's config (nullopt: it failed or was never measured).
  std::optional<double> TimeOf(const Trial& trial) const;

  // Proposes up to n configs of layer i, measures each and reports it to the search and (when
  // given) the scheduler, keeping the scheduler's total after each in chunk_totals_, and lends
  // it to the other layers' searches (when given and transfer is on, as the daemon lends a
  // task's trials to its sibling tasks). Returns how many were proposed.
  int MeasureChunk(int i, tuner::JobSearch& search, int n, uint64_t seed,
                   search::TaskScheduler* scheduler,
                   std::vector<std::unique_ptr<tuner::JobSearch>>* siblings);

  const ModelBenchOptions& options_;
  std::vector<Layer> layers_;
  Target target_;
  MeasuredTimes times_;
  std::vector<double> chunk_totals_;
  std::vector<Trial> chunk_trials_;
};

}  // namespace tune::bench
