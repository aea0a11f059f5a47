// Drift without loss: after a worker comes back with a new fingerprint (here a library it did
// not offer before), the log's winners are unverified for it (tune-compile says so per kernel),
// and `tune-client reverify` re-measures only each workload's winner and runners-up on it,
// reports each winner confirmed or changed, and rewrites nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTarget[] = "llvm -mcpu=native -threads=1";
const std::vector<std::string> kFast = {"--min-repeat-ms", "1", "--repeat", "2", "--number", "1"};

std::vector<std::string> Cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

CommandResult Compile(const TempDir& dir, const std::string& db, const std::string& workload) {
  return RunCommand({Binaries::Compile(), "--db", db, "--target", kTarget, "--workload", workload,
                     "--out", dir.File("libk.so"), "--header", dir.File("k.h")});
}

TEST(ReverifyTest, AfterANewFingerprintOnlyTheWinnersAndRunnersUpAreReMeasuredAndJudged) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto before = StartWorker(dir, address, "before", {"--threads", "1"});
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 1; }, seconds(60)));

  const std::string file = dir.File("model.txt");
  std::ofstream(file) << "gemm:M=32,N=32,K=32\ngemm:M=48,N=32,K=32 2\n";
  CommandResult tuned =
      RunClient(address,
                Cat({"submit", "--workloads-file", file, "--target", kTarget, "--trials", "16",
                     "--template", "gemm.cpu.blocked", "--wait"},
                    kFast),
                seconds(300));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out << tuned.err;
  absl::StatusOr<std::vector<Record>> tuning = AllRecords(db);
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  const std::string old_fingerprint = tuning->front().measurement.device_fingerprint;
  EXPECT_THAT(Compile(dir, db, "gemm:M=32,N=32,K=32").err, Not(HasSubstr("UNVERIFIED")));

  // The worker comes back offering OpenBLAS: a new fingerprint of the same device key.
  before->get()->Kill();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(-1) == 0; }, seconds(60)));
  auto after = StartWorker(dir, address, "after", {"--threads", "1", "--libs", "openblas"});
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 1; }, seconds(60)));
  CommandResult unverified = Compile(dir, db, "gemm:M=32,N=32,K=32");
  ASSERT_EQ(unverified.exit_code, 0) << unverified.err;
  EXPECT_THAT(unverified.err, HasSubstr("UNVERIFIED: measured under an older fingerprint"));
  EXPECT_THAT(unverified.err, HasSubstr("lib.openblas new"));
  const std::vector<std::string> best = {"best", "--workload", "gemm:M=32,N=32,K=32", "--target",
                                         kTarget};
  CommandResult best_before = RunClient(address, best);
  ASSERT_EQ(best_before.exit_code, 0) << best_before.err;
  EXPECT_THAT(best_before.err, HasSubstr("UNVERIFIED: measured under an older fingerprint"));
  CommandResult best_json = RunClient(address, Cat({"--json"}, best));
  ASSERT_EQ(best_json.exit_code, 0) << best_json.err;
  EXPECT_EQ(nlohmann::json::parse(best_json.out)[0]["unverified"], true);

  CommandResult reverified = RunClient(
      address, {"--json", "reverify", "--workloads-file", file, "--target", kTarget, "--wait"},
      seconds(300));
  ASSERT_EQ(reverified.exit_code, 0) << reverified.out << reverified.err;
  const nlohmann::json report = nlohmann::json::parse(reverified.out);
  ASSERT_EQ(report["workloads"].size(), 2u) << report.dump(2);
  std::set<uint64_t> task_ids;
  for (const nlohmann::json& w : report["workloads"]) {
    EXPECT_THAT(std::string(w["verdict"]), ::testing::AnyOf("confirmed", "changed")) << w.dump();
    task_ids.insert(w["job_id"].get<uint64_t>());
  }
  // Only the winner and two runners-up of each workload, under the new fingerprint; the old
  // records are all still there.
  absl::StatusOr<std::vector<Record>> all = AllRecords(db);
  ASSERT_TRUE(all.ok()) << all.status();
  int remeasured = 0;
  for (const Record& r : *all) {
    if (r.job_id && task_ids.contains(static_cast<uint64_t>(*r.job_id))) {
      ++remeasured;
      EXPECT_NE(r.measurement.device_fingerprint, old_fingerprint);
      EXPECT_THAT(r.measurement.device_fingerprint, HasSubstr("lib.openblas="));
    }
  }
  // Each workload's winner and runners-up: three, or fewer where its tuning measured fewer.
  std::map<std::string, std::set<std::string>> configs;
  for (const Record& r : *tuning) {
    if (r.measurement.ok()) {
      configs[r.workload].insert(r.config);
    }
  }
  ASSERT_EQ(configs.size(), 2u);
  const size_t expected = std::min<size_t>(3, configs.begin()->second.size()) +
                          std::min<size_t>(3, configs.rbegin()->second.size());
  EXPECT_EQ(remeasured, static_cast<int>(expected));
  EXPECT_EQ(all->size(), tuning->size() + expected) << "nothing else was measured or rewritten";
  CommandResult verified = Compile(dir, db, "gemm:M=32,N=32,K=32");
  ASSERT_EQ(verified.exit_code, 0) << verified.err;
  EXPECT_THAT(verified.err, Not(HasSubstr("UNVERIFIED")));
  CommandResult best_after = RunClient(address, Cat({"--json"}, best));
  ASSERT_EQ(best_after.exit_code, 0) << best_after.err;
  EXPECT_EQ(nlohmann::json::parse(best_after.out)[0]["unverified"], false);
  EXPECT_THAT((*daemon)->process().Log(), HasSubstr("reverify job"));  // the audit line

  // A second reverify has nothing older to re-measure: its winners are confirmed as they stand.
  CommandResult again = RunClient(
      address, {"reverify", "--workload", "gemm:M=32,N=32,K=32", "--target", kTarget, "--wait"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("already measured under the newest fingerprint"));
}

