// The scheduler's pieces on their own: the trial pipeline and its claims, the worker registry's
// eligibility and liveness, the job queue's order, event streams and the serial executor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "codegen/templates/catalog.h"
#include "common/strings.h"
#include "tuner/scheduler/event_hub.h"
#include "tuner/scheduler/job_queue.h"
#include "tuner/scheduler/serial_executor.h"
#include "tuner/scheduler/trial_pipeline.h"
#include "tuner/scheduler/worker_registry.h"

namespace tune::tuner {
namespace {

std::shared_ptr<JobRuntime> MakeJob(int64_t id, int priority = 0,
                                    JobState state = JobState::kQueued) {
  auto job = std::make_shared<JobRuntime>();
  job->row.id = id;
  job->row.state = state;
  job->row.spec.workload = "gemm:M=16,N=16,K=16";
  job->row.spec.target = "llvm -mcpu=znver4 -threads=1";
  job->row.spec.device_key = "cpu/x86_64/znver4";
  job->row.spec.priority = priority;
  job->row.spec.trials = 10;
  return job;
}

const KernelTemplate& Gemm() { return *Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked"); }

Candidate CandidateOf(int kc) { return Candidate{&Gemm(), Config{{"kc", kc}}}; }

// An artifact whose code has the hash `hash` (the pipeline never looks at the code itself).
std::shared_ptr<const v1::Artifact> ArtifactOf(const std::string& hash) {
  auto artifact = std::make_shared<v1::Artifact>();
  artifact->set_hash(hash);
  return artifact;
}

Measurement Measured(std::vector<double> round_secs) {
  Measurement m;
  m.round_secs = std::move(round_secs);
  m.number = 1;
  return m;
}

Measurement Failed(ErrorKind error, std::string message) {
  Measurement m;
  m.error = error;
  m.message = std::move(message);
  return m;
}

class PipelineTest : public ::testing::Test {
 protected:
  TrialPipeline pipeline_;
  std::shared_ptr<JobRuntime> job_ = MakeJob(1);
  WorkerEntry worker_{.id = "w1"};
};

TEST_F(PipelineTest, AClaimedConfigGetsNoSecondTrialUntilTheFirstIsErased) {
  Trial* first = pipeline_.Create(*job_, CandidateOf(64));
  ASSERT_NE(first, nullptr);
  auto other_job = MakeJob(2);
  EXPECT_EQ(pipeline_.Create(*other_job, CandidateOf(64)), nullptr);
  EXPECT_NE(pipeline_.Create(*other_job, CandidateOf(128)), nullptr) << "another config";
  const std::string claim = pipeline_.Erase(first->id, *job_, nullptr);
  EXPECT_EQ(claim, ClaimKey(*job_, Gemm(), ConfigToString(Config{{"kc", 64}})));
  EXPECT_NE(pipeline_.Create(*other_job, CandidateOf(64)), nullptr);
}

TEST_F(PipelineTest, EveryTransitionKeepsTheJobsCountersInStep) {
  Trial* trial = pipeline_.Create(*job_, CandidateOf(64));
  EXPECT_EQ(job_->building, 1);
  pipeline_.Built(*trial, *job_, std::make_shared<v1::Artifact>(),
                  std::make_shared<v1::ArtifactCode>());
  EXPECT_EQ(job_->building, 0);
  EXPECT_EQ(job_->ready.size(), 1u);
  Trial* taken = pipeline_.TakeReady(*job_, [](const Trial&) { return true; });
  ASSERT_EQ(taken, trial);
  pipeline_.Dispatched(*trial, *job_, worker_, Clock::now());
  EXPECT_EQ(job_->in_flight, 1);
  EXPECT_TRUE(worker_.in_flight.contains(trial->id));
  pipeline_.Answered(*trial, *job_, &worker_);
  EXPECT_EQ(job_->in_flight, 0);
  EXPECT_EQ(job_->committing, 1);
  EXPECT_TRUE(worker_.in_flight.empty());
  pipeline_.Erase(trial->id, *job_, nullptr);
  EXPECT_EQ(job_->committing, 0);
  EXPECT_EQ(job_->Outstanding(), 0);
  EXPECT_EQ(pipeline_.size(), 0u);
  EXPECT_EQ(pipeline_.claims(), 0u);
}

TEST_F(PipelineTest, ARequeuedTrialGoesFirstAndIsGivenUpAfterItsLastAttempt) {
  Trial* older = pipeline_.Create(*job_, CandidateOf(32));
  Trial* trial = pipeline_.Create(*job_, CandidateOf(64));
  pipeline_.Built(*older, *job_, ArtifactOf("older"), nullptr);
  pipeline_.Built(*trial, *job_, ArtifactOf("trial"), nullptr);
  auto dispatch = [&] {
    Trial* t = pipeline_.TakeReady(*job_, [&](const Trial& c) { return c.id == trial->id; });
    ASSERT_EQ(t, trial);
    pipeline_.Dispatched(*trial, *job_, worker_, Clock::now());
  };
  dispatch();
  EXPECT_FALSE(pipeline_.Requeue(*trial, *job_, &worker_, "w1", "stream broke", 2));
  EXPECT_EQ(job_->ready.front(), trial->id) << "back at the front of the queue";
  EXPECT_TRUE(trial->failed_on.contains("w1"));
  dispatch();
  EXPECT_TRUE(pipeline_.Requeue(*trial, *job_, &worker_, "w1", "stream broke again", 2));
  EXPECT_EQ(trial->stage, TrialStage::kCommitting);
  EXPECT_EQ(trial->last_failure, "stream broke again");
  EXPECT_EQ(job_->committing, 1);
  EXPECT_EQ(job_->ready.size(), 1u) << "only the older trial waits";
}

TEST_F(PipelineTest, TrialsOfOneArtifactDeviceAndTimingShareTheMeasurementOfTheFirst) {
  auto other_job = MakeJob(2);
  Trial* leader = pipeline_.Create(*job_, CandidateOf(32));
  Trial* follower = pipeline_.Create(*other_job, CandidateOf(64));
  EXPECT_TRUE(pipeline_.Built(*leader, *job_, ArtifactOf("same code"), nullptr));
  EXPECT_FALSE(pipeline_.Built(*follower, *other_job, ArtifactOf("same code"), nullptr));
  EXPECT_EQ(follower->stage, TrialStage::kFollowing);
  EXPECT_EQ(other_job->following, 1);
  EXPECT_TRUE(other_job->ready.empty());
  EXPECT_EQ(other_job->Outstanding(), 1);

  Trial* taken = pipeline_.TakeReady(*job_, [](const Trial&) { return true; });
  ASSERT_EQ(taken, leader);
  pipeline_.Dispatched(*leader, *job_, worker_, Clock::now());
  pipeline_.Answered(*leader, *job_, &worker_);
  EXPECT_THAT(pipeline_.Unlead(*leader), ::testing::ElementsAre(follower->id));
  pipeline_.Shared(*follower, *other_job);
  EXPECT_EQ(follower->stage, TrialStage::kCommitting);
  EXPECT_EQ(other_job->following, 0);
  EXPECT_EQ(other_job->committing, 1);

  // Once the leader is answered, the same code is another trial's to lead.
  Trial* later = pipeline_.Create(*other_job, CandidateOf(128));
  EXPECT_TRUE(pipeline_.Built(*later, *other_job, ArtifactOf("same code"), nullptr));
}

TEST_F(PipelineTest, OtherTimingSettingsOrAFinalistsReMeasurementMeasureTheSameCodeAgain) {
  auto slower_timing = MakeJob(2);
  slower_timing->row.spec.timing.repeat = 10;
  Trial* leader = pipeline_.Create(*job_, CandidateOf(32));
  Trial* other = pipeline_.Create(*slower_timing, CandidateOf(64));
  Trial* finalist = pipeline_.Create(*job_, CandidateOf(32), /*final_pass=*/0);
  ASSERT_NE(finalist, nullptr);
  EXPECT_TRUE(pipeline_.Built(*leader, *job_, ArtifactOf("code"), nullptr));
  EXPECT_TRUE(pipeline_.Built(*other, *slower_timing, ArtifactOf("code"), nullptr));
  EXPECT_TRUE(pipeline_.Built(*finalist, *job_, ArtifactOf("code"), nullptr));
  EXPECT_NE(MeasureKey(*job_, *leader->artifact), MeasureKey(*slower_timing, *other->artifact));
}

TEST_F(PipelineTest, WithoutSharingATrialOfCodeBeingMeasuredIsMeasuredToo) {
  TrialPipeline unshared(/*share_measurements=*/false);
  Trial* first = unshared.Create(*job_, CandidateOf(32));
  Trial* second = unshared.Create(*job_, CandidateOf(64));
  EXPECT_TRUE(unshared.Built(*first, *job_, ArtifactOf("same code"), nullptr));
  EXPECT_TRUE(unshared.Built(*second, *job_, ArtifactOf("same code"), nullptr));
  EXPECT_EQ(second->stage, TrialStage::kReady);
  EXPECT_EQ(job_->ready.size(), 2u);
  EXPECT_EQ(job_->following, 0);
}

TEST_F(PipelineTest, ASuccessfulAnswerIsTakenByTrialsOfTheSameCodeBuiltLaterButNotByFinalists) {
  auto other_job = MakeJob(2);
  Trial* first = pipeline_.Create(*job_, CandidateOf(32));
  pipeline_.Built(*first, *job_, ArtifactOf("code"), nullptr);
  ASSERT_EQ(pipeline_.TakeReady(*job_, [](const Trial&) { return true; }), first);
  pipeline_.Dispatched(*first, *job_, worker_, Clock::now());
  pipeline_.Answered(*first, *job_, &worker_);
  const PendingCommit answer{first->id, Measured({1e-4, 2e-4}), "w1", "cpu/x86_64/znver4"};
  pipeline_.Remember(*first, answer);
  EXPECT_EQ(pipeline_.remembered(), 1u);

  Trial* later = pipeline_.Create(*other_job, CandidateOf(64));
  std::optional<PendingCommit> recalled =
      pipeline_.Recall(*later, *other_job, ArtifactOf("code"), nullptr);
  ASSERT_TRUE(recalled.has_value());
  EXPECT_EQ(recalled->trial_id, later->id);
  EXPECT_EQ(recalled->measurement.round_secs, answer.measurement.round_secs);
  EXPECT_EQ(recalled->worker, "w1");
  EXPECT_EQ(later->stage, TrialStage::kCommitting);
  EXPECT_EQ(later->artifact->hash(), "code");
  EXPECT_EQ(other_job->building, 0);
  EXPECT_EQ(other_job->committing, 1);

  // Other code, and a finalist's re-measurement of this code, are measured.
  Trial* other_code = pipeline_.Create(*other_job, CandidateOf(128));
  EXPECT_FALSE(pipeline_.Recall(*other_code, *other_job, ArtifactOf("other code"), nullptr));
  EXPECT_EQ(other_code->stage, TrialStage::kBuilding);
  EXPECT_EQ(other_job->building, 1);
  Trial* finalist = pipeline_.Create(*job_, CandidateOf(32), /*final_pass=*/0);
  ASSERT_NE(finalist, nullptr);
  EXPECT_FALSE(pipeline_.Recall(*finalist, *job_, ArtifactOf("code"), nullptr));
  EXPECT_EQ(finalist->stage, TrialStage::kBuilding);
}

TEST_F(PipelineTest, FailedAnswersAreNotRememberedAndTheOldestAnswerIsForgottenFirst) {
  auto remember = [&](const std::string& hash, Measurement measurement) {
    Trial* trial = pipeline_.Create(*job_, CandidateOf(static_cast<int>(pipeline_.size()) + 1));
    pipeline_.Built(*trial, *job_, ArtifactOf(hash), nullptr);
    pipeline_.Remember(*trial, PendingCommit{trial->id, std::move(measurement), "w1", ""});
  };
  remember("crashes", Failed(ErrorKind::kRuntimeCrash, "SIGSEGV"));
  EXPECT_EQ(pipeline_.remembered(), 0u);
  for (size_t i = 0; i <= kRecalledAnswers; ++i) {
    remember(StrCat("code ", i), Measured({1e-4}));
  }
  EXPECT_EQ(pipeline_.remembered(), kRecalledAnswers);
  auto other_job = MakeJob(2);
  Trial* oldest = pipeline_.Create(*other_job, CandidateOf(100000));
  EXPECT_FALSE(pipeline_.Recall(*oldest, *other_job, ArtifactOf("code 0"), nullptr));
  Trial* newest = pipeline_.Create(*other_job, CandidateOf(100001));
  EXPECT_TRUE(pipeline_.Recall(*newest, *other_job, ArtifactOf(StrCat("code ", kRecalledAnswers)),
                               nullptr));
}

TEST_F(PipelineTest, ANewFingerprintOfADeviceForgetsItsAnswersAndOnlyItsAnswers) {
  auto gpu_job = MakeJob(2);
  gpu_job->row.spec.device_key = "cuda/sm_90";
  for (auto* job : {job_.get(), gpu_job.get()}) {
    Trial* trial = pipeline_.Create(*job, CandidateOf(static_cast<int>(job->row.id) * 8));
    pipeline_.Built(*trial, *job, ArtifactOf("code"), nullptr);
    pipeline_.Remember(*trial, PendingCommit{trial->id, Measured({1e-4}), "w1", ""});
  }
  EXPECT_EQ(pipeline_.remembered(), 2u);
  pipeline_.ForgetAnswersOf("cpu/x86_64/znver4");  // its workers came back upgraded
  EXPECT_EQ(pipeline_.remembered(), 1u);
  auto cpu_again = MakeJob(3);
  Trial* cpu = pipeline_.Create(*cpu_again, CandidateOf(512));
  EXPECT_FALSE(pipeline_.Recall(*cpu, *cpu_again, ArtifactOf("code"), nullptr))
      << "measured again under the new fingerprint";
  auto gpu_again = MakeJob(4);
  gpu_again->row.spec.device_key = "cuda/sm_90";
  Trial* gpu = pipeline_.Create(*gpu_again, CandidateOf(1024));
  EXPECT_TRUE(pipeline_.Recall(*gpu, *gpu_again, ArtifactOf("code"), nullptr));
}

TEST_F(PipelineTest, FollowersOfATrialDroppedWithoutAVerdictAreMeasuredTheFirstLeadingTheRest) {
  auto second = MakeJob(2);
  auto third = MakeJob(3);
  Trial* leader = pipeline_.Create(*job_, CandidateOf(32));
  Trial* b = pipeline_.Create(*second, CandidateOf(64));
  Trial* c = pipeline_.Create(*third, CandidateOf(128));
  pipeline_.Built(*leader, *job_, ArtifactOf("code"), nullptr);
  pipeline_.Built(*b, *second, ArtifactOf("code"), nullptr);
  pipeline_.Built(*c, *third, ArtifactOf("code"), nullptr);

  for (uint64_t id : pipeline_.Unlead(*leader)) {
    Trial* follower = pipeline_.Find(id);
    pipeline_.Rejoin(*follower, follower == b ? *second : *third);
  }
  pipeline_.Erase(leader->id, *job_, nullptr);
  EXPECT_EQ(b->stage, TrialStage::kReady);
  EXPECT_EQ(second->ready.front(), b->id);
  EXPECT_EQ(c->stage, TrialStage::kFollowing);
  EXPECT_EQ(c->leader, b->id);

  // A follower that leaves is off its leader's list; its leader can then leave too.
  pipeline_.Erase(c->id, *third, nullptr);
  EXPECT_EQ(third->following, 0);
  EXPECT_TRUE(b->followers.empty());
  pipeline_.Erase(b->id, *second, nullptr);
  EXPECT_EQ(pipeline_.size(), 0u);
}

// What a trial needs of a worker.
WorkerNeeds Needs(std::string device_key, int threads, std::vector<std::string> libs,
                  Dtype dtype = Dtype::kF32, std::vector<std::string> features = {}) {
  WorkerNeeds needs;
  needs.device_key = std::move(device_key);
  needs.threads = threads;
  needs.needed_libs = std::move(libs);
  needs.dtype = dtype;
  needs.features = std::move(features);
  return needs;
}

TEST(WorkerRegistryTest, ATypedTrialGoesOnlyToWorkersThatMeasureItsDtype) {
  WorkerRegistry registry;
  v1::Register old;  // a worker from before dtypes lists none: f32 only
  old.set_name("old");
  old.set_device_key("cuda/sm_90");
  old.mutable_capabilities()->set_threads(1);
  WorkerEntry& old_worker = registry.Add(old, "peer", nullptr, Clock::now(), 0);
  EXPECT_TRUE(CanRun(old_worker, Needs("cuda/sm_90", 1, {}, Dtype::kF32)));
  EXPECT_FALSE(CanRun(old_worker, Needs("cuda/sm_90", 1, {}, Dtype::kBf16)));
  EXPECT_EQ(registry.Capacity(Needs("cuda/sm_90", 1, {}, Dtype::kBf16)), 0);

  v1::Register typed = old;
  typed.set_name("typed");
  typed.mutable_capabilities()->add_dtypes("bf16");
  typed.mutable_capabilities()->add_dtypes("f32");
  WorkerEntry& typed_worker = registry.Add(typed, "peer", nullptr, Clock::now(), 0);
  EXPECT_TRUE(CanRun(typed_worker, Needs("cuda/sm_90", 1, {}, Dtype::kBf16)));
  EXPECT_FALSE(CanRun(typed_worker, Needs("cuda/sm_90", 1, {}, Dtype::kFp8E4m3)));
  EXPECT_EQ(registry.Capacity(Needs("cuda/sm_90", 1, {}, Dtype::kBf16)), 1);
  EXPECT_EQ(registry.Capacity(Needs("cuda/sm_90", 1, {}, Dtype::kF32)), 2);
}

TEST(WorkerRegistryTest, AWorkerRunsOnlyTrialsItsDeviceThreadsAndLibrariesAllow) {
  WorkerRegistry registry;
  v1::Register reg;
  reg.set_name("a");
  reg.set_device_key("cpu/x86_64/znver4");
  reg.mutable_capabilities()->set_threads(4);
  reg.mutable_capabilities()->add_preloaded_libraries()->set_basename("libopenblas.so.0");
  WorkerEntry& worker = registry.Add(reg, "peer", nullptr, Clock::now(), 0);
  EXPECT_TRUE(CanRun(worker, Needs("cpu/x86_64/znver4", 4, {})));
  EXPECT_FALSE(CanRun(worker, Needs("cpu/x86_64/znver4", 8, {})));
  EXPECT_FALSE(CanRun(worker, Needs("cpu/x86_64/skylake", 1, {})));
  EXPECT_TRUE(CanRun(worker, Needs("cpu/x86_64/znver4", 1, {"openblas"})));
  EXPECT_TRUE(CanRun(worker, Needs("cpu/x86_64/znver4", 1, {"libopenblas.so.0"})));
  EXPECT_FALSE(CanRun(worker, Needs("cpu/x86_64/znver4", 1, {"dnnl"})));
  EXPECT_EQ(registry.Capacity(Needs("cpu/x86_64/znver4", 2, {})), 1);
  EXPECT_EQ(registry.Capacity(Needs("cpu/x86_64/znver4", 16, {})), 0);

  v1::Register bare = reg;
  bare.set_name("b");
  bare.mutable_capabilities()->set_threads(0);
  bare.mutable_capabilities()->set_cores(6);
  EXPECT_EQ(registry.Add(bare, "peer", nullptr, Clock::now(), 0).threads, 6)
      << "a worker that names no thread count offers its cores";
}

TEST(WorkerRegistryTest, ATrialNeedingCpuFeaturesGoesOnlyToWorkersThatReportThem) {
  WorkerRegistry registry;
  v1::Register plain;  // a Sapphire Rapids whose Linux does not enable AMX
  plain.set_name("plain");
  plain.set_device_key("cpu/x86_64/sapphirerapids");
  plain.mutable_capabilities()->set_threads(1);
  plain.mutable_capabilities()->add_dtypes("bf16");
  plain.mutable_capabilities()->add_features("avx512bf16");
  WorkerEntry& plain_worker = registry.Add(plain, "peer", nullptr, Clock::now(), 0);
  const std::vector<std::string> amx = {"amx-tile", "amx-bf16"};
  EXPECT_TRUE(CanRun(plain_worker,
                     Needs("cpu/x86_64/sapphirerapids", 1, {}, Dtype::kBf16, {"avx512bf16"})));
  EXPECT_FALSE(CanRun(plain_worker, Needs("cpu/x86_64/sapphirerapids", 1, {}, Dtype::kBf16, amx)));
  EXPECT_EQ(registry.Capacity(Needs("cpu/x86_64/sapphirerapids", 1, {}, Dtype::kBf16, amx)), 0);

  v1::Register tiles = plain;
  tiles.set_name("tiles");
  tiles.mutable_capabilities()->add_features("amx-bf16");
  tiles.mutable_capabilities()->add_features("amx-tile");
  registry.Add(tiles, "peer", nullptr, Clock::now(), 0);
  EXPECT_EQ(registry.Capacity(Needs("cpu/x86_64/sapphirerapids", 1, {}, Dtype::kBf16, amx)), 1);
  EXPECT_EQ(registry.Capacity(
                Needs("cpu/x86_64/sapphirerapids", 1, {}, Dtype::kBf16, {"amx-tile", "amx-int8"})),
            0);
}

TEST(WorkerRegistryTest, SilentWorkersAreFoundAndRemovedOnesAreListedAsLost) {
  WorkerRegistry registry;
  v1::Register reg;
  reg.set_device_key("cpu/x86_64/znver4");
  const Clock::time_point start = Clock::now();
  reg.set_name("quiet");
  std::string quiet = registry.Add(reg, "p", nullptr, start, 0).id;
  reg.set_name("chatty");
  WorkerEntry& chatty = registry.Add(reg, "p", nullptr, start, 0);
  chatty.last_seen = start + std::chrono::seconds(10);
  EXPECT_THAT(registry.Silent(start + std::chrono::seconds(12), std::chrono::seconds(5)),
              ::testing::ElementsAre(quiet));
  ASSERT_NE(registry.Remove(quiet), nullptr);
  EXPECT_EQ(registry.Remove(quiet), nullptr);
  std::vector<v1::WorkerInfo> listed = registry.List(/*include_lost=*/true);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].name(), "chatty");
  EXPECT_EQ(listed[1].name(), "quiet");
  EXPECT_EQ(listed[1].state(), v1::WORKER_STATE_LOST);
  EXPECT_EQ(registry.List(false).size(), 1u);
}

TEST(JobQueueTest, ActiveJobsComeByPriorityThenSubmissionAndFinishedOnesAreLeftOut) {
  JobQueue queue;
  queue.Add(MakeJob(1, 0));
  queue.Add(MakeJob(2, 5));
  queue.Add(MakeJob(3, 0));
  queue.Add(MakeJob(4, 9, JobState::kDone));
  queue.Add(MakeJob(5, 5));
  std::vector<int64_t> order;
  for (JobRuntime* job : queue.ActiveInDispatchOrder()) {
    order.push_back(job->row.id);
  }
  EXPECT_EQ(order, (std::vector<int64_t>{2, 5, 1, 3}));
  std::shared_ptr<JobRuntime> held = queue.Shared(2);
  queue.Remove(2);
  EXPECT_EQ(queue.Find(2), nullptr);
  EXPECT_EQ(held->row.id, 2) << "a holder keeps a removed job alive";
}

TEST(EventHubTest, AWatcherKeepsReadingAStreamDroppedAfterItsLastEvent) {
  EventHub hub;
  std::shared_ptr<JobEvents> stream = hub.For(7);
  JobView running;
  running.row.state = JobState::kRunning;
  stream->Push(running);
  JobView done;
  done.row.state = JobState::kDone;
  stream->Push(done);
  hub.Drop(7);
  EXPECT_EQ(hub.Find(7), nullptr);
  JobEvents::Batch batch = stream->WaitAfter(0, std::chrono::milliseconds(0));
  ASSERT_EQ(batch.events.size(), 2u);
  EXPECT_EQ(batch.events[1].row.state, JobState::kDone);
  EXPECT_TRUE(batch.closed);
  EXPECT_EQ(batch.last_seq, 2u);
}

TEST(EventHubTest, AWaitingWatcherWakesOnTheNextEvent) {
  EventHub hub;
  std::shared_ptr<JobEvents> stream = hub.For(1);
  std::promise<JobEvents::Batch> got;
  std::thread watcher([&] { got.set_value(stream->WaitAfter(0, std::chrono::hours(1))); });
  JobView event;
  event.row.trials_done = 3;
  stream->Push(event);
  JobEvents::Batch batch = got.get_future().get();
  watcher.join();
  ASSERT_EQ(batch.events.size(), 1u);
  EXPECT_EQ(batch.events[0].row.trials_done, 3);
  EXPECT_FALSE(batch.closed);
}

TEST(EventHubTest, AStreamKeepsOnlyItsLatestEvents) {
  JobEvents stream;
  for (size_t i = 0; i < JobEvents::kKept + 10; ++i) {
    JobView event;
    event.row.trials_done = static_cast<int>(i);
    stream.Push(event);
  }
  JobEvents::Batch batch = stream.WaitAfter(0, std::chrono::milliseconds(0));
  ASSERT_EQ(batch.events.size(), JobEvents::kKept);
  EXPECT_EQ(batch.events.back().row.trials_done, static_cast<int>(JobEvents::kKept + 9));
}

TEST(SerialExecutorTest, TasksRunOneAtATimeInOrderAndStopRunsWhatWasPosted) {
  std::vector<int> ran;
  SerialExecutor executor;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  executor.Post([&, released] {
    released.wait();
    ran.push_back(1);
  });
  for (int i = 2; i <= 5; ++i) {
    executor.Post([&ran, i] { ran.push_back(i); });
  }
  EXPECT_GE(executor.Pending(), 4u);
  release.set_value();
  executor.Stop();
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_FALSE(executor.Post([] {})) << "nothing runs after Stop";
  executor.Flush();  // returns at once
}

}  // namespace
}  // namespace tune::tuner
