// Quarantine: code that crashed or computed wrong on two different workers of one device key
// and fingerprint is not dispatched there again, by any job and whatever its target text. One
// worker's crash may be a sick device, and a TIMEOUT depends on the job's limit: neither
// quarantines. A worker of another fingerprint (a new driver, library or CPU) is not bound by
// an entry: it measures the code again, and its own crashes may quarantine it for itself.
//
// The rule runs wherever a record lands (a committed trial, an imported line): when a record of
// RUNTIME_CRASH or WRONG_ANSWER with an artifact hash and a worker makes two distinct workers
// with such records for (artifact hash, device key, fingerprint) since the last lift, an entry
// is made. Lifting an entry (an admin's act) keeps its row; later crashes must again come from
// two workers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/measurement.h"

namespace tune {

/// True for the error kinds that count towards quarantine: RUNTIME_CRASH and WRONG_ANSWER.
inline bool Quarantines(ErrorKind kind) {
  return kind == ErrorKind::kRuntimeCrash || kind == ErrorKind::kWrongAnswer;
}

struct QuarantineEntry {
  int64_t id = 0;
  std::string artifact_hash;
  std::string device_key;
  std::string fingerprint;  // the workers' device fingerprint it holds for
  // The first grounding record: what people read to know the code.
  std::string workload;
  std::string template_name;
  int template_version = 0;
  std::string config;
  ErrorKind error = ErrorKind::kRuntimeCrash;
  std::string message;
  std::vector<std::string> workers;      // distinct, in the order of their first record
  std::vector<std::string> record_uids;  // every grounding record, in id order
  int64_t created_at_ms = 0;
  int64_t lifted_at_ms = 0;  // 0 while it holds
  std::string lifted_by;     // the name of the token that lifted it
  bool active() const { return lifted_at_ms == 0; }
};

/// Selects quarantine entries; every field is optional.
struct QuarantineFilter {
  std::optional<std::string> device_key = {};
  std::optional<std::string> artifact_hash = {};
  bool include_lifted = false;
};

}  // namespace tune
