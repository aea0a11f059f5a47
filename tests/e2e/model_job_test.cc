// Model jobs: a whole model's workloads tuned under one trial budget that a task scheduler
// spreads over them, submitted with tune-client --workloads-file, followed, cancelled and
// resumed after the daemon is killed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/strings.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kModel =
    "# a small model\n"
    "gemm:M=32,N=32,K=32   4\n"
    "gemm:M=48,N=64,K=32\n"
    "conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1  2.5\n";

std::string WriteModel(const TempDir& dir, const std::string& text) {
  std::string path = dir.File("model.txt");
  std::ofstream(path) << text;
  return path;
}

std::vector<std::string> SubmitArgs(const std::string& file, int trials) {
  return {
      "submit",   "--workloads-file",     file,         "--target", "llvm -mcpu=native -threads=1",
      "--trials", std::to_string(trials), "--strategy", "random",   "--repeat",
      "2",        "--min-repeat-ms",      "1"};
}

uint64_t JobIdOf(const CommandResult& submitted) {
  return std::stoull(submitted.out.substr(0, submitted.out.find('\n')));
}

TEST(ModelJobTest, AModelJobSpendsItsBudgetOverItsWorkloadsAndReportsTheWeightedTotal) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  constexpr int kTrials = 40;
  CommandResult submitted = RunClient(address, SubmitArgs(WriteModel(dir, kModel), kTrials));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const uint64_t id = JobIdOf(submitted);
  auto done = WaitForJob(address, id, seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), kTrials);
  ASSERT_EQ(done->tasks_size(), 3);

  const std::vector<std::string> workloads = {"gemm:M=32,N=32,K=32", "gemm:M=48,N=64,K=32",
                                              "conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1"};
  const std::vector<double> weights = {4, 1, 2.5};
  int spent = 0;
  double total = 0, default_total = 0;
  for (int i = 0; i < 3; ++i) {
    const v1::TaskProgress& task = done->tasks(i);
    EXPECT_EQ(task.workload(), workloads[i]);
    EXPECT_EQ(task.weight(), weights[i]);
    EXPECT_EQ(task.state(), v1::JOB_STATE_SUCCEEDED);
    EXPECT_GE(task.trials_done(), 1) << "every workload is measured";
    EXPECT_EQ(task.trials_done(), task.trials_allocated());
    ASSERT_TRUE(task.has_best()) << workloads[i];
    EXPECT_GT(task.default_secs(), 0) << "the untuned default is measured first";
    EXPECT_GT(task.best().secs(), 0) << "the best rests on its finalists' re-measurement";
    spent += task.trials_done();
    total += task.weight() * task.best().secs();
    default_total += task.weight() * task.default_secs();

    // The task is a job of its own: its records are its workload's, one per trial.
    auto records = RecordsOfJob(db, static_cast<int64_t>(task.job_id()));
    ASSERT_TRUE(records.ok()) << records.status();
    EXPECT_EQ(static_cast<int>(records->size()), task.trials_done());
    for (const Record& r : *records) {
      EXPECT_EQ(r.workload, workloads[i]);
    }
    auto task_job = GetJob(address, task.job_id());
    ASSERT_TRUE(task_job.ok()) << task_job.status();
    EXPECT_EQ(task_job->model_job_id(), id);
  }
  EXPECT_EQ(spent, kTrials);
  EXPECT_DOUBLE_EQ(done->estimated_total_secs(), total);
  EXPECT_DOUBLE_EQ(done->default_total_secs(), default_total);

  CommandResult status = RunClient(address, {"status", std::to_string(id)});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("model:      3 workloads"));
  EXPECT_THAT(status.out, HasSubstr("ms per inference (untuned defaults:"));
  EXPECT_THAT(status.out, HasSubstr("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1"));
  CommandResult watch = RunClient(address, {"watch", std::to_string(id)});
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_THAT(watch.out, HasSubstr("gemm:M=48,N=64,K=32")) << "watch lists each workload";
}

TEST(ModelJobTest, ABudgetBelowAFullFirstChunkPerWorkloadStillMeasuresEveryWorkload) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"), {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  constexpr int kTrials = 4;  // 3 workloads: first chunks of 1, then one more trial
  CommandResult submitted = RunClient(address, SubmitArgs(WriteModel(dir, kModel), kTrials));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  auto done = WaitForJob(address, JobIdOf(submitted), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), kTrials);
  ASSERT_EQ(done->tasks_size(), 3);
  for (const v1::TaskProgress& task : done->tasks()) {
    EXPECT_GE(task.trials_done(), 1) << task.workload();
    EXPECT_TRUE(task.has_best()) << task.workload();
  }
  EXPECT_GT(done->estimated_total_secs(), 0) << "every workload has a best";
}

