// Test harness for the cross-process suites (e2e, fault): starts real tune-daemon and
// tune-server processes on 127.0.0.1 (port 0 + --port-file), runs tune-client and other
// programs capturing their output and exit code, and kills every process it started when the
// owning object goes away, on every path out of a test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/files.h"
#include "tune/v1/tuner.pb.h"

namespace tune::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

/// Built executables (absolute paths, from the build system).
struct Binaries {
  static std::string Daemon();
  /// tune-fault-daemon: tune-daemon with the fault templates (tests/fault/fault_templates.h).
  static std::string FaultDaemon();
  static std::string Client();
  static std::string Server();
  static std::string Compile();
};

/// A fresh directory under $TMPDIR, removed with its contents (common/files.h's TempDir,
/// created in the constructor; a test that cannot create one aborts).
class TempDir {
 public:
  TempDir();
  const std::string& path() const { return dir_.path(); }
  std::string File(std::string_view name) const { return dir_.File(name); }

 private:
  tune::TempDir dir_;
};

/// A child process with stdout and stderr going to one log file. SIGKILLed and reaped when
/// destroyed if still running.
class Process {
 public:
  /// Starts argv[0] (a path) with the environment plus `env` ("NAME=value").
  static absl::StatusOr<std::unique_ptr<Process>> Start(const std::vector<std::string>& argv,
                                                        const std::string& log_path,
                                                        const std::vector<std::string>& env = {});
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  /// True until it has exited (and been reaped).
  bool Running();
  void Signal(int sig);
  /// SIGKILL and reap.
  void Kill();
  /// The exit code (128 + signal when killed), or nullopt if still running after `timeout`.
  std::optional<int> Wait(milliseconds timeout);
  /// Everything it wrote so far.
  std::string Log() const;

 private:
  Process(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
  std::optional<int> exit_code_;
};

/// The outcome of a command run to completion.
struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed; -1 when it could not start or timed out
  std::string out;
  std::string err;
};

/// Runs a command to completion (killed after `timeout`), capturing stdout and stderr.
CommandResult RunCommand(const std::vector<std::string>& argv, seconds timeout = seconds(120));

struct DaemonFlags {
  int local_workers = 0;
  int port = 0;  // 0: a free one
  int heartbeat_ms = 200;
  int worker_deadline_ms = 3000;
  int build_threads = 2;
  bool http = false;             // also serve the dashboard and JSON API (--http) on a free port
  bool fault_templates = false;  // run tune-fault-daemon: jobs may name the fault templates
  std::vector<std::string> extra = {};  // more flags
  std::vector<std::string> env = {};    // "NAME=value" added to its environment
};

/// A tune-daemon (or tune-fault-daemon) process on 127.0.0.1.
class Daemon {
 public:
  /// Starts it with --db `db` and waits (up to 30 s) for its port file. Its log goes to
  /// `dir`/daemon-<n>.log.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const TempDir& dir, const std::string& db,
                                                       const DaemonFlags& flags = {});
  int port() const { return port_; }
  std::string address() const;
  /// The port of --http (DaemonFlags::http); 0 without it.
  int http_port() const { return http_port_; }
  Process& process() { return *process_; }

 private:
  Daemon() = default;
  std::unique_ptr<Process> process_;
  int port_ = 0;
  int http_port_ = 0;
};

/// Starts a tune-server that dials `daemon_address`, named `name`, logging to `dir`/<name>.log.
absl::StatusOr<std::unique_ptr<Process>> StartWorker(const TempDir& dir,
                                                     const std::string& daemon_address,
                                                     const std::string& name,
                                                     const std::vector<std::string>& extra = {});

/// Runs tune-client --daemon `address` `args...`.
CommandResult RunClient(const std::string& address, const std::vector<std::string>& args,
                        seconds timeout = seconds(120));

/// Polls `done` every 50 ms until it returns true (true) or `timeout` passes (false).
bool WaitFor(const std::function<bool()>& done, milliseconds timeout);

/// GetJob over gRPC; fails the calling test's expectations through its status.
absl::StatusOr<v1::Job> GetJob(const std::string& address, uint64_t job_id);

/// Polls until the job reaches a final state; the last Job seen, or DeadlineExceeded.
absl::StatusOr<v1::Job> WaitForJob(const std::string& address, uint64_t job_id,
                                   milliseconds timeout);

/// Submits over gRPC.
absl::StatusOr<v1::Job> SubmitJob(const std::string& address, const v1::JobSpec& spec);

/// A job spec with fast timing (min_repeat_ms 1, repeat 2, number 1), strategy random, target
/// "llvm -mcpu=native -threads=1".
v1::JobSpec FastSpec(const std::string& workload, int trials);

/// The number of workers the daemon lists as connected.
absl::StatusOr<int> ConnectedWorkers(const std::string& address);

/// The connected worker called `name` as the daemon lists it, or NotFound.
absl::StatusOr<v1::WorkerInfo> ConnectedWorker(const std::string& address, const std::string& name);

/// Pids of the live child processes of `parent` (from /proc).
std::vector<pid_t> ChildPids(pid_t parent);

}  // namespace tune::testing
