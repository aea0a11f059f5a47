// Jobs: creation, state machine, dispatch order, progress and CommitTrial atomicity.
#include <functional>
#include <string>
#include <vector>

#include "db/tuning_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune {
namespace {

using testing::FailedRecord;
using ::testing::HasSubstr;
using testing::kDevice;
using testing::kGemm;
using testing::kTarget;
using testing::OpenLog;
using testing::SampleRecord;
using tune::TempDir;

JobSpec SampleSpec(int priority = 0) {
  JobSpec spec;
  spec.workload = "gemm:N=64,M=64,K=64";
  spec.target = "llvm -threads=1 -mcpu=znver4";
  spec.device_key = kDevice;
  spec.strategy = "random";
  spec.trials = 100;
  spec.priority = priority;
  spec.seed = 0xfedcba9876543210ull;  // above INT64_MAX: stored by bits
  spec.timing.repeat = 5;
  spec.timing.flush_cache = true;
  spec.timing.seed = 42;
  spec.client = "alice@host";
  return spec;
}

class JobTest : public ::testing::Test {
 protected:
  TempDir dir_ = TempDir::Create("tune-db-test-").value();
  std::unique_ptr<TuningLog> log_ = OpenLog(dir_.File("tuning.db"));
};

TEST_F(JobTest, CreateStoresTheCanonicalSpecAsQueued) {
  absl::StatusOr<Job> job = log_->CreateJob(SampleSpec(3));
  ASSERT_TRUE(job.ok()) << job.status();
  absl::StatusOr<Job> got = log_->GetJob(job->id);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state, JobState::kQueued);
  EXPECT_EQ(got->spec.workload, kGemm);
  EXPECT_EQ(got->spec.target, kTarget);
  EXPECT_EQ(got->spec.device_key, kDevice);
  EXPECT_EQ(got->spec.strategy, "random");
  EXPECT_EQ(got->spec.trials, 100);
  EXPECT_EQ(got->spec.priority, 3);
  EXPECT_EQ(got->spec.seed, 0xfedcba9876543210ull);
  EXPECT_EQ(got->spec.timing.repeat, 5);
  EXPECT_TRUE(got->spec.timing.flush_cache);
  EXPECT_EQ(got->spec.timing.seed, 42u);
  EXPECT_EQ(got->spec.client, "alice@host");
  EXPECT_EQ(got->trials_done, 0);
  EXPECT_GT(got->created_at_ms, 0);
  EXPECT_EQ(got->started_at_ms, 0);
  EXPECT_FALSE(got->best_secs.has_value());
}

TEST_F(JobTest, CreateStoresTemplatesEarlyStoppingAndNameInTheJobsRow) {
  JobSpec spec = SampleSpec();
  spec.templates = {"gemm.cpu.blocked", "gemm.cpu.openblas"};
  spec.early_stopping = 12;
  spec.name = "nightly, resnet";
  absl::StatusOr<Job> job = log_->CreateJob(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  // Nothing else is written: the row alone holds the job's options.
  EXPECT_EQ(job->search_state, "");
  absl::StatusOr<Job> got = log_->GetJob(job->id);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->spec.templates, ::testing::ElementsAre("gemm.cpu.blocked", "gemm.cpu.openblas"));
  EXPECT_EQ(got->spec.early_stopping, 12);
  EXPECT_EQ(got->spec.name, "nightly, resnet");
}

TEST_F(JobTest, MalformedTemplateNamesAndNegativeEarlyStoppingAreRejectedNamingTheField) {
  for (std::string bad :
       std::vector<std::string>{"", "gemm,cpu", "Gemm.CPU", std::string(129, 'a')}) {
    JobSpec spec = SampleSpec();
    spec.templates = {bad};
    absl::StatusOr<Job> job = log_->CreateJob(spec);
    EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(job.status().message()), HasSubstr("job.templates")) << bad;
  }
  JobSpec spec = SampleSpec();
  spec.early_stopping = -1;
  EXPECT_THAT(std::string(log_->CreateJob(spec).status().message()),
              HasSubstr("job.early_stopping"));
  EXPECT_TRUE(log_->ListJobs()->empty()) << "nothing is written for a rejected spec";
}

