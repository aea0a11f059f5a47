#include "rpc_server/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/artifact_hash.h"
#include "common/logging.h"
#include "common/reference.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "common/target.h"
#include "common/workload.h"
#include "proto/convert.h"
#include "proto/framing.h"
#include "rpc_server/device_info.h"
#include "rpc_server/measure_child.h"
#include "rpc_server/preload.h"
#include "tune/v1/measure_child.pb.h"

namespace tune::rpc {
namespace {

using Clock = std::chrono::steady_clock;

// How long a child that said it exits may take to do so before it is killed.
constexpr int kChildExitWaitMs = 10000;

v1::Measurement Failure(v1::ErrorKind kind, std::string message) {
  v1::Measurement m;
  m.set_error_kind(kind);
  m.set_message(std::move(message));
  return m;
}

// Whether the kernels of `target` pin their threads (llvm -bind=close|spread).
bool BindsThreads(const std::string& target) {
  absl::StatusOr<Target> t = Target::Parse(target);
  return t.ok() && t->kind == TargetKind::kLlvm && t->bind != ThreadBinding::kNone;
}

// Checks what the worker can decide without the child. Returns the failure, if any: WORKER_ERROR
// for a request this worker cannot read (another tune version) or run (another device kind, a
// library it did not preload), which another worker could; a verdict for the artifact's own
// faults.
std::optional<v1::Measurement> CheckRequestAgainst(const v1::MeasureRequest& request,
                                                   const std::vector<std::string>& preloaded,
                                                   TargetKind device_kind) {
  if (absl::StatusOr<Workload> w = Workload::Parse(request.workload()); !w.ok()) {
    return Failure(v1::ERROR_KIND_WORKER_ERROR,
                   StrCat("workload: ", std::string(w.status().message())));
  }
  // Libraries by any name: whether this worker can run the artifact is whether it preloaded
  // what the artifact needs (checked below), not whether it knows the library.
  absl::StatusOr<Target> target = Target::Parse(request.target());
  if (!target.ok()) {
    return Failure(v1::ERROR_KIND_WORKER_ERROR,
                   StrCat("target: ", std::string(target.status().message())));
  }
  const std::string_view runs = device_kind == TargetKind::kCuda   ? "cuda"
                                : device_kind == TargetKind::kRocm ? "rocm"
                                                                   : "llvm";
  if (target->kind != device_kind) {
    return Failure(v1::ERROR_KIND_WORKER_ERROR,
                   StrCat("target '", request.target(), "' is not a ",
                          device_kind == TargetKind::kLlvm ? "CPU" : runs,
                          " target; this worker runs ", runs, " targets only"));
  }
  const v1::Artifact& artifact = request.artifact();
  const v1::ArtifactFormat native = device_kind == TargetKind::kCuda ? v1::ARTIFACT_FORMAT_PTX
                                    : device_kind == TargetKind::kRocm
                                        ? v1::ARTIFACT_FORMAT_HSACO
                                        : v1::ARTIFACT_FORMAT_SHARED_OBJECT;
  if (artifact.format() != v1::ARTIFACT_FORMAT_SHARED_OBJECT && artifact.format() != native) {
    return Failure(v1::ERROR_KIND_WORKER_ERROR,
                   StrCat("artifact.format ", v1::ArtifactFormat_Name(artifact.format()),
                          " is not supported; this worker loads ",
                          native == v1::ARTIFACT_FORMAT_SHARED_OBJECT
                              ? std::string("ARTIFACT_FORMAT_SHARED_OBJECT")
                              : StrCat(v1::ArtifactFormat_Name(native),
                                       " and ARTIFACT_FORMAT_SHARED_OBJECT")));
  }
  if (!IsArtifactHash(artifact.hash())) {
    return Failure(v1::ERROR_KIND_LOAD_ERROR,
                   StrCat("artifact.hash '", artifact.hash().substr(0, 140),
                          "' is not valid; expected 64 lowercase hexadecimal digits (SHA-256)"));
  }
  if (artifact.entry_symbol().empty()) {
    return Failure(v1::ERROR_KIND_LOAD_ERROR, "artifact.entry_symbol is empty");
  }
  if (const double scale = artifact.tolerance_scale();
      scale != 0 && !(scale >= 1 && scale <= kMaxToleranceScale)) {
    return Failure(v1::ERROR_KIND_UNSUPPORTED, StrCat("artifact.tolerance_scale ", scale,
                                                      " is out of range; expected 0 (the "
                                                      "standard bound) or 1 to ",
                                                      kMaxToleranceScale));
  }
  for (const std::string& lib : artifact.needed_libs()) {
    if (!IsLibraryPreloaded(lib, preloaded)) {
      return Failure(v1::ERROR_KIND_WORKER_ERROR,
                     StrCat("artifact needs library '", lib,
                            "', which this worker has not preloaded (start it with --preload)"));
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MeasureSupervisor>> MeasureSupervisor::Create(
    SupervisorOptions options) {
  // A write to a child that just died must be an error, not a signal that ends the worker.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    return absl::InternalError(StrCat("eventfd: ", std::strerror(errno)));
  }
  return std::unique_ptr<MeasureSupervisor>(new MeasureSupervisor(std::move(options), wake_fd));
}

MeasureSupervisor::MeasureSupervisor(SupervisorOptions options, int wake_fd)
    : options_(std::move(options)), wake_fd_(wake_fd) {
  for (const std::string& path : options_.preload_paths) {
    preloaded_basenames_.push_back(Basename(path));
  }
  absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(options_.device);
  device_kind_ = spec.ok() ? spec->kind : TargetKind::kLlvm;
}

MeasureSupervisor::~MeasureSupervisor() {
  if (child_) {
    // Closing its input ends the child's loop; give it a moment, then make sure.
    close(child_->to_child);
    child_->to_child = -1;
    if (ReapWithin(child_->pid, std::chrono::milliseconds(500))) {
      CloseChildFds();
      child_.reset();
    } else {
      KillChild();
    }
  }
  close(wake_fd_);
}

void MeasureSupervisor::CloseChildFds() {
  if (child_->to_child >= 0) {
    close(child_->to_child);
  }
  if (child_->from_child >= 0) {
    close(child_->from_child);
  }
  child_->to_child = child_->from_child = -1;
}

std::string MeasureSupervisor::KillChild() {
  KillProcessGroup(child_->pid, SIGKILL);  // the child leads its own process group
  int status = Reap(child_->pid);
  CloseChildFds();
  child_.reset();
  return DescribeWaitStatus(status);
}

std::string MeasureSupervisor::ReapChild() {
  // The reply pipe closed: the child is dying. Allow it a second before forcing the matter.
  if (std::optional<int> status = ReapWithin(child_->pid, std::chrono::seconds(1))) {
    KillProcessGroup(child_->pid, SIGKILL);  // anything the kernel left behind in its group
    CloseChildFds();
    child_.reset();
    return DescribeWaitStatus(*status);
  }
  return StrCat("closed its reply pipe and was killed (", KillChild(), ")");
}

absl::Status MeasureSupervisor::SpawnChild() {
  SpawnOptions spawn;
  spawn.argv = {options_.child_executable, kMeasureChildFlag};
  spawn.env = options_.child_env;
  spawn.stdout_to_stderr = true;   // whatever a kernel or library prints must not reach our stdout
  spawn.new_process_group = true;  // a terminal's Ctrl-C reaches the worker, not the child
  spawn.default_signals = {SIGPIPE, SIGINT, SIGTERM, SIGHUP};
  spawn.close_other_fds = true;  // the child has 0-4 open, nothing else of ours
  absl::StatusOr<PipedChild> child = SpawnPiped(spawn, kChildRequestFd, kChildReplyFd);
  if (!child.ok()) {
    return absl::UnavailableError(StrCat("measurement process: ", child.status().message()));
  }
  child_ = Child{child->pid, child->to_child, child->from_child};
  ++children_started_;

  v1::MeasureChildRequest setup;
  for (const std::string& path : options_.preload_paths) {
    setup.mutable_setup()->add_preload_paths(path);
  }
  setup.mutable_setup()->set_parent_pid(getpid());
  setup.mutable_setup()->set_device(options_.device);
  for (int cpu : options_.cpus) {
    setup.mutable_setup()->add_cpus(cpu);
  }
  for (const std::string& name : options_.library_versions_of) {
    setup.mutable_setup()->add_library_versions_of(name);
  }
  if (absl::Status s = WriteFrame(child_->to_child, setup); !s.ok()) {
    std::string how = KillChild();
    return absl::UnavailableError(StrCat("measurement process ", how, " before its setup"));
  }
  v1::MeasureChildReply ready;
  std::string error;
  auto deadline = Clock::now() + std::chrono::milliseconds(options_.start_timeout_ms);
  switch (ReadFrame(child_->from_child, &ready, deadline, -1, &error)) {
    case ReadOutcome::kOk:
      break;
    case ReadOutcome::kEof:
      return absl::UnavailableError(
          StrCat("measurement process ", ReapChild(), " during start-up"));
    case ReadOutcome::kDeadline:
      KillChild();
      return absl::UnavailableError(
          StrCat("measurement process did not start within ", options_.start_timeout_ms, " ms"));
    case ReadOutcome::kWoken:
    case ReadOutcome::kError:
      KillChild();
      return absl::UnavailableError(StrCat("measurement process start-up failed: ", error));
  }
  if (!ready.has_ready()) {
    KillChild();
    return absl::UnavailableError("measurement process sent no ready message");
  }
  if (!ready.ready().error().empty()) {
    KillChild();
    return absl::UnavailableError(
        StrCat("measurement process could not preload: ", ready.ready().error()));
  }
  if (!ready.ready().device_error().empty()) {
    KillChild();
    return absl::FailedPreconditionError(ready.ready().device_error());
  }
  gpu_ = ready.ready().gpu();
  library_versions_ = {ready.ready().library_versions().begin(),
                       ready.ready().library_versions().end()};
  Logger("worker")->debug("measurement process {} started", child_->pid);
  return absl::OkStatus();
}

absl::Status MeasureSupervisor::StartChild() {
  if (child_) {
    return absl::OkStatus();
  }
  return SpawnChild();
}

void MeasureSupervisor::Cancel(uint64_t trial_id) {
  std::lock_guard lock(mu_);
  if (current_trial_ == trial_id) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  } else if (std::find(pending_cancels_.begin(), pending_cancels_.end(), trial_id) ==
             pending_cancels_.end()) {
    pending_cancels_.push_back(trial_id);
    if (pending_cancels_.size() > kMaxPendingCancels) {
      pending_cancels_.pop_front();
    }
  }
}

std::optional<v1::Measurement> MeasureSupervisor::CheckRequest(
    const v1::MeasureRequest& request) const {
  std::optional<v1::Measurement> verdict =
      CheckRequestAgainst(request, preloaded_basenames_, device_kind_);
  if (verdict) {
    verdict->set_device_fingerprint(options_.device_fingerprint);
  }
  return verdict;
}

absl::StatusOr<v1::Measurement> MeasureSupervisor::Measure(const v1::MeasureRequest& request,
                                                           const std::string& artifact_path) {
  {
    std::lock_guard lock(mu_);
    if (auto it = std::find(pending_cancels_.begin(), pending_cancels_.end(), request.trial_id());
        it != pending_cancels_.end()) {
      pending_cancels_.erase(it);
      return absl::CancelledError(StrCat("trial ", request.trial_id(), " cancelled"));
    }
    current_trial_ = request.trial_id();
    uint64_t drained;
    while (read(wake_fd_, &drained, sizeof(drained)) > 0) {
    }
  }
  absl::StatusOr<v1::Measurement> result = MeasureValidated(request, artifact_path);
  {
    std::lock_guard lock(mu_);
    current_trial_.reset();
  }
  if (result.ok()) {
    result->set_device_fingerprint(options_.device_fingerprint);
  }
  return result;
}

absl::StatusOr<v1::Measurement> MeasureSupervisor::MeasureValidated(
    const v1::MeasureRequest& request, const std::string& artifact_path) {
  if (std::optional<v1::Measurement> bad =
          CheckRequestAgainst(request, preloaded_basenames_, device_kind_)) {
    return *bad;
  }
  absl::StatusOr<TimingOptions> timing = TimingOptionsFromProto(request.timing());
  if (!timing.ok()) {
    return Failure(v1::ERROR_KIND_WORKER_ERROR, std::string(timing.status().message()));
  }
  const v1::Artifact& artifact = request.artifact();

  v1::MeasureChildRequest trial_request;
  v1::MeasureChildTrial* trial = trial_request.mutable_trial();
  trial->set_trial_id(request.trial_id());
  trial->set_workload(request.workload());
  trial->set_artifact_path(artifact_path);
  trial->set_entry_symbol(artifact.entry_symbol());
  *trial->mutable_needed_libs() = artifact.needed_libs();
  trial->set_format(artifact.format());
  *trial->mutable_launch() = artifact.launch();
  trial->set_tolerance_scale(std::max(1.0, artifact.tolerance_scale()));
  *trial->mutable_timing() = TimingOptionsToProto(*timing);

  // A child that died while idle (killed from outside) is noticed at the write: start another
  // once.
  for (int attempt = 0;; ++attempt) {
    if (!child_) {
      RETURN_IF_ERROR(SpawnChild());  // Unavailable: the worker's problem, not the kernel's
    }
    if (WriteFrame(child_->to_child, trial_request).ok()) {
      break;
    }
    std::string how = ReapChild();
    if (attempt > 0) {
      return absl::UnavailableError(StrCat("measurement process ", how, " before the request"));
    }
  }

  // Phase 1: load the artifact and compute the reference, until the child says "started".
  v1::MeasureChildReply reply;
  std::string error;
  auto deadline = Clock::now() + std::chrono::milliseconds(options_.prepare_timeout_ms);
  bool started = false;
  while (true) {
    reply.Clear();
    ReadOutcome outcome = ReadFrame(child_->from_child, &reply, deadline, wake_fd_, &error);
    switch (outcome) {
      case ReadOutcome::kOk:
        break;
      case ReadOutcome::kEof: {
        std::string how = ReapChild();
        if (started) {
          return Failure(v1::ERROR_KIND_RUNTIME_CRASH,
                         how.starts_with("SIG")
                             ? StrCat("kernel crashed: ", how)
                             : StrCat("kernel ended the measurement process: ", how));
        }
        return Failure(v1::ERROR_KIND_RUNTIME_CRASH,
                       StrCat("measurement process crashed while loading the artifact "
                              "or computing the reference: ",
                              how));
      }
      case ReadOutcome::kDeadline:
        KillChild();
        return started
                   ? Failure(v1::ERROR_KIND_TIMEOUT,
                             StrCat("kernel did not finish within timeout_ms=", timing->timeout_ms,
                                    " (+", options_.timeout_slack_ms,
                                    " ms slack); measurement process killed"))
                   : Failure(
                         v1::ERROR_KIND_TIMEOUT,
                         StrCat("loading the artifact and computing the reference took "
                                "longer than ",
                                options_.prepare_timeout_ms, " ms; measurement process killed"));
      case ReadOutcome::kWoken:
        KillChild();
        return absl::CancelledError(StrCat("trial ", request.trial_id(), " cancelled"));
      case ReadOutcome::kError:
        KillChild();
        return Failure(v1::ERROR_KIND_RUNTIME_CRASH,
                       StrCat("measurement process sent an unreadable reply: ", error));
    }
    if (reply.has_measurement()) {
      if (reply.child_exits()) {
        // A GPU child exits after a sticky error (its context is unusable): reap it (killing
        // it if its driver's teardown lingers), so that the next request starts a fresh one.
        if (ReapWithin(child_->pid, std::chrono::milliseconds(kChildExitWaitMs))) {
          KillProcessGroup(child_->pid, SIGKILL);
          CloseChildFds();
          child_.reset();
        } else {
          KillChild();
        }
      } else if (BindsThreads(request.target())) {
        // A kernel that binds its threads (-bind) leaves them, and the calling thread, pinned:
        // the next trial, bound or not, gets a fresh process.
        KillChild();
      }
      return reply.measurement();
    }
    if (!reply.has_started() || started) {
      KillChild();
      return Failure(v1::ERROR_KIND_RUNTIME_CRASH, "measurement process sent an unexpected reply");
    }
    // Phase 2: warm-up and timing, under the measurement's own deadline.
    started = true;
    deadline = Clock::now() +
               std::chrono::milliseconds(int64_t{timing->timeout_ms} + options_.timeout_slack_ms);
    if (options_.on_kernel_started) {
      options_.on_kernel_started(request.trial_id());
    }
  }
}

}  // namespace tune::rpc
