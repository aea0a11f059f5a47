// The scheduler learns only from verdicts: a trial its workers could not measure (a worker_error,
// a WORKER_ERROR measurement, a lost worker) is measured again elsewhere without spending its
// job's budget, and after max_dispatch_attempts it is given up: recorded as WORKER_LOST, shown
// to no search, and named in its job's message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "tests/tuner/scheduler_fixture.h"
#include "tests/tuner/test_worker.h"

namespace tune::tuner {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::TestWorker;

// How many outcomes the grid strategy of the job's (only) template has observed, as its saved
// search state on disk says.
uint64_t GridObserved(TuningLog& log, uint64_t job_id) {
  absl::StatusOr<Job> job = log.GetJob(static_cast<int64_t>(job_id));
  EXPECT_TRUE(job.ok()) << job.status();
  const nlohmann::json state = nlohmann::json::parse(job.ok() ? job->search_state : "{}");
  return state["strategies"]["gemm.cpu.blocked"]["observed"].get<uint64_t>();
}

TEST_F(SchedulerTest, AMeasurementThatIsNoVerdictIsMeasuredAgainElsewhereAndNeverRecorded) {
  Start();
  TestWorker busy, sound;
  busy.Register(*scheduler_, "busy");
  const uint64_t job = Submit(Spec(1));
  std::optional<v1::MeasureRequest> first = busy.NextRequest();
  ASSERT_TRUE(first.has_value());
  sound.Register(*scheduler_, "sound");
  busy.AnswerFailure(*first, v1::ERROR_KIND_WORKER_ERROR,
                     "artifact needs library 'libdnnl.so.3', which this worker has not preloaded");
  std::optional<v1::MeasureRequest> retry = sound.NextRequest();
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->trial_id(), first->trial_id());
  sound.Answer(*retry, 1e-4);
  EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);

  std::vector<Record> records = RecordsOf(job);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].worker, "sound");
  EXPECT_TRUE(records[0].measurement.ok());
}

TEST_F(SchedulerTest, ATrialGivenUpSpendsNoBudgetNoSearchSeesItAndTheJobSaysWhichAndWhy) {
  Start({.max_dispatch_attempts = 2, .remeasure_finalists = false});
  TestWorker worker;
  worker.Register(*scheduler_, "flaky");
  const uint64_t job = Submit(Spec(1));
  std::string given_up;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    ASSERT_TRUE(request.has_value()) << "attempt " << attempt;
    given_up = request->artifact().config();
    if (attempt == 0) {
      worker.Fail(*request, "its cache directory is full");
    } else {
      worker.AnswerFailure(*request, v1::ERROR_KIND_WORKER_ERROR, "the device is busy");
    }
  }
  // The budget of one trial is not spent: the job proposes another config instead.
  std::optional<v1::MeasureRequest> next = worker.NextRequest();
  ASSERT_TRUE(next.has_value());
  EXPECT_NE(next->artifact().config(), given_up);
  worker.Answer(*next, 1e-4);
  v1::JobEvent end = WaitForEnd(job);
  EXPECT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(end.trials_done(), 1);
  EXPECT_EQ(end.trials_failed(), 0);
  absl::StatusOr<v1::Job> ended = scheduler_->GetJob(job);
  ASSERT_TRUE(ended.ok());
  EXPECT_THAT(ended->message(),
              AllOf(HasSubstr("gave up 1 trial(s) without a verdict"), HasSubstr(given_up),
                    HasSubstr("WORKER_ERROR: the device is busy")));

  std::vector<Record> records = RecordsOf(job);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].measurement.error, ErrorKind::kWorkerLost);
  EXPECT_EQ(records[0].config, given_up);
  EXPECT_THAT(records[0].measurement.message, HasSubstr("given up after 2 attempts"));
  EXPECT_TRUE(records[1].measurement.ok());
  EXPECT_EQ(GridObserved(*log_, job), 1u) << "the search saw the trial given up";

  // Not a verdict on the config: the next job measures it again.
  const uint64_t again = Submit(Spec(1));
  std::optional<v1::MeasureRequest> request = worker.NextRequest();
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->artifact().config(), given_up);
  worker.Answer(*request, 1e-4);
  EXPECT_EQ(WaitForEnd(again).state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(SchedulerTest, AJobWhoseTrialsAreAllGivenUpFailsSayingSoInsteadOfProposingForever) {
  Start({.max_dispatch_attempts = 1, .max_given_up_in_a_row = 2, .remeasure_finalists = false});
  TestWorker worker;
  worker.Register(*scheduler_, "broken");
  const uint64_t job = Submit(Spec(5));
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    ASSERT_TRUE(request.has_value()) << i;
    worker.AnswerFailure(*request, v1::ERROR_KIND_WORKER_ERROR, "no driver");
  }
  v1::JobEvent end = WaitForEnd(job);
  EXPECT_EQ(end.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(end.trials_done(), 0);
  absl::StatusOr<v1::Job> failed = scheduler_->GetJob(job);
  ASSERT_TRUE(failed.ok());
  EXPECT_THAT(failed->message(),
              AllOf(HasSubstr("gave up 2 trials in a row"), HasSubstr("WORKER_ERROR: no driver")));
  EXPECT_EQ(RecordsOf(job).size(), 2u);
}

}  // namespace
}  // namespace tune::tuner
