// FeatureSource: where a job's cost models get the features of configs (TemplateFeatures, read
// off the IR each config's template builds). Building template IR runs the template's code, so
// the daemon does it in a builder process (BuilderFeatureSource): a template that trips a check
// or hangs on some config ends that builder, never the daemon, and the configs it was asked
// about get the rows of TemplateFeaturesWithoutIr instead. A config the build pool has built
// already is answered with the row its builder read off the kernel it built (Remember), without
// building its IR again. Benchmarks and tests may compute them in their own process
// (InProcessFeatureSource).
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "codegen/templates/template.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/config_space.h"
#include "tuner/builder/builder_process.h"

namespace tune::tuner {

class FeatureSource {
 public:
  virtual ~FeatureSource() = default;
  /// One row per config of `configs` (valid points of `space`, `tpl`'s space for `workload` and
  /// `target`), in order, all of one width. Thread-safe.
  virtual std::vector<std::vector<float>> Rows(const KernelTemplate& tpl, const Workload& workload,
                                               const Target& target, const ConfigSpace& space,
                                               const std::vector<Config>& configs) = 0;
};

/// Computes rows in this process.
class InProcessFeatureSource final : public FeatureSource {
 public:
  std::vector<std::vector<float>> Rows(const KernelTemplate& tpl, const Workload& workload,
                                       const Target& target, const ConfigSpace& space,
                                       const std::vector<Config>& configs) override;
};

/// Computes rows in a builder process of its own, one exchange per call (calls are serialised),
/// for the configs it does not remember.
class BuilderFeatureSource final : public FeatureSource {
 public:
  /// `options` are the build pool's (executable, catalog sources); copied. A request
  /// that takes longer than `timeout_ms` falls back (and its builder is killed).
  explicit BuilderFeatureSource(BuilderOptions options, int timeout_ms = 60000);

  std::vector<std::vector<float>> Rows(const KernelTemplate& tpl, const Workload& workload,
                                       const Target& target, const ConfigSpace& space,
                                       const std::vector<Config>& configs) override;

  /// Remembers `row`, the features a builder read off the kernel it built for `task`
  /// (BuildChildResult.features), so that Rows answers that config without building its IR
  /// again. A task whose workload, target or config does not parse, or an empty row, is
  /// ignored. Keeps at most kMaxRemembered rows (forgetting all of them when full). Thread-safe.
  void Remember(const v1::BuildChildTask& task, std::vector<float> row);
  static constexpr size_t kMaxRemembered = size_t{1} << 16;

  /// Stops a request in progress (it falls back) and every later one (thread-safe).
  void Stop();

  /// Requests that fell back to rows without IR, rows answered from remembered ones, and
  /// builder processes started (for tests).
  int fallbacks() const;
  int remembered_rows_used() const;
  int started() const { return process_.started(); }

 private:
  /// Rows of `configs` (each `width` wide) from the builder process, or without IR when it
  /// fails.
  std::vector<std::vector<float>> Compute(const KernelTemplate& tpl, const Workload& workload,
                                          const Target& target, const ConfigSpace& space,
                                          const std::vector<Config>& configs, size_t width);

  const BuilderOptions options_;
  const int timeout_ms_;
  BuilderProcess process_;
  std::mutex mu_;  // one exchange at a time
  mutable std::mutex stats_mu_;
  bool stopped_ ABSL_GUARDED_BY(stats_mu_) = false;
  int fallbacks_ ABSL_GUARDED_BY(stats_mu_) = 0;
  int remembered_rows_used_ ABSL_GUARDED_BY(stats_mu_) = 0;
  // Rows builders read off the kernels they built, by RowKey.
  std::unordered_map<std::string, std::vector<float>> remembered_ ABSL_GUARDED_BY(stats_mu_);
  uint64_t next_task_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace tune::tuner
