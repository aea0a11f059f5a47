// Following a job from tune-client: its event stream, picked up again when the daemon restarts,
// and a progress display on stderr (a bar redrawn in place on a terminal, else a line every few
// seconds). Used by `submit --wait` and `watch`.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "tune/v1/tuner.pb.h"
#include "tuner/api/client.h"

namespace tune::tuner {

/// Follows a job until it reaches a final state and returns that state. `show` gets every
/// event; a stream broken by a daemon restart is picked up again (for up to a minute without
/// a daemon) until `deadline`.
absl::StatusOr<v1::JobState> Follow(TunerClient& client, uint64_t job_id,
                                    std::chrono::milliseconds deadline,
                                    const std::function<void(const v1::JobEvent&)>& show);

/// Progress on stderr; with `json`, nothing.
class ProgressDisplay {
 public:
  ProgressDisplay(TunerClient& client, bool json);
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;
  void Show(const v1::JobEvent& event);

 private:
  void Line(const std::string& text);

  TunerClient& client_;
  const bool json_;
  const bool tty_;
  bool drawn_ = false;
  v1::JobState state_ = v1::JOB_STATE_UNSPECIFIED;
  std::chrono::steady_clock::time_point last_line_;
};

}  // namespace tune::tuner
