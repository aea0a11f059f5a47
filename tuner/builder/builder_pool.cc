#include "tuner/builder/builder_pool.h"

#include <signal.h>

#include <algorithm>
#include <chrono>

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

BuildOutcome BuildError(std::string message) {
  BuildOutcome outcome;
  outcome.build_error = std::move(message);
  return outcome;
}

}  // namespace

// One builder process of the pool: a build is one exchange, its failures a fact about the config.
class BuilderPool::Builder {
 public:
  explicit Builder(const BuilderOptions& options) : options_(options), process_(options) {}

  /// Forgets a Cancel() meant for an earlier task. Call before the task is visible to DropJob.
  void ClearCancel() { process_.ClearCancel(); }
  /// Stops the build in progress, if any (thread-safe).
  void Cancel() { process_.Cancel(); }
  int started() const { return process_.started(); }

  /// Builds one task; see BuildOutcome. `cancelled` is set when Cancel() stopped it.
  BuildOutcome Build(const v1::BuildChildTask& task, bool* cancelled) {
    *cancelled = false;
    v1::BuildChildRequest request;
    *request.mutable_task() = task;
    BuilderProcess::Exchange exchange = process_.Send(request, options_.build_timeout_ms);
    switch (exchange.outcome) {
      case BuilderProcess::Outcome::kOk:
        break;
      case BuilderProcess::Outcome::kNotStarted: {
        BuildOutcome outcome;
        outcome.infra_error = std::move(exchange.detail);
        return outcome;
      }
      case BuilderProcess::Outcome::kCrashed:
        return BuildError(
            StrCat("the builder process crashed building this config: ", exchange.detail));
      case BuilderProcess::Outcome::kDeadline:
        return BuildError(StrCat("the build did not finish within ", options_.build_timeout_ms,
                                 " ms; builder process killed"));
      case BuilderProcess::Outcome::kCancelled:
        *cancelled = true;
        return BuildOutcome();
      case BuilderProcess::Outcome::kUnreadable:
        return BuildError(
            StrCat("the builder process sent an unreadable reply: ", exchange.detail));
    }
    if (!exchange.reply.has_result() || exchange.reply.result().task_id() != task.task_id()) {
      process_.Kill();
      return BuildError("the builder process answered another task");
    }
    v1::BuildChildResult& result = *exchange.reply.mutable_result();
    if (!result.error().empty()) {
      return BuildError(result.error());
    }
    BuildOutcome outcome;
    outcome.artifact = std::make_shared<const v1::Artifact>(std::move(*result.mutable_artifact()));
    outcome.code = std::make_shared<const v1::ArtifactCode>(std::move(*result.mutable_code()));
    outcome.features.assign(result.features().values().begin(), result.features().values().end());
    return outcome;
  }

 private:
  const BuilderOptions& options_;
  BuilderProcess process_;
};

BuilderPool::BuilderPool(BuilderOptions options, DoneFn done, ArtifactStore* store,
                         BuilderFeatureSource* features)
    : options_(std::move(options)), done_(std::move(done)), store_(store), features_(features) {
  TUNE_CHECK(options_.processes >= 1)
      << "a builder pool needs at least one process, got " << options_.processes;
  // A write to a builder that just died must be an error, not a signal that ends the daemon.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  running_job_.resize(options_.processes);
  for (int i = 0; i < options_.processes; ++i) {
    builders_.push_back(std::make_unique<Builder>(options_));
  }
  for (int i = 0; i < options_.processes; ++i) {
    threads_.emplace_back([this, i] { Loop(static_cast<size_t>(i)); });
  }
}

BuilderPool::~BuilderPool() { Stop(); }

void BuilderPool::Submit(BuildTask task) {
  std::lock_guard lock(mu_);
  if (stopping_) {
    return;
  }
  task.task.set_task_id(next_task_id_++);
  heap_.push_back(std::move(task));
  std::push_heap(heap_.begin(), heap_.end(), RunsLater);
  cv_.notify_one();
}

void BuilderPool::DropJob(int64_t job_id) {
  std::lock_guard lock(mu_);
  std::erase_if(heap_, [&](const BuildTask& t) { return t.job_id == job_id; });
  std::make_heap(heap_.begin(), heap_.end(), RunsLater);
  for (size_t slot = 0; slot < running_job_.size(); ++slot) {
    if (running_job_[slot] == job_id) {
      builders_[slot]->Cancel();
    }
  }
}

void BuilderPool::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    heap_.clear();
    for (size_t slot = 0; slot < running_job_.size(); ++slot) {
      if (running_job_[slot]) {
        builders_[slot]->Cancel();
      }
    }
    cv_.notify_all();
    idle_cv_.notify_all();
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) {
      t.join();
    }
  }
  threads_.clear();
  builders_.clear();  // kills the builder processes
}

size_t BuilderPool::Queued() const {
  std::lock_guard lock(mu_);
  return heap_.size();
}

int BuilderPool::ProcessesStarted() const {
  int started = 0;
  for (const auto& builder : builders_) {
    started += builder->started();
  }
  return started;
}

void BuilderPool::Loop(size_t slot) {
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
      builders_[slot]->ClearCancel();
      running_job_[slot] = task.job_id;
      ++busy_;
    }
    bool cancelled = false;
    const auto started = std::chrono::steady_clock::now();
    const std::string key = store_ != nullptr ? store_->Key(task.task) : "";
    BuildOutcome outcome;
    if (std::optional<v1::BuildChildResult> stored =
            store_ != nullptr ? store_->Find(key) : std::nullopt) {
      outcome.artifact =
          std::make_shared<const v1::Artifact>(std::move(*stored->mutable_artifact()));
      outcome.code = std::make_shared<const v1::ArtifactCode>(std::move(*stored->mutable_code()));
      outcome.features.assign(stored->features().values().begin(),
                              stored->features().values().end());
      outcome.from_store = true;
    } else {
      outcome = builders_[slot]->Build(task.task, &cancelled);
      if (store_ != nullptr && outcome.artifact != nullptr) {
        v1::BuildChildResult result;
        *result.mutable_artifact() = *outcome.artifact;
        *result.mutable_code() = *outcome.code;
        result.mutable_features()->mutable_values()->Add(outcome.features.begin(),
                                                         outcome.features.end());
        store_->Insert(key, result);
      }
    }
    if (features_ != nullptr && !outcome.features.empty()) {
      features_->Remember(task.task, outcome.features);
    }
    outcome.build_secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    {
      std::lock_guard lock(mu_);
      running_job_[slot].reset();
    }
    if (!cancelled) {
      done_(task.trial_id, std::move(outcome));
    }
    std::lock_guard lock(mu_);
    --busy_;
    idle_cv_.notify_all();
  }
}

void BuilderPool::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return stopping_ || (heap_.empty() && busy_ == 0);
  });
}

}  // namespace tune::tuner
