// A daemon, two workers, a GEMM job and a conv2d job: every trial recorded once, the best
// queryable through the client and from the database file itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "common/host_cpu.h"
#include "common/strings.h"
#include "common/target.h"
#include "db/tuning_log.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kGemm[] = "gemm:M=64,N=64,K=64";
constexpr char kConv[] = "conv2d:N=1,C=8,H=16,W=16,K=16,R=3,S=3,stride=1,pad=1";
constexpr char kTarget[] = "llvm -mcpu=native -threads=1";

TEST(TuningTest, TwoWorkersTuneGemmAndConvAndRecordEveryTrialOnce) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto a = StartWorker(dir, address, "worker-a");
  auto b = StartWorker(dir, address, "worker-b");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 2; }, seconds(30)))
      << (*daemon)->process().Log();

  // GEMM through the command line, following it to the end.
  CommandResult gemm = RunClient(address,
                                 {"submit", "--workload", kGemm, "--target", kTarget, "--trials",
                                  "6", "--repeat", "2", "--min-repeat-ms", "1", "--wait"},
                                 seconds(240));
  ASSERT_EQ(gemm.exit_code, 0) << gemm.out << gemm.err << (*daemon)->process().Log();
  const uint64_t gemm_id = FirstLineJobId(gemm.out);
  ASSERT_GT(gemm_id, 0u) << gemm.out;
  EXPECT_THAT(gemm.out, HasSubstr("best: "));
  EXPECT_THAT(gemm.err, HasSubstr("6/6 trials"));  // periodic lines: stderr is not a terminal

  // conv2d over gRPC.
  auto conv = SubmitJob(address, FastSpec(kConv, 4));
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto conv_done = WaitForJob(address, conv->job_id(), seconds(240));
  ASSERT_TRUE(conv_done.ok()) << conv_done.status() << (*daemon)->process().Log();
  EXPECT_EQ(conv_done->state(), v1::JOB_STATE_SUCCEEDED) << conv_done->message();
  EXPECT_EQ(conv_done->trials_done(), 4);

  // The database file, read as tune-compile reads it.
  std::set<std::string> workers;
  for (auto [id, trials] : {std::pair<uint64_t, int>{gemm_id, 6}, {conv->job_id(), 4}}) {
    auto records = RecordsOfJob(db, static_cast<int64_t>(id));
    ASSERT_TRUE(records.ok()) << records.status();
    EXPECT_EQ(static_cast<int>(records->size()), trials);
    for (const auto& [config, count] : CountPerConfig(*records)) {
      EXPECT_EQ(count, 1) << config;
    }
    for (const Record& r : *records) {
      EXPECT_EQ(r.device_key, "cpu/x86_64/" + GetHostCpu().name);
      if (!r.worker.empty()) {
        workers.insert(r.worker);
      }
    }
  }
  EXPECT_EQ(workers, (std::set<std::string>{"worker-a", "worker-b"}));

  auto log = TuningLog::Open(db, TuningLog::Mode::kReadOnly);
  ASSERT_TRUE(log.ok()) << log.status();
  // The target's best is the finalist its job decided on after re-measuring them.
  const std::string resolved = Target::Parse(kTarget)->Resolved().ToString();
  auto best = (*log)->QueryBest(BestQuery{.workload = kGemm, .target = resolved});
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value()) << "no successful GEMM trial";
  EXPECT_TRUE((*best)->final);
  auto decision = (*log)->GetBestDecision(kGemm, resolved, false);
  ASSERT_TRUE(decision.ok() && decision->has_value());
  EXPECT_EQ((*decision)->record_id, (*best)->id);

  CommandResult best_cli =
      RunClient(address, {"--json", "best", "--workload", kGemm, "--target", kTarget});
  ASSERT_EQ(best_cli.exit_code, 0) << best_cli.err;
  nlohmann::json top = nlohmann::json::parse(best_cli.out);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0]["uid"], (*best)->uid);
  EXPECT_GT(top[0]["gflops"].get<double>(), 0.0);
  EXPECT_EQ(top[0]["fallback"], false);

  // Nothing was measured with two threads: the device's records answer, and each says so.
  const char kTwoThreads[] = "llvm -mcpu=native -threads=2";
  CommandResult fallback_cli =
      RunClient(address, {"--json", "best", "--workload", kGemm, "--target", kTwoThreads});
  ASSERT_EQ(fallback_cli.exit_code, 0) << fallback_cli.err;
  nlohmann::json other = nlohmann::json::parse(fallback_cli.out);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0]["fallback"], true);
  EXPECT_EQ(other[0]["requested_target"], kTwoThreads);
  EXPECT_EQ(other[0]["target"], resolved);

  CommandResult jobs = RunClient(address, {"--json", "jobs"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  nlohmann::json listed = nlohmann::json::parse(jobs.out);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0]["job_id"], conv->job_id());  // newest first
  EXPECT_EQ(listed[0]["state"], "SUCCEEDED");
  EXPECT_EQ(listed[1]["state"], "SUCCEEDED");

  CommandResult status = RunClient(address, {"status", std::to_string(gemm_id)});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("SUCCEEDED"));
  EXPECT_THAT(status.out, HasSubstr("6/6 done"));

  CommandResult listed_workers = RunClient(address, {"--json", "workers"});
  ASSERT_EQ(listed_workers.exit_code, 0) << listed_workers.err;
  nlohmann::json ws = nlohmann::json::parse(listed_workers.out);
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0]["name"], "worker-a");
  EXPECT_EQ(ws[0]["state"], "IDLE");
  std::vector<std::string> matrix;  // the worker runs on this host: its matrix features
  for (std::string_view feature : kMatrixFeatures) {
    if (GetHostCpu().HasFeature(std::string(feature))) {
      matrix.emplace_back(feature);
    }
  }
  EXPECT_EQ(ws[0]["matrix_features"].get<std::vector<std::string>>(), matrix);
  CommandResult table = RunClient(address, {"workers"});
  EXPECT_THAT(table.out, HasSubstr("MATRIX FEATURES"));
  EXPECT_THAT(table.out, HasSubstr(matrix.empty() ? "-" : Join(matrix, ",")));

  // Global flags are accepted after the subcommand too.
  CommandResult json_after = RunClient(address, {"workers", "--json"});
  ASSERT_EQ(json_after.exit_code, 0) << json_after.err;
  EXPECT_EQ(nlohmann::json::parse(json_after.out).size(), 2u);
}

