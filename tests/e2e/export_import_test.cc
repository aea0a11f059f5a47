// Sharing a tuning log: export from one daemon through tune-client, import into another, and a
// second import that changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

std::set<std::string> UidsInFile(const std::string& path) {
  std::set<std::string> uids;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      uids.insert(nlohmann::json::parse(line)["uid"].get<std::string>());
    }
  }
  return uids;
}

TEST(ExportImportTest, RecordsRoundTripThroughTheClientAndReimportingChangesNothing) {
  TempDir dir;
  auto source = Daemon::Start(dir, dir.File("source.db"), {.local_workers = 1});
  ASSERT_TRUE(source.ok()) << source.status();
  auto job = SubmitJob((*source)->address(), FastSpec("gemm:M=32,N=48,K=16", 3));
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob((*source)->address(), job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*source)->process().Log();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();

  // Its 3 trials and the re-measurements of its finalists.
  auto finals = FinalRecordsOfJob(dir.File("source.db"), static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(finals.ok()) << finals.status();
  EXPECT_FALSE(finals->empty());
  const int n = 3 + static_cast<int>(finals->size());

  const std::string exported = dir.File("records.jsonl");
  CommandResult out =
      RunClient((*source)->address(), {"export", "--out", exported, "--include-failures"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr(StrCat("exported ", n, " record(s)")));
  std::set<std::string> uids = UidsInFile(exported);
  ASSERT_EQ(static_cast<int>(uids.size()), n);

  auto target = Daemon::Start(dir, dir.File("target.db"));
  ASSERT_TRUE(target.ok()) << target.status();
  CommandResult first = RunClient((*target)->address(), {"--json", "import", exported});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  nlohmann::json stats = nlohmann::json::parse(first.out);
  EXPECT_EQ(stats["imported"], n);
  EXPECT_EQ(stats["duplicates"], 0);
  EXPECT_EQ(stats["rejected"], 0);

  CommandResult second = RunClient((*target)->address(), {"import", exported});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr(StrCat("imported 0 record(s), ", n, " already present")));

  const std::string again = dir.File("again.jsonl");
  CommandResult back =
      RunClient((*target)->address(), {"export", "--out", again, "--include-failures"});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(UidsInFile(again), uids);
  auto records = AllRecords(dir.File("target.db"));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->size(), 3u);
}

TEST(ExportImportTest, AMalformedFileIsRefusedBeforeAnythingIsSent) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"));
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string bad = dir.File("bad.jsonl");
  std::ofstream(bad) << "{\"uid\":\"x\"}\nnot json\n";
  CommandResult r = RunClient((*daemon)->address(), {"import", bad});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_THAT(r.err, HasSubstr("line 1"));
  auto records = AllRecords(dir.File("tuning.db"));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_TRUE(records->empty());
}

}  // namespace
}  // namespace tune::testing
