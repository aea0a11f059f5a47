#include "db/record.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>

#include "common/artifact_hash.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "common/workload.h"
#include "db/job.h"
#include "search/config_space.h"

namespace tune {
namespace {

absl::Status Invalid(std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("record.", field, ": ", what));
}

bool IsUidChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// A name stored as a key: non-empty, at most 256 bytes, printable, no whitespace.
absl::Status CheckName(std::string_view field, std::string_view value, std::string_view example) {
  if (value.empty()) {
    return Invalid(field, StrCat("is empty; expected e.g. '", example, "'"));
  }
  if (value.size() > 256) {
    return Invalid(field, "is longer than 256 characters");
  }
  for (char c : value) {
    if (!std::isgraph(static_cast<unsigned char>(c))) {
      return Invalid(field, StrCat("'", value, "' contains whitespace or control characters; ",
                                   "expected e.g. '", example, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckMeasurement(const Measurement& m) {
  for (double secs : m.round_secs) {
    if (!std::isfinite(secs) || secs < 0) {
      return Invalid("measurement.round_secs",
                     fmt::format("{} is not a finite number of seconds >= 0", secs));
    }
  }
  for (double secs : m.host_round_secs) {
    if (!std::isfinite(secs) || secs < 0) {
      return Invalid("measurement.host_round_secs",
                     fmt::format("{} is not a finite number of seconds >= 0", secs));
    }
  }
  if (m.ok()) {
    if (m.round_secs.empty()) {
      return Invalid("measurement.round_secs",
                     "is empty, but error is NONE; a successful measurement has >= 1 round");
    }
    for (double secs : m.round_secs) {
      if (secs <= 0) {
        return Invalid("measurement.round_secs",
                       fmt::format("{} is not > 0 in a successful measurement", secs));
      }
    }
    if (m.number < 1) {
      return Invalid("measurement.number",
                     StrCat(m.number, " is not >= 1 in a successful measurement"));
    }
  } else if (m.number < 0) {
    return Invalid("measurement.number", StrCat(m.number, " is negative"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string NewRecordUid() {
  // std::random_device draws from the kernel's entropy source, so uids from different
  // processes and machines do not collide.
  thread_local std::random_device device;  // opened once per thread, drawn from per uid
  auto draw64 = [] { return (static_cast<uint64_t>(device()) << 32) | device(); };
  uint64_t high = draw64();
  uint64_t low = draw64();
  return fmt::format("{:016x}{:016x}", high, low);
}

absl::StatusOr<std::string> CanonicalWorkload(std::string_view text, std::string_view field) {
  absl::StatusOr<Workload> workload = Workload::Parse(text);
  if (!workload.ok()) {
    return absl::InvalidArgumentError(
        StrCat(field, ": ", std::string(workload.status().message())));
  }
  return workload->ToString();
}

absl::Status CanonicalizeRecord(Record& record) {
  if (record.uid.size() > 64 || !std::all_of(record.uid.begin(), record.uid.end(), IsUidChar)) {
    return Invalid("uid", StrCat("'", record.uid,
                                 "' is not 1 to 64 characters of [0-9A-Za-z_-] (or empty, to "
                                 "have one assigned)"));
  }
  ASSIGN_OR_RETURN(record.workload, CanonicalWorkload(record.workload, "record.workload"));

  absl::StatusOr<Target> target = Target::Parse(record.target);
  if (!target.ok()) {
    return Invalid("target", std::string(target.status().message()));
  }
  if (target->kind == TargetKind::kLlvm && target->cpu == "native") {
    return Invalid("target", StrCat("'", record.target,
                                    "' is not resolved; name the CPU instead of -mcpu=native"));
  }
  record.target = target->ToString();

  RETURN_IF_ERROR(CheckName("device_key", record.device_key, "cpu/x86_64/znver4"));
  RETURN_IF_ERROR(CheckName("template_name", record.template_name, "gemm.cpu.blocked"));
  if (record.template_version < 0) {
    return Invalid("template_version", StrCat(record.template_version, " is negative"));
  }

  absl::StatusOr<Config> config = ParseConfig(record.config);
  if (!config.ok()) {
    return Invalid("config", std::string(config.status().message()));
  }
  record.config = ConfigToString(*config);

  RETURN_IF_ERROR(CheckMeasurement(record.measurement));
  const bool gpu = target->kind == TargetKind::kCuda || target->kind == TargetKind::kRocm;
  if (gpu && record.measurement.ok() && record.measurement.gpu_clock == GpuClock::kNone) {
    // Workers and exports from before graph timing timed GPU trials call by call. (A failed
    // trial has no times, so no clock.)
    record.measurement.gpu_clock = GpuClock::kEvents;
  }
  if (!gpu && record.measurement.gpu_clock != GpuClock::kNone) {
    return Invalid("measurement.gpu_clock", StrCat("'", GpuClockName(record.measurement.gpu_clock),
                                                   "' is for GPU targets; '", record.target,
                                                   "' is timed on the CPU (no gpu_clock)"));
  }
  if (record.timing) {
    RETURN_IF_ERROR(ValidateTiming(*record.timing, "record.timing"));
  }
  if (record.job_id && *record.job_id < 1) {
    return Invalid("job_id", StrCat(*record.job_id, " is not a job id (>= 1)"));
  }
  if (record.created_at_ms < 0) {
    return Invalid("created_at_ms", StrCat(record.created_at_ms, " is negative"));
  }
  if (!record.artifact_hash.empty() && !IsArtifactHash(record.artifact_hash)) {
    return Invalid("artifact_hash", StrCat("'", record.artifact_hash,
                                           "' is not an artifact hash (64 lowercase hex digits)"));
  }
  return absl::OkStatus();
}

}  // namespace tune
