// Starting and ending child processes: one fork + exec path for every program tune starts (the
// measurement child of tune-server, the daemon's local workers, the test harness's processes).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tune {

/// A descriptor of the parent that the child gets as another number.
struct FdMapping {
  int parent_fd;  // open in the parent (close-on-exec or not: the child gets a copy either way)
  int child_fd;   // its number in the child
};

/// How to start a process. The child always starts with an empty signal mask and every caught
/// signal at its default action (exec does the latter anyway).
struct SpawnOptions {
  /// argv[0] is the path executed (no PATH search) and the child's argv[0].
  std::vector<std::string> argv;
  /// "NAME=value" entries that replace or add to this process's environment for the child.
  std::vector<std::string> env;
  /// Descriptors given to the child, applied after the redirections below (so a mapping to 1
  /// or 2 wins). Child numbers must be distinct.
  std::vector<FdMapping> fds;
  /// stdin from /dev/null instead of this process's stdin.
  bool stdin_from_dev_null = false;
  /// When not empty, stdout (and stderr, if `stderr_path` is empty or the same path) is
  /// appended to this file, created 0644 if missing.
  std::string stdout_path;
  /// When not empty and not `stdout_path`, stderr is appended to this file.
  std::string stderr_path;
  /// The child's stdout goes where its stderr goes (nothing a child prints reaches our stdout).
  bool stdout_to_stderr = false;
  /// The child leads a new process group (a terminal's Ctrl-C then reaches us, not it, and
  /// KillProcessGroup reaches everything it starts).
  bool new_process_group = false;
  /// When not 0, the child receives this signal when the thread that spawned it ends
  /// (PR_SET_PDEATHSIG), and never starts if that thread's process is already gone.
  int parent_death_signal = 0;
  /// Signals set to their default action in the child even if this process ignores them.
  std::vector<int> default_signals;
  /// Close every descriptor of the child except 0, 1, 2 and the mapped ones.
  bool close_other_fds = false;
};

/// Starts a process and returns its pid once it has exec'd. Fails (InvalidArgument for empty
/// argv or a bad mapping, Unavailable naming argv[0] and the system's reason for a file that
/// cannot be opened, a fork failure or an exec failure such as a missing or non-executable
/// program) without leaving a child behind.
absl::StatusOr<pid_t> Spawn(const SpawnOptions& options);

/// A child started with SpawnPiped and our ends of its two pipes (close-on-exec).
struct PipedChild {
  pid_t pid = -1;
  int to_child = -1;    // we write; the child reads it as `request_fd`
  int from_child = -1;  // we read; the child writes it as `reply_fd`
};

/// Spawn with two pipes: the child gets the read end of one as `request_fd` and the write end
/// of the other as `reply_fd` (added to options.fds). Our copies of the child's ends are closed
/// before it returns, so the child's exit shows as end-of-file. On failure nothing stays open.
absl::StatusOr<PipedChild> SpawnPiped(SpawnOptions options, int request_fd, int reply_fd);

/// Sends `sig` to the process group led by `pid` and to `pid` itself (in case it has not led
/// a group). Errors (no such process) are ignored.
void KillProcessGroup(pid_t pid, int sig);

/// Reaps `pid` if it has ended: its wait status, or nullopt while it runs. A pid that is not
/// a child of this process (or was reaped already) yields the wait status -1.
std::optional<int> TryReap(pid_t pid);

/// Waits for `pid` to end and reaps it (retrying EINTR); its wait status, or -1 as TryReap.
int Reap(pid_t pid);

/// Like TryReap, polling until `timeout` has passed; nullopt if it still runs then.
std::optional<int> ReapWithin(pid_t pid, std::chrono::milliseconds timeout);

/// How a process ended, from its wait status: "exited with status 3",
/// "SIGSEGV (Segmentation fault)", or "ended with wait status N".
std::string DescribeWaitStatus(int status);

/// A shell's exit code for a wait status: the exit status, or 128 + the signal that killed it;
/// -1 for anything else.
int ExitCodeOf(int status);

}  // namespace tune
