// Fingerprint generations: each device key's fingerprints (common/fingerprint.h) in the order
// the log first saw them, from a worker that registered with one or from a record made under
// it. Nothing is rewritten when a new one comes: the records of older fingerprints stay, and
// "best" (TuningLog::QueryTopK) reads them only where the newest fingerprint that has records
// of the query has none. A winner of an older fingerprint is "unverified" on the device until
// a worker of the newest measures it again (tune-client reverify).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tune {

/// One fingerprint of a device, as the log first saw it.
struct SeenFingerprint {
  std::string device_key;
  std::string text;
  int64_t first_seen_ms = 0;
  bool newest = false;  // the device's newest fingerprint
};

/// What TuningLog::NoteFingerprint found.
struct FingerprintNote {
  bool first_seen = false;  // the log had not seen this fingerprint of the device
  /// The device's newest fingerprint before this one, when this one is new and another was.
  std::optional<std::string> superseded;
};

}  // namespace tune
