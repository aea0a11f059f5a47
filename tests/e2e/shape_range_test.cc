// Shape ranges end to end: a range job tunes the sizes the daemon chooses; `best` and `export`
// show them; tune-compile builds one entry point over them; a C program run with recording on
// writes the sizes the log did not measure; tuning that file and building again gives them
// kernels measured for them, and the same run then records nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/strings.h"
#include "common/workload_list.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kRange = "gemm:M=1..16,N=32,K=32";
constexpr const char* kTarget = "llvm -mcpu=native -threads=1";

// Calls the range's entry point at each size of argv, checks each answer against a naive
// product and what its _pieces function says of three sizes, and leaves through exit()
// (recording appends at exit).
constexpr const char* kProgram = R"(
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"
int main(int argc, char** argv) {
  static float a[16 * 32], b[32 * 32], c[16 * 32];
  for (int i = 0; i < 16 * 32; ++i) a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < 32 * 32; ++i) b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  for (int arg = 1; arg < argc; ++arg) {
    long m = atol(argv[arg]);
    if (ranged(m, a, b, c) != 0) {
      printf("size %ld: %s\n", m, tune_range_last_error());
      return 1;
    }
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < 32; ++j) {
        float want = 0;
        for (int k = 0; k < 32; ++k) want += a[i * 32 + k] * b[k * 32 + j];
        if (fabsf(c[i * 32 + j] - want) > 1e-4f) {
          printf("size %ld: C[%d][%d] = %g, want %g\n", m, i, j, c[i * 32 + j], want);
          return 1;
        }
      }
  }
  /* How sizes are dispatched: 16 on its own kernel, 13 in pieces that add up to 13, 17 not. */
  int64_t s[16];
  if (ranged_pieces(16, s, 8) != 1 || s[0] != 16 || s[1] != 16) {
    printf("pieces of 16: %lld %lld\n", (long long)s[0], (long long)s[1]);
    return 1;
  }
  int n = ranged_pieces(13, s, 8);
  long sum = 0;
  for (int i = 0; i < n; ++i) sum += (long)s[2 * i + 1];
  if (n < 1 || sum != 13) {
    printf("pieces of 13: %d adding up to %ld\n", n, sum);
    return 1;
  }
  if (ranged_pieces(17, s, 8) != TUNE_RANGE_ERROR_OUT_OF_RANGE) {
    printf("17 is outside the range\n");
    return 1;
  }
  printf("OK\n");
  exit(0);
}
)";

// Where the build put libtune_range.so (beside the tools' bin/, in lib/).
std::string RuntimeDir() {
  return (std::filesystem::path(Binaries::Compile()).parent_path().parent_path() / "lib").string();
}

std::vector<std::string> Fast(std::vector<std::string> args) {
  for (const char* a : {"--strategy", "random", "--repeat", "2", "--min-repeat-ms", "1"}) {
    args.push_back(a);
  }
  return args;
}

