// Quarantine across processes (db/quarantine.h): a kernel that crashes on one worker is measured
// again on another worker of the same device key and fingerprint; crashing there too, it is
// quarantined, and no later job, whatever its target text, sends it to a worker again. An admin
// lifts an entry; an export carries what grounds the entries to another log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "common/strings.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"
#include "tests/e2e/http_test_util.h"
#include "tests/e2e/test_util.h"
#include "tests/e2e/token_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr char kWorkload[] = "gemm:M=16,N=16,K=16";
constexpr int kExitNotFound = 5;  // tune-client's exit codes (client_commands.h)
constexpr int kExitDenied = 7;

struct TwoWorkers {
  TempDir dir;
  std::string db = dir.File("tuning.db");
  std::unique_ptr<Daemon> daemon;
  std::unique_ptr<Process> left, right;
};

void Start(TwoWorkers& s) {
  auto daemon = Daemon::Start(s.dir, s.db, {.http = true, .fault_templates = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  s.daemon = std::move(*daemon);
  auto left = StartWorker(s.dir, s.daemon->address(), "left");
  ASSERT_TRUE(left.ok()) << left.status();
  s.left = std::move(*left);
  auto right = StartWorker(s.dir, s.daemon->address(), "right");
  ASSERT_TRUE(right.ok()) << right.status();
  s.right = std::move(*right);
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<int> n = ConnectedWorkers(s.daemon->address());
        return n.ok() && *n == 2;
      },
      seconds(60)));
}

// Runs a grid job over fault.crash on `target` and returns its records once it succeeded.
std::vector<Record> RunCrashJob(TwoWorkers& s, const std::string& target, int trials) {
  v1::JobSpec spec = FastSpec(kWorkload, trials);
  spec.set_target(target);
  spec.set_strategy("grid");
  spec.add_templates("fault.crash");
  auto job = SubmitJob(s.daemon->address(), spec);
  EXPECT_TRUE(job.ok()) << job.status();
  if (!job.ok()) {
    return {};
  }
  auto done = WaitForJob(s.daemon->address(), job->job_id(), seconds(240));
  EXPECT_TRUE(done.ok()) << done.status() << s.daemon->process().Log();
  if (!done.ok()) {
    return {};
  }
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), trials) << "a second opinion is no trial of the budget";
  EXPECT_EQ(done->trials_failed(), trials);
  auto records = RecordsOfJob(s.db, static_cast<int64_t>(job->job_id()));
  EXPECT_TRUE(records.ok()) << records.status();
  return records.ok() ? *records : std::vector<Record>{};
}

nlohmann::json QuarantineJson(const std::string& address, const std::vector<std::string>& more) {
  std::vector<std::string> args = {"--json", "quarantine"};
  args.insert(args.end(), more.begin(), more.end());
  CommandResult listed = RunClient(address, args);
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  return nlohmann::json::parse(listed.out, nullptr, false);
}

