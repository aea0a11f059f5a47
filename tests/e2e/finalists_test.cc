// The end of a job: its finalists (the fastest configs the log holds for its workload and
// target) are re-measured in interleaved passes with more rounds, the best rests on those
// figures, a later job re-measures the incumbent next to its own finalists, and the library's
// best is re-measured beside them even when it is not among the fastest.
#include "tuner/scheduler/finalists.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/host_cpu.h"
#include "common/target.h"
#include "db/tuning_log.h"
#include "search/config_space.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kGemm[] = "gemm:M=48,N=48,K=48";

// "template config" of a record.
std::string Key(const Record& r) { return r.template_name + " " + r.config; }

// A job's re-measurements (in commit order) split into its passes: the screen, which measures
// each config once, then the finalists' passes, each measuring those it kept once (passes run one
// at a time, so each pass's records follow the last pass's).
std::vector<std::vector<std::string>> Passes(const std::vector<Record>& finals) {
  std::map<std::string, int> count;
  for (const Record& r : finals) {
    ++count[Key(r)];
  }
  const size_t kept =
      std::count_if(count.begin(), count.end(), [](const auto& entry) { return entry.second > 1; });
  std::vector<std::vector<std::string>> passes(1);
  for (const Record& r : finals) {
    const size_t size = passes.size() == 1 ? count.size() : kept;
    if (passes.back().size() == size) {
      passes.emplace_back();
    }
    passes.back().push_back(Key(r));
  }
  return passes;
}

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
  // The screen measures up to kScreened configs once; of them, kFinalists (and more within
  // kFinalistWindow of the third, up to kMaxFinalists) are measured in every later pass.
  std::vector<std::vector<std::string>> passes = Passes(*finals);
  ASSERT_EQ(passes.size(), static_cast<size_t>(tuner::kFinalPasses));
  const std::set<std::string> screened(passes[0].begin(), passes[0].end());
  EXPECT_EQ(screened.size(), passes[0].size()) << "the screen measures each config once";
  EXPECT_GE(screened.size(), tuner::kFinalists);
  EXPECT_LE(screened.size(), tuner::kScreened);
  const std::set<std::string> finalists(passes[1].begin(), passes[1].end());
  EXPECT_GE(finalists.size(), tuner::kFinalists);
  EXPECT_LE(finalists.size(), tuner::kMaxFinalists);
  for (size_t pass = 1; pass < passes.size(); ++pass) {
    // One pass at a time: each measures every finalist once (A B C, B A C, ...).
    EXPECT_EQ(passes[pass].size(), finalists.size()) << "pass " << pass;
    EXPECT_EQ(std::set<std::string>(passes[pass].begin(), passes[pass].end()), finalists);
  }
  EXPECT_TRUE(std::includes(screened.begin(), screened.end(), finalists.begin(), finalists.end()));
  for (const Record& r : *finals) {
    ASSERT_TRUE(r.measurement.ok()) << r.measurement.message;
    EXPECT_GE(r.measurement.round_secs.size(), 5u) << "more rounds than a search trial";
  }

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
  EXPECT_TRUE(finalists.contains(Key(**record))) << "a finalist, not a config only screened";
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

TEST(FinalistsTest, TheLibrarysBestIsReMeasuredBesideTheFinalistsWhenNotAmongTheFastest) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  v1::JobSpec spec = FastSpec(kGemm, 3);
  spec.set_target("llvm -mcpu=native -threads=1 -libs=openblas");
  spec.add_templates("gemm.cpu.blocked");
  spec.add_templates("gemm.cpu.openblas");
  const Target target = Target::Parse(spec.target())->Resolved();
  auto daemon =
      Daemon::Start(dir, db, {.local_workers = 1, .extra = {"--local-worker-arg=--libs=openblas"}});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 1; }, seconds(60)));
  // Three generated configs the log holds as faster than anything can run (1 ns), measured
  // under the fingerprint the worker registered with (best compares the newest fingerprint's
  // records), so that they are the fastest three and OpenBLAS cannot be among them.
  std::set<std::string> fastest;
  {
    auto log = TuningLog::Open(db, TuningLog::Mode::kReadWrite);
    ASSERT_TRUE(log.ok()) << log.status();
    const std::string device_key = "cpu/x86_64/" + GetHostCpu().name;
    absl::StatusOr<std::optional<std::string>> fingerprint = (*log)->NewestFingerprint(device_key);
    ASSERT_TRUE(fingerprint.ok() && fingerprint->has_value()) << "the worker registered";
    const KernelTemplate* blocked = Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
    ASSERT_NE(blocked, nullptr);
    const Workload workload = *Workload::Parse(kGemm);
    const ConfigSpace space = blocked->space(workload, target);
    std::mt19937_64 rng(3);
    while (fastest.size() < 3) {
      std::optional<Config> config = space.Sample(rng);
      ASSERT_TRUE(config.has_value());
      if (!fastest.insert(ConfigToString(*config)).second) {
        continue;
      }
      Record r;
      r.workload = kGemm;
      r.target = target.ToString();
      r.device_key = device_key;
      r.template_name = std::string(blocked->name);
      r.template_version = blocked->version;
      r.config = ConfigToString(*config);
      r.measurement.round_secs = {1e-9, 1e-9};
      r.measurement.number = 1;
      r.measurement.device_fingerprint = **fingerprint;
      ASSERT_TRUE((*log)->CommitRecord(r).ok());
    }
  }

  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_THAT(done->message(), HasSubstr("finalists re-measured"));

  auto finals = FinalRecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(finals.ok()) << finals.status();
  for (const Record& r : *finals) {
    ASSERT_TRUE(r.measurement.ok()) << r.template_name << ": " << r.measurement.message;
    if (r.template_name == "gemm.cpu.openblas") {
      EXPECT_GT(r.measurement.round_secs.front(), 1e-9) << "measured, not copied";
    }
  }
  std::vector<std::vector<std::string>> passes = Passes(*finals);
  ASSERT_EQ(passes.size(), static_cast<size_t>(tuner::kFinalPasses));
  for (size_t pass = 0; pass < passes.size(); ++pass) {
    EXPECT_EQ(
        std::count_if(passes[pass].begin(), passes[pass].end(),
                      [](const std::string& key) { return key.starts_with("gemm.cpu.openblas "); }),
        1)
        << "pass " << pass << ": the library is measured once in every pass";
  }
  for (const std::string& config : fastest) {
    EXPECT_NE(std::find(passes[0].begin(), passes[0].end(), "gemm.cpu.blocked " + config),
              passes[0].end())
        << "the screen measures the log's fastest: " << config;
  }
}

}  // namespace
}  // namespace tune::testing
