#include "tests/e2e/harness.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "common/files.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "tuner/api/client.h"

namespace tune::testing {
namespace {

std::string ReadAll(const std::string& path) { return ReadFile(path).value_or(""); }

// Starts argv with stdin from /dev/null and stdout and stderr appended to files (one file when
// the paths are equal).
absl::StatusOr<pid_t> StartProcess(const std::vector<std::string>& argv,
                                   const std::string& out_path, const std::string& err_path,
                                   const std::vector<std::string>& env) {
  SpawnOptions spawn;
  spawn.argv = argv;
  spawn.env = env;
  spawn.stdin_from_dev_null = true;
  spawn.stdout_path = out_path;
  spawn.stderr_path = err_path;
  return Spawn(spawn);
}

std::atomic<int> g_counter{0};

}  // namespace

std::string Binaries::Daemon() { return TUNE_DAEMON_PATH; }
std::string Binaries::FaultDaemon() { return TUNE_FAULT_DAEMON_PATH; }
std::string Binaries::Client() { return TUNE_CLIENT_PATH; }
std::string Binaries::Server() { return TUNE_SERVER_PATH; }
std::string Binaries::Compile() { return TUNE_COMPILE_PATH; }

TempDir::TempDir() : dir_(tune::TempDir::Create("tune-test-").value()) {}

absl::StatusOr<std::unique_ptr<Process>> Process::Start(const std::vector<std::string>& argv,
                                                        const std::string& log_path,
                                                        const std::vector<std::string>& env) {
  absl::StatusOr<pid_t> pid = StartProcess(argv, log_path, log_path, env);
  if (!pid.ok()) {
    return pid.status();
  }
  return std::unique_ptr<Process>(new Process(*pid, log_path));
}

Process::~Process() { Kill(); }

bool Process::Running() { return !Wait(milliseconds(0)).has_value(); }

void Process::Signal(int sig) {
  if (!exit_code_) {
    kill(pid_, sig);
  }
}

void Process::Kill() {
  if (exit_code_) {
    return;
  }
  kill(pid_, SIGKILL);
  exit_code_ = ExitCodeOf(Reap(pid_));
}

std::optional<int> Process::Wait(milliseconds timeout) {
  if (!exit_code_) {
    if (std::optional<int> status = ReapWithin(pid_, timeout)) {
      exit_code_ = ExitCodeOf(*status);
    }
  }
  return exit_code_;
}

std::string Process::Log() const { return ReadAll(log_path_); }

CommandResult RunCommand(const std::vector<std::string>& argv, seconds timeout) {
  TempDir dir;
  const std::string out = dir.File("stdout");
  const std::string err = dir.File("stderr");
  CommandResult result;
  absl::StatusOr<pid_t> pid = StartProcess(argv, out, err, {});
  if (!pid.ok()) {
    result.err = std::string(pid.status().message());
    return result;
  }
  std::optional<int> status = ReapWithin(*pid, timeout);
  if (!status) {
    kill(*pid, SIGKILL);
    Reap(*pid);
    result.out = ReadAll(out);
    result.err = ReadAll(err) + "\n[killed: timed out]";
    return result;
  }
  result.exit_code = ExitCodeOf(*status);
  result.out = ReadAll(out);
  result.err = ReadAll(err);
  return result;
}

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const TempDir& dir, const std::string& db,
                                                      const DaemonFlags& flags) {
  const int n = g_counter++;
  const std::string port_file = dir.File(StrCat("daemon-", n, ".port"));
  std::vector<std::string> argv = {
      flags.fault_templates ? Binaries::FaultDaemon() : Binaries::Daemon(),
      "--listen",
      StrCat("127.0.0.1:", flags.port),
      "--db",
      db,
      "--port-file",
      port_file,
      "--local-workers",
      std::to_string(flags.local_workers),
      "--worker-binary",
      Binaries::Server(),
      "--heartbeat-ms",
      std::to_string(flags.heartbeat_ms),
      "--worker-deadline-ms",
      std::to_string(flags.worker_deadline_ms),
      "--build-threads",
      std::to_string(flags.build_threads)};
  const std::string http_port_file = dir.File(StrCat("daemon-", n, ".http-port"));
  if (flags.http) {
    argv.insert(argv.end(), {"--http", "127.0.0.1:0", "--http-port-file", http_port_file});
  }
  argv.insert(argv.end(), flags.extra.begin(), flags.extra.end());
  std::unique_ptr<Daemon> daemon(new Daemon());
  absl::StatusOr<std::unique_ptr<Process>> process =
      Process::Start(argv, dir.File(StrCat("daemon-", n, ".log")), flags.env);
  if (!process.ok()) {
    return process.status();
  }
  daemon->process_ = std::move(*process);
  bool ready = WaitFor(
      [&] {
        std::ifstream in(port_file);
        int port = 0;
        if (in >> port && port > 0) {
          daemon->port_ = port;
          return true;
        }
        return !daemon->process_->Running();
      },
      seconds(30));
  if (!ready || daemon->port_ == 0) {
    return absl::UnavailableError(StrCat("tune-daemon did not start:\n", daemon->process_->Log()));
  }
  // The HTTP port file is written before the gRPC one.
  if (flags.http && !(std::ifstream(http_port_file) >> daemon->http_port_)) {
    return absl::UnavailableError(
        StrCat("tune-daemon wrote no HTTP port file:\n", daemon->process_->Log()));
  }
  return daemon;
}

