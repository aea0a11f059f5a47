// The measurement supervisor: measures one MeasureRequest at a time in a child process that it
// starts by re-executing a binary (tune-server itself, /proc/self/exe) with --measure-child,
// never by fork() alone. It gives each measurement a deadline, kills the child when the deadline
// passes (TIMEOUT), recognises a child that died (RUNTIME_CRASH naming the signal), and starts a
// fresh child for the next request. Every failure of the kernel is data in the returned
// Measurement; a failure of the worker itself (no child can start) is an error status, which
// the worker reports as a worker_error, never as the kernel's verdict.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/target.h"
#include "tune/v1/worker.pb.h"

namespace tune::rpc {

struct SupervisorOptions {
  /// The binary re-executed as the child; it must handle --measure-child (see main.cc).
  std::string child_executable = "/proc/self/exe";
  /// Libraries every child preloads (RTLD_NOW | RTLD_GLOBAL, in order) before any kernel.
  std::vector<std::string> preload_paths;
  /// The device kernels run on: "cpu", "cuda:N" or "rocm:N" (device_info.h ParseDeviceSpec).
  /// Each child opens a GPU itself; a child that cannot is a start-up failure.
  std::string device = "cpu";
  /// Stamped on every Measurement.
  std::string device_fingerprint;
  /// CPUs the child is pinned to (its kernels' threads included); empty: any.
  std::vector<int> cpus;
  /// Libraries (names as in --libs) whose versions each child reports at start-up
  /// (library_versions()); a worker asks its probe child only.
  std::vector<std::string> library_versions_of;
  /// "NAME=value" entries added to (or replacing in) the child's environment.
  std::vector<std::string> child_env;
  /// Added to TimingOptions::timeout_ms before the child is killed.
  int timeout_slack_ms = 1000;
  /// Limit for starting a child and preloading its libraries.
  int start_timeout_ms = 30000;
  /// Limit for loading an artifact and computing its reference output (not counted in
  /// timeout_ms: the reference is not the kernel's time).
  int prepare_timeout_ms = 120000;
  /// Called on the measuring thread with the trial id once the child reports that it has
  /// loaded the artifact and starts the kernel (warm-up and timing): from then on the kernel's
  /// deadline runs, and Cancel of that trial kills a running kernel. Optional; it must not call
  /// Measure.
  std::function<void(uint64_t trial_id)> on_kernel_started;
};

class MeasureSupervisor {
 public:
  /// Cancels of trials not yet measured that are remembered (see Cancel).
  static constexpr size_t kMaxPendingCancels = 1024;

  /// Starts no child yet. Fails (Internal) only when the process is out of descriptors.
  static absl::StatusOr<std::unique_ptr<MeasureSupervisor>> Create(SupervisorOptions options);

  /// Ends the child: closes its input (it exits) and kills it if it lingers.
  ~MeasureSupervisor();
  MeasureSupervisor(const MeasureSupervisor&) = delete;
  MeasureSupervisor& operator=(const MeasureSupervisor&) = delete;

  /// Starts a child now if none is running, so that a start-up problem shows before the first
  /// request. Returns why it could not start (the same text Measure would report); a GPU the
  /// child could not open is FailedPrecondition with the child's message (gpu() is set when it
  /// could).
  absl::Status StartChild();

  /// The verdict on a request that needs no child: a workload, target, format, timing or needed
  /// library this worker cannot run gives a Measurement (UNSUPPORTED or LOAD_ERROR); nullopt
  /// when the request can be measured.
  std::optional<v1::Measurement> CheckRequest(const v1::MeasureRequest& request) const;

  /// Measures one request whose code is the file `artifact_path`. Returns Cancelled when
  /// Cancel(request.trial_id()) stopped it, and Unavailable when the worker could not measure
  /// (no measurement process could start, or one died before it took the request twice in a
  /// row): not the kernel's fault. Every other outcome, including an invalid request, a crash
  /// and a timeout, is a Measurement with an error kind and message. Not thread-safe: one
  /// caller at a time.
  absl::StatusOr<v1::Measurement> Measure(const v1::MeasureRequest& request,
                                          const std::string& artifact_path);

  /// Stops the measurement of `trial_id` if it is running (its child is killed and Measure
  /// returns Cancelled), or makes a later Measure of that trial return Cancelled at once. The
  /// last kMaxPendingCancels such cancels are kept, whatever order their trials come in.
  /// Thread-safe.
  void Cancel(uint64_t trial_id);

  /// Children started so far (a crash or timeout makes the next request start a new one).
  int children_started() const { return children_started_; }
  /// The running child's pid, or -1.
  pid_t child_pid() const { return child_ ? child_->pid : -1; }
  /// The GPU the last child opened (empty for a CPU device or before a child started).
  const v1::GpuDevice& gpu() const { return gpu_; }
  /// The versions the last child reported of SupervisorOptions::library_versions_of, by name.
  const std::map<std::string, std::string>& library_versions() const { return library_versions_; }

 private:
  struct Child {
    pid_t pid = -1;
    int to_child = -1;    // requests (its kChildRequestFd)
    int from_child = -1;  // replies (its kChildReplyFd)
  };

  MeasureSupervisor(SupervisorOptions options, int wake_fd);

  absl::StatusOr<v1::Measurement> MeasureValidated(const v1::MeasureRequest& request,
                                                   const std::string& artifact_path);
  absl::Status SpawnChild();
  /// SIGKILLs the child's process group and reaps it; returns how it ended.
  std::string KillChild();
  /// Reaps a child that closed its reply pipe (killing it if it lingers); returns how it
  /// ended, e.g. "SIGSEGV (Segmentation fault)" or "exited with status 3".
  std::string ReapChild();
  void CloseChildFds();

  SupervisorOptions options_;
  std::vector<std::string> preloaded_basenames_;
  TargetKind device_kind_ = TargetKind::kLlvm;
  std::optional<Child> child_;
  int children_started_ = 0;
  v1::GpuDevice gpu_;
  std::map<std::string, std::string> library_versions_;
  int wake_fd_;  // eventfd, written by Cancel

  std::mutex mu_;
  std::optional<uint64_t> current_trial_ ABSL_GUARDED_BY(mu_);
  // Trials cancelled before their Measure began, oldest first; each is dropped when its Measure
  // comes, and the oldest beyond kMaxPendingCancels (trials that never came).
  std::deque<uint64_t> pending_cancels_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tune::rpc
