// The scheduler through its WorkerChannel seam: a real tuning log, real builder processes and
// real LLVM builds, with test-driven workers in place of gRPC streams. Every wait is on an
// event (a request arriving, a job event); none is on elapsed time.
#include "tuner/scheduler/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "common/artifact_hash.h"
#include "common/files.h"
#include "common/strings.h"
#include "common/target.h"
#include "tests/fault/fault_templates.h"
#include "tests/tuner/scheduler_fixture.h"
#include "tests/tuner/test_worker.h"
#include "tuner/scheduler/finalists.h"

namespace tune::tuner {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::TestWorker;

TEST_F(SchedulerTest, AWorkerErrorIsRetriedOnAnotherWorkerAndNeverRecorded) {
  Start();
  TestWorker broken, sound;
  broken.Register(*scheduler_, "broken");
  uint64_t job = Submit(Spec(1));
  std::optional<v1::MeasureRequest> first = broken.NextRequest();
  ASSERT_TRUE(first.has_value());
  sound.Register(*scheduler_, "sound");
  broken.Fail(*first, "cannot start a measurement process");
  std::optional<v1::MeasureRequest> retry = sound.NextRequest();
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->trial_id(), first->trial_id());
  sound.Answer(*retry, 1e-4);
  EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);

  std::vector<Record> records = RecordsOf(job);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].worker, "sound");
  EXPECT_TRUE(records[0].measurement.ok());
  EXPECT_TRUE(broken.NoRequestWaiting());
}

TEST_F(SchedulerTest, NoTrialGoesToAWorkerOfferingFewerThreadsThanTheTargetAsks) {
  Start();
  TestWorker narrow, wide;
  narrow.Register(*scheduler_, "narrow", /*threads=*/1);
  uint64_t job = Submit(Spec(2, "llvm -mcpu=native -threads=2"));
  absl::StatusOr<v1::Job> waiting = scheduler_->GetJob(job);
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->state(), v1::JOB_STATE_QUEUED);
  EXPECT_THAT(waiting->message(), HasSubstr("offering at least 2 threads"));

  wide.Register(*scheduler_, "wide", /*threads=*/4);
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::MeasureRequest> request = wide.NextRequest();
    ASSERT_TRUE(request.has_value());
    wide.Answer(*request, 1e-4);
  }
  EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(narrow.NoRequestWaiting());
}

TEST_F(SchedulerTest, AJobAskingMoreThreadsThanAnyWorkersMachineHasIsRefusedAndNotWritten) {
  Start();
  TestWorker worker;
  worker.Register(*scheduler_, "two-cores", /*threads=*/2, /*capacity=*/1, {}, /*cores=*/2);
  absl::StatusOr<v1::Job> refused =
      scheduler_->SubmitJob(Spec(2, "llvm -mcpu=native -threads=4"), "test");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              AllOf(HasSubstr("-threads=4"), HasSubstr("accepted: -threads=1 to -threads=2")));
  absl::StatusOr<std::vector<Job>> jobs = log_->ListJobs();
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->empty());
  // Within the cores it is a job.
  EXPECT_NE(Submit(Spec(1, "llvm -mcpu=native -threads=2")), 0u);
}

TEST_F(SchedulerTest, ATrialNeedingALibraryGoesOnlyToAWorkerThatPreloadedIt) {
  Start();
  TestWorker plain, equipped;
  plain.Register(*scheduler_, "plain");
  equipped.Register(*scheduler_, "equipped", 1, 1, {std::string(kFaultExternLibrary)});
  v1::JobSpec spec = Spec(1);
  spec.clear_templates();
  spec.add_templates(std::string(kFaultExternCallTemplate));
  uint64_t job = Submit(spec);
  std::optional<v1::MeasureRequest> request = equipped.NextRequest();
  ASSERT_TRUE(request.has_value());
  EXPECT_THAT(request->artifact().needed_libs(),
              ::testing::ElementsAre(std::string(kFaultExternLibrary)));
  equipped.Answer(*request, 1e-4);
  EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(plain.NoRequestWaiting());
}

