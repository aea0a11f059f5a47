#include "tuner/build_pool.h"

#include <algorithm>
#include <exception>

#include "common/status.h"
#include "common/strings.h"

namespace tune::tuner {
namespace {

// Heap order: the task that should run first compares greatest.
bool RunsLater(const BuildTask& a, const BuildTask& b) {
  if (a.priority != b.priority) {
    return a.priority < b.priority;
  }
  if (a.job_id != b.job_id) {
    return a.job_id > b.job_id;
  }
  return a.trial_id > b.trial_id;
}

}  // namespace

BuildPool::BuildPool(int threads, DoneFn done) : done_(std::move(done)) {
  TUNE_CHECK(threads >= 1) << "a build pool needs at least one thread, got " << threads;
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { Loop(); });
  }
}

BuildPool::~BuildPool() { Stop(); }

void BuildPool::Submit(BuildTask task) {
  std::lock_guard lock(mu_);
  if (stopping_) {
    return;
  }
  heap_.push_back(std::move(task));
  std::push_heap(heap_.begin(), heap_.end(), RunsLater);
  cv_.notify_one();
}

void BuildPool::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    heap_.clear();
    cv_.notify_all();
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) {
      t.join();
    }
  }
}

size_t BuildPool::Queued() const {
  std::lock_guard lock(mu_);
  return heap_.size();
}

void BuildPool::Loop() {
  while (true) {
    BuildTask task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock,
               [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_ || !heap_.empty(); });
      if (stopping_) {
        return;
      }
      std::pop_heap(heap_.begin(), heap_.end(), RunsLater);
      task = std::move(heap_.back());
      heap_.pop_back();
    }
    absl::StatusOr<Artifact> artifact;
    try {
      artifact =
          task.compiler->BuildArtifact(task.workload, *task.tpl, task.config, task.func_name);
    } catch (const std::exception& e) {
      artifact = absl::InternalError(StrCat("code generation threw: ", e.what()));
    }
    done_(task.trial_id, std::move(artifact));
  }
}

}  // namespace tune::tuner
