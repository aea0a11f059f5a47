#include "tuner/builder/builder_process.h"

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "proto/framing.h"
#include "tuner/builder/build_child.h"

namespace tune::tuner {
namespace {

using Clock = std::chrono::steady_clock;

BuilderProcess::Exchange Failed(BuilderProcess::Outcome outcome, std::string detail) {
  BuilderProcess::Exchange exchange;
  exchange.outcome = outcome;
  exchange.detail = std::move(detail);
  return exchange;
}

}  // namespace

BuilderProcess::BuilderProcess(const BuilderOptions& options) : options_(options) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  TUNE_CHECK(wake_fd_ >= 0) << "eventfd: " << std::strerror(errno);
}

BuilderProcess::~BuilderProcess() {
  Kill();
  close(wake_fd_);
}

void BuilderProcess::ClearCancel() {
  uint64_t drained;
  while (read(wake_fd_, &drained, sizeof(drained)) > 0) {
  }
}

void BuilderProcess::Cancel() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

BuilderProcess::Exchange BuilderProcess::Send(const v1::BuildChildRequest& request,
                                              int timeout_ms) {
  // A builder that died while idle is noticed at the write: start another once.
  for (int attempt = 0;; ++attempt) {
    if (pid_ < 0) {
      if (Exchange started = Start(); started.outcome != Outcome::kOk) {
        return started;
      }
    }
    if (WriteFrame(to_child_, request).ok()) {
      break;
    }
    std::string how = Kill();
    if (attempt > 0) {
      return Failed(Outcome::kNotStarted,
                    StrCat("builder process ", how, " before it took the request"));
    }
  }
  Exchange exchange;
  std::string error;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  switch (ReadFrame(from_child_, &exchange.reply, deadline, wake_fd_, &error)) {
    case ReadOutcome::kOk:
      exchange.outcome = Outcome::kOk;
      return exchange;
    case ReadOutcome::kEof:
      return Failed(Outcome::kCrashed, Kill());
    case ReadOutcome::kDeadline:
      Kill();
      return Failed(Outcome::kDeadline, StrCat("no answer within ", timeout_ms, " ms"));
    case ReadOutcome::kWoken:
      Kill();
      return Failed(Outcome::kCancelled, "");
    case ReadOutcome::kError:
      Kill();
      return Failed(Outcome::kUnreadable, error);
  }
  return Failed(Outcome::kUnreadable, "unknown read outcome");
}

std::string BuilderProcess::Kill() {
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

BuilderProcess::Exchange BuilderProcess::Start() {
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
    return Failed(Outcome::kNotStarted,
                  StrCat("cannot start a builder process (", options_.executable, " ",
                         kBuildChildFlag, "): ", std::string(child.status().message())));
  }
  pid_ = child->pid;
  to_child_ = child->to_child;
  from_child_ = child->from_child;
  ++started_;
  v1::BuildChildRequest setup;
  setup.mutable_setup()->set_parent_pid(getpid());
  for (const std::string& manifest : options_.sources.extern_kernel_manifests) {
    setup.mutable_setup()->add_extern_kernel_manifests(manifest);
  }
  for (const std::string& plugin : options_.sources.codegen_plugins) {
    setup.mutable_setup()->add_codegen_plugins(plugin);
  }
  if (!WriteFrame(to_child_, setup).ok()) {
    return Failed(Outcome::kNotStarted,
                  StrCat("the builder process ", Kill(), " before its setup"));
  }
  v1::BuildChildReply ready;
  std::string error;
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.start_timeout_ms);
  ReadOutcome outcome = ReadFrame(from_child_, &ready, deadline, -1, &error);
  if (outcome != ReadOutcome::kOk || !ready.has_ready()) {
    std::string how = Kill();
    return Failed(Outcome::kNotStarted,
                  StrCat("the builder process did not start (",
                         outcome == ReadOutcome::kDeadline
                             ? StrCat("no answer within ", options_.start_timeout_ms, " ms")
                             : how,
                         ")"));
  }
  Logger("daemon")->debug("builder process {} started", pid_);
  Exchange ok;
  ok.outcome = Outcome::kOk;
  return ok;
}

}  // namespace tune::tuner