// A worker of a Sapphire Rapids device key that reports `features` and measures bf16.
v1::Register SapphireRapidsWorker(const std::string& name, std::vector<std::string> features) {
  v1::Register reg;
  reg.set_name(name);
  reg.set_device_key("cpu/x86_64/sapphirerapids");
  reg.mutable_capabilities()->set_threads(1);
  reg.mutable_capabilities()->set_capacity(1);
  reg.mutable_capabilities()->add_dtypes("bf16");
  reg.mutable_capabilities()->add_dtypes("f32");
  for (std::string& feature : features) {
    reg.mutable_capabilities()->add_features(std::move(feature));
  }
  return reg;
}

v1::JobSpec Bf16SapphireRapidsSpec(int trials, const std::vector<std::string>& templates) {
  v1::JobSpec spec;
  spec.set_workload("gemm:M=16,N=16,K=32,dtype=bf16");
  spec.set_target("llvm -mcpu=sapphirerapids -threads=1");
  spec.set_trials(trials);
  spec.set_strategy("grid");
  for (const std::string& name : templates) {
    spec.add_templates(name);
  }
  return spec;
}

TEST_F(SchedulerTest,
       AJobWhoseTemplatesNeedCpuFeaturesNoWorkerReportsWaitsSayingWhichUntilOneComes) {
  Start();
  TestWorker plain, tiles;  // a Linux that does not enable AMX, and one that does
  plain.Register(*scheduler_, SapphireRapidsWorker("plain", {"avx512bf16"}));
  absl::StatusOr<v1::Job> job =
      scheduler_->SubmitJob(Bf16SapphireRapidsSpec(1, {"gemm.cpu.amx"}), "test");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::JOB_STATE_QUEUED);
  EXPECT_THAT(job->message(),
              HasSubstr("waiting for a worker with device key cpu/x86_64/sapphirerapids that can "
                        "run one of its templates (no connected one has what they need: "
                        "gemm.cpu.amx needs amx-tile, amx-bf16)"));

  tiles.Register(*scheduler_,
                 SapphireRapidsWorker("tiles", {"amx-bf16", "amx-tile", "avx512bf16"}));
  std::optional<v1::MeasureRequest> request = tiles.NextRequest();
  ASSERT_TRUE(request.has_value());
  tiles.Answer(*request, 1e-5);
  EXPECT_EQ(WaitForEnd(job->job_id()).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(plain.NoRequestWaiting());
}

TEST_F(SchedulerTest, ATemplateNeedingCpuFeaturesNoWorkerReportsIsSkippedAndNamedWithThem) {
  Start();
  TestWorker plain;
  plain.Register(*scheduler_, SapphireRapidsWorker("plain", {"avx512bf16"}));
  uint64_t job = Submit(Bf16SapphireRapidsSpec(2, {"gemm.cpu.amx", "gemm.cpu.dot"}));
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::MeasureRequest> request = plain.NextRequest();
    ASSERT_TRUE(request.has_value());
    EXPECT_EQ(request->artifact().template_name(), "gemm.cpu.dot");
    plain.Answer(*request, 1e-5);
  }
  v1::JobEvent end = WaitForEnd(job);
  EXPECT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_THAT(end.message(), HasSubstr("skipped gemm.cpu.amx (no worker with amx-tile, amx-bf16)"));
}

// Two jobs of one workload and target whose searches propose the same config first.
TEST_F(SchedulerTest, AConfigThatAnotherJobMeasuresIsNotMeasuredTwice) {
  Start();
  TestWorker worker;
  worker.Register(*scheduler_, "only");
  uint64_t first = Submit(Spec(1));
  uint64_t second = Submit(Spec(2));
  std::optional<v1::MeasureRequest> shared = worker.NextRequest();
  ASSERT_TRUE(shared.has_value());
  worker.Answer(*shared, 1e-4);
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    ASSERT_TRUE(request.has_value());
    EXPECT_NE(request->artifact().config(), shared->artifact().config());
    worker.Answer(*request, 2e-4);
  }
  EXPECT_EQ(WaitForEnd(first).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(WaitForEnd(second).state(), v1::JOB_STATE_SUCCEEDED);
  std::set<std::string> configs;
  for (uint64_t job : {first, second}) {
    for (const Record& r : RecordsOf(job)) {
      EXPECT_TRUE(configs.insert(r.config).second) << "measured twice: " << r.config;
    }
  }
  EXPECT_EQ(configs.size(), 3u);
}

