// The JSON-lines form of a record, used to export, share and merge tuning logs: one object per
// line with every field except the local id and job id, keys in a fixed order, the config as a
// nested object and times printed so that they parse back to the same doubles.
//
//   {"uid":"…","workload":"gemm:M=64,N=64,K=64","target":"llvm -mcpu=znver4 -threads=1",
//    "device_key":"cpu/x86_64/znver4","template":"gemm.cpu.blocked","template_version":1,
//    "config":{"kc":64,"mc":32},"error":"NONE","message":"","round_secs":[1.5e-05,…],
//    "number":100,"device_fingerprint":"…","tune_version":"0.1.0","llvm_version":"19.1.7",
//    "worker":"host-1","created_at_ms":1763766000000,
//    "timing":{"number":1,"repeat":3,"min_repeat_ms":10,"timeout_ms":10000,"flush_cache":false,
//              "seed":1,"max_repeat":10,"target_ci":0.02}}
//
// "timing" is optional: lines exported before records kept their timing have none. GPU records
// add "gpu_clock" ("graph" or "events") and "host_round_secs" (the call-by-call reading); a GPU
// line without "gpu_clock" was timed call by call and is read as "events" (CanonicalizeRecord).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "db/record.h"

namespace tune {

/// One line of JSON (no trailing newline). The record's config must be canonical text.
std::string RecordToJsonLine(const Record& record);

/// Parses one line. Not JSON, a missing or unknown key, or a value of the wrong type is
/// InvalidArgument naming the key. Field values are not validated here (CanonicalizeRecord
/// does that).
absl::StatusOr<Record> RecordFromJsonLine(std::string_view line);

}  // namespace tune
