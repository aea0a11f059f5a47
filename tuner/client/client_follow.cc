#include "tuner/client/client_follow.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "common/strings.h"
#include "tuner/api/client_format.h"

namespace tune::tuner {
namespace {

using std::chrono::milliseconds;

// How long a follower waits for a daemon that went away to come back.
constexpr auto kReconnectFor = std::chrono::seconds(60);

int TerminalWidth() {
  const char* columns = getenv("COLUMNS");
  std::optional<int64_t> n = columns == nullptr ? std::nullopt : ParseInt(columns);
  return n && *n > 20 ? static_cast<int>(*n) : 100;
}

}  // namespace

absl::StatusOr<v1::JobState> Follow(TunerClient& client, uint64_t job_id, milliseconds deadline,
                                    const std::function<void(const v1::JobEvent&)>& show) {
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + deadline;
  v1::JobState last = v1::JOB_STATE_UNSPECIFIED;
  std::optional<Clock::time_point> lost_since;  // when the daemon went away, if it did
  while (true) {
    auto left = std::chrono::duration_cast<milliseconds>(give_up - Clock::now());
    if (left.count() <= 0) {
      return absl::DeadlineExceededError("gave up waiting for the job");
    }
    bool connected = false;
    absl::Status s = client.WatchJob(
        job_id,
        [&](const v1::JobEvent& event) {
          connected = true;
          last = event.state();
          show(event);
          return true;
        },
        left);
    if (s.ok() && IsFinalState(last)) {
      return last;
    }
    if (connected) {
      lost_since.reset();
    }
    // A daemon that restarts (it resumes its jobs) gets kReconnectFor to come back.
    if (!s.ok() && !absl::IsUnavailable(s)) {
      return s;
    }
    if (!s.ok() && last == v1::JOB_STATE_UNSPECIFIED) {
      return s;  // never reached it
    }
    if (!lost_since) {
      lost_since = Clock::now();
    }
    if (Clock::now() - *lost_since > kReconnectFor) {
      return s;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

ProgressDisplay::ProgressDisplay(TunerClient& client, bool json)
    : client_(client), json_(json), tty_(isatty(STDERR_FILENO) == 1) {}

ProgressDisplay::~ProgressDisplay() {
  if (drawn_) {
    fmt::print(stderr, "\n");
  }
}

void ProgressDisplay::Show(const v1::JobEvent& event) {
  if (json_) {
    return;
  }
  const bool state_changed = event.state() != state_;
  state_ = event.state();
  if (state_changed && event.state() == v1::JOB_STATE_QUEUED) {
    absl::StatusOr<v1::Job> job = client_.GetJob(event.job_id());
    if (job.ok() && !job->message().empty()) {
      Line(StrCat("job ", event.job_id(), " queued: ", job->message()));
    }
  }
  if (tty_) {
    fmt::print(stderr, "\r{}\x1b[K", ProgressBar(event, TerminalWidth()));
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (state_changed || IsFinalState(event.state()) || now - last_line_ > std::chrono::seconds(2)) {
    fmt::print(stderr, "job {}: {}\n", event.job_id(), ProgressText(event));
    last_line_ = now;
  }
}

void ProgressDisplay::Line(const std::string& text) {
  if (drawn_) {
    fmt::print(stderr, "\n");
  }
  drawn_ = false;
  fmt::print(stderr, "{}\n", text);
}

}  // namespace tune::tuner
