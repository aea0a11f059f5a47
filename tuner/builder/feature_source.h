// FeatureSource: where a job's cost models get the features of configs (TemplateFeatures, read
// off the IR each config's template builds). Building template IR runs the template's code, so
// the daemon does it in a builder process (BuilderFeatureSource): a template that trips a check
// or hangs on some config ends that builder, never the daemon, and the configs it was asked
// about get the rows of TemplateFeaturesWithoutIr instead. Benchmarks and tests may compute
// them in their own process (InProcessFeatureSource).
#pragma once

#include <mutex>
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

/// Computes rows in a builder process of its own, one exchange per call (calls are serialised).
class BuilderFeatureSource final : public FeatureSource {
 public:
  /// `options` are the build pool's (executable, fault templates, plugins); copied. A request
  /// that takes longer than `timeout_ms` falls back (and its builder is killed).
  explicit BuilderFeatureSource(BuilderOptions options, int timeout_ms = 60000);

  std::vector<std::vector<float>> Rows(const KernelTemplate& tpl, const Workload& workload,
                                       const Target& target, const ConfigSpace& space,
                                       const std::vector<Config>& configs) override;

  /// Stops a request in progress (it falls back) and every later one (thread-safe).
  void Stop();

  /// Requests that fell back to rows without IR, and builder processes started (for tests).
  int fallbacks() const;
  int started() const { return process_.started(); }

 private:
  const BuilderOptions options_;
  const int timeout_ms_;
  BuilderProcess process_;
  std::mutex mu_;  // one exchange at a time
  mutable std::mutex stats_mu_;
  bool stopped_ ABSL_GUARDED_BY(stats_mu_) = false;
  int fallbacks_ ABSL_GUARDED_BY(stats_mu_) = 0;
  uint64_t next_task_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace tune::tuner
