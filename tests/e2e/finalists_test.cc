// The end of a job: its finalists (the fastest configs the log holds for its workload and
// target) are re-measured in interleaved passes with more rounds, the best rests on those
// figures, and a later job re-measures the incumbent next to its own finalists.
#include "tuner/finalists.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/target.h"
#include "db/tuning_log.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kGemm[] = "gemm:M=48,N=48,K=48";

TEST(FinalistsTest, AJobsBestRestsOnItsFinalistsReMeasuredInInterleavedPasses) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto job = SubmitJob(address, FastSpec(kGemm, 12));
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), 12) << "re-measurements are no trials of the budget";
  EXPECT_THAT(done->message(), HasSubstr("finalists re-measured"));

  auto finals = FinalRecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(finals.ok()) << finals.status();
  ASSERT_EQ(static_cast<int>(finals->size()), tuner::kFinalists * tuner::kFinalPasses);
  // One pass at a time: each pass measures every finalist once (A B C, B A C, ...).
  for (size_t pass = 0; pass < tuner::kFinalPasses; ++pass) {
    std::set<std::string> configs;
    for (size_t i = 0; i < tuner::kFinalists; ++i) {
      configs.insert((*finals)[pass * tuner::kFinalists + i].config);
    }
    EXPECT_EQ(static_cast<int>(configs.size()), tuner::kFinalists) << "pass " << pass;
  }
  std::map<std::string, int> passes;
  for (const Record& r : *finals) {
    ASSERT_TRUE(r.measurement.ok()) << r.measurement.message;
    EXPECT_GE(r.measurement.round_secs.size(), 5u) << "more rounds than a search trial";
    ++passes[r.config];
  }
  EXPECT_EQ(static_cast<int>(passes.size()), tuner::kFinalists);

  // The decided best is one of them, and it is what the job and the target's best report.
  const std::string target = Target::Parse(FastSpec(kGemm, 1).target())->Resolved().ToString();
  auto log = TuningLog::Open(db, TuningLog::Mode::kReadOnly);
  ASSERT_TRUE(log.ok()) << log.status();
  auto decision = (*log)->GetBestDecision(kGemm, target, false);
  ASSERT_TRUE(decision.ok() && decision->has_value());
  EXPECT_EQ((*decision)->job_id, static_cast<int64_t>(job->job_id()));
  auto record = (*log)->GetRecord((*decision)->record_id);
  ASSERT_TRUE(record.ok() && record->has_value());
  EXPECT_TRUE((*record)->final);
  EXPECT_TRUE(passes.contains((*record)->config));
  ASSERT_TRUE(done->has_best());
  EXPECT_EQ(done->best().config(), (*record)->config);
  EXPECT_DOUBLE_EQ(done->best().secs(), (*decision)->median_secs);
  CommandResult best = RunClient(
      address, {"--json", "best", "--workload", kGemm, "--target", FastSpec(kGemm, 1).target()});
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_THAT(best.out, HasSubstr((*record)->uid));
}

TEST(FinalistsTest, ALaterJobReMeasuresTheIncumbentNextToItsOwnFinalists) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto first = SubmitJob(address, FastSpec(kGemm, 6));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(WaitForJob(address, first->job_id(), seconds(240)).ok());
  const std::string target = Target::Parse(FastSpec(kGemm, 1).target())->Resolved().ToString();
  std::string incumbent;
  {
    auto log = TuningLog::Open(db, TuningLog::Mode::kReadOnly);
    ASSERT_TRUE(log.ok()) << log.status();
    auto decision = (*log)->GetBestDecision(kGemm, target, false);
    ASSERT_TRUE(decision.ok() && decision->has_value());
    incumbent = (*(*log)->GetRecord((*decision)->record_id))->config;
  }

  v1::JobSpec spec = FastSpec(kGemm, 6);
  spec.set_seed(99);
  auto second = SubmitJob(address, spec);
  ASSERT_TRUE(second.ok()) << second.status();
  auto done = WaitForJob(address, second->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  auto finals = FinalRecordsOfJob(db, static_cast<int64_t>(second->job_id()));
  ASSERT_TRUE(finals.ok()) << finals.status();
  std::set<std::string> configs;
  for (const Record& r : *finals) {
    configs.insert(r.config);
  }
  EXPECT_TRUE(configs.contains(incumbent)) << "the incumbent is re-measured with the others";

  auto log = TuningLog::Open(db, TuningLog::Mode::kReadOnly);
  ASSERT_TRUE(log.ok()) << log.status();
  auto decision = (*log)->GetBestDecision(kGemm, target, false);
  ASSERT_TRUE(decision.ok() && decision->has_value());
  EXPECT_EQ((*decision)->job_id, static_cast<int64_t>(second->job_id()))
      << "the later job decided, on figures measured side by side";
}

}  // namespace
}  // namespace tune::testing
