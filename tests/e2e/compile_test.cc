// The point of tuning: tune-compile picks the tuned config from the daemon's database, and a C
// program links the produced library and gets the right answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/host_cpu.h"
#include "db/tuning_log.h"
#include "tests/e2e/harness.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kProgram[] = R"(#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

enum { M = 64, N = 64, K = 64 };
static float A[M * K], B[K * N], C[M * N];

int main(void) {
  srand(7);
  for (int i = 0; i < M * K; ++i) A[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < K * N; ++i) B[i] = (float)rand() / RAND_MAX - 0.5f;
  if (tune_gemm_M64_N64_K64(A, B, C) != 0) { printf("kernel failed\n"); return 2; }
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += (double)A[i * K + k] * B[k * N + j];
      if (fabs(want - C[i * N + j]) > 1e-3 * (1 + fabs(want))) {
        printf("mismatch at %d,%d: %f vs %f\n", i, j, C[i * N + j], want);
        return 1;
      }
    }
  }
  printf("OK\n");
  return 0;
}
)";

TEST(CompileTest, TuneCompileUsesTheTunedConfigAndACProgramGetsTheRightAnswer) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto job = SubmitJob((*daemon)->address(), FastSpec("gemm:M=64,N=64,K=64", 4));
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob((*daemon)->address(), job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  ASSERT_TRUE(done->has_best()) << "no trial succeeded";

  CommandResult compiled =
      RunCommand({Binaries::Compile(), "--db", db, "--target", "llvm -mcpu=native -threads=1",
                  "--workload", "gemm:M=64,N=64,K=64", "--out", dir.File("libkernels.so"),
                  "--header", dir.File("kernels.h")});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_THAT(compiled.err, HasSubstr(done->best().config()));
  EXPECT_THAT(compiled.err, HasSubstr("the tuning log"));

  std::ofstream(dir.File("main.c")) << kProgram;
  CommandResult cc = RunCommand({"/usr/bin/cc", "-O1", "-I", dir.path(), dir.File("main.c"),
                                 dir.File("libkernels.so"), "-Wl,-rpath," + dir.path(), "-lm", "-o",
                                 dir.File("main")});
  ASSERT_EQ(cc.exit_code, 0) << cc.err;
  CommandResult run = RunCommand({dir.File("main")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.out, "OK\n");
}

}  // namespace
}  // namespace tune::testing