TEST_F(SchedulerTest, ATrialOfCodeAnotherJobIsMeasuringTakesThatMeasurementInsteadOfARequest) {
  Start();
  TestWorker worker;
  worker.Register(*scheduler_, "only");
  const uint64_t first = Submit(Spec(1));
  std::optional<v1::MeasureRequest> request = worker.NextRequest();
  ASSERT_TRUE(request.has_value());
  // Another target text for the same device, whose extra library this template never calls:
  // the job proposes the same config, which is no claim of the first job's (another target)
  // and builds to the same code.
  const uint64_t second = Submit(Spec(1, "llvm -mcpu=native -threads=1 -libs=openblas"));
  scheduler_->QuiesceWithBuilds();
  EXPECT_EQ(scheduler_->Depth().trials_following, 1);
  EXPECT_EQ(scheduler_->Depth().trials_waiting, 0);

  worker.Answer(*request, 2.5e-4);
  EXPECT_EQ(WaitForEnd(first).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(WaitForEnd(second).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(worker.NoRequestWaiting()) << "the shared code was measured twice";
  auto [ours, theirs] = RecordsSharingAMeasurement(first, second);
  EXPECT_EQ(theirs.config, ours.config);
}

TEST_F(SchedulerTest, CodeMeasuredEarlierByThisDaemonIsNotMeasuredAgainForALaterJob) {
  Start();
  TestWorker worker;
  worker.Register(*scheduler_, "only");
  const uint64_t first = Submit(Spec(1));
  std::optional<v1::MeasureRequest> request = worker.NextRequest();
  ASSERT_TRUE(request.has_value());
  worker.Answer(*request, 2.5e-4);
  EXPECT_EQ(WaitForEnd(first).state(), v1::JOB_STATE_SUCCEEDED);

  // After the first job has ended: the same config for another target of the same device,
  // whose extra library this template never calls, builds to the code measured above.
  const uint64_t second = Submit(Spec(1, "llvm -mcpu=native -threads=1 -libs=openblas"));
  scheduler_->QuiesceWithBuilds();
  ASSERT_TRUE(worker.NoRequestWaiting()) << "code measured before was measured again";
  EXPECT_EQ(WaitForEnd(second).state(), v1::JOB_STATE_SUCCEEDED);
  RecordsSharingAMeasurement(first, second);
}

TEST_F(SchedulerTest, TheSameConfigWithOtherTimingSettingsIsMeasuredForEachJob) {
  Start();
  TestWorker worker;
  worker.Register(*scheduler_, "only");
  const uint64_t first = Submit(Spec(1));
  v1::JobSpec more_rounds = Spec(1);
  more_rounds.mutable_timing()->set_repeat(7);
  const uint64_t second = Submit(more_rounds);
  std::optional<v1::MeasureRequest> a = worker.NextRequest();
  ASSERT_TRUE(a.has_value());
  worker.Answer(*a, 1e-4);
  std::optional<v1::MeasureRequest> b = worker.NextRequest();
  ASSERT_TRUE(b.has_value());
  worker.Answer(*b, 1e-4);
  EXPECT_EQ(a->artifact().hash(), b->artifact().hash());
  EXPECT_NE(a->timing().repeat(), b->timing().repeat());
  EXPECT_EQ(WaitForEnd(first).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(WaitForEnd(second).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(RecordsOf(first).size(), 1u);
  EXPECT_EQ(RecordsOf(second).size(), 1u);
}

TEST_F(SchedulerTest, ADaemonOnAnotherLogTakesWhatAnEarlierOneBuiltFromTheArtifactStore) {
  auto store = TempDir::Create("tune-store-test-");
  ASSERT_TRUE(store.ok()) << store.status();
  SchedulerOptions options = WithoutFinalists();
  options.artifact_store_dir = store->File("artifacts");
  options.artifact_store_bytes = 64 << 20;
  std::vector<std::string> hashes;
  for (int run = 0; run < 2; ++run) {
    if (scheduler_) {
      scheduler_->Shutdown();
      scheduler_.reset();
    }
    Start(options);  // a fresh log each time
    TestWorker worker;
    worker.Register(*scheduler_, "only");
    const uint64_t job = Submit(Spec(2));
    for (int i = 0; i < 2; ++i) {
      std::optional<v1::MeasureRequest> request = worker.NextRequest();
      ASSERT_TRUE(request.has_value());
      hashes.push_back(request->artifact().hash());
      worker.Answer(*request, 1e-4);
    }
    EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);
    const std::string metrics = scheduler_->metrics().Exposition();
    if (run == 0) {
      EXPECT_THAT(metrics, HasSubstr("tune_build_duration_seconds_count 2"));
      EXPECT_THAT(metrics, HasSubstr("tune_stored_artifacts_total 0"));
    } else {
      EXPECT_THAT(metrics, HasSubstr("tune_build_duration_seconds_count 0"));
      EXPECT_THAT(metrics, HasSubstr("tune_stored_artifacts_total 2"));
    }
  }
  ASSERT_EQ(hashes.size(), 4u);
  EXPECT_EQ(std::set<std::string>(hashes.begin(), hashes.begin() + 2),
            std::set<std::string>(hashes.begin() + 2, hashes.end()));
}

TEST_F(SchedulerTest, AnotherClientsSmallJobIsMeasuredAlongsideABigJobNotAfterIt) {
  Start(EveryTrialMeasured());
  std::vector<std::string> order =
      FirstRequestsOfABigAndASmallJob("alice@ipv4:127.0.0.1:40001", "bob@ipv4:127.0.0.1:40002");
  ASSERT_EQ(order.size(), 15u);
  // Bob's job is proposed alongside Alice's, not after her budget is proposed (one client
  // alone: see the next test, where none of the first six is Bob's): his first trial is among
  // the first six proposed. (Where it is measured also depends on when its build is ready,
  // which a loaded machine moves.)
  std::vector<size_t> small_at;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == kSmallWorkload) {
      small_at.push_back(i);
    }
  }
  ASSERT_EQ(small_at.size(), 3u) << ::testing::PrintToString(order);
  EXPECT_LT(small_at.front(), 6u) << ::testing::PrintToString(order);
}

TEST_F(SchedulerTest, JobsOfOneClientAndPriorityRunInSubmissionOrder) {
  Start(EveryTrialMeasured());
  // Two connections of one host, no tokens: one client.
  std::vector<std::string> order =
      FirstRequestsOfABigAndASmallJob("ipv4:127.0.0.1:40001", "ipv4:127.0.0.1:40002");
  ASSERT_EQ(order.size(), 15u);
  // The later job proposes once the first has proposed its whole budget.
  EXPECT_EQ(std::count(order.begin(), order.begin() + 12, kSmallWorkload), 0)
      << ::testing::PrintToString(order);
}

TEST(ClientKeyTest, ATokensNameOrElseThePeersHostNamesTheClient) {
  EXPECT_EQ(ClientKey("alice@ipv4:10.0.0.1:5000"), "alice");
  EXPECT_EQ(ClientKey("ipv4:127.0.0.1:40001"), "ipv4:127.0.0.1");
  EXPECT_EQ(ClientKey("ipv6:[::1]:40001"), "ipv6:[::1]");
  EXPECT_EQ(ClientKey("test"), "test");
}

TEST_F(SchedulerTest, AConfigWaitingOnACancelledJobsTrialIsMeasuredByTheWaitingJob) {
  Start();
  TestWorker worker;
  worker.Register(*scheduler_, "only");
  uint64_t first = Submit(Spec(1));
  uint64_t second = Submit(Spec(2));
  std::optional<v1::MeasureRequest> shared = worker.NextRequest();
  ASSERT_TRUE(shared.has_value());
  absl::StatusOr<v1::Job> cancelled = scheduler_->CancelJob(first);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_THAT(worker.Cancels(), ::testing::ElementsAre(shared->trial_id()));
  std::set<std::string> measured;
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    ASSERT_TRUE(request.has_value());
    measured.insert(request->artifact().config());
    worker.Answer(*request, 1e-4);
  }
  EXPECT_EQ(WaitForEnd(second).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(measured.contains(shared->artifact().config()))
      << "the config the cancelled job gave up was never measured";
  EXPECT_TRUE(RecordsOf(first).empty());
}

TEST_F(SchedulerTest, AFinishedJobLeavesMemoryAndItsWatcherStillSeesTheEnd) {
  Start();
  TestWorker worker;
  worker.Register(*scheduler_, "only");
  uint64_t job = Submit(Spec(2));
  v1::JobEvent last;
  std::thread watcher([&] { last = WaitForEnd(job); });
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    ASSERT_TRUE(request.has_value());
    worker.Answer(*request, 1e-4 * (i + 1));
  }
  watcher.join();
  EXPECT_EQ(last.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(last.trials_done(), 2);
  scheduler_->Quiesce();
  Scheduler::MemoryUse memory = scheduler_->Memory();
  EXPECT_EQ(memory.jobs, 0u);
  EXPECT_EQ(memory.trials, 0u);
  EXPECT_EQ(memory.claims, 0u);
  // Still described, now from the log.
  absl::StatusOr<v1::Job> described = scheduler_->GetJob(job);
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(described->trials_done(), 2);
  EXPECT_EQ(described->best().secs(), 1e-4);
}

TEST_F(SchedulerTest, ABuildThatKillsItsBuilderIsABuildErrorAndTheNextBuildsWork) {
  Start();
  TestWorker worker;
  worker.Register(*scheduler_, "only");
  v1::JobSpec crash = Spec(1);
  crash.clear_templates();
  crash.add_templates(std::string(kFaultBuildCrashTemplate));
  uint64_t crashing = Submit(crash);
  EXPECT_EQ(WaitForEnd(crashing).state(), v1::JOB_STATE_SUCCEEDED);
  std::vector<Record> records = RecordsOf(crashing);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].measurement.error, ErrorKind::kBuildError);
  EXPECT_THAT(records[0].measurement.message, HasSubstr("crashed"));
  EXPECT_THAT(records[0].measurement.message, HasSubstr("SIGABRT"));

  uint64_t fine = Submit(Spec(1));
  std::optional<v1::MeasureRequest> request = worker.NextRequest();
  ASSERT_TRUE(request.has_value());
  worker.Answer(*request, 1e-4);
  EXPECT_EQ(WaitForEnd(fine).state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(SchedulerTest, ABuildThatHangsIsABuildErrorOnceItsDeadlinePasses) {
  Start({.build_timeout_ms = 1000, .remeasure_finalists = false});
  TestWorker worker;
  worker.Register(*scheduler_, "only");
  v1::JobSpec hang = Spec(1);
  hang.clear_templates();
  hang.add_templates(std::string(kFaultBuildHangTemplate));
  uint64_t hanging = Submit(hang);
  EXPECT_EQ(WaitForEnd(hanging).state(), v1::JOB_STATE_SUCCEEDED);
  std::vector<Record> records = RecordsOf(hanging);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].measurement.error, ErrorKind::kBuildError);
  EXPECT_THAT(records[0].measurement.message, HasSubstr("did not finish within 1000 ms"));
}