TEST_F(JobTest, InvalidSpecsAndUnknownIdsAreRejected) {
  JobSpec spec = SampleSpec();
  spec.trials = 0;
  absl::StatusOr<Job> job = log_->CreateJob(spec);
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(job.status().message()), HasSubstr("job.trials"));
  spec = SampleSpec();
  spec.workload = "conv2d:N=1";
  EXPECT_THAT(std::string(log_->CreateJob(spec).status().message()), HasSubstr("job.workload"));

  absl::StatusOr<Job> missing = log_->GetJob(77);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("77"));
  EXPECT_EQ(log_->UpdateJobState(77, JobState::kRunning).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(log_->SaveJobProgress(77, {"{}"}).code(), absl::StatusCode::kNotFound);
}

TEST_F(JobTest, StateChangesStampTimesAndFinalStatesStayFinal) {
  int64_t id = log_->CreateJob(SampleSpec())->id;
  ASSERT_TRUE(log_->UpdateJobState(id, JobState::kRunning).ok());
  Job running = *log_->GetJob(id);
  EXPECT_EQ(running.state, JobState::kRunning);
  EXPECT_GT(running.started_at_ms, 0);
  // Back to the queue (its worker vanished) and running again keeps the first start time.
  ASSERT_TRUE(log_->UpdateJobState(id, JobState::kQueued).ok());
  ASSERT_TRUE(log_->UpdateJobState(id, JobState::kRunning).ok());
  EXPECT_EQ(log_->GetJob(id)->started_at_ms, running.started_at_ms);

  ASSERT_TRUE(log_->UpdateJobState(id, JobState::kFailed, "no worker for cuda/sm_90").ok());
  Job failed = *log_->GetJob(id);
  EXPECT_EQ(failed.state, JobState::kFailed);
  EXPECT_EQ(failed.error, "no worker for cuda/sm_90");
  EXPECT_GT(failed.finished_at_ms, 0);

  absl::Status revive = log_->UpdateJobState(id, JobState::kRunning);
  EXPECT_EQ(revive.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(revive.message()), HasSubstr("FAILED"));
  EXPECT_THAT(std::string(revive.message()), HasSubstr("RUNNING"));
  EXPECT_TRUE(log_->UpdateJobState(id, JobState::kFailed).ok());  // idempotent
  EXPECT_EQ(log_->GetJob(id)->error, "no worker for cuda/sm_90");
}

TEST_F(JobTest, ActiveJobsComeInPriorityThenFifoOrder) {
  int64_t low = log_->CreateJob(SampleSpec(0))->id;
  int64_t high1 = log_->CreateJob(SampleSpec(5))->id;
  int64_t done = log_->CreateJob(SampleSpec(9))->id;
  int64_t mid = log_->CreateJob(SampleSpec(2))->id;
  int64_t high2 = log_->CreateJob(SampleSpec(5))->id;
  int64_t cancelled = log_->CreateJob(SampleSpec(7))->id;
  ASSERT_TRUE(log_->UpdateJobState(done, JobState::kRunning).ok());
  ASSERT_TRUE(log_->UpdateJobState(done, JobState::kDone).ok());
  ASSERT_TRUE(log_->UpdateJobState(cancelled, JobState::kCancelled).ok());
  ASSERT_TRUE(log_->UpdateJobState(high2, JobState::kRunning).ok());

  absl::StatusOr<std::vector<Job>> active = log_->ActiveJobs();
  ASSERT_TRUE(active.ok()) << active.status();
  std::vector<int64_t> order;
  for (const Job& job : *active) {
    order.push_back(job.id);
  }
  EXPECT_EQ(order, (std::vector<int64_t>{high1, high2, mid, low}));

  absl::StatusOr<std::vector<Job>> listed = log_->ListJobs(JobState::kQueued);
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<int64_t> queued;
  for (const Job& job : *listed) {
    queued.push_back(job.id);
  }
  EXPECT_EQ(queued, (std::vector<int64_t>{low, high1, mid}));
  EXPECT_EQ(log_->ListJobs()->size(), 6u);
}

