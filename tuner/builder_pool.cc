#include "tuner/builder_pool.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "proto/framing.h"
#include "tuner/build_child.h"

namespace tune::tuner {
namespace {

using Clock = std::chrono::steady_clock;

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

// One supervised builder process, used by one pool thread at a time; Cancel may come from any
// thread.
class BuilderPool::Builder {
 public:
  explicit Builder(const BuilderOptions& options) : options_(options) {
    wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    TUNE_CHECK(wake_fd_ >= 0) << "eventfd: " << std::strerror(errno);
  }
  ~Builder() {
    Kill();
    close(wake_fd_);
  }

  /// Forgets a Cancel() meant for an earlier task. Call before the task is visible to DropJob.
  void ClearCancel() {
    uint64_t drained;
    while (read(wake_fd_, &drained, sizeof(drained)) > 0) {
    }
  }

  /// Builds one task; see BuildOutcome. `cancelled` is set when Cancel() stopped it.
  BuildOutcome Build(const v1::BuildChildTask& task, bool* cancelled) {
    *cancelled = false;
    v1::BuildChildRequest request;
    *request.mutable_task() = task;
    // A builder that died while idle is noticed at the write: start another once.
    for (int attempt = 0;; ++attempt) {
      if (pid_ < 0) {
        if (absl::Status started = Start(); !started.ok()) {
          BuildOutcome outcome;
          outcome.infra_error = std::string(started.message());
          return outcome;
        }
      }
      if (WriteFrame(to_child_, request).ok()) {
        break;
      }
      std::string how = Kill();
      if (attempt > 0) {
        BuildOutcome outcome;
        outcome.infra_error = StrCat("builder process ", how, " before it took the task");
        return outcome;
      }
    }
    v1::BuildChildReply reply;
    std::string error;
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.build_timeout_ms);
    switch (ReadFrame(from_child_, &reply, deadline, wake_fd_, &error)) {
      case ReadOutcome::kOk:
        break;
      case ReadOutcome::kEof:
        return BuildError(StrCat("the builder process crashed building this config: ", Kill()));
      case ReadOutcome::kDeadline:
        Kill();
        return BuildError(StrCat("the build did not finish within ", options_.build_timeout_ms,
                                 " ms; builder process killed"));
      case ReadOutcome::kWoken:
        Kill();
        *cancelled = true;
        return BuildOutcome();
      case ReadOutcome::kError:
        Kill();
        return BuildError(StrCat("the builder process sent an unreadable reply: ", error));
    }
    if (!reply.has_result() || reply.result().task_id() != task.task_id()) {
      Kill();
      return BuildError("the builder process answered another task");
    }
    v1::BuildChildResult& result = *reply.mutable_result();
    if (!result.error().empty()) {
      return BuildError(result.error());
    }
    BuildOutcome outcome;
    outcome.artifact = std::make_shared<const v1::Artifact>(std::move(*result.mutable_artifact()));
    outcome.code = std::make_shared<const v1::ArtifactCode>(std::move(*result.mutable_code()));
    return outcome;
  }

  /// Stops the build in progress, if any (thread-safe).
  void Cancel() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }

  /// Kills and reaps the builder; returns how it ended ("" when none ran).
  std::string Kill() {
    if (pid_ < 0) {
      return "";
    }
    close(to_child_);
    close(from_child_);
    // A builder that closed its reply pipe on its own is dying: give it a moment to say how.
    std::optional<int> status = ReapWithin(pid_, std::chrono::milliseconds(200));
    if (!status) {
      KillProcessGroup(pid_, SIGKILL);
      status = Reap(pid_);
    }
    pid_ = -1;
    return DescribeWaitStatus(*status);
  }

  int started() const { return started_.load(); }

 private:
  absl::Status Start() {
    SpawnOptions spawn;
    spawn.argv = {options_.executable, kBuildChildFlag};
    spawn.stdin_from_dev_null = true;
    spawn.stdout_to_stderr = true;  // whatever codegen prints must not reach our stdout
    spawn.new_process_group = true;
    spawn.parent_death_signal = SIGKILL;
    spawn.default_signals = {SIGPIPE, SIGINT, SIGTERM, SIGHUP};
    spawn.close_other_fds = true;
    absl::StatusOr<PipedChild> child = SpawnPiped(spawn, kBuildRequestFd, kBuildReplyFd);
    if (!child.ok()) {
      return absl::UnavailableError(StrCat("cannot start a builder process (", options_.executable,
                                           " ", kBuildChildFlag,
                                           "): ", std::string(child.status().message())));
    }
    pid_ = child->pid;
    to_child_ = child->to_child;
    from_child_ = child->from_child;
    ++started_;
    v1::BuildChildRequest setup;
    setup.mutable_setup()->set_parent_pid(getpid());
    setup.mutable_setup()->set_allow_fault_templates(options_.allow_fault_templates);
    for (const std::string& manifest : options_.extern_kernel_manifests) {
      setup.mutable_setup()->add_extern_kernel_manifests(manifest);
    }
    for (const std::string& plugin : options_.codegen_plugins) {
      setup.mutable_setup()->add_codegen_plugins(plugin);
    }
    if (!WriteFrame(to_child_, setup).ok()) {
      return absl::UnavailableError(StrCat("the builder process ", Kill(), " before its setup"));
    }
    v1::BuildChildReply ready;
    std::string error;
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.start_timeout_ms);
    ReadOutcome outcome = ReadFrame(from_child_, &ready, deadline, -1, &error);
    if (outcome != ReadOutcome::kOk || !ready.has_ready()) {
      std::string how = Kill();
      return absl::UnavailableError(
          StrCat("the builder process did not start (",
                 outcome == ReadOutcome::kDeadline
                     ? StrCat("no answer within ", options_.start_timeout_ms, " ms")
                     : how,
                 ")"));
    }
    Logger("daemon")->debug("builder process {} started", pid_);
    return absl::OkStatus();
  }

  const BuilderOptions& options_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int wake_fd_ = -1;
  std::atomic<int> started_{0};
};

BuilderPool::BuilderPool(BuilderOptions options, DoneFn done)
    : options_(std::move(options)), done_(std::move(done)) {
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
    }
    bool cancelled = false;
    BuildOutcome outcome = builders_[slot]->Build(task.task, &cancelled);
    {
      std::lock_guard lock(mu_);
      running_job_[slot].reset();
    }
    if (!cancelled) {
      done_(task.trial_id, std::move(outcome));
    }
  }
}

}  // namespace tune::tuner