TEST_F(SchedulerTest, AFetchGetsTheCodeOfATrialInFlightOnThatWorkerOnly) {
  Start();
  TestWorker worker, other;
  worker.Register(*scheduler_, "holder");
  uint64_t job = Submit(Spec(1));
  std::optional<v1::MeasureRequest> request = worker.NextRequest();
  ASSERT_TRUE(request.has_value());
  other.Register(*scheduler_, "stranger");
  const v1::Artifact& artifact = request->artifact();
  EXPECT_EQ(artifact.format(), v1::ARTIFACT_FORMAT_SHARED_OBJECT);

  v1::ArtifactCodeReply reply = worker.Fetch(artifact.hash());
  ASSERT_TRUE(reply.has_code()) << reply.error();
  EXPECT_EQ(reply.hash(), artifact.hash());
  ASSERT_EQ(reply.code().code_case(), v1::ArtifactCode::kSharedObject);
  EXPECT_EQ(static_cast<int64_t>(reply.code().shared_object().size()), artifact.code_bytes());
  EXPECT_EQ(ArtifactHash(CodeFormat::kSharedObject, reply.code().shared_object()), artifact.hash());

  v1::ArtifactCodeReply refused = other.Fetch(artifact.hash());
  EXPECT_FALSE(refused.has_code());
  EXPECT_THAT(refused.error(), HasSubstr("no trial in flight on this worker"));

  worker.Answer(*request, 1e-4);
  EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);
  // Once the trial ended, its code is gone.
  EXPECT_FALSE(worker.Fetch(artifact.hash()).has_code());
}

}  // namespace
}  // namespace tune::tuner

