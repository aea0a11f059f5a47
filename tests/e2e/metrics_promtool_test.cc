// /metrics passes Prometheus's own linter: `promtool check metrics` reads the page of a daemon
// that ran a job (so that every counter and histogram has samples). promtool comes with
// Debian's prometheus package; without it this test exits 77, which ctest reports as skipped.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/files.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/http_test_util.h"

namespace tune::testing {
namespace {

std::string Promtool() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) {
      end = dirs.size();
    }
    const std::string candidate = dirs.substr(start, end - start) + "/promtool";
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

TEST(MetricsPromtoolTest, MetricsPageOfADaemonThatRanAJobPassesPromtoolCheck) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"), {.local_workers = 1, .http = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto job = SubmitJob((*daemon)->address(), FastSpec("gemm:M=32,N=32,K=32", 3));
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob((*daemon)->address(), job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status();

  httplib::Client http("127.0.0.1", (*daemon)->http_port());
  const std::string page = GetText(http, "/metrics", 200);
  ASSERT_NE(page.find("tune_trials_total{outcome=\"ok\"}"), std::string::npos) << page;
  const std::string file = dir.File("metrics.txt");
  ASSERT_TRUE(WriteFileAtomically(file, page).ok());
  // promtool reads the page on stdin; its findings (lint problems) go to stdout or stderr.
  CommandResult checked =
      RunCommand({"/bin/sh", "-c", "exec \"$0\" check metrics < \"$1\"", Promtool(), file});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err << "\n" << page;
  EXPECT_EQ(checked.out + checked.err, "") << page;
}

}  // namespace
}  // namespace tune::testing

int main(int argc, char** argv) {
  if (tune::testing::Promtool().empty()) {
    fprintf(stderr, "promtool not found on PATH (Debian package prometheus): skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
