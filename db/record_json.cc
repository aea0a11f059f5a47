#include "db/record_json.h"

#include <algorithm>
#include <array>

#include "common/status.h"
#include "common/strings.h"
#include "db/job.h"
#include "nlohmann/json.hpp"

namespace tune {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 16> kKeys = {
    "uid",          "workload",     "target",  "device_key",    "template", "template_version",
    "config",       "error",        "message", "round_secs",    "number",   "device_fingerprint",
    "tune_version", "llvm_version", "worker",  "created_at_ms",
};

// Keys a line may omit: lines exported before tune kept a record's timing have none, and only
// kernels that call a library have library_info.
constexpr std::string_view kOptionalKey = "timing";
constexpr std::string_view kLibraryInfoKey = "library_info";
// Optional: true for a finalist's re-measurement at the end of a job.
constexpr std::string_view kFinalKey = "final";
// Optional, GPU records only: how round_secs were timed ("graph" or "events"; a GPU line
// without it was timed call by call) and the call-by-call reading beside graph-timed rounds.
constexpr std::string_view kGpuClockKey = "gpu_clock";
constexpr std::string_view kHostRoundSecsKey = "host_round_secs";
// Optional: the measured code's artifact hash (lines of records from before tune kept it have
// none).
constexpr std::string_view kArtifactHashKey = "artifact_hash";

absl::Status BadKey(std::string_view key, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("key \"", key, "\": ", what));
}

absl::StatusOr<std::string> GetString(const Json& j, const char* key) {
  const Json& v = j.at(key);
  if (!v.is_string()) {
    return BadKey(key, "is not a string");
  }
  return v.get<std::string>();
}

absl::StatusOr<int64_t> GetInt(const Json& j, const char* key) {
  const Json& v = j.at(key);
  if (!v.is_number_integer()) {
    return BadKey(key, "is not an integer");
  }
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
    return BadKey(key, "is out of range");
  }
  return v.get<int64_t>();
}

absl::StatusOr<std::vector<double>> GetNumbers(const Json& j, const char* key) {
  const Json& v = j.at(key);
  if (!v.is_array()) {
    return BadKey(key, "is not an array of numbers");
  }
  std::vector<double> out;
  for (const Json& secs : v) {
    if (!secs.is_number()) {
      return BadKey(key, "is not an array of numbers");
    }
    out.push_back(secs.get<double>());
  }
  return out;
}

}  // namespace

