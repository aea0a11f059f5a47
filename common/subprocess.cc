#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <thread>

#include "common/strings.h"

extern char** environ;

namespace tune {
namespace {

// This process's environment with `overrides` ("NAME=value") replacing or adding entries.
std::vector<std::string> ChildEnvironment(const std::vector<std::string>& overrides) {
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                [&](const std::string& o) { return name_of(o) == name_of(entry); });
    if (!replaced) {
      env.emplace_back(entry);
    }
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

// Descriptors the parent opened or duplicated for one Spawn; closed when it returns.
class OwnedFds {
 public:
  OwnedFds() = default;
  OwnedFds(const OwnedFds&) = delete;
  OwnedFds& operator=(const OwnedFds&) = delete;
  ~OwnedFds() {
    for (int fd : fds_) {
      close(fd);
    }
  }
  int Add(int fd) {
    if (fd >= 0) {
      fds_.push_back(fd);
    }
    return fd;
  }

 private:
  std::vector<int> fds_;
};

// Closes every descriptor >= 3 except those in `keep` (sorted). Async-signal-safe.
void CloseAllExcept(const std::vector<int>& keep, int max_fd) {
  unsigned lo = 3;
  auto close_span = [max_fd](unsigned first, unsigned last) {
    if (first > last) {
      return;
    }
    if (close_range(first, last, 0) != 0) {
      for (unsigned fd = first; fd <= last && fd < static_cast<unsigned>(max_fd); ++fd) {
        close(static_cast<int>(fd));
      }
    }
  };
  for (int fd : keep) {
    if (fd < 3 || static_cast<unsigned>(fd) < lo) {
      continue;
    }
    if (static_cast<unsigned>(fd) > lo) {
      close_span(lo, static_cast<unsigned>(fd) - 1);
    }
    lo = static_cast<unsigned>(fd) + 1;
  }
  close_span(lo, ~0u);
}

[[noreturn]] void ChildFailed(int error_fd) {
  int error = errno;
  [[maybe_unused]] ssize_t n = write(error_fd, &error, sizeof(error));
  _exit(127);
}

}  // namespace

absl::StatusOr<pid_t> Spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return absl::InvalidArgumentError("Spawn: argv is empty");
  }
  const std::string& program = options.argv[0];
  auto unavailable = [&program](std::string_view what, int error) {
    return absl::UnavailableError(StrCat("cannot start ", program, ": ", what, strerror(error)));
  };
  OwnedFds owned;

  // Where each child descriptor comes from: redirections first, then the explicit mappings.
  std::vector<FdMapping> plan;
  auto assign = [&plan](int parent_fd, int child_fd) {
    std::erase_if(plan, [child_fd](const FdMapping& m) { return m.child_fd == child_fd; });
    plan.push_back({parent_fd, child_fd});
  };
  auto open_file = [&](const std::string& path, int flags) -> absl::StatusOr<int> {
    int fd = owned.Add(open(path.c_str(), flags | O_CLOEXEC, 0644));
    if (fd < 0) {
      return unavailable(StrCat(path, ": "), errno);
    }
    return fd;
  };
  if (options.stdin_from_dev_null) {
    absl::StatusOr<int> fd = open_file("/dev/null", O_RDONLY);
    if (!fd.ok()) {
      return fd.status();
    }
    assign(*fd, STDIN_FILENO);
  }
  const int kAppend = O_WRONLY | O_CREAT | O_APPEND;
  if (!options.stdout_path.empty()) {
    absl::StatusOr<int> fd = open_file(options.stdout_path, kAppend);
    if (!fd.ok()) {
      return fd.status();
    }
    assign(*fd, STDOUT_FILENO);
    if (options.stderr_path.empty() || options.stderr_path == options.stdout_path) {
      assign(*fd, STDERR_FILENO);
    }
  }
  if (!options.stderr_path.empty() && options.stderr_path != options.stdout_path) {
    absl::StatusOr<int> fd = open_file(options.stderr_path, kAppend);
    if (!fd.ok()) {
      return fd.status();
    }
    assign(*fd, STDERR_FILENO);
  }
  if (options.stdout_to_stderr) {
    auto err = std::find_if(plan.begin(), plan.end(),
                            [](const FdMapping& m) { return m.child_fd == STDERR_FILENO; });
    assign(err != plan.end() ? err->parent_fd : STDERR_FILENO, STDOUT_FILENO);
  }
  for (size_t i = 0; i < options.fds.size(); ++i) {
    const FdMapping& m = options.fds[i];
    if (m.parent_fd < 0 || m.child_fd < 0) {
      return absl::InvalidArgumentError(
          StrCat("Spawn: fds[", i, "] maps ", m.parent_fd, " to ", m.child_fd));
    }
    for (size_t j = 0; j < i; ++j) {
      if (options.fds[j].child_fd == m.child_fd) {
        return absl::InvalidArgumentError(
            StrCat("Spawn: child descriptor ", m.child_fd, " is mapped twice"));
      }
    }
    assign(m.parent_fd, m.child_fd);
  }

  // Copy every source above every target, so that no dup2 in the child overwrites a source
  // that a later dup2 still needs; the copies are close-on-exec.
  int base = STDERR_FILENO + 1;
  std::vector<int> kept;  // descriptors the child keeps open (besides 0, 1, 2)
  for (const FdMapping& m : plan) {
    base = std::max(base, m.child_fd + 1);
    kept.push_back(m.child_fd);
  }
  std::vector<FdMapping> moves;  // {high copy, target}
  for (const FdMapping& m : plan) {
    int copy = owned.Add(fcntl(m.parent_fd, F_DUPFD_CLOEXEC, base));
    if (copy < 0) {
      return unavailable(StrCat("descriptor ", m.parent_fd, ": "), errno);
    }
    moves.push_back({copy, m.child_fd});
  }
  // The child reports a failure before exec (errno) here; exec closes it, so EOF means started.
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return unavailable("pipe: ", errno);
  }
  const int error_read = owned.Add(error_pipe[0]);
  // Moved above the targets too; the parent must hold no write end once the child runs (its
  // read sees EOF only when every write end is closed).
  const int error_write = fcntl(error_pipe[1], F_DUPFD_CLOEXEC, base);
  const int dup_errno = errno;
  close(error_pipe[1]);
  if (error_write < 0) {
    return unavailable("pipe: ", dup_errno);
  }
  kept.push_back(error_write);
  std::sort(kept.begin(), kept.end());

  std::vector<std::string> env = ChildEnvironment(options.env);
  std::vector<std::string> args = options.argv;
  std::vector<char*> envp = CStrings(env);
  std::vector<char*> argv = CStrings(args);
  struct rlimit files_limit = {};
  getrlimit(RLIMIT_NOFILE, &files_limit);
  const int max_fd = files_limit.rlim_cur == RLIM_INFINITY
                         ? 1 << 20
                         : static_cast<int>(std::min<rlim_t>(files_limit.rlim_cur, 1 << 20));
  const pid_t parent = getpid();

  // No handler of ours may run in the child between fork and exec.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction action = {};
      if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &action) != 0) {
        continue;
      }
      bool forced = std::find(options.default_signals.begin(), options.default_signals.end(),
                              sig) != options.default_signals.end();
      if (forced || (action.sa_handler != SIG_IGN && action.sa_handler != SIG_DFL)) {
        struct sigaction defaults = {};
        defaults.sa_handler = SIG_DFL;
        sigemptyset(&defaults.sa_mask);
        sigaction(sig, &defaults, nullptr);
      }
    }
    if (options.parent_death_signal != 0) {
      if (prctl(PR_SET_PDEATHSIG, options.parent_death_signal) != 0) {
        ChildFailed(error_write);
      }
      if (getppid() != parent) {
        _exit(127);  // the parent is gone already: start nothing
      }
    }
    if (options.new_process_group && setpgid(0, 0) != 0) {
      ChildFailed(error_write);
    }
    for (const FdMapping& m : moves) {
      if (dup2(m.parent_fd, m.child_fd) < 0) {
        ChildFailed(error_write);
      }
    }
    if (options.close_other_fds) {
      CloseAllExcept(kept, max_fd);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv.data(), envp.data());
    ChildFailed(error_write);
  }
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  close(error_write);  // the child's copy closes at its exec
  if (pid < 0) {
    return unavailable("fork: ", fork_errno);
  }
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(error_read, &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof(child_errno))) {
    Reap(pid);
    return unavailable("", child_errno);
  }
  return pid;
}

