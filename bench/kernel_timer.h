// Times one config of one template the way a tuning job does: built by tune::Compiler, stored in
// a worker's artifact cache, measured by tune-server's measurement supervisor (the child
// process, TVM's timing rule, the output checked). Shared by the benchmarks.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "codegen/compiler.h"
#include "common/measurement.h"
#include "rpc_server/artifact_cache.h"
#include "rpc_server/supervisor.h"

namespace tune::bench {

class KernelTimer {
 public:
  KernelTimer(Target target, TimingOptions timing, std::unique_ptr<rpc::MeasureSupervisor> sup,
              std::unique_ptr<rpc::ArtifactCache> cache);

  /// Median seconds per call; an error (the measurement's kind and message) otherwise.
  absl::StatusOr<double> MedianSecs(const Workload& w, const KernelTemplate& tpl,
                                    const Config& config);

  const Target& target() const { return target_; }

 private:
  Target target_;
  TimingOptions timing_;
  Compiler compiler_;
  std::unique_ptr<rpc::MeasureSupervisor> sup_;
  std::unique_ptr<rpc::ArtifactCache> cache_;
  uint64_t trial_id_ = 0;
};

}  // namespace tune::bench
