// The daemon's SubmitJob validation without a gRPC server: a tune.v1.SubmitJobRequest (the
// input in protobuf text format, else binary) through ValidateJobSpec (tuner/job_options.h),
// then, as Scheduler::SubmitJob does, TuningLog::CreateJob on a real tuning log in the scratch
// directory. Invariants: a rejection is InvalidArgument "spec.<field>: ..."; what the test-only
// fault templates do not change (a spec valid without them is valid with them); an accepted
// spec is canonical (workload and target texts parse back to themselves, the target is
// resolved, the device key is the target's), passes the log's own CanonicalizeJobSpec
// unchanged, is stored by CreateJob, and reads back from the log field for field.
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "common/target.h"
#include "common/workload.h"
#include "db/job.h"
#include "db/tuning_log.h"
#include "fuzz/fuzz_util.h"
#include "tests/fault/fault_templates.h"
#include "tune/v1/tuner.pb.h"
#include "tuner/scheduler/job_options.h"

namespace {

tune::TuningLog* log_ = nullptr;

// Text format errors are the fuzzer's daily bread: not worth a line on stderr each.
class SilentErrors final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
};

bool ParseRequest(const uint8_t* data, size_t size, tune::v1::SubmitJobRequest& request) {
  SilentErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(std::string(tune::fuzz::AsText(data, size)), &request)) {
    return true;
  }
  request.Clear();
  return request.ParseFromArray(data, static_cast<int>(size));
}

void CheckSameSpec(const tune::JobSpec& stored, const tune::JobSpec& spec) {
  TUNE_CHECK(stored.workload == spec.workload) << stored.workload << " != " << spec.workload;
  TUNE_CHECK(stored.target == spec.target) << stored.target << " != " << spec.target;
  TUNE_CHECK(stored.device_key == spec.device_key);
  TUNE_CHECK(stored.strategy == spec.strategy);
  TUNE_CHECK(stored.trials == spec.trials) << stored.trials << " != " << spec.trials;
  TUNE_CHECK(stored.priority == spec.priority);
  TUNE_CHECK(stored.seed == spec.seed) << stored.seed << " != " << spec.seed;
  TUNE_CHECK(tune::TimingToJson(stored.timing) == tune::TimingToJson(spec.timing))
      << tune::TimingToJson(stored.timing) << " != " << tune::TimingToJson(spec.timing);
  TUNE_CHECK(stored.client == spec.client);
  TUNE_CHECK(stored.templates == spec.templates);
  TUNE_CHECK(stored.early_stopping == spec.early_stopping);
  TUNE_CHECK(stored.name == spec.name) << "'" << stored.name << "' != '" << spec.name << "'";
  TUNE_CHECK(stored.transfer == spec.transfer);
  TUNE_CHECK(stored.range == spec.range) << stored.range << " != " << spec.range;
  TUNE_CHECK(stored.tasks.size() == spec.tasks.size());
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    TUNE_CHECK(stored.tasks[i].workload == spec.tasks[i].workload);
    TUNE_CHECK(stored.tasks[i].weight == spec.tasks[i].weight)
        << stored.tasks[i].weight << " != " << spec.tasks[i].weight;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tune::fuzz::QuietLogs();
  google::protobuf::SetLogHandler(nullptr);  // it logs every string that is not UTF-8
  absl::StatusOr<std::unique_ptr<tune::TuningLog>> log =
      tune::TuningLog::Open(tune::fuzz::ScratchDir() + "/jobs.db");
  TUNE_CHECK(log.ok()) << log.status();
  log_ = log->release();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tune::v1::SubmitJobRequest request;
  if (!ParseRequest(data, size, request)) {
    return 0;
  }
  static const tune::Catalog* const faults =
      new tune::Catalog(tune::Catalog().WithTemplates(tune::tuner::FaultTemplates()));
  absl::StatusOr<tune::tuner::ValidatedJob> valid =
      tune::tuner::ValidateJobSpec(request.spec(), tune::tuner::ValidationOptions{});
  absl::StatusOr<tune::tuner::ValidatedJob> with_faults =
      tune::tuner::ValidateJobSpec(request.spec(), tune::tuner::ValidationOptions{*faults});
  if (!valid.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(valid.status())) << valid.status();
    TUNE_CHECK(tune::fuzz::StartsWith(valid.status().message(), "spec.")) << valid.status();
    return 0;
  }
  TUNE_CHECK(with_faults.ok()) << "valid only without fault templates: " << with_faults.status();

  tune::JobSpec spec = valid->spec;
  absl::StatusOr<tune::Workload> workload = tune::Workload::Parse(spec.workload);
  TUNE_CHECK(workload.ok() && workload->ToString() == spec.workload) << spec.workload;
  absl::StatusOr<tune::Target> target = tune::Target::Parse(spec.target);
  TUNE_CHECK(target.ok() && target->ToString() == spec.target) << spec.target;
  TUNE_CHECK(target->kind != tune::TargetKind::kLlvm || target->cpu != "native") << spec.target;
  TUNE_CHECK(spec.device_key == target->DeviceKey()) << spec.device_key;
  TUNE_CHECK(!valid->templates.empty());
  tune::JobSpec checked = spec;
  absl::Status canonical = tune::CanonicalizeJobSpec(checked);
  TUNE_CHECK(canonical.ok()) << "the log refuses a validated spec: " << canonical;
  CheckSameSpec(checked, spec);

  // As Scheduler::SubmitJob: the caller's name, then one transaction.
  spec.client = "fuzz@ipv4:127.0.0.1:1";
  absl::StatusOr<tune::Job> created = log_->CreateJob(spec);
  TUNE_CHECK(created.ok()) << "CreateJob refuses a validated spec: " << created.status();
  absl::StatusOr<tune::Job> stored = log_->GetJob(created->id);
  TUNE_CHECK(stored.ok()) << stored.status();
  TUNE_CHECK(stored->state == tune::JobState::kQueued);
  tune::JobSpec expected = spec;
  for (size_t i = 0; i < expected.tasks.size(); ++i) {
    expected.tasks[i].job_id = stored->spec.tasks[i].job_id;
  }
  CheckSameSpec(stored->spec, expected);
  for (const tune::JobTask& task : stored->spec.tasks) {
    absl::StatusOr<tune::Job> task_job = log_->GetJob(task.job_id);
    TUNE_CHECK(task_job.ok() && task_job->spec.parent == created->id &&
               task_job->spec.workload == task.workload)
        << task.workload;
  }
  return 0;
}
