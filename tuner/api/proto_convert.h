// Conversions between the tuning log's types (db/) and the wire types of tune.v1.Tuner.
#pragma once

#include "absl/status/statusor.h"
#include "db/job.h"
#include "db/quarantine.h"
#include "db/record.h"
#include "db/token_info.h"
#include "tune/v1/tuner.pb.h"

namespace tune::tuner {

/// Done maps to JOB_STATE_SUCCEEDED; the other states by name.
v1::JobState JobStateToProto(JobState state);
/// The state as the wire names it: "QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED".
std::string WireStateName(JobState state);
/// Inverse of JobStateToProto; InvalidArgument naming `field` for JOB_STATE_UNSPECIFIED and
/// unknown values.
absl::StatusOr<JobState> JobStateFromProto(v1::JobState state, std::string_view field);

/// The spec as submitted, after defaults were applied and the target resolved.
v1::JobSpec JobSpecToProto(const JobSpec& spec);

/// A record for the wire (job_id 0 when it has none).
v1::Record RecordToProto(const Record& record);

/// A record from the wire; the uid, workload, target etc. are checked later by the log. A
/// measurement with an unspecified error kind is InvalidArgument naming `measurement`.
absl::StatusOr<Record> RecordFromProto(const v1::Record& proto);

/// A token as listed on the wire: never its secret or hash.
v1::TokenInfo TokenToProto(const TokenInfo& token);

/// A quarantine entry for the wire.
v1::QuarantineEntry QuarantineEntryToProto(const QuarantineEntry& entry);

}  // namespace tune::tuner