TEST(ShapeRangeTest, ARangeIsTunedCompiledToOneEntryAndItsRecordedSizesTunedAndRebuilt) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  // 1. The range job: a model job of the sizes the daemon chose.
  CommandResult submitted =
      RunClient(address, Fast({"submit", "--workload", "gemm:K=32,M=1..16,N=32", "--target",
                               kTarget, "--trials", "12"}));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const uint64_t id = FirstLineJobId(submitted.out);
  auto done = WaitForJob(address, id, seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->spec().range(), kRange);
  std::vector<std::string> sizes;
  for (const v1::TaskProgress& task : done->tasks()) {
    sizes.push_back(task.workload());
  }
  EXPECT_THAT(sizes, ::testing::ElementsAre("gemm:M=1,N=32,K=32", "gemm:M=2,N=32,K=32",
                                            "gemm:M=3,N=32,K=32", "gemm:M=4,N=32,K=32",
                                            "gemm:M=6,N=32,K=32", "gemm:M=8,N=32,K=32",
                                            "gemm:M=11,N=32,K=32", "gemm:M=16,N=32,K=32"));
  int tuned = 0;
  for (const v1::TaskProgress& task : done->tasks()) {
    const bool midpoint = task.workload() == "gemm:M=3,N=32,K=32" ||
                          task.workload() == "gemm:M=6,N=32,K=32" ||
                          task.workload() == "gemm:M=11,N=32,K=32";
    if (!midpoint) {
      EXPECT_GE(task.trials_done(), 1) << task.workload() << ": every tuned size is measured";
    }
    tuned += task.trials_done() > 0 ? 1 : 0;
  }
  EXPECT_THAT((*daemon)->process().Log(), HasSubstr("midpoint(s) where the best config changes"));
  CommandResult shown = RunClient(address, {"status", std::to_string(id)});
  EXPECT_THAT(shown.out, HasSubstr(StrCat("range:      ", kRange)));

  // 2. best and export show the range's sizes.
  CommandResult best = RunClient(address, {"best", "--workload", kRange, "--target", kTarget});
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_THAT(best.out, HasSubstr(StrCat(kRange, ": ", tuned, " sizes measured")));
  for (const char* size : {"gemm:M=1,N=32,K=32: ", "gemm:M=16,N=32,K=32: "}) {
    EXPECT_THAT(best.out, HasSubstr(size));
  }
  CommandResult exported =
      RunClient(address, {"export", "--workload", kRange, "--out", dir.File("range.jsonl")});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::ifstream lines(dir.File("range.jsonl"));
  int records = 0;
  for (std::string line; std::getline(lines, line); ++records) {
    EXPECT_THAT(line, HasSubstr("\"workload\":\"gemm:M=")) << line;
    EXPECT_THAT(line, HasSubstr(",N=32,K=32\"")) << line;
  }
  EXPECT_GE(records, 12) << "every successful trial of the job";
  CommandResult bad =
      RunClient(address, {"best", "--workload", "gemm:M=16..1,N=32,K=32", "--target", kTarget});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("min 16 is above its max 1"));

  // 3. One entry point over the range, and a program using it with recording on.
  auto compile = [&] {
    return RunCommand({Binaries::Compile(), "--db", db, "--target", kTarget, "--workload", kRange,
                       "--name", "ranged", "--out", dir.File("libkernels.so"), "--header",
                       dir.File("kernels.h")});
  };
  CommandResult compiled = compile();
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_THAT(compiled.err, HasSubstr("ranged = gemm:M=1..16,N=32,K=32"));
  EXPECT_THAT(compiled.err, HasSubstr("tuned at M=1,2,"));
  EXPECT_THAT(compiled.err, HasSubstr(",8,"));
  std::ofstream(dir.File("main.c")) << kProgram;
  CommandResult cc =
      RunCommand({"/usr/bin/cc", "-O1", "-I", dir.path(), dir.File("main.c"),
                  dir.File("libkernels.so"), RuntimeDir() + "/libtune_range.so",
                  "-Wl,-rpath," + dir.path() + ":" + RuntimeDir(), "-lm", "-o", dir.File("main")});
  ASSERT_EQ(cc.exit_code, 0) << cc.err;
  const std::string recorded = dir.File("recorded.txt");
  CommandResult run = RunCommand({"/usr/bin/env", "TUNE_RECORD_SHAPES=" + recorded,
                                  dir.File("main"), "5", "13", "5", "16", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.out, "OK\n");
  absl::StatusOr<std::vector<WeightedWorkload>> list = ReadWorkloadList(recorded);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u) << "5 and 13: the sizes the log did not measure";
  EXPECT_EQ((*list)[0].workload.ToString(), "gemm:M=5,N=32,K=32");
  EXPECT_EQ((*list)[0].weight, 2);
  EXPECT_EQ((*list)[1].workload.ToString(), "gemm:M=13,N=32,K=32");
  EXPECT_EQ((*list)[1].weight, 1);

  // 4. Tune the recorded sizes, build again: they have kernels measured for them, and the same
  // run records nothing.
  CommandResult again = RunClient(address, Fast({"submit", "--workloads-file", recorded, "--target",
                                                 kTarget, "--trials", "4"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto done_again = WaitForJob(address, FirstLineJobId(again.out), seconds(240));
  ASSERT_TRUE(done_again.ok()) << done_again.status();
  EXPECT_EQ(done_again->state(), v1::JOB_STATE_SUCCEEDED) << done_again->message();
  compiled = compile();
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_THAT(compiled.err, HasSubstr(",5,"));
  EXPECT_THAT(compiled.err, HasSubstr(",13,"));
  const std::string recorded_again = dir.File("recorded-again.txt");
  run = RunCommand({"/usr/bin/env", "TUNE_RECORD_SHAPES=" + recorded_again, dir.File("main"), "5",
                    "13", "5", "16", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_FALSE(std::filesystem::exists(recorded_again)) << "every size called is measured now";
}

}  // namespace
}  // namespace tune::testing
