// BuilderProcess: one supervised builder process (tune-daemon re-executed with --build-child,
// build_child.h) and the exchange of one request for one reply with it. Whatever happens inside
// the builder stays there: a builder that crashes, closes its pipes, answers garbage or runs
// past the deadline is killed and reaped, and the exchange says so; the next exchange starts a
// fresh builder. Used by one thread at a time; Cancel may come from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "tune/v1/builder.pb.h"

namespace tune::tuner {

struct BuilderOptions {
  /// The binary started as `<executable> --build-child` (tune-daemon itself).
  std::string executable = "/proc/self/exe";
  /// Builder processes (and pool threads), >= 1.
  int processes = 1;
  /// A build that runs longer than this is a build error; its builder is killed.
  int build_timeout_ms = 300000;
  /// Limit for a builder to start and answer its setup.
  int start_timeout_ms = 30000;
  /// What every builder's catalog is made of: the manifests and plugins it loads (the
  /// daemon's, Catalog::sources). A builder adds its own program's templates itself.
  CatalogSources sources = {};
};

class BuilderProcess {
 public:
  /// How an exchange ended; only kOk carries a reply.
  enum class Outcome {
    kOk,
    kNotStarted,  // no builder could start (`detail` says why): not the request's fault
    kCrashed,     // the builder died on the request (`detail`: how it ended)
    kDeadline,    // no reply within the timeout; the builder was killed
    kCancelled,   // Cancel() stopped it; the builder was killed
    kUnreadable,  // the reply was not a frame of BuildChildReply; the builder was killed
  };
  struct Exchange {
    Outcome outcome = Outcome::kNotStarted;
    std::string detail;
    v1::BuildChildReply reply;
  };

  /// `options` must outlive the process object. SIGPIPE must be ignored (BuilderPool does it).
  explicit BuilderProcess(const BuilderOptions& options);
  ~BuilderProcess();
  BuilderProcess(const BuilderProcess&) = delete;
  BuilderProcess& operator=(const BuilderProcess&) = delete;

  /// Sends `request` (starting a builder first when none runs, and once more when the running
  /// one turns out to have died while idle) and waits up to `timeout_ms` for its reply.
  Exchange Send(const v1::BuildChildRequest& request, int timeout_ms);

  /// Forgets a Cancel() meant for an earlier exchange.
  void ClearCancel();
  /// Stops the exchange in progress, if any (thread-safe).
  void Cancel();
  /// Kills and reaps the builder; returns how it ended ("" when none ran).
  std::string Kill();

  /// Builder processes started so far.
  int started() const { return started_.load(); }

 private:
  Exchange Start();

  const BuilderOptions& options_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int wake_fd_ = -1;
  std::atomic<int> started_{0};
};

}  // namespace tune::tuner
