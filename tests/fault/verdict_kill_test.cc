// The search learns only from verdicts: a job whose only worker is SIGKILLed again and again
// (and restarted each time) measures exactly the configs that the same job, uninterrupted,
// measures. Each killed trial goes back to the queue without a verdict and without spending the
// budget, and is measured on the restarted worker.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

constexpr char kWorkload[] = "gemm:M=64,N=64,K=64";
constexpr char kWorker[] = "only";

v1::JobSpec Spec(const std::string& strategy, int trials, uint64_t seed) {
  v1::JobSpec spec = FastSpec(kWorkload, trials);
  spec.set_strategy(strategy);
  spec.set_seed(seed);
  spec.add_templates("gemm.cpu.blocked");  // one template: no turns that follow the times
  return spec;
}

struct JobRun {
  std::set<std::string> configs;  // measured by the job (its records, finalists left out)
  int kills = 0;                  // kills that took a trial off the worker
};

// Runs `spec` on a daemon over `db` with one worker, which is SIGKILLed and restarted once the
// job has recorded each of `kill_after` trials, while a trial is on it: the worker is frozen
// first (SIGSTOP), so that a trial the daemon lists on it is certainly lost with it.
void RunJob(const TempDir& dir, const std::string& db, const v1::JobSpec& spec,
            const std::vector<int>& kill_after, JobRun* run) {
  auto daemon = Daemon::Start(dir, db, {.heartbeat_ms = 200, .worker_deadline_ms = 60000});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto worker = StartWorker(dir, address, kWorker);
  ASSERT_TRUE(worker.ok()) << worker.status();
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  for (int after : kill_after) {
    // The worker to stop must have registered and taken a trial: one stopped before it dials
    // never takes one. (Fast trials can pass `after` before a restarted worker is back.)
    ASSERT_TRUE(WaitFor(
        [&] {
          auto j = GetJob(address, job->job_id());
          auto w = ConnectedWorker(address, kWorker);
          return j.ok() && j->trials_done() >= after && w.ok() && w->in_flight() >= 1;
        },
        seconds(240)))
        << (*daemon)->process().Log();
    (*worker)->Signal(SIGSTOP);
    ASSERT_TRUE(WaitFor(
        [&] {
          auto w = ConnectedWorker(address, kWorker);
          return w.ok() && w->in_flight() >= 1;
        },
        seconds(120)))
        << (*daemon)->process().Log();
    (*worker)->Kill();
    ++run->kills;
    worker = StartWorker(dir, address, kWorker);
    ASSERT_TRUE(worker.ok()) << worker.status();
  }
  auto done = WaitForJob(address, job->job_id(), seconds(280));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), spec.trials());
  if (!kill_after.empty()) {
    EXPECT_THAT((*daemon)->process().Log(),
                ::testing::ContainsRegex("worker only .* lost: .*; 1 trial\\(s\\) re-queued"));
  }
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(static_cast<int>(records->size()), spec.trials()) << "a trial was given up";
  for (const Record& r : *records) {
    EXPECT_TRUE(IsVerdict(r.measurement.error)) << r.config << ": " << r.measurement.message;
    run->configs.insert(r.config);
  }
  (*daemon)->process().Signal(SIGTERM);
  EXPECT_EQ((*daemon)->process().Wait(seconds(60)), 0);
}

TEST(VerdictKillTest, AGridJobWhoseWorkerIsKilledRepeatedlyMeasuresTheConfigsOfTheUninterrupted) {
  TempDir dir;
  const v1::JobSpec spec = Spec("grid", 12, 5);
  JobRun calm, killed;
  RunJob(dir, dir.File("calm.db"), spec, {}, &calm);
  RunJob(dir, dir.File("killed.db"), spec, {2, 5, 8}, &killed);
  EXPECT_EQ(killed.kills, 3);
  EXPECT_EQ(calm.configs.size(), 12u);
  EXPECT_EQ(killed.configs, calm.configs);
}

// A model-guided search proposes from measured times, which vary from run to run, so two runs
// from scratch differ whatever happens to their workers. Here both runs start from one log: a
// grid job first records more than xgb's warm-up of trials (the default and the template's seeds
// among them, so neither is proposed again), and its log is copied. An xgb job of at most
// kRefitEvery (8) trials over such a log fits its cost model once, on those records, at its
// first proposal, and takes every proposal from that plan and from random draws seeded by its
// seed and its batch number (search/model_strategy.cc): its proposals are a function of the seed
// and the verdicts the log holds. A trial killed with its worker that reached the search as a
// failed config would add an observation and, taken by the plan, change the picks after it; the
// equality below holds only if no such trial does.
TEST(VerdictKillTest, AModelJobWhoseWorkerIsKilledRepeatedlyMeasuresTheConfigsOfTheUninterrupted) {
  TempDir dir;
  const std::string history = dir.File("history.db");
  JobRun warmup;
  RunJob(dir, history, Spec("grid", 24, 1), {}, &warmup);
  auto records = AllRecords(history);
  ASSERT_TRUE(records.ok()) << records.status();
  std::set<double> times;
  for (const Record& r : *records) {
    if (r.measurement.ok()) {
      times.insert(r.measurement.MedianSecs());
    }
  }
  ASSERT_GE(records->size(), 16u) << "xgb's warm-up: the model is fitted from the first proposal";
  ASSERT_GE(times.size(), 2u) << "a ranking needs two different times";

  for (const char* copy : {"calm.db", "killed.db"}) {
    for (const char* suffix : {"", "-wal"}) {
      const std::filesystem::path from = history + suffix;
      if (std::filesystem::exists(from)) {
        std::filesystem::copy_file(from, dir.File(copy) + suffix);
      }
    }
  }
  const v1::JobSpec spec = Spec("xgb", 8, 3);
  JobRun calm, killed;
  RunJob(dir, dir.File("calm.db"), spec, {}, &calm);
  RunJob(dir, dir.File("killed.db"), spec, {1, 3, 5}, &killed);
  EXPECT_EQ(killed.kills, 3);
  EXPECT_EQ(calm.configs.size(), 8u);
  EXPECT_EQ(killed.configs, calm.configs);
  for (const std::string& config : calm.configs) {
    EXPECT_FALSE(warmup.configs.contains(config)) << config << " was measured before";
  }
}

}  // namespace
}  // namespace tune::testing