namespace tune::tuner {
namespace {

TEST_F(SchedulerTest, ASpentJobReMeasuresItsFinalistsOnePassAtATimeBeforeItEnds) {
  SchedulerOptions options;
  options.remeasure_finalists = true;
  Start(options);
  TestWorker worker;
  worker.Register(*scheduler_, "only", /*threads=*/1, /*capacity=*/2);
  uint64_t job = Submit(Spec(2));
  for (double secs : {2e-4, 1e-4}) {
    std::optional<v1::MeasureRequest> request = worker.NextRequest();
    ASSERT_TRUE(request.has_value());
    worker.Answer(*request, secs);
  }
  // The first pass screens both; both are then finalists: each pass measures both, with more
  // rounds than the search.
  for (int pass = 1; pass <= kFinalPasses; ++pass) {
    std::vector<v1::MeasureRequest> requests;
    for (int i = 0; i < 2; ++i) {
      std::optional<v1::MeasureRequest> request = worker.NextRequest();
      ASSERT_TRUE(request.has_value());
      EXPECT_GE(request->timing().repeat(), 5);
      requests.push_back(*request);
    }
    EXPECT_TRUE(worker.NoRequestWaiting()) << "one pass at a time";
    absl::StatusOr<v1::Job> running = scheduler_->GetJob(job);
    ASSERT_TRUE(running.ok());
    EXPECT_EQ(running->state(), v1::JOB_STATE_RUNNING);
    EXPECT_EQ(running->trials_done(), 2);
    EXPECT_EQ(running->message(),
              pass == 1 ? std::string("screening its 2 fastest configs: pass 1 of 3")
                        : StrCat("re-measuring its 2 finalists: pass ", pass, " of 3"));
    for (const v1::MeasureRequest& request : requests) {
      worker.Answer(request, 3e-4);
    }
  }
  v1::JobEvent end = WaitForEnd(job);
  EXPECT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(end.trials_done(), 2);
  std::vector<Record> records = RecordsOf(job);
  ASSERT_EQ(records.size(), 2u + 2u * kFinalPasses);
  EXPECT_EQ(std::count_if(records.begin(), records.end(), [](const Record& r) { return r.final; }),
            2 * kFinalPasses);
  absl::StatusOr<std::optional<BestDecision>> decision = log_->GetBestDecision(
      kWorkload, Target::Parse(Spec(1).target())->Resolved().ToString(), false);
  ASSERT_TRUE(decision.ok() && decision->has_value());
  EXPECT_DOUBLE_EQ((*decision)->median_secs, 3e-4) << "the re-measured figure, not the search's";
}

TEST_F(SchedulerTest, EachFinalistsNextPassGoesToAWorkerThatHasNotMeasuredItYet) {
  SchedulerOptions options;
  options.remeasure_finalists = true;
  Start(options);
  TestWorker left, right;
  left.Register(*scheduler_, "left");
  right.Register(*scheduler_, "right");
  uint64_t job = Submit(Spec(2));
  // The search's two trials: one per worker (each takes one trial at a time).
  std::optional<v1::MeasureRequest> first = left.NextRequest();
  std::optional<v1::MeasureRequest> second = right.NextRequest();
  ASSERT_TRUE(first.has_value() && second.has_value());
  left.Answer(*first, 2e-4);
  right.Answer(*second, 1e-4);
  // Pass by pass: each worker gets one finalist; the first two passes of a finalist are on two
  // different workers.
  std::map<std::string, std::vector<std::string>> workers_of;
  for (int pass = 1; pass <= kFinalPasses; ++pass) {
    std::optional<v1::MeasureRequest> on_left = left.NextRequest();
    std::optional<v1::MeasureRequest> on_right = right.NextRequest();
    ASSERT_TRUE(on_left.has_value() && on_right.has_value()) << "pass " << pass;
    workers_of[on_left->artifact().config()].push_back("left");
    workers_of[on_right->artifact().config()].push_back("right");
    left.Answer(*on_left, 3e-4);
    right.Answer(*on_right, 3e-4);
  }
  EXPECT_EQ(WaitForEnd(job).state(), v1::JOB_STATE_SUCCEEDED);
  ASSERT_EQ(workers_of.size(), 2u);
  for (const auto& [config, workers] : workers_of) {
    ASSERT_EQ(workers.size(), static_cast<size_t>(kFinalPasses)) << config;
    EXPECT_NE(workers[0], workers[1]) << config;
  }
}

}  // namespace
}  // namespace tune::tuner
