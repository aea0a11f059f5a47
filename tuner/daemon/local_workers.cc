#include "tuner/daemon/local_workers.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "common/host.h"
#include "common/logging.h"
#include "common/strings.h"
#include "common/subprocess.h"

namespace tune::tuner {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr auto kFirstRestartDelay = std::chrono::milliseconds(200);
constexpr auto kMaxRestartDelay = std::chrono::seconds(10);
// A worker that ran this long before dying is restarted after the first delay again.
constexpr auto kHealthyRun = std::chrono::seconds(30);
constexpr auto kStopGrace = std::chrono::seconds(3);

}  // namespace

absl::StatusOr<std::string> FindWorkerBinary() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // Installed and in the build tree alike, tune-server sits beside tune-daemon in bin/.
    fs::path candidate = self.parent_path() / "tune-server";
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  const char* path = getenv("PATH");
  for (std::string_view dir : Split(path == nullptr ? "" : path, ':', /*skip_empty=*/true)) {
    fs::path candidate = fs::path(dir) / "tune-server";
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return absl::NotFoundError(StrCat("no tune-server next to ", ec ? "this program" : self.string(),
                                    " nor on PATH; pass --worker-binary PATH"));
}

absl::StatusOr<std::unique_ptr<LocalWorkers>> LocalWorkers::Start(LocalWorkerOptions options) {
  if (access(options.binary.c_str(), F_OK) != 0) {
    return absl::NotFoundError(StrCat("worker binary ", options.binary, " does not exist"));
  }
  if (access(options.binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        StrCat("worker binary ", options.binary, " is not executable"));
  }
  std::unique_ptr<LocalWorkers> workers(new LocalWorkers(std::move(options)));
  {
    std::lock_guard lock(workers->mu_);
    workers->pids_.assign(workers->options_.count, -1);
  }
  // Spawned from the supervising thread: PR_SET_PDEATHSIG follows the thread that forked.
  workers->supervisor_ = std::thread([w = workers.get()] { w->Supervise(); });
  return workers;
}

LocalWorkers::~LocalWorkers() { Stop(); }

void LocalWorkers::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (supervisor_.joinable()) {
    supervisor_.join();
  }
}

std::vector<pid_t> LocalWorkers::Pids() const {
  std::lock_guard lock(mu_);
  return pids_;
}

pid_t LocalWorkers::Spawn(int index) {
  SpawnOptions spawn;
  spawn.argv = {options_.binary, "--daemon", options_.daemon_address, "--name",
                StrCat(HostName(), "-local-", index)};
  if (!options_.log_level.empty()) {
    spawn.argv.push_back("--log-level");
    spawn.argv.push_back(options_.log_level);
  }
  spawn.argv.insert(spawn.argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  spawn.env = options_.env;
  spawn.parent_death_signal = SIGTERM;  // no worker outlives a killed daemon
  absl::StatusOr<pid_t> pid = tune::Spawn(spawn);
  if (!pid.ok()) {
    Logger("daemon")->error("cannot start local worker {}: {}", index, pid.status().message());
    return -1;
  }
  Logger("daemon")->info("started local worker {} (pid {})", index, *pid);
  return *pid;
}

void LocalWorkers::Supervise() {
  const int n = options_.count;
  std::vector<Clock::time_point> started(n), restart_at(n, Clock::now());
  std::vector<Clock::duration> delay(n, kFirstRestartDelay);
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) {
      if (pids_[i] > 0) {
        std::optional<int> status = TryReap(pids_[i]);
        if (!status) {
          continue;
        }
        bool healthy = now - started[i] > kHealthyRun;
        if (healthy) {
          delay[i] = kFirstRestartDelay;
        }
        Logger("daemon")->warn(
            "local worker {} (pid {}) {}; restarting in {} ms", i, pids_[i],
            DescribeWaitStatus(*status),
            std::chrono::duration_cast<std::chrono::milliseconds>(delay[i]).count());
        pids_[i] = -1;
        restart_at[i] = now + delay[i];
        delay[i] = std::min<Clock::duration>(delay[i] * 2, kMaxRestartDelay);
      } else if (now >= restart_at[i]) {
        pids_[i] = Spawn(i);
        started[i] = now;
        if (pids_[i] < 0) {
          restart_at[i] = now + delay[i];
          delay[i] = std::min<Clock::duration>(delay[i] * 2, kMaxRestartDelay);
        }
      }
    }
    cv_.wait_for(lock, kPoll, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
  }
  // Stopping: TERM, a grace period, then KILL.
  for (pid_t pid : pids_) {
    if (pid > 0) {
      kill(pid, SIGTERM);
    }
  }
  const Clock::time_point give_up = Clock::now() + kStopGrace;
  while (true) {
    bool alive = false;
    for (pid_t& pid : pids_) {
      if (pid <= 0) {
        continue;
      }
      if (TryReap(pid)) {
        pid = -1;
      } else {
        alive = true;
      }
    }
    if (!alive) {
      break;
    }
    if (Clock::now() >= give_up) {
      for (pid_t& pid : pids_) {
        if (pid <= 0) {
          continue;
        }
        kill(pid, SIGKILL);
        Reap(pid);
        pid = -1;
      }
      break;
    }
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lock.lock();
  }
}

}  // namespace tune::tuner
