// Codegen plugins across real processes, with the worked example (examples/c_codegen_plugin):
// its family competes in a job like a built-in template, tune-compile asks it to build the
// log's best again for a C program; a plugin that crashes, hangs or writes garbage while
// building gives BUILD_ERROR records and the daemon keeps serving; a plugin that cannot describe
// itself stops the daemon at start-up, naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kFamily[] = "gemm.cpu.c_codegen";

constexpr char kProgram[] = R"(#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

enum { M = 33, N = 70, K = 100 };
static float A[M * K], B[K * N], C[M * N];

int main(void) {
  srand(9);
  for (int i = 0; i < M * K; ++i) A[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < K * N; ++i) B[i] = (float)rand() / RAND_MAX - 0.5f;
  if (tune_gemm_M33_N70_K100_relu(A, B, C) != 0) { printf("kernel failed\n"); return 2; }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += (double)A[i * K + k] * B[k * N + j];
      if (want < 0) want = 0;
      if (fabs(want - C[i * N + j]) > 1e-3 * (1 + fabs(want))) { printf("%d %d\n", i, j); return 1; }
    }
  printf("OK\n");
  return 0;
}
)";

TEST(PluginTest, APluginsFamilyCompetesInAJobAndTuneCompileBuildsItAgainForAProgram) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(
      dir, db, {.local_workers = 1, .extra = {"--codegen-plugin", TUNE_C_CODEGEN_PLUGIN}});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  const std::string workload = "gemm:M=33,N=70,K=100,epilogue=relu";
  auto job = SubmitJob(address, FastSpec(workload, 5));
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_failed(), 0) << done->message();
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  int plugin_records = 0;
  for (const Record& r : *records) {
    plugin_records += r.template_name == kFamily ? 1 : 0;
  }
  EXPECT_GE(plugin_records, 1) << "the plugin's default at least";

  CommandResult compiled =
      RunCommand({Binaries::Compile(), "--db", db, "--codegen-plugin", TUNE_C_CODEGEN_PLUGIN,
                  "--target", "llvm -mcpu=native -threads=1", "--workload", workload, "--template",
                  kFamily, "--out", dir.File("libkernels.so"), "--header", dir.File("kernels.h")});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_THAT(compiled.err, HasSubstr(kFamily));
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

// A job of the plugin's family only, with the plugin broken in `fault` while building.
void ExpectBuildErrorsAndADaemonThatKeepsServing(const std::string& fault,
                                                 const std::string& message) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(
      dir, db,
      {.local_workers = 1,
       .extra = {"--codegen-plugin", TUNE_C_CODEGEN_PLUGIN, "--build-timeout-ms", "5000"},
       .env = {"TUNE_C_CODEGEN_PLUGIN_FAULT=" + fault}});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  v1::JobSpec spec = FastSpec("gemm:M=16,N=16,K=16", 2);
  spec.add_templates(kFamily);
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->trials_failed(), 2) << done->message();
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  for (const Record& r : *records) {
    EXPECT_EQ(r.measurement.error, ErrorKind::kBuildError) << r.measurement.message;
    EXPECT_THAT(r.measurement.message, HasSubstr(message)) << fault;
  }
  // Still serving: a job of built-in templates succeeds.
  auto next = SubmitJob(address, FastSpec("gemm:M=16,N=16,K=8", 1));
  ASSERT_TRUE(next.ok()) << next.status();
  auto fine = WaitForJob(address, next->job_id(), seconds(240));
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(fine->state(), v1::JOB_STATE_SUCCEEDED) << fine->message();
  EXPECT_TRUE((*daemon)->process().Running());
}

TEST(PluginTest, APluginThatCrashesWhileBuildingGivesBuildErrors) {
  ExpectBuildErrorsAndADaemonThatKeepsServing("crash", "SIGABRT");
}

TEST(PluginTest, APluginThatWritesGarbageGivesBuildErrors) {
  ExpectBuildErrorsAndADaemonThatKeepsServing("garbage", "not a tune.v1.PluginResponse");
}

TEST(PluginTest, APluginThatHangsGivesBuildErrorsOnceTheBuildDeadlinePasses) {
  ExpectBuildErrorsAndADaemonThatKeepsServing("hang", "5000 ms");
}

TEST(PluginTest, APluginThatFailsABuildItClaimedGivesBuildErrorsWithItsMessage) {
  ExpectBuildErrorsAndADaemonThatKeepsServing("fail_build", "deliberate build failure");
}

TEST(PluginTest, APluginThatCannotDescribeItselfStopsTheDaemonNamingIt) {
  TempDir dir;
  for (const auto& [plugin, why] : std::vector<std::pair<std::string, std::string>>{
           {"/bin/false", "failed: exited with status 1"},
           {dir.File("missing-plugin"), "not an executable file"}}) {
    CommandResult r = RunCommand({Binaries::Daemon(), "--db", dir.File("tuning.db"), "--listen",
                                  "127.0.0.1:0", "--codegen-plugin", plugin});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("codegen plugin " + plugin));
    EXPECT_THAT(r.err, HasSubstr(why));
  }
}

}  // namespace
}  // namespace tune::testing