TEST(ModelJobTest, ABadWorkloadsFileOrModelIsRefusedBeforeAnythingIsSubmitted) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  const std::string file = WriteModel(dir, "gemm:M=8,N=8,K=8\n\ngemm:M=8,N=8 3\n");
  CommandResult bad_line = RunClient(address, SubmitArgs(file, 8));
  EXPECT_EQ(bad_line.exit_code, 2);
  EXPECT_THAT(bad_line.err, HasSubstr(file + ":3: "));

  const std::string weight = WriteModel(dir, "gemm:M=8,N=8,K=8 -2\n");
  CommandResult bad_weight = RunClient(address, SubmitArgs(weight, 8));
  EXPECT_EQ(bad_weight.exit_code, 2);
  EXPECT_THAT(bad_weight.err, HasSubstr(":1: weight \"-2\" is not a positive number"));

  CommandResult unknown = RunClient(
      address, {"submit", "--model", "vgg16", "--target", "llvm -threads=1", "--trials", "8"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown model \"vgg16\""));
  EXPECT_THAT(unknown.err, HasSubstr("resnet50"));

  CommandResult too_few = RunClient(address, SubmitArgs(WriteModel(dir, kModel), 2));
  EXPECT_EQ(too_few.exit_code, 4);
  EXPECT_THAT(too_few.err, HasSubstr("spec.trials"));

  // The daemon checks what other clients send, naming the task.
  v1::JobSpec spec = FastSpec("", 8);
  spec.clear_workload();
  for (const char* w : {"gemm:M=8,N=8,K=8", "gemm:K=8,N=8,M=8"}) {
    v1::WorkloadTask* task = spec.add_tasks();
    task->set_workload(w);
  }
  auto twice = SubmitJob(address, spec);
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("spec.tasks[1].workload"));
  EXPECT_THAT(twice.status().message(), HasSubstr("listed twice"));
  spec.mutable_tasks(1)->set_workload("gemm:M=4,N=8,K=8");
  spec.mutable_tasks(1)->set_weight(-1);
  auto negative = SubmitJob(address, spec);
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(), HasSubstr("spec.tasks[1].weight"));
  spec.mutable_tasks(1)->set_weight(1);
  spec.mutable_tasks(1)->set_workload("gemm:M=4");
  auto malformed = SubmitJob(address, spec);
  ASSERT_FALSE(malformed.ok());
  EXPECT_THAT(malformed.status().message(), HasSubstr("spec.tasks[1].workload"));

  CommandResult jobs = RunClient(address, {"--json", "jobs"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(jobs.out, "[]\n") << "nothing was written";
}

TEST(ModelJobTest, CancellingAModelJobCancelsItsTasksAndATaskIsCancelledOnlyThroughIt) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);  // no worker: the job stays queued
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  CommandResult submitted = RunClient(address, SubmitArgs(WriteModel(dir, kModel), 40));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const uint64_t id = JobIdOf(submitted);
  auto job = GetJob(address, id);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->tasks_size(), 3);
  const uint64_t task = job->tasks(1).job_id();

  CommandResult refused = RunClient(address, {"cancel", std::to_string(task)});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr(StrCat("cancel model job ", id)));

  CommandResult cancel = RunClient(address, {"cancel", std::to_string(id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  for (const v1::TaskProgress& t : job->tasks()) {
    ASSERT_TRUE(WaitFor(
        [&] {
          auto j = GetJob(address, t.job_id());
          return j.ok() && j->state() == v1::JOB_STATE_CANCELLED;
        },
        seconds(60)))
        << "task job " << t.job_id();
  }
}

TEST(ModelJobTest, AModelJobResumedAfterTheDaemonIsKilledSpendsExactlyItsBudget) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  constexpr int kTrials = 32;
  const std::string file = WriteModel(dir, kModel);
  uint64_t id = 0;
  {
    auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
    ASSERT_TRUE(daemon.ok()) << daemon.status();
    CommandResult submitted = RunClient((*daemon)->address(), SubmitArgs(file, kTrials));
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    id = JobIdOf(submitted);
    ASSERT_TRUE(WaitFor(
        [&] {
          auto j = GetJob((*daemon)->address(), id);
          return j.ok() && j->trials_done() >= 10;
        },
        seconds(120)))
        << (*daemon)->process().Log();
    (*daemon)->process().Kill();
  }
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto done = WaitForJob((*daemon)->address(), id, seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), kTrials);
  int records_total = 0;
  for (const v1::TaskProgress& task : done->tasks()) {
    auto records = RecordsOfJob(db, static_cast<int64_t>(task.job_id()));
    ASSERT_TRUE(records.ok()) << records.status();
    records_total += static_cast<int>(records->size());
    for (const auto& [config, count] : CountPerConfig(*records)) {
      EXPECT_EQ(count, 1) << task.workload() << " " << config;
    }
  }
  EXPECT_EQ(records_total, kTrials);
}

}  // namespace
}  // namespace tune::testing
