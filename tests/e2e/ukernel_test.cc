// The extern micro-kernel example (examples/ukernel) end to end: a daemon started with its
// manifest tunes a GEMM and a conv2d with gemm.cpu.ukernel / conv2d.cpu.ukernel on a worker that
// preloaded its library; tune-compile builds a library from the log that a C program links
// together with the micro-kernel's library; and a bad manifest stops the daemon naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kTarget[] = "llvm -mcpu=native -threads=1 -libs=example_ukernel";

constexpr char kProgram[] = R"(#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

enum { M = 37, N = 70, K = 45 };
static float A[M * K], B[K * N], bias[N], C[M * N];

int main(void) {
  srand(5);
  for (int i = 0; i < M * K; ++i) A[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < K * N; ++i) B[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < N; ++i) bias[i] = (float)rand() / RAND_MAX - 0.5f;
  if (tune_gemm_M37_N70_K45_bias(A, B, bias, C) != 0) { printf("kernel failed\n"); return 2; }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = bias[j];
      for (int k = 0; k < K; ++k) want += (double)A[i * K + k] * B[k * N + j];
      if (fabs(want - C[i * N + j]) > 1e-3 * (1 + fabs(want))) { printf("%d %d\n", i, j); return 1; }
    }
  printf("OK\n");
  return 0;
}
)";

TEST(UkernelTest, TheExampleMicroKernelIsTunedAndAProgramLinksTheLibraryBuiltFromTheLog) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(
      dir, db,
      {.local_workers = 1,
       .extra = {"--extern-kernels", TUNE_EXAMPLE_UKERNEL_MANIFEST,
                 std::string("--local-worker-arg=--preload=") + TUNE_EXAMPLE_UKERNEL_LIBRARY}});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  const std::string gemm = "gemm:M=37,N=70,K=45,epilogue=bias";
  for (const std::string& workload :
       {gemm, std::string("conv2d:N=1,C=8,H=12,W=12,K=16,R=3,S=3,stride=1,pad=1")}) {
    v1::JobSpec spec = FastSpec(workload, 4);
    spec.set_target(kTarget);
    auto job = SubmitJob(address, spec);
    ASSERT_TRUE(job.ok()) << job.status();
    auto done = WaitForJob(address, job->job_id(), seconds(240));
    ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
    EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
    EXPECT_EQ(done->trials_failed(), 0) << done->message();
    auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
    ASSERT_TRUE(records.ok()) << records.status();
    std::set<std::string> templates;
    for (const Record& r : *records) {
      templates.insert(r.template_name);
    }
    EXPECT_TRUE(templates.contains(workload.starts_with("gemm") ? "gemm.cpu.ukernel"
                                                                : "conv2d.cpu.ukernel"))
        << workload;
  }

  // A library whose gemm is the micro-kernel template, whatever the timings said.
  CommandResult compiled = RunCommand(
      {Binaries::Compile(), "--db", db, "--extern-kernels", TUNE_EXAMPLE_UKERNEL_MANIFEST,
       "--target", kTarget, "--workload", gemm, "--template", "gemm.cpu.ukernel", "--config",
       R"({"kc":32,"mc":16,"nc":64,"order":1})", "--out", dir.File("libkernels.so"), "--header",
       dir.File("kernels.h")});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  std::ifstream header(dir.File("kernels.h"));
  std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("gemm.cpu.ukernel"));
  EXPECT_THAT(text, HasSubstr("External libraries: libtune_example_ukernel.so"));

  std::ofstream(dir.File("main.c")) << kProgram;
  CommandResult cc = RunCommand(
      {"/usr/bin/cc", "-O1", "-I", dir.path(), dir.File("main.c"), dir.File("libkernels.so"),
       TUNE_EXAMPLE_UKERNEL_LIBRARY, "-Wl,-rpath," + dir.path(),
       "-Wl,-rpath," + std::filesystem::path(TUNE_EXAMPLE_UKERNEL_LIBRARY).parent_path().string(),
       "-lm", "-o", dir.File("main")});
  ASSERT_EQ(cc.exit_code, 0) << cc.err;
  CommandResult run = RunCommand({dir.File("main")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.out, "OK\n");
}

TEST(UkernelTest, ADaemonGivenABadManifestStopsNamingTheFieldAndWritesNothing) {
  TempDir dir;
  const std::string manifest = dir.File("bad.json");
  std::ofstream(manifest) << R"({"name": "bad", "library": "libnothing.so"})";
  CommandResult r = RunCommand({Binaries::Daemon(), "--db", dir.File("tuning.db"), "--listen",
                                "127.0.0.1:0", "--extern-kernels", manifest});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(manifest));
  EXPECT_THAT(r.err, HasSubstr("\"symbol\" is missing"));
  EXPECT_FALSE(std::ifstream(dir.File("tuning.db")).good()) << "no log created";
}

}  // namespace
}  // namespace tune::testing