std::string Daemon::address() const { return StrCat("127.0.0.1:", port_); }

absl::StatusOr<std::unique_ptr<Process>> StartWorker(const TempDir& dir,
                                                     const std::string& daemon_address,
                                                     const std::string& name,
                                                     const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Binaries::Server(),
                                   "--daemon",
                                   daemon_address,
                                   "--device",
                                   "cpu",
                                   "--name",
                                   name,
                                   "--cache-dir",
                                   dir.File(name + "-cache")};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return Process::Start(argv, dir.File(name + ".log"));
}

CommandResult RunClient(const std::string& address, const std::vector<std::string>& args,
                        seconds timeout) {
  std::vector<std::string> argv = {Binaries::Client(), "--daemon", address};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, timeout);
}

bool WaitFor(const std::function<bool()>& done, milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (done()) {
      return true;
    }
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
}

absl::StatusOr<v1::Job> GetJob(const std::string& address, uint64_t job_id) {
  tuner::TunerClient client(address, seconds(10));
  return client.GetJob(job_id);
}

absl::StatusOr<v1::Job> WaitForJob(const std::string& address, uint64_t job_id,
                                   milliseconds timeout) {
  tuner::TunerClient client(address, seconds(10));
  absl::StatusOr<v1::Job> job = absl::DeadlineExceededError("not polled yet");
  bool done = WaitFor(
      [&] {
        job = client.GetJob(job_id);
        if (!job.ok()) {
          return false;
        }
        v1::JobState s = job->state();
        return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED ||
               s == v1::JOB_STATE_CANCELLED;
      },
      timeout);
  if (!done) {
    return absl::DeadlineExceededError(
        StrCat("job ", job_id, " did not finish in time; last seen: ",
               job.ok() ? job->DebugString() : std::string(job.status().message())));
  }
  return job;
}

absl::StatusOr<v1::Job> SubmitJob(const std::string& address, const v1::JobSpec& spec) {
  tuner::TunerClient client(address, seconds(30));
  return client.SubmitJob(spec);
}

v1::JobSpec FastSpec(const std::string& workload, int trials) {
  v1::JobSpec spec;
  spec.set_workload(workload);
  spec.set_target("llvm -mcpu=native -threads=1");
  spec.set_trials(trials);
  spec.set_strategy("random");
  spec.mutable_timing()->set_number(1);
  spec.mutable_timing()->set_repeat(2);
  spec.mutable_timing()->set_min_repeat_ms(1);
  return spec;
}

absl::StatusOr<int> ConnectedWorkers(const std::string& address) {
  tuner::TunerClient client(address, seconds(10));
  absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers(false);
  if (!workers.ok()) {
    return workers.status();
  }
  return static_cast<int>(workers->size());
}

absl::StatusOr<v1::WorkerInfo> ConnectedWorker(const std::string& address,
                                               const std::string& name) {
  tuner::TunerClient client(address, seconds(10));
  absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers(false);
  if (!workers.ok()) {
    return workers.status();
  }
  for (const v1::WorkerInfo& w : *workers) {
    if (w.name() == name) {
      return w;
    }
  }
  return absl::NotFoundError(StrCat("no connected worker called ", name));
}

std::vector<pid_t> ChildPids(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) {
      continue;
    }
    std::istringstream rest(stat.substr(paren + 1));
    char state = 0;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent && state != 'Z') {
      children.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return children;
}

}  // namespace tune::testing
