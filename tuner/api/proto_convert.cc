#include "tuner/api/proto_convert.h"

#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"

namespace tune::tuner {

v1::JobState JobStateToProto(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return v1::JOB_STATE_QUEUED;
    case JobState::kRunning:
      return v1::JOB_STATE_RUNNING;
    case JobState::kDone:
      return v1::JOB_STATE_SUCCEEDED;
    case JobState::kFailed:
      return v1::JOB_STATE_FAILED;
    case JobState::kCancelled:
      return v1::JOB_STATE_CANCELLED;
  }
  return v1::JOB_STATE_UNSPECIFIED;
}

std::string WireStateName(JobState state) {
  std::string name = v1::JobState_Name(JobStateToProto(state));
  constexpr std::string_view kPrefix = "JOB_STATE_";
  return name.starts_with(kPrefix) ? name.substr(kPrefix.size()) : name;
}

absl::StatusOr<JobState> JobStateFromProto(v1::JobState state, std::string_view field) {
  switch (state) {
    case v1::JOB_STATE_QUEUED:
      return JobState::kQueued;
    case v1::JOB_STATE_RUNNING:
      return JobState::kRunning;
    case v1::JOB_STATE_SUCCEEDED:
      return JobState::kDone;
    case v1::JOB_STATE_FAILED:
      return JobState::kFailed;
    case v1::JOB_STATE_CANCELLED:
      return JobState::kCancelled;
    default:  // JOB_STATE_UNSPECIFIED and the values protobuf reserves for open enums
      break;
  }
  return absl::InvalidArgumentError(
      StrCat(field, ": ", static_cast<int>(state),
             " is not a job state; expected QUEUED, RUNNING, SUCCEEDED, FAILED or CANCELLED"));
}

v1::JobSpec JobSpecToProto(const JobSpec& spec) {
  v1::JobSpec out;
  if (spec.tasks.empty()) {
    out.set_workload(spec.workload);
  }
  for (const JobTask& task : spec.tasks) {
    v1::WorkloadTask* t = out.add_tasks();
    t->set_workload(task.workload);
    t->set_weight(task.weight);
  }
  out.set_target(spec.target);
  out.set_trials(spec.trials);
  out.set_strategy(spec.strategy);
  out.set_priority(spec.priority);
  out.set_seed(spec.seed);
  *out.mutable_timing() = TimingOptionsToProto(spec.timing);
  for (const std::string& t : spec.templates) {
    out.add_templates(t);
  }
  out.set_early_stopping(spec.early_stopping);
  out.set_name(spec.name);
  out.set_no_transfer(!spec.transfer);
  out.set_reverify(spec.reverify);
  out.set_range(spec.range);
  return out;
}

v1::Record RecordToProto(const Record& record) {
  v1::Record out;
  out.set_uid(record.uid);
  out.set_workload(record.workload);
  out.set_target(record.target);
  out.set_device_key(record.device_key);
  out.set_template_name(record.template_name);
  out.set_template_version(record.template_version);
  out.set_config(record.config);
  *out.mutable_measurement() = MeasurementToProto(record.measurement);
  out.set_tune_version(record.tune_version);
  out.set_llvm_version(record.llvm_version);
  out.set_worker(record.worker);
  out.set_created_at_ms(record.created_at_ms);
  out.set_job_id(record.job_id.value_or(0));
  if (record.timing) {
    *out.mutable_timing() = TimingOptionsToProto(*record.timing);
  }
  out.set_final(record.final);
  out.set_artifact_hash(record.artifact_hash);
  return out;
}

absl::StatusOr<Record> RecordFromProto(const v1::Record& proto) {
  Record record;
  record.uid = proto.uid();
  record.workload = proto.workload();
  record.target = proto.target();
  record.device_key = proto.device_key();
  record.template_name = proto.template_name();
  record.template_version = proto.template_version();
  record.config = proto.config();
  absl::StatusOr<Measurement> m = MeasurementFromProto(proto.measurement());
  if (!m.ok()) {
    return absl::InvalidArgumentError(StrCat("measurement: ", std::string(m.status().message())));
  }
  record.measurement = std::move(*m);
  record.tune_version = proto.tune_version();
  record.llvm_version = proto.llvm_version();
  record.worker = proto.worker();
  record.created_at_ms = proto.created_at_ms();
  record.final = proto.final();
  record.artifact_hash = proto.artifact_hash();
  if (proto.has_timing()) {
    absl::StatusOr<TimingOptions> timing = TimingOptionsFromProto(proto.timing());
    if (!timing.ok()) {
      return absl::InvalidArgumentError(StrCat("timing: ", std::string(timing.status().message())));
    }
    record.timing = *timing;
  }
  return record;  // job ids are local to a log: an imported record has none
}

v1::QuarantineEntry QuarantineEntryToProto(const QuarantineEntry& entry) {
  v1::QuarantineEntry proto;
  proto.set_id(static_cast<uint64_t>(entry.id));
  proto.set_artifact_hash(entry.artifact_hash);
  proto.set_device_key(entry.device_key);
  proto.set_fingerprint(entry.fingerprint);
  proto.set_workload(entry.workload);
  proto.set_template_name(entry.template_name);
  proto.set_template_version(entry.template_version);
  proto.set_config(entry.config);
  proto.set_error_kind(ErrorKindToProto(entry.error));
  proto.set_message(entry.message);
  for (const std::string& worker : entry.workers) {
    proto.add_workers(worker);
  }
  for (const std::string& uid : entry.record_uids) {
    proto.add_record_uids(uid);
  }
  proto.set_created_at_ms(entry.created_at_ms);
  proto.set_lifted_at_ms(entry.lifted_at_ms);
  proto.set_lifted_by(entry.lifted_by);
  return proto;
}

v1::TokenInfo TokenToProto(const TokenInfo& token) {
  v1::TokenInfo proto;
  proto.set_id(token.id);
  proto.set_name(token.name);
  proto.set_role(std::string(RoleName(token.role)));
  proto.set_created_at_ms(token.created_at_ms);
  proto.set_revoked_at_ms(token.revoked_at_ms);
  return proto;
}

}  // namespace tune::tuner
