// BuilderPool: the daemon's supervised builder processes (build_child.h). Each pool thread owns
// one builder process and sends it one task at a time; tasks run in priority order (job
// priority descending, then job id, then trial id), so the most urgent job's next artifact is
// built first. Whatever happens inside code generation stays a fact about the config: a
// builder that crashes, aborts or runs past the build deadline yields a build error (a
// BUILD_ERROR record) and is replaced before the next task. Only a builder that cannot start
// at all is the daemon's problem (reported as such, never as the config's verdict).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "tune/v1/builder.pb.h"
#include "tune/v1/worker.pb.h"
#include "tuner/builder/artifact_store.h"
#include "tuner/builder/builder_process.h"
#include "tuner/builder/feature_source.h"

namespace tune::tuner {

struct BuildTask {
  uint64_t trial_id = 0;
  int priority = 0;
  int64_t job_id = 0;
  v1::BuildChildTask task;  // task_id is set by the pool
};

/// The outcome of one task: exactly one of an artifact (with its code), a build error, or an
/// infrastructure error.
struct BuildOutcome {
  std::shared_ptr<const v1::Artifact> artifact;
  std::shared_ptr<const v1::ArtifactCode> code;
  /// Why the config does not build: a codegen error, or its builder crashed or hung on it.
  std::string build_error;
  /// Why nothing could be built: no builder process could start. Not the config's fault.
  std::string infra_error;
  /// Wall-clock seconds the builder spent on it (or reading it from the store).
  double build_secs = 0;
  /// The artifact came from the artifact store: nothing was built.
  bool from_store = false;
  /// The config's features, read off the kernel its builder lowered (BuildChildResult.features;
  /// empty for a codegen plugin's family and for a stored artifact built before they were kept).
  std::vector<float> features;
};

class BuilderPool {
 public:
  /// Called on a pool thread with the outcome of each task (never with the pool's lock held).
  using DoneFn = std::function<void(uint64_t trial_id, BuildOutcome outcome)>;

  /// Starts `options.processes` (>= 1, checked) pool threads; builders start on first use.
  /// With a `store` (which must outlive the pool), a task whose artifact it holds is answered
  /// from it without a build, and every artifact built is added to it. With `features` (which
  /// must outlive the pool), the features of every artifact built or found in the store are
  /// remembered there, so that the cost model does not build the config's IR again.
  BuilderPool(BuilderOptions options, DoneFn done, ArtifactStore* store = nullptr,
              BuilderFeatureSource* features = nullptr);
  /// Stop().
  ~BuilderPool();
  BuilderPool(const BuilderPool&) = delete;
  BuilderPool& operator=(const BuilderPool&) = delete;

  /// Queues a task. Ignored after Stop().
  void Submit(BuildTask task);

  /// Forgets the queued tasks of a job and stops its running builds (their builders are killed
  /// and replaced); none of them is reported.
  void DropJob(int64_t job_id);

  /// Drops the queued tasks, kills the builders and joins the threads. Idempotent.
  void Stop();

  /// Returns once no task is queued or being built and every outcome has been reported (or the
  /// pool stops). For tests.
  void WaitIdle();

  /// Tasks queued and not started.
  size_t Queued() const;
  /// Builder processes started so far (a crash or timeout makes the next task start another).
  int ProcessesStarted() const;

 private:
  class Builder;
  void Loop(size_t slot);

  const BuilderOptions options_;
  DoneFn done_;
  ArtifactStore* const store_;
  BuilderFeatureSource* const features_;
  std::vector<std::unique_ptr<Builder>> builders_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;    // a task's outcome was reported
  int busy_ ABSL_GUARDED_BY(mu_) = 0;  // tasks taken whose outcome is not yet reported
  std::vector<BuildTask> heap_ ABSL_GUARDED_BY(mu_);
  std::vector<std::optional<int64_t>> running_job_ ABSL_GUARDED_BY(mu_);  // per slot
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_task_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<std::thread> threads_;
};

}  // namespace tune::tuner