absl::StatusOr<PipedChild> SpawnPiped(SpawnOptions options, int request_fd, int reply_fd) {
  int req[2], rep[2];
  if (pipe2(req, O_CLOEXEC) != 0) {
    return absl::UnavailableError(StrCat("pipe: ", strerror(errno)));
  }
  if (pipe2(rep, O_CLOEXEC) != 0) {
    const int error = errno;
    close(req[0]);
    close(req[1]);
    return absl::UnavailableError(StrCat("pipe: ", strerror(error)));
  }
  options.fds.push_back({req[0], request_fd});
  options.fds.push_back({rep[1], reply_fd});
  absl::StatusOr<pid_t> pid = Spawn(options);
  close(req[0]);
  close(rep[1]);
  if (!pid.ok()) {
    close(req[1]);
    close(rep[0]);
    return pid.status();
  }
  return PipedChild{*pid, req[1], rep[0]};
}

void KillProcessGroup(pid_t pid, int sig) {
  if (pid <= 0) {
    return;
  }
  kill(-pid, sig);
  kill(pid, sig);
}

std::optional<int> TryReap(pid_t pid) {
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      return status;
    }
    if (r == 0) {
      return std::nullopt;
    }
    if (errno != EINTR) {
      return -1;
    }
  }
}

int Reap(pid_t pid) {
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, 0) == pid) {
      return status;
    }
    if (errno != EINTR) {
      return -1;
    }
  }
}

std::optional<int> ReapWithin(pid_t pid, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (std::optional<int> status = TryReap(pid)) {
      return status;
    }
    if (std::chrono::steady_clock::now() >= until) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string DescribeWaitStatus(int status) {
  if (status != -1 && WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    const char* text = strsignal(sig);
    std::string name = abbrev != nullptr ? StrCat("SIG", abbrev) : StrCat("signal ", sig);
    return text != nullptr ? StrCat(name, " (", text, ")") : name;
  }
  if (status != -1 && WIFEXITED(status)) {
    return StrCat("exited with status ", WEXITSTATUS(status));
  }
  return StrCat("ended with wait status ", status);
}

int ExitCodeOf(int status) {
  if (status == -1) {
    return -1;
  }
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return -1;
}

}  // namespace tune