TEST(QuarantineTest, CodeCrashingOnTwoWorkersIsQuarantinedAndNeverDispatchedAgain) {
  TwoWorkers s;
  ASSERT_NO_FATAL_FAILURE(Start(s));
  constexpr int kTrials = 2;
  const std::string target = "llvm -mcpu=native -threads=1";

  // Each crash gets a second opinion from the other worker: two records per trial, one per
  // worker, of the same code.
  std::vector<Record> first = RunCrashJob(s, target, kTrials);
  ASSERT_THAT(first, SizeIs(2 * kTrials));
  std::map<std::string, std::set<std::string>> workers_by_code;
  for (const Record& r : first) {
    EXPECT_EQ(r.measurement.error, ErrorKind::kRuntimeCrash) << r.measurement.message;
    ASSERT_FALSE(r.artifact_hash.empty());
    workers_by_code[r.artifact_hash].insert(r.worker);
  }
  for (const auto& [code, workers] : workers_by_code) {
    EXPECT_EQ(workers, (std::set<std::string>{"left", "right"})) << code;
  }

  nlohmann::json entries = QuarantineJson(s.daemon->address(), {});
  ASSERT_TRUE(entries.is_array()) << entries;
  ASSERT_EQ(entries.size(), workers_by_code.size());
  for (const nlohmann::json& e : entries) {
    EXPECT_TRUE(workers_by_code.contains(e["artifact_hash"].get<std::string>())) << e;
    EXPECT_EQ(e["error"], "RUNTIME_CRASH");
    EXPECT_EQ(e["workers"].size(), 2u);
    EXPECT_EQ(e["template"], "fault.crash");
  }
  // The dashboard's JSON API lists the same entries.
  httplib::Client http("127.0.0.1", s.daemon->http_port());
  EXPECT_EQ(GetJson(http, "/api/quarantine", 200)["entries"], entries);

  // Another target text builds the same code: every trial is recorded unmeasured, naming the
  // entry, and no worker gets it.
  std::vector<Record> second = RunCrashJob(s, target + " -libs=openblas", kTrials);
  ASSERT_THAT(second, SizeIs(kTrials));
  for (const Record& r : second) {
    EXPECT_EQ(r.worker, "") << "measured on a worker: " << r.measurement.message;
    EXPECT_EQ(r.measurement.error, ErrorKind::kRuntimeCrash);
    EXPECT_THAT(r.measurement.message, HasSubstr("skipped, not measured"));
    EXPECT_THAT(r.measurement.message, HasSubstr("quarantined there (entry "));
    EXPECT_TRUE(workers_by_code.contains(r.artifact_hash)) << r.artifact_hash;
  }

  // An export without failures carries the records that ground the entries; another log that
  // imports it quarantines the same code.
  const std::string exported = s.dir.File("records.jsonl");
  CommandResult out = RunClient(s.daemon->address(), {"export", "--out", exported});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  TempDir other_dir;
  auto other = Daemon::Start(other_dir, other_dir.File("tuning.db"), {.fault_templates = true});
  ASSERT_TRUE(other.ok()) << other.status();
  CommandResult in = RunClient((*other)->address(), {"import", exported});
  ASSERT_EQ(in.exit_code, 0) << in.err;
  nlohmann::json imported = QuarantineJson((*other)->address(), {});
  ASSERT_EQ(imported.size(), entries.size()) << imported;
  EXPECT_EQ(imported[0]["artifact_hash"], entries[0]["artifact_hash"]);

  // Lifting takes an admin token, and is audited.
  const std::string id = std::to_string(entries[0]["id"].get<int64_t>());
  const std::string admin = TokenFile(s.dir, "admin", CreateToken(s.db, "root", "admin"));
  ASSERT_TRUE(WaitFor(
      [&] { return RunClient(s.daemon->address(), {"quarantine"}).exit_code == kExitDenied; },
      seconds(60)));
  CommandResult lifted =
      RunClient(s.daemon->address(), {"quarantine", "lift", id, "--token-file", admin});
  ASSERT_EQ(lifted.exit_code, 0) << lifted.err;
  EXPECT_THAT(lifted.out, HasSubstr("lifted quarantine entry " + id));
  nlohmann::json after = QuarantineJson(s.daemon->address(), {"--token-file", admin});
  EXPECT_EQ(after.size(), entries.size() - 1) << after;
  nlohmann::json all = QuarantineJson(s.daemon->address(), {"--all", "--token-file", admin});
  ASSERT_EQ(all.size(), entries.size());
  EXPECT_EQ(all[0]["lifted_by"], "root");
  CommandResult again =
      RunClient(s.daemon->address(), {"quarantine", "lift", id, "--token-file", admin});
  EXPECT_EQ(again.exit_code, kExitNotFound) << again.out;
  EXPECT_THAT(again.err, HasSubstr("no quarantine entry " + id + " holds"));
  EXPECT_TRUE(WaitFor(
      [&] { return s.daemon->process().Log().find("lifted by root (token ") != std::string::npos; },
      seconds(60)));
}

TEST(QuarantineTest, ACrashOnTheOnlyWorkerOfItsKindIsTheVerdictAndQuarantinesNothing) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"), {.fault_templates = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto worker = StartWorker(dir, (*daemon)->address(), "alone");
  ASSERT_TRUE(worker.ok()) << worker.status();
  v1::JobSpec spec = FastSpec(kWorkload, 1);
  spec.add_templates("fault.crash");
  auto job = SubmitJob((*daemon)->address(), spec);
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob((*daemon)->address(), job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->trials_failed(), 1);
  auto records = RecordsOfJob(dir.File("tuning.db"), static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok());
  ASSERT_THAT(*records, SizeIs(1));
  EXPECT_EQ((*records)[0].worker, "alone");
  EXPECT_TRUE(QuarantineJson((*daemon)->address(), {}).empty());
}

}  // namespace
}  // namespace tune::testing
