#include "common/cpu_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tune {
namespace {

using ::testing::HasSubstr;

TEST(CpuSetTest, ParsesRangesAndSinglesOfAllowedCpusAscendingAndDistinct) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  const int first = allowed.front();
  absl::StatusOr<std::vector<int>> one = ParseCpuList(std::to_string(first));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, std::vector<int>{first});
  absl::StatusOr<std::vector<int>> all =
      ParseCpuList(FormatCpuList(allowed) + "," + std::to_string(first));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, allowed);
}

TEST(CpuSetTest, FormatsRunsAsRanges) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 6}), "0-3,6");
  EXPECT_EQ(FormatCpuList({5}), "5");
  EXPECT_EQ(FormatCpuList({}), "");
}

TEST(CpuSetTest, RejectsMalformedListsAndCpusThisProcessMayNotUseNamingTheForm) {
  for (const char* bad : {"", "x", "1-", "3-1", "-2", "0,,1", "99999"}) {
    absl::StatusOr<std::vector<int>> parsed = ParseCpuList(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("accepted: CPUs and ranges"));
  }
  const int beyond = AllowedCpus().back() + 1;
  absl::StatusOr<std::vector<int>> parsed = ParseCpuList(std::to_string(beyond));
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("not one this process may run on"));
}

// Pinning is done in a child process, so the test runner keeps every CPU.
TEST(CpuSetTest, APinnedProcessRunsOnlyOnItsCpus) {
  const int cpu = AllowedCpus().back();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const bool ok = PinToCpus({cpu}).ok() && AllowedCpus() == std::vector<int>{cpu};
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(PinToCpus({}).ok());
}

}  // namespace
}  // namespace tune