std::string RecordToJsonLine(const Record& record) {
  Json j;
  j["uid"] = record.uid;
  j["workload"] = record.workload;
  j["target"] = record.target;
  j["device_key"] = record.device_key;
  j["template"] = record.template_name;
  j["template_version"] = record.template_version;
  // The canonical config is a JSON object with sorted keys; ordered_json keeps that order.
  Json config = Json::parse(record.config, nullptr, /*allow_exceptions=*/false);
  j["config"] = config.is_discarded() ? Json(record.config) : config;
  j["error"] = std::string(ErrorKindName(record.measurement.error));
  j["message"] = record.measurement.message;
  j["round_secs"] = record.measurement.round_secs;
  j["number"] = record.measurement.number;
  j["device_fingerprint"] = record.measurement.device_fingerprint;
  j["tune_version"] = record.tune_version;
  j["llvm_version"] = record.llvm_version;
  j["worker"] = record.worker;
  j["created_at_ms"] = record.created_at_ms;
  if (record.timing) {
    j["timing"] = Json::parse(TimingToJson(*record.timing));
  }
  if (!record.measurement.library_info.empty()) {
    j[kLibraryInfoKey] = record.measurement.library_info;
  }
  if (record.final) {
    j[kFinalKey] = true;
  }
  if (record.measurement.gpu_clock != GpuClock::kNone) {
    j[kGpuClockKey] = std::string(GpuClockName(record.measurement.gpu_clock));
  }
  if (!record.measurement.host_round_secs.empty()) {
    j[kHostRoundSecsKey] = record.measurement.host_round_secs;
  }
  if (!record.artifact_hash.empty()) {
    j[kArtifactHashKey] = record.artifact_hash;
  }
  // Replace invalid UTF-8 rather than fail: messages may quote compiler or kernel output.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::StatusOr<Record> RecordFromJsonLine(std::string_view line) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError("not valid JSON");
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  for (const auto& [key, value] : j.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end() && key != kOptionalKey &&
        key != kLibraryInfoKey && key != kFinalKey && key != kGpuClockKey &&
        key != kHostRoundSecsKey && key != kArtifactHashKey) {
      return BadKey(key, "is unknown");
    }
  }
  for (std::string_view key : kKeys) {
    if (!j.contains(key)) {
      return BadKey(key, "is missing");
    }
  }
  Record r;
  ASSIGN_OR_RETURN(r.uid, GetString(j, "uid"));
  ASSIGN_OR_RETURN(r.workload, GetString(j, "workload"));
  ASSIGN_OR_RETURN(r.target, GetString(j, "target"));
  ASSIGN_OR_RETURN(r.device_key, GetString(j, "device_key"));
  ASSIGN_OR_RETURN(r.template_name, GetString(j, "template"));
  ASSIGN_OR_RETURN(int64_t template_version, GetInt(j, "template_version"));
  if (template_version < 0 || template_version > INT32_MAX) {
    return BadKey("template_version", "is out of range");
  }
  r.template_version = static_cast<int>(template_version);
  const Json& config = j.at("config");
  if (!config.is_object()) {
    return BadKey("config", "is not a JSON object");
  }
  r.config = config.dump();

  ASSIGN_OR_RETURN(std::string error, GetString(j, "error"));
  std::optional<ErrorKind> kind = ParseErrorKind(error);
  if (!kind) {
    return BadKey("error", StrCat("'", error, "' is not an error kind (NONE, BUILD_ERROR, ...)"));
  }
  r.measurement.error = *kind;
  ASSIGN_OR_RETURN(r.measurement.message, GetString(j, "message"));
  ASSIGN_OR_RETURN(r.measurement.round_secs, GetNumbers(j, "round_secs"));
  ASSIGN_OR_RETURN(int64_t number, GetInt(j, "number"));
  if (number < 0 || number > INT32_MAX) {
    return BadKey("number", "is out of range");
  }
  r.measurement.number = static_cast<int>(number);
  ASSIGN_OR_RETURN(r.measurement.device_fingerprint, GetString(j, "device_fingerprint"));
  ASSIGN_OR_RETURN(r.tune_version, GetString(j, "tune_version"));
  ASSIGN_OR_RETURN(r.llvm_version, GetString(j, "llvm_version"));
  ASSIGN_OR_RETURN(r.worker, GetString(j, "worker"));
  ASSIGN_OR_RETURN(r.created_at_ms, GetInt(j, "created_at_ms"));
  if (j.contains(kOptionalKey)) {
    const Json& timing = j.at(kOptionalKey);
    if (!timing.is_object()) {
      return BadKey(kOptionalKey, "is not a JSON object");
    }
    absl::StatusOr<TimingOptions> parsed = TimingFromJson(timing.dump());
    if (!parsed.ok()) {
      return BadKey(kOptionalKey, std::string(parsed.status().message()));
    }
    r.timing = *parsed;
  }
  if (j.contains(kLibraryInfoKey)) {
    ASSIGN_OR_RETURN(r.measurement.library_info, GetString(j, kLibraryInfoKey.data()));
  }
  if (j.contains(kFinalKey)) {
    if (!j[kFinalKey].is_boolean()) {
      return BadKey(kFinalKey, "is not true or false");
    }
    r.final = j[kFinalKey].get<bool>();
  }
  if (j.contains(kGpuClockKey)) {
    ASSIGN_OR_RETURN(std::string clock, GetString(j, kGpuClockKey.data()));
    std::optional<GpuClock> parsed = ParseGpuClock(clock);
    if (!parsed || *parsed == GpuClock::kNone) {
      return BadKey(kGpuClockKey,
                    StrCat("'", clock, "' is not a GPU clock; accepted: graph, events"));
    }
    r.measurement.gpu_clock = *parsed;
  }
  if (j.contains(kHostRoundSecsKey)) {
    ASSIGN_OR_RETURN(r.measurement.host_round_secs, GetNumbers(j, kHostRoundSecsKey.data()));
  }
  if (j.contains(kArtifactHashKey)) {
    ASSIGN_OR_RETURN(r.artifact_hash, GetString(j, kArtifactHashKey.data()));
  }
  if (r.uid.empty()) {
    return BadKey("uid", "is empty");
  }
  return r;
}

}  // namespace tune
