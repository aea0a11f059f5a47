#include "common/measurement.h"

#include <algorithm>
#include <array>

namespace tune {
namespace {

constexpr std::array<std::pair<ErrorKind, std::string_view>, 8> kNames = {{
    {ErrorKind::kNone, "NONE"},
    {ErrorKind::kBuildError, "BUILD_ERROR"},
    {ErrorKind::kLoadError, "LOAD_ERROR"},
    {ErrorKind::kRuntimeCrash, "RUNTIME_CRASH"},
    {ErrorKind::kTimeout, "TIMEOUT"},
    {ErrorKind::kWrongAnswer, "WRONG_ANSWER"},
    {ErrorKind::kUnsupported, "UNSUPPORTED"},
    {ErrorKind::kWorkerLost, "WORKER_LOST"},
}};

}  // namespace

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

double Measurement::MedianSecs() const {
  if (round_secs.empty()) {
    return 0;
  }
  std::vector<double> sorted = round_secs;
  std::sort(sorted.begin(), sorted.end());
  size_t mid = sorted.size() / 2;
  return sorted.size() % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
}

}  // namespace tune