TEST_F(JobTest, CommitTrialCountsTrialsStoresStateAndTracksTheBest) {
  int64_t id = log_->CreateJob(SampleSpec())->id;
  Record ok = SampleRecord(R"({"mc":1})", 2e-3);
  ok.job_id = id;
  Record faster = SampleRecord(R"({"mc":2})", 1e-3);
  faster.job_id = id;
  Record crashed = FailedRecord(ErrorKind::kRuntimeCrash);
  crashed.job_id = id;
  ASSERT_TRUE(log_->CommitTrial(ok, {"state-1"}).ok());
  absl::StatusOr<Record> best = log_->CommitTrial(faster, {"state-2"});
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(log_->CommitTrial(crashed, {"state-3", 1}).ok());

  Job job = *log_->GetJob(id);
  EXPECT_EQ(job.trials_done, 3);
  EXPECT_EQ(job.trials_failed, 1);
  EXPECT_EQ(job.search_state, "state-3");
  EXPECT_EQ(job.since_improvement, 1);
  ASSERT_TRUE(job.best_secs.has_value());
  EXPECT_DOUBLE_EQ(*job.best_secs, 1e-3);
  EXPECT_EQ(job.best_record_id, best->id);
  EXPECT_EQ(log_->ListRecords({.job_id = id})->size(), 3u);

  ASSERT_TRUE(log_->SaveJobProgress(id, {"resumable", 4}).ok());
  EXPECT_EQ(log_->GetJob(id)->search_state, "resumable");
  EXPECT_EQ(log_->GetJob(id)->since_improvement, 4);
}

TEST_F(JobTest, ATrialGivenUpIsRecordedWithItsSearchStateButIsNoTrialOfTheBudget) {
  int64_t id = log_->CreateJob(SampleSpec())->id;
  Record ok = SampleRecord(R"({"mc":1})", 2e-3);
  ok.job_id = id;
  Record lost = FailedRecord(ErrorKind::kWorkerLost, R"({"mc":2})");
  lost.job_id = id;
  ASSERT_TRUE(log_->CommitTrial(ok, {"state-1"}).ok());
  ASSERT_TRUE(log_->CommitTrial(lost, {"state-2"}).ok());

  Job job = *log_->GetJob(id);
  EXPECT_EQ(job.trials_done, 1);
  EXPECT_EQ(job.trials_failed, 0);
  EXPECT_EQ(job.search_state, "state-2") << "the search forgot the trial given up";
  EXPECT_EQ(log_->ListRecords({.job_id = id})->size(), 2u);
}

TEST_F(JobTest, CommitTrialIsAllOrNothing) {
  int64_t id = log_->CreateJob(SampleSpec())->id;
  Record first = SampleRecord();
  first.job_id = id;
  absl::StatusOr<Record> stored = log_->CommitTrial(first, {"after-first"});
  ASSERT_TRUE(stored.ok()) << stored.status();

  // The job's counters are updated before the record is inserted; the duplicate uid makes the
  // insert fail, so the counter update must be rolled back with it.
  Record duplicate = SampleRecord(R"({"mc":99})");
  duplicate.job_id = id;
  duplicate.uid = stored->uid;
  absl::StatusOr<Record> failed = log_->CommitTrial(duplicate, {"must-not-stick"});
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kAlreadyExists);
  Job job = *log_->GetJob(id);
  EXPECT_EQ(job.trials_done, 1);
  EXPECT_EQ(job.search_state, "after-first");
  EXPECT_EQ(*log_->CountRecords(), 1);

  // An unknown job writes no record.
  Record orphan = SampleRecord();
  orphan.job_id = id + 100;
  EXPECT_EQ(log_->CommitTrial(orphan, {"x"}).status().code(), absl::StatusCode::kNotFound);
  Record no_job = SampleRecord();
  EXPECT_EQ(log_->CommitTrial(no_job, {"x"}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*log_->CountRecords(), 1);
}

}  // namespace
}  // namespace tune

