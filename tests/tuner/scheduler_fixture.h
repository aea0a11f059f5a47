// The fixture of the scheduler's tests: a real Scheduler over a real tuning log in a fresh
// directory, with real builder processes (tune-daemon --build-child), and the waits its tests
// share. Every wait is on an event (a request arriving, a job event); none is on elapsed time.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/files.h"
#include "tests/fault/fault_templates.h"
#include "tests/tuner/test_worker.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {

inline constexpr char kWorkload[] = "gemm:M=16,N=16,K=16";
inline constexpr char kSmallWorkload[] = "gemm:M=16,N=16,K=8";

// Answers the worker's next `count` requests as they come; returns their workloads in the order
// the scheduler proposed the trials (trial ids are given at proposal). Dispatch order would
// depend on which builds finish first, which a loaded machine moves.
inline std::vector<std::string> AnswerInProposalOrder(testing::TestWorker& worker, int count) {
  std::map<uint64_t, std::string> by_id;
  for (int i = 0; i < count; ++i) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    if (!request.has_value()) {
      ADD_FAILURE() << "no request " << i;
      break;
    }
    by_id[request->trial_id()] = request->workload();
    worker.Answer(*request, 1e-4);
  }
  std::vector<std::string> workloads;
  for (auto& [id, workload] : by_id) {
    workloads.push_back(std::move(workload));
  }
  return workloads;
}

class SchedulerTest : public ::testing::Test {
 protected:
  // Each test answers exactly the trials it expects; the re-measurement of finalists at a job's
  // end is off unless a test asks for it.
  static SchedulerOptions WithoutFinalists() {
    SchedulerOptions options;
    options.remeasure_finalists = false;
    return options;
  }
  // For tests that count one worker request per trial: configs of these tiny GEMMs that build
  // to the same code would follow one another, or take an earlier answer, instead
  // (share_measurements).
  static SchedulerOptions EveryTrialMeasured() {
    SchedulerOptions options = WithoutFinalists();
    options.share_measurements = false;
    return options;
  }
  void Start(SchedulerOptions options = WithoutFinalists()) {
    auto dir = TempDir::Create("tune-scheduler-test-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<TempDir>(std::move(*dir));
    auto log = TuningLog::Open(dir_->File("tuning.db"));
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    scheduler_ = std::make_unique<Scheduler>(log_.get(), ForTests(std::move(options)));
    ASSERT_TRUE(scheduler_->Start().ok());
  }
  // Stops the scheduler as a daemon stops (what the log writer holds is written, running jobs
  // go back to QUEUED in the log) and starts another on the same log, which resumes them. Every
  // worker registered with the first must be gone.
  void Restart(SchedulerOptions options = WithoutFinalists()) {
    scheduler_->Shutdown();
    scheduler_.reset();
    scheduler_ = std::make_unique<Scheduler>(log_.get(), ForTests(std::move(options)));
    ASSERT_TRUE(scheduler_->Start().ok());
  }
  static SchedulerOptions ForTests(SchedulerOptions options) {
    options.builder_executable = TUNE_FAULT_DAEMON_PATH;
    options.catalog = Catalog().WithTemplates(FaultTemplates());
    options.heartbeat_deadline_ms = 3600000;  // liveness is not what these tests look at
    return options;
  }
  void TearDown() override {
    if (scheduler_) {
      scheduler_->Shutdown();
    }
  }

  static v1::JobSpec Spec(int trials, std::string target = "llvm -mcpu=native -threads=1") {
    v1::JobSpec spec;
    spec.set_workload(kWorkload);
    spec.set_target(std::move(target));
    spec.set_trials(trials);
    spec.set_strategy("grid");
    spec.add_templates("gemm.cpu.blocked");
    return spec;
  }

  uint64_t Submit(const v1::JobSpec& spec) {
    absl::StatusOr<v1::Job> job = scheduler_->SubmitJob(spec, "test");
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? job->job_id() : 0;
  }

  // One worker; a job of 12 trials of kWorkload from `big_client`, then one of 3 trials of
  // kSmallWorkload from `small_client`. The workloads of the first 15 requests, in the order
  // their trials were proposed; both jobs are then followed to their end, which must be a
  // success.
  std::vector<std::string> FirstRequestsOfABigAndASmallJob(const std::string& big_client,
                                                           const std::string& small_client) {
    testing::TestWorker worker;
    worker.Register(*scheduler_, "only");
    v1::JobSpec small_spec = Spec(3);
    small_spec.set_workload(kSmallWorkload);
    auto big = scheduler_->SubmitJob(Spec(12), big_client);
    auto small = scheduler_->SubmitJob(small_spec, small_client);
    EXPECT_TRUE(big.ok() && small.ok());
    std::vector<std::string> order = AnswerInProposalOrder(worker, 15);
    if (big.ok() && small.ok()) {
      EXPECT_EQ(WaitForEnd(small->job_id()).state(), v1::JOB_STATE_SUCCEEDED);
      EXPECT_EQ(WaitForEnd(big->job_id()).state(), v1::JOB_STATE_SUCCEEDED);
    }
    return order;
  }

  // Follows the job until its final event.
  v1::JobEvent WaitForEnd(uint64_t job_id) {
    v1::JobEvent last;
    absl::Status watched = scheduler_->WatchJob(
        job_id,
        [&](const v1::JobEvent& event) {
          last = event;
          return true;
        },
        [] { return false; });
    EXPECT_TRUE(watched.ok()) << watched;
    return last;
  }

  // The one record of each of two jobs, after checking that the second job's record took the
  // first's measurement (its rounds and worker) under a uid of its own. Empty records when a
  // job has not exactly one (a failure already).
  std::pair<Record, Record> RecordsSharingAMeasurement(uint64_t first, uint64_t second) {
    std::vector<Record> ours = RecordsOf(first);
    std::vector<Record> theirs = RecordsOf(second);
    EXPECT_EQ(ours.size(), 1u);
    EXPECT_EQ(theirs.size(), 1u);
    if (ours.size() != 1 || theirs.size() != 1) {
      return {};
    }
    EXPECT_EQ(theirs[0].measurement.round_secs, ours[0].measurement.round_secs);
    EXPECT_EQ(theirs[0].worker, "only");
    EXPECT_NE(theirs[0].uid, ours[0].uid) << "each job has a record of its own";
    return {ours[0], theirs[0]};
  }

  std::vector<Record> RecordsOf(uint64_t job_id) {
    scheduler_->Quiesce();
    absl::StatusOr<std::vector<Record>> records =
        log_->ListRecords({.job_id = static_cast<int64_t>(job_id)});
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? *records : std::vector<Record>{};
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<TuningLog> log_;
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace tune::tuner