// A typed convolution (u8 activations, s8 weights, requantised to i8, in NHWC) is tuned like an
// f32 one: the CPU's dot-product template builds it, the worker checks every kernel against the
// typed reference, and the log keeps every trial.
TEST(TuningTest, ARequantisedU8I8ConvolutionInNhwcIsTunedAndEveryTrialComputesTheReference) {
  constexpr char kTypedConv[] =
      "conv2d:N=1,C=16,H=10,W=10,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=u8i8,"
      "epilogue=requant";
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto worker = StartWorker(dir, address, "worker-a");
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorkers(address).value_or(0) == 1; }, seconds(30)))
      << (*daemon)->process().Log();
  CommandResult job = RunClient(
      address,
      {"submit", "--workload", kTypedConv, "--target", kTarget, "--template", "conv2d.cpu.dot",
       "--trials", "4", "--repeat", "2", "--min-repeat-ms", "1", "--wait"},
      seconds(240));
  ASSERT_EQ(job.exit_code, 0) << job.out << job.err << (*daemon)->process().Log();
  auto records = RecordsOfJob(db, static_cast<int64_t>(FirstLineJobId(job.out)));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->size(), 4u);
  for (const Record& r : *records) {
    EXPECT_EQ(r.template_name, "conv2d.cpu.dot");
    EXPECT_EQ(r.measurement.error, ErrorKind::kNone) << r.config << ": " << r.measurement.message;
  }
}

TEST(TuningTest, WatchStreamsEveryTrialUntilTheJobEnds) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"), {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto job = SubmitJob(address, FastSpec("gemm:M=32,N=32,K=32", 3));
  ASSERT_TRUE(job.ok()) << job.status();
  CommandResult watch =
      RunClient(address, {"--json", "watch", std::to_string(job->job_id())}, seconds(240));
  ASSERT_EQ(watch.exit_code, 0) << watch.out << watch.err << (*daemon)->process().Log();
  std::vector<nlohmann::json> events;
  std::istringstream lines(watch.out);
  for (std::string line; std::getline(lines, line);) {
    events.push_back(nlohmann::json::parse(line));
  }
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["state"], "SUCCEEDED");
  EXPECT_EQ(events.back()["trials_done"], 3);
  // One event per finished trial at least (the first event may already count some).
  std::set<int> done;
  for (const nlohmann::json& e : events) {
    done.insert(e["trials_done"].get<int>());
  }
  EXPECT_TRUE(done.contains(3));
  EXPECT_GE(events.size(), 2u);
  // Once two trials finished, the ETA comes from their rate.
  for (const nlohmann::json& e : events) {
    if (e["trials_done"] == 2 && e["state"] == "RUNNING") {
      EXPECT_GE(e["eta_seconds"].get<double>(), 0.0) << e.dump();
    }
  }
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GE(events[i]["trials_done"].get<int>(), events[i - 1]["trials_done"].get<int>());
  }
}

}  // namespace
}  // namespace tune::testing