namespace tune {
namespace {

JobSpec ModelSpec() {
  JobSpec spec = SampleSpec();
  spec.workload.clear();
  spec.trials = 64;
  spec.name = "two layers";
  spec.tasks = {{.workload = "gemm:N=64,M=64,K=64", .weight = 4},
                {.workload = "conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1", .weight = 0.5}};
  return spec;
}

class ModelJobTest : public ::testing::Test {
 protected:
  TempDir dir_ = TempDir::Create("tune-db-test-").value();
  std::unique_ptr<TuningLog> log_ = OpenLog(dir_.File("tuning.db"));
};

TEST_F(ModelJobTest, CreatesOneTaskJobPerWorkloadWithNoBudgetYet) {
  absl::StatusOr<Job> model = log_->CreateJob(ModelSpec());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(model->IsModel());
  ASSERT_EQ(model->spec.tasks.size(), 2u);
  EXPECT_EQ(model->spec.workload, kGemm) << "a model job's workload is its first task's";
  EXPECT_EQ(model->spec.trials, 64);
  for (size_t i = 0; i < 2; ++i) {
    const JobTask& task = model->spec.tasks[i];
    absl::StatusOr<Job> job = log_->GetJob(task.job_id);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_TRUE(job->IsTask());
    EXPECT_EQ(job->spec.parent, model->id);
    EXPECT_EQ(job->spec.workload, task.workload);
    EXPECT_EQ(job->spec.weight, task.weight);
    EXPECT_EQ(job->spec.trials, 0);
    EXPECT_EQ(job->spec.target, kTarget);
    EXPECT_EQ(job->spec.strategy, "random");
    EXPECT_EQ(job->spec.seed, model->spec.seed + i) << "tasks are seeded apart";
    EXPECT_EQ(job->state, JobState::kQueued);
  }
  EXPECT_EQ(model->spec.tasks[1].workload, "conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1");
  auto active = log_->ActiveJobs();
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(active->size(), 3u);
}

TEST_F(ModelJobTest, ATaskJobsBudgetIsRaisedAsTheModelAllocatesIt) {
  absl::StatusOr<Job> model = log_->CreateJob(ModelSpec());
  ASSERT_TRUE(model.ok()) << model.status();
  int64_t task = model->spec.tasks[0].job_id;
  ASSERT_TRUE(log_->SetJobTrials(task, 8).ok());
  EXPECT_EQ(log_->GetJob(task)->spec.trials, 8);
  EXPECT_EQ(log_->SetJobTrials(9999, 8).code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelJobTest, BadTasksAreRefusedNamingTheTaskAndNothingIsWritten) {
  struct Case {
    std::function<void(JobSpec&)> spoil;
    std::string message;
  };
  std::vector<Case> cases = {
      {[](JobSpec& s) { s.tasks[1].weight = 0; }, "job.tasks[1].weight: 0 is not a positive"},
      {[](JobSpec& s) { s.tasks[1].weight = -1; }, "job.tasks[1].weight"},
      {[](JobSpec& s) { s.tasks[0].workload = "gemm:M=4"; }, "job.tasks[0].workload"},
      {[](JobSpec& s) { s.tasks[1].workload = "gemm:M=64,N=64,K=64"; }, "listed twice"},
      {[](JobSpec& s) { s.workload = "gemm:M=4,N=4,K=4"; },
       "job.workload: is set together with job.tasks"},
      {[](JobSpec& s) { s.trials = 1; }, "fewer than the model's 2 workloads"},
  };
  for (const Case& c : cases) {
    JobSpec spec = ModelSpec();
    c.spoil(spec);
    absl::StatusOr<Job> job = log_->CreateJob(spec);
    ASSERT_FALSE(job.ok()) << c.message;
    EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(job.status().message(), HasSubstr(c.message));
  }
  EXPECT_TRUE(log_->ListJobs()->empty());
}

}  // namespace
}  // namespace tune

namespace tune {
namespace {

TEST(TimingJsonTest, AnIntegerBeyondIntIsRefusedNamingTheKeyInsteadOfWrapping) {
  for (const char* json : {R"({"number": 4294967297})", R"({"repeat": -4294967297})",
                           R"({"timeout_ms": 18446744073709551615})"}) {
    absl::StatusOr<TimingOptions> timing = TimingFromJson(json);
    ASSERT_FALSE(timing.ok()) << json;
    EXPECT_EQ(timing.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(timing.status().message().find("timing."), std::string::npos);
  }
  absl::StatusOr<TimingOptions> fine = TimingFromJson(R"({"number": 2147483647})");
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(fine->number, 2147483647);
}

TEST_F(JobTest, CommitTrialsWritesAGroupInOneTransactionWithEachJobsLastState) {
  const int64_t a = log_->CreateJob(SampleSpec())->id;
  const int64_t b = log_->CreateJob(SampleSpec())->id;
  auto trial = [](int64_t job, const char* config, double secs, JobProgress progress) {
    Record record = SampleRecord(config, secs);
    record.job_id = job;
    return TuningLog::TrialCommit{std::move(record), std::move(progress)};
  };
  std::vector<TuningLog::TrialCommit> group;
  group.push_back(trial(a, R"({"mc":1})", 2e-3, {"", 1}));
  group.push_back(trial(b, R"({"mc":2})", 3e-3, {"b-final", 0}));
  Record failed = FailedRecord(ErrorKind::kRuntimeCrash);
  failed.job_id = a;
  group.push_back(TuningLog::TrialCommit{failed, {"a-final", 2}});
  // A finalist's re-measurement counts in no budget and leaves the state alone.
  TuningLog::TrialCommit finalist = trial(b, R"({"mc":2})", 2.5e-3, {"", 0, false});
  finalist.record.final = true;
  group.push_back(finalist);

  absl::StatusOr<std::vector<Record>> committed = log_->CommitTrials(group);
  ASSERT_TRUE(committed.ok()) << committed.status();
  ASSERT_EQ(committed->size(), 4u);
  EXPECT_EQ((*committed)[0].config, R"({"mc":1})");
  EXPECT_GT((*committed)[0].id, 0);
  Job job_a = *log_->GetJob(a);
  EXPECT_EQ(job_a.trials_done, 2);
  EXPECT_EQ(job_a.trials_failed, 1);
  EXPECT_EQ(job_a.search_state, "a-final");
  EXPECT_EQ(job_a.since_improvement, 2);
  Job job_b = *log_->GetJob(b);
  EXPECT_EQ(job_b.trials_done, 1);
  EXPECT_EQ(job_b.search_state, "b-final");
  EXPECT_EQ(*log_->CountRecords(), 4);
}

TEST_F(JobTest, CommitTrialsWritesNothingWhenOneTrialOfTheGroupIsInvalid) {
  const int64_t id = log_->CreateJob(SampleSpec())->id;
  std::vector<TuningLog::TrialCommit> group(2);
  group[0].record = SampleRecord(R"({"mc":1})");
  group[0].record.job_id = id;
  group[0].progress = {"must-not-stick"};
  group[1].record = SampleRecord(R"({"mc":2})");
  group[1].record.job_id = id + 100;  // no such job
  absl::StatusOr<std::vector<Record>> committed = log_->CommitTrials(group);
  EXPECT_EQ(committed.status().code(), absl::StatusCode::kNotFound);
  group[1].record.job_id.reset();
  committed = log_->CommitTrials(group);
  EXPECT_EQ(committed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(committed.status().message(), HasSubstr("trial 1: record.job_id"));
  EXPECT_EQ(*log_->CountRecords(), 0);
  EXPECT_EQ(log_->GetJob(id)->trials_done, 0);
  EXPECT_EQ(log_->GetJob(id)->search_state, "");
}

}  // namespace
}  // namespace tune