TEST(ReverifyTest, BadRequestsAreRefusedNamingWhatIsWrong) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  CommandResult none = RunClient(address, {"reverify", "--target", kTarget});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("exactly one of --workload, --workloads-file, --model or --all"));
  CommandResult nothing =
      RunClient(address, {"reverify", "--workload", "gemm:M=8,N=8,K=8", "--target", kTarget});
  EXPECT_EQ(nothing.exit_code, 4);
  EXPECT_THAT(nothing.err, HasSubstr("nothing to reverify: the log has no successful record"));
  CommandResult trials =
      RunClient(address, {"reverify", "--all", "--target", kTarget, "--trials", "65"});
  EXPECT_EQ(trials.exit_code, 4);
  EXPECT_THAT(trials.err, HasSubstr("trials: 65 is out of range"));

  // Something to re-measure, but no worker to do it.
  auto worker = StartWorker(dir, address, "w", {"--threads", "1"});
  ASSERT_TRUE(worker.ok()) << worker.status();
  CommandResult tuned =
      RunClient(address,
                Cat({"submit", "--workload", "gemm:M=8,N=8,K=8", "--target", kTarget, "--trials",
                     "2", "--template", "gemm.cpu.blocked", "--wait"},
                    kFast),
                seconds(300));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out << tuned.err;
  worker->get()->Kill();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(-1) == 0; }, seconds(60)));
  CommandResult no_worker = RunClient(address, {"reverify", "--all", "--target", kTarget});
  EXPECT_EQ(no_worker.exit_code, 4);
  EXPECT_THAT(no_worker.err, HasSubstr("no worker of device key cpu/x86_64/"));
  EXPECT_THAT(no_worker.err, HasSubstr("is connected"));
}

}  // namespace
}  // namespace tune::testing
