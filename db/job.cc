#include "db/job.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <set>

#include "common/shape_range.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "db/record.h"
#include "nlohmann/json.hpp"

namespace tune {
namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 5> kStateNames = {{
    {JobState::kQueued, "QUEUED"},
    {JobState::kRunning, "RUNNING"},
    {JobState::kDone, "DONE"},
    {JobState::kFailed, "FAILED"},
    {JobState::kCancelled, "CANCELLED"},
}};

absl::Status Invalid(std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("job.", field, ": ", what));
}

}  // namespace

std::string_view JobStateName(JobState state) {
  for (const auto& [s, name] : kStateNames) {
    if (s == state) {
      return name;
    }
  }
  return "UNKNOWN";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  for (const auto& [s, n] : kStateNames) {
    if (n == upper) {
      return s;
    }
  }
  return std::nullopt;
}

bool IsTerminal(JobState state) {
  switch (state) {
    case JobState::kQueued:
    case JobState::kRunning:
      return false;
    case JobState::kDone:
    case JobState::kFailed:
    case JobState::kCancelled:
      return true;
  }
  return false;
}

namespace {

// A model job's workload is its first task's (empty before canonicalization).
absl::Status CanonicalizeTasks(JobSpec& spec) {
  const std::string given = spec.workload;
  if (spec.tasks.size() > kMaxJobTasks) {
    return Invalid(
        "tasks", StrCat(spec.tasks.size(), " workloads; a model job holds at most ", kMaxJobTasks));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    JobTask& task = spec.tasks[i];
    std::string field = StrCat("job.tasks[", i, "]");
    ASSIGN_OR_RETURN(task.workload, CanonicalWorkload(task.workload, StrCat(field, ".workload")));
    if (!std::isfinite(task.weight) || task.weight <= 0) {
      return absl::InvalidArgumentError(
          StrCat(field, ".weight: ", task.weight,
                 " is not a positive number (how often the workload runs per inference)"));
    }
    if (!seen.insert(task.workload).second) {
      return absl::InvalidArgumentError(StrCat(field, ".workload: ", task.workload,
                                               " is listed twice; list it once with the sum of "
                                               "the weights"));
    }
  }
  spec.workload = spec.tasks.front().workload;
  if (!given.empty() && CanonicalWorkload(given, "job.workload").value_or("") != spec.workload) {
    return Invalid("workload",
                   "is set together with job.tasks; a job tunes one workload or a "
                   "model's list of tasks, not both");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CanonicalizeJobSpec(JobSpec& spec) {
  if (!spec.tasks.empty()) {
    RETURN_IF_ERROR(CanonicalizeTasks(spec));
  } else {
    ASSIGN_OR_RETURN(spec.workload, CanonicalWorkload(spec.workload, "job.workload"));
  }
  if (spec.parent != 0 && (!std::isfinite(spec.weight) || spec.weight <= 0)) {
    return Invalid("weight", StrCat(spec.weight, " is not a positive number"));
  }
  absl::StatusOr<Target> target = Target::Parse(spec.target);
  if (!target.ok()) {
    return Invalid("target", std::string(target.status().message()));
  }
  spec.target = target->ToString();
  if (spec.device_key.empty()) {
    return Invalid("device_key", "is empty; expected e.g. 'cpu/x86_64/znver4'");
  }
  if (spec.strategy.empty()) {
    return Invalid("strategy", "is empty; expected e.g. 'random'");
  }
  if (spec.trials < (spec.parent != 0 ? 0 : 1)) {
    return Invalid("trials", StrCat(spec.trials, " is not >= 1"));
  }
  // A range job holds its midpoints back (they may get no trial): one per tuned size.
  size_t least = spec.tasks.size();
  if (!spec.range.empty()) {
    absl::StatusOr<ShapeRange> range = ShapeRange::Parse(spec.range);
    if (!range.ok() || spec.tasks.empty()) {
      return Invalid("range", range.ok() ? "is set on a job without tasks (a range job is a model "
                                           "job of the range's sizes)"
                                         : std::string(range.status().message()));
    }
    spec.range = range->ToString();
    least = range->TunedSizes().size();
  }
  if (!spec.tasks.empty() && spec.trials < static_cast<int>(least)) {
    return Invalid("trials", StrCat(spec.trials, " is fewer than the model's ", least,
                                    " workloads; give at least one trial per workload"));
  }
  RETURN_IF_ERROR(ValidateTiming(spec.timing, "job.timing"));
  for (const std::string& name : spec.templates) {
    const bool valid =
        !name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                 c == '-';
        });
    if (!valid) {
      return Invalid("templates", StrCat("'", name,
                                         "' is not a template name; expected 1 to 128 characters "
                                         "of [a-z0-9._-], e.g. 'gemm.cpu.blocked'"));
    }
  }
  if (spec.early_stopping < 0) {
    return Invalid("early_stopping",
                   StrCat(spec.early_stopping, " is negative; expected 0 (never) or more"));
  }
  if (spec.name.size() > 256) {
    return Invalid("name", "is longer than 256 bytes");
  }
  return absl::OkStatus();
}

absl::Status ValidateTiming(const TimingOptions& t, std::string_view field) {
  auto bad = [&](std::string_view member, std::string_view what) {
    return absl::InvalidArgumentError(StrCat(field, ".", member, ": ", what));
  };
  if (t.number < 1) {
    return bad("number", StrCat(t.number, " is not >= 1"));
  }
  if (t.repeat < 1) {
    return bad("repeat", StrCat(t.repeat, " is not >= 1"));
  }
  if (t.min_repeat_ms < 0) {
    return bad("min_repeat_ms", StrCat(t.min_repeat_ms, " is negative"));
  }
  if (t.timeout_ms < 1) {
    return bad("timeout_ms", StrCat(t.timeout_ms, " is not >= 1"));
  }
  if (t.max_repeat < 0) {
    return bad("max_repeat", StrCat(t.max_repeat, " is negative"));
  }
  if (!(t.target_ci >= 0 && t.target_ci < 1)) {
    return bad("target_ci", StrCat(t.target_ci, " is not in [0, 1)"));
  }
  return absl::OkStatus();
}

std::string TimingToJson(const TimingOptions& timing) {
  nlohmann::ordered_json j;
  j["number"] = timing.number;
  j["repeat"] = timing.repeat;
  j["min_repeat_ms"] = timing.min_repeat_ms;
  j["timeout_ms"] = timing.timeout_ms;
  j["flush_cache"] = timing.flush_cache;
  j["seed"] = timing.seed;
  j["max_repeat"] = timing.max_repeat;
  j["target_ci"] = timing.target_ci;
  return j.dump();
}

absl::StatusOr<TimingOptions> TimingFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return absl::InvalidArgumentError(StrCat("timing '", json, "' is not a JSON object"));
  }
  TimingOptions timing;
  auto read_int = [&](const char* key, int& out) -> absl::Status {
    if (!j.contains(key)) {
      return absl::OkStatus();
    }
    if (!j[key].is_number_integer()) {
      return absl::InvalidArgumentError(StrCat("timing.", key, " is not an integer"));
    }
    const int64_t value = j[key].get<int64_t>();
    if (j[key].is_number_unsigned() && j[key].get<uint64_t>() > INT32_MAX) {
      return absl::InvalidArgumentError(
          StrCat("timing.", key, " is too large (at most ", INT32_MAX, ")"));
    }
    if (value < INT32_MIN || value > INT32_MAX) {
      return absl::InvalidArgumentError(StrCat("timing.", key, " ", value, " is out of range (",
                                               INT32_MIN, " to ", INT32_MAX, ")"));
    }
    out = static_cast<int>(value);
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(read_int("number", timing.number));
  RETURN_IF_ERROR(read_int("repeat", timing.repeat));
  RETURN_IF_ERROR(read_int("min_repeat_ms", timing.min_repeat_ms));
  RETURN_IF_ERROR(read_int("timeout_ms", timing.timeout_ms));
  // Timings stored before adaptive rounds ran exactly `repeat` rounds.
  timing.max_repeat = timing.repeat;
  RETURN_IF_ERROR(read_int("max_repeat", timing.max_repeat));
  if (j.contains("target_ci")) {
    if (!j["target_ci"].is_number()) {
      return absl::InvalidArgumentError("timing.target_ci is not a number");
    }
    timing.target_ci = j["target_ci"].get<double>();
  }
  if (j.contains("flush_cache")) {
    if (!j["flush_cache"].is_boolean()) {
      return absl::InvalidArgumentError("timing.flush_cache is not a boolean");
    }
    timing.flush_cache = j["flush_cache"].get<bool>();
  }
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned()) {
      return absl::InvalidArgumentError("timing.seed is not an unsigned integer");
    }
    timing.seed = j["seed"].get<uint64_t>();
  }
  return timing;
}

}  // namespace tune
