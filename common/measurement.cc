#include "common/measurement.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/stats.h"

namespace tune {
namespace {

constexpr std::array<std::pair<ErrorKind, std::string_view>, kErrorKindCount> kNames = {{
    {ErrorKind::kNone, "NONE"},
    {ErrorKind::kBuildError, "BUILD_ERROR"},
    {ErrorKind::kLoadError, "LOAD_ERROR"},
    {ErrorKind::kRuntimeCrash, "RUNTIME_CRASH"},
    {ErrorKind::kTimeout, "TIMEOUT"},
    {ErrorKind::kWrongAnswer, "WRONG_ANSWER"},
    {ErrorKind::kUnsupported, "UNSUPPORTED"},
    {ErrorKind::kWorkerLost, "WORKER_LOST"},
    {ErrorKind::kWorkerError, "WORKER_ERROR"},
}};

constexpr std::array<std::pair<GpuClock, std::string_view>, 3> kClockNames = {{
    {GpuClock::kNone, ""},
    {GpuClock::kEvents, "events"},
    {GpuClock::kGraph, "graph"},
}};

}  // namespace

bool IsVerdict(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
    case ErrorKind::kBuildError:
    case ErrorKind::kLoadError:
    case ErrorKind::kRuntimeCrash:
    case ErrorKind::kTimeout:
    case ErrorKind::kWrongAnswer:
    case ErrorKind::kUnsupported:
      return true;
    case ErrorKind::kWorkerLost:
    case ErrorKind::kWorkerError:
      return false;
  }
  return false;
}

std::string_view GpuClockName(GpuClock clock) {
  for (const auto& [c, name] : kClockNames) {
    if (c == clock) {
      return name;
    }
  }
  return "unknown";
}

std::optional<GpuClock> ParseGpuClock(std::string_view name) {
  for (const auto& [c, n] : kClockNames) {
    if (n == name) {
      return c;
    }
  }
  return std::nullopt;
}

std::string_view ErrorKindName(ErrorKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) {
      return name;
    }
  }
  return "UNKNOWN";
}

std::optional<ErrorKind> ParseErrorKind(std::string_view name) {
  for (const auto& [k, n] : kNames) {
    if (n == name) {
      return k;
    }
  }
  return std::nullopt;
}

double Measurement::MedianSecs() const { return Median(round_secs); }

Measurement Measurement::Failed(ErrorKind kind, std::string message) {
  Measurement m;
  m.error = kind;
  m.message = std::move(message);
  return m;
}

double LearnedSecs(const Measurement& m, int timeout_ms) {
  switch (m.error) {
    case ErrorKind::kNone:
      return m.MedianSecs();
    case ErrorKind::kTimeout:
      return timeout_ms / 1000.0;
    case ErrorKind::kBuildError:
    case ErrorKind::kLoadError:
    case ErrorKind::kRuntimeCrash:
    case ErrorKind::kWrongAnswer:
    case ErrorKind::kUnsupported:
    case ErrorKind::kWorkerLost:
    case ErrorKind::kWorkerError:
      return 0;
  }
  return 0;
}

bool EnoughRounds(const std::vector<double>& round_secs, const TimingOptions& options) {
  const size_t rounds = round_secs.size();
  const size_t least = static_cast<size_t>(std::max(options.repeat, 1));
  if (rounds < least) {
    return false;
  }
  return rounds >= static_cast<size_t>(std::max(options.max_repeat, options.repeat)) ||
         MedianRelativeCi(round_secs) <= options.target_ci;
}

}  // namespace tune
