// Record: one row of the tuning log (every trial, failures included), and the filters that
// select records.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"  // UnixNowMs, the clock of created_at_ms and job timestamps
#include "common/measurement.h"

namespace tune {

struct Record {
  int64_t id = 0;             // local row id (0 before commit; not exported)
  std::string uid;            // globally unique, the identity for merging logs; a random
                              // 128-bit hex string is assigned on commit when empty
  std::string workload;       // canonical Workload text
  std::string target;         // canonical Target text, resolved (no -mcpu=native)
  std::string device_key;     // the device that measured it, e.g. cpu/x86_64/znver4
  std::string template_name;  // e.g. gemm.cpu.blocked
  int template_version = 0;
  std::string config;                   // canonical config text (search/config_space.h)
  Measurement measurement;              // error kind, message, every round, number, fingerprint
  std::optional<TimingOptions> timing;  // how it was timed; absent in records from before tune
                                        // kept it (treated as warm-cache)
  std::string tune_version;             // provenance
  std::string llvm_version;
  std::optional<int64_t> job_id;  // local job that produced it (not exported)
  std::string worker;             // name of the worker that measured it
  int64_t created_at_ms = 0;      // UnixNowMs(); set on commit when 0
  // A finalist's re-measurement at the end of a job (tuner/finalists.h), not a search trial: a
  // config the log already holds, timed again to decide the best.
  bool final = false;
  // The measured code's identity (common/artifact_hash.h: 64 hex digits); empty where nothing
  // was built (BUILD_ERROR) and in records from before tune kept it. Quarantine is by artifact.
  std::string artifact_hash;
};

/// Which records a best query compares, by how they were timed. GPU records timed call by call
/// (events) read a host-bound library call as the host's call rate, so they are not compared
/// with device time.
enum class ClockScope : uint8_t {
  kAny,         // every record
  kDeviceTime,  // CPU records and GPU records replayed from a captured graph
  kEvents,      // GPU records timed call by call: where capture was refused, and every GPU
                // record measured before graph timing
};

/// Selects the successful records of one workload measured in one context: with exactly one
/// target (CPU, threads and libraries) and cache state when `target` is set, else on any target
/// of one device key; optionally restricted to one template, template version and/or tune
/// version.
struct BestQuery {
  std::string workload = {};
  std::string device_key = {};  // used when `target` is empty
  std::string target = {};      // canonical, resolved target text
  bool flush_cache = false;     // with `target`: cold-cache records instead of warm ones
  std::optional<std::string> template_name = {};
  std::optional<int> template_version = {};
  std::optional<std::string> tune_version = {};
  ClockScope clocks = ClockScope::kAny;
  /// Only records measured under this device fingerprint. Unset: those of the newest
  /// fingerprint (db/fingerprints.h) of the device that has records within the rest of the
  /// query, so that an older fingerprint's records answer only where the newest has none.
  std::optional<std::string> fingerprint = {};
};

/// The decided best of a workload on one target and cache state: the finalist that won when a
/// job re-measured its finalists (tuner/finalists.h). A later decision replaces it.
struct BestDecision {
  std::string workload = {};  // canonical
  std::string target = {};    // canonical, resolved
  bool flush_cache = false;
  int64_t record_id = 0;               // a re-measurement (final record) of the winning config
  double median_secs = 0;              // the median of every re-measured round of the winner
  double relative_ci = 0;              // half-width of its 95% confidence interval, relative
  std::optional<int64_t> job_id = {};  // the job that decided it
  int64_t decided_at_ms = 0;
};

/// Selects records of any outcome; every field is optional. Records come back in id order.
struct RecordFilter {
  std::optional<std::string> workload = {};
  std::optional<std::string> device_key = {};
  std::optional<int64_t> job_id = {};
  int64_t after_id = 0;               // only ids > after_id (for paging)
  std::optional<int64_t> limit = {};  // at most this many
};

/// True when the record was timed with cold caches (TimingOptions::flush_cache).
inline bool ColdCache(const Record& record) {
  return record.timing.has_value() && record.timing->flush_cache;
}

/// Identifies one point of one template's config space.
struct ConfigKey {
  std::string template_name;
  int template_version = 0;
  std::string config;

  friend bool operator==(const ConfigKey&, const ConfigKey&) = default;
};

/// One trial of a template on some workload: what a search learns from when it transfers
/// knowledge from other workloads.
struct TemplateTrial {
  std::string workload;                // canonical text
  std::string config;                  // canonical text
  ErrorKind error = ErrorKind::kNone;  // a verdict (IsVerdict)
  double secs = 0;  // LearnedSecs: the median when ok, the deadline of a TIMEOUT, else 0
};

/// Checks every field of a record that is about to be stored and rewrites workload, target and
/// config into their canonical text. Problems are InvalidArgument naming the field
/// ("record.workload: ...") and the accepted form. The uid may be empty (assigned on commit).
absl::Status CanonicalizeRecord(Record& record);

/// A fresh random 128-bit uid as 32 lowercase hex digits.
std::string NewRecordUid();

/// Canonical text of a workload; InvalidArgument naming `field` when it does not parse.
absl::StatusOr<std::string> CanonicalWorkload(std::string_view text, std::string_view field);

}  // namespace tune
