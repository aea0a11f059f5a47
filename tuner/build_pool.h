// BuildPool: a few threads that compile candidates (Compiler::BuildArtifact) off the gRPC
// threads. Tasks run in priority order (job priority descending, then job id, then trial id),
// so the most urgent job's next artifact is built first.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "codegen/compiler.h"

namespace tune::tuner {

struct BuildTask {
  uint64_t trial_id = 0;
  int priority = 0;
  int64_t job_id = 0;
  std::shared_ptr<Compiler> compiler;
  Workload workload;
  const KernelTemplate* tpl = nullptr;
  Config config;
  std::string func_name;
};

class BuildPool {
 public:
  /// Called on a pool thread with the outcome of each task (never with the pool's lock held).
  using DoneFn = std::function<void(uint64_t trial_id, absl::StatusOr<Artifact> artifact)>;

  /// Starts `threads` (>= 1, checked) threads.
  BuildPool(int threads, DoneFn done);
  /// Stop(), then joins the threads.
  ~BuildPool();
  BuildPool(const BuildPool&) = delete;
  BuildPool& operator=(const BuildPool&) = delete;

  /// Queues a task. Ignored after Stop().
  void Submit(BuildTask task);

  /// Drops the queued tasks and makes the threads exit after their current build; waits for
  /// them. Idempotent.
  void Stop();

  /// Tasks queued and not started.
  size_t Queued() const;

 private:
  void Loop();

  DoneFn done_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<BuildTask> heap_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace tune::tuner
