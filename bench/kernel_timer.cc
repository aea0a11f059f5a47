#include "bench/kernel_timer.h"

#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "tuner/builder/build_child.h"

namespace tune::bench {

KernelTimer::KernelTimer(Target target, TimingOptions timing,
                         std::unique_ptr<rpc::MeasureSupervisor> sup,
                         std::unique_ptr<rpc::ArtifactCache> cache)
    : target_(std::move(target)),
      timing_(timing),
      compiler_(Catalog::BuiltIn(), target_),  // it builds the templates it is given
      sup_(std::move(sup)),
      cache_(std::move(cache)) {}

absl::StatusOr<double> KernelTimer::MedianSecs(const Workload& w, const KernelTemplate& tpl,
                                               const Config& config) {
  ASSIGN_OR_RETURN(Artifact built, compiler_.BuildArtifact(w, tpl, config, "tune_bench_kernel"));
  ASSIGN_OR_RETURN(rpc::CachedCode code, cache_->Store(built.hash, built.format, built.code));
  v1::MeasureRequest req;
  req.set_trial_id(++trial_id_);
  req.set_workload(w.ToString());
  req.set_target(target_.ToString());
  *req.mutable_artifact() = tuner::ArtifactToProto(built);
  *req.mutable_timing() = TimingOptionsToProto(timing_);
  ASSIGN_OR_RETURN(v1::Measurement pm, sup_->Measure(req, code.path()));
  ASSIGN_OR_RETURN(Measurement m, MeasurementFromProto(pm));
  if (!m.ok()) {
    return absl::InternalError(StrCat(ErrorKindName(m.error), ": ", m.message));
  }
  return m.MedianSecs();
}

}  // namespace tune::bench
