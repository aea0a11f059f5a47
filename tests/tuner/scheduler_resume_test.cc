// A job resumed by the next scheduler on the same log goes on where the first stopped: a job
// stopped during its finalists' passes measures only the passes it had not recorded, and a
// model job stopped mid-budget spends exactly its budget over its tasks, no config twice. The
// first scheduler writes the log as a stopping daemon does; the second reads it as a starting
// one does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "common/strings.h"
#include "tests/tuner/scheduler_fixture.h"
#include "tests/tuner/test_worker.h"
#include "tuner/scheduler/finalists.h"

namespace tune::tuner {
namespace {

using testing::TestWorker;

// Answers the next `count` requests of `worker` with `secs`; their requests.
std::vector<v1::MeasureRequest> Answer(TestWorker& worker, int count, double secs) {
  std::vector<v1::MeasureRequest> requests;
  for (int i = 0; i < count; ++i) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    if (!request.has_value()) {
      ADD_FAILURE() << "no request " << i;
      break;
    }
    worker.Answer(*request, secs);
    requests.push_back(*request);
  }
  return requests;
}

TEST_F(SchedulerTest, AJobStoppedDuringItsFinalistPassesResumesWithThePassesItHadNotRecorded) {
  SchedulerOptions options;
  options.remeasure_finalists = true;
  Start(options);
  uint64_t job = 0;
  {
    TestWorker worker;
    worker.Register(*scheduler_, "first", /*threads=*/1, /*capacity=*/2);
    job = Submit(Spec(2));
    Answer(worker, 1, 2e-4);
    Answer(worker, 1, 1e-4);
    Answer(worker, 2, 3e-4);  // the first pass over both finalists
    // The second pass is on the worker when the daemon stops: it is never recorded.
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(worker.NextRequest().has_value()) << "pass 2, finalist " << i;
    }
    absl::StatusOr<v1::Job> stopping = scheduler_->GetJob(job);
    ASSERT_TRUE(stopping.ok()) << stopping.status();
    EXPECT_EQ(stopping->message(),
              StrCat("re-measuring its 2 finalists: pass 2 of ", kFinalPasses));
    scheduler_->Quiesce();
    scheduler_->Shutdown();
  }
  Restart(options);
  TestWorker worker;
  worker.Register(*scheduler_, "second", /*threads=*/1, /*capacity=*/2);
  for (int pass = 2; pass <= kFinalPasses; ++pass) {
    std::vector<v1::MeasureRequest> requests;
    for (int i = 0; i < 2; ++i) {
      std::optional<v1::MeasureRequest> request = worker.NextRequest();
      ASSERT_TRUE(request.has_value()) << "pass " << pass << ", finalist " << i;
      EXPECT_GE(request->timing().repeat(), 5) << "a re-measurement, not a search trial";
      requests.push_back(*request);
    }
    EXPECT_TRUE(worker.NoRequestWaiting()) << "one pass at a time";
    absl::StatusOr<v1::Job> resumed = scheduler_->GetJob(job);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(resumed->message(),
              StrCat("re-measuring its 2 finalists: pass ", pass, " of ", kFinalPasses));
    for (const v1::MeasureRequest& request : requests) {
      worker.Answer(request, 3e-4);
    }
  }
  v1::JobEvent end = WaitForEnd(job);
  EXPECT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(end.trials_done(), 2) << "no search trial was measured again";
  std::vector<Record> records = RecordsOf(job);
  EXPECT_EQ(std::count_if(records.begin(), records.end(), [](const Record& r) { return !r.final; }),
            2);
  std::map<std::string, int> passes;  // per config
  for (const Record& r : records) {
    passes[r.config] += r.final ? 1 : 0;
  }
  ASSERT_EQ(passes.size(), 2u);
  for (const auto& [config, count] : passes) {
    EXPECT_EQ(count, kFinalPasses) << config << ": each pass recorded once";
  }
}

TEST_F(SchedulerTest, AModelJobStoppedMidBudgetResumesAndSpendsExactlyItsBudget) {
  constexpr int kTrials = 6;
  Start(EveryTrialMeasured());
  v1::JobSpec spec = Spec(kTrials);
  spec.clear_workload();
  for (const char* workload : {kWorkload, kSmallWorkload}) {
    v1::WorkloadTask* task = spec.add_tasks();
    task->set_workload(workload);
    task->set_weight(1);
  }
  uint64_t model = 0;
  {
    TestWorker worker;
    worker.Register(*scheduler_, "first");
    model = Submit(spec);
    Answer(worker, kTrials / 2, 1e-4);
    scheduler_->Quiesce();
    scheduler_->Shutdown();
  }
  Restart(EveryTrialMeasured());
  TestWorker worker;
  worker.Register(*scheduler_, "second");
  Answer(worker, kTrials - kTrials / 2, 1e-4);
  v1::JobEvent end = WaitForEnd(model);
  EXPECT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED) << end.message();
  EXPECT_EQ(end.trials_done(), kTrials);
  EXPECT_TRUE(worker.NoRequestWaiting()) << "no trial beyond the budget";
  absl::StatusOr<v1::Job> described = scheduler_->GetJob(model);
  ASSERT_TRUE(described.ok()) << described.status();
  ASSERT_EQ(described->tasks_size(), 2);
  int recorded = 0;
  for (const v1::TaskProgress& task : described->tasks()) {
    std::map<std::string, int> per_config;
    for (const Record& r : RecordsOf(task.job_id())) {
      ++per_config[r.config];
      ++recorded;
    }
    for (const auto& [config, count] : per_config) {
      EXPECT_EQ(count, 1) << task.workload() << " " << config;
    }
    EXPECT_EQ(task.trials_done(), static_cast<int>(per_config.size())) << task.workload();
  }
  EXPECT_EQ(recorded, kTrials);
}

}  // namespace
}  // namespace tune::tuner
