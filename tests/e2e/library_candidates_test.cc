// Library candidates across real processes: a job with -libs=openblas,dnnl measures generated and
// library kernels side by side on a worker that offers the libraries, and its records say how
// each library ran; library templates no worker offers are skipped and said so; a job of library
// templates only waits for a worker with the library; and a C program links a tune-compile
// library whose best kernels are library kernels and gets the right answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/target.h"
#include "common/version.h"
#include "db/tuning_log.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"

namespace tune::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kLibsTarget[] = "llvm -mcpu=native -threads=1 -libs=dnnl,openblas";

TEST(LibraryCandidatesTest, GeneratedAndLibraryKernelsCompeteAndRecordsSayHowTheLibrariesRan) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto worker = StartWorker(dir, address, "libs", {"--libs", "openblas,dnnl"});
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorker(address, "libs").ok(); }, seconds(60)))
      << (*worker)->Log();
  auto info = ConnectedWorker(address, "libs");
  ASSERT_TRUE(info.ok());
  EXPECT_THAT(info->capabilities().libs(), ::testing::ElementsAre("dnnl", "openblas"));

  // Each template's default comes first: the three defaults are among the six trials.
  v1::JobSpec spec = FastSpec("gemm:M=64,N=48,K=32,epilogue=bias_relu", 6);
  spec.set_target(kLibsTarget);
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
    EXPECT_TRUE(r.measurement.ok()) << r.template_name << ": " << r.measurement.message;
    if (r.template_name == "gemm.cpu.openblas") {
      EXPECT_THAT(r.measurement.library_info,
                  AllOf(HasSubstr("openblas: OpenBLAS"), HasSubstr("core=")));
    } else if (r.template_name == "gemm.cpu.dnnl") {
      EXPECT_THAT(r.measurement.library_info,
                  AllOf(HasSubstr("dnnl: oneDNN"), HasSubstr("isa="), HasSubstr("impl=")));
    } else {
      EXPECT_EQ(r.measurement.library_info, "") << r.template_name;
    }
  }
  EXPECT_THAT(templates,
              ::testing::ElementsAre("gemm.cpu.blocked", "gemm.cpu.dnnl", "gemm.cpu.openblas"));
}

TEST(LibraryCandidatesTest, LibraryTemplatesNoWorkerOffersAreSkippedAndTheJobSaysSo) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto worker = StartWorker(dir, address, "plain");
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorker(address, "plain").ok(); }, seconds(60)));

  v1::JobSpec spec = FastSpec("gemm:M=32,N=32,K=32", 3);
  spec.set_target("llvm -mcpu=native -threads=1 -libs=dnnl");
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_THAT(done->message(), HasSubstr("skipped gemm.cpu.dnnl (no worker with dnnl)"));
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  for (const Record& r : *records) {
    EXPECT_EQ(r.template_name, "gemm.cpu.blocked");
  }
}

TEST(LibraryCandidatesTest, AJobOfLibraryTemplatesOnlyWaitsForAWorkerWithTheLibrary) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto plain = StartWorker(dir, address, "plain");
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(WaitFor([&] { return ConnectedWorker(address, "plain").ok(); }, seconds(60)));

  v1::JobSpec spec = FastSpec("gemm:M=32,N=32,K=32", 2);
  spec.set_target("llvm -mcpu=native -threads=1 -libs=dnnl");
  spec.add_templates("gemm.cpu.dnnl");
  auto job = SubmitJob(address, spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = GetJob(address, job->job_id());
        return j.ok() && j->state() == v1::JOB_STATE_QUEUED &&
               j->message().find("and dnnl") != std::string::npos;
      },
      seconds(60)))
      << GetJob(address, job->job_id())->DebugString();

  auto equipped = StartWorker(dir, address, "equipped", {"--libs", "dnnl"});
  ASSERT_TRUE(equipped.ok()) << equipped.status();
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  auto records = RecordsOfJob(db, static_cast<int64_t>(job->job_id()));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  for (const Record& r : *records) {
    EXPECT_EQ(r.worker, "equipped");
    EXPECT_EQ(r.template_name, "gemm.cpu.dnnl");
  }
}

constexpr char kProgram[] = R"(#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

/* gemm 24x20x16 with bias and ReLU; conv2d 1x3x10x10 -> 4 channels, 3x3, pad 1, with bias */
static float A[24 * 16], B[16 * 20], gb[20], C[24 * 20];
static float X[3 * 10 * 10], Wt[4 * 3 * 3 * 3], cb[4], Y[4 * 10 * 10];

static float Rand(void) { return (float)rand() / RAND_MAX - 0.5f; }
static int Close(double want, float got) { return fabs(want - got) <= 1e-3 * (1 + fabs(want)); }

int main(void) {
  srand(3);
  for (int i = 0; i < 24 * 16; ++i) A[i] = Rand();
  for (int i = 0; i < 16 * 20; ++i) B[i] = Rand();
  for (int i = 0; i < 20; ++i) gb[i] = Rand();
  for (int i = 0; i < 300; ++i) X[i] = Rand();
  for (int i = 0; i < 108; ++i) Wt[i] = Rand();
  for (int i = 0; i < 4; ++i) cb[i] = Rand();
  if (tune_gemm_M24_N20_K16_bias_relu(A, B, gb, C) != 0) return 2;
  if (tune_conv2d_N1_C3_H10_W10_K4_R3_S3_s1_p1_bias(X, Wt, cb, Y) != 0) return 3;
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j < 20; ++j) {
      double want = gb[j];
      for (int k = 0; k < 16; ++k) want += (double)A[i * 16 + k] * B[k * 20 + j];
      if (want < 0) want = 0;
      if (!Close(want, C[i * 20 + j])) { printf("gemm %d %d\n", i, j); return 1; }
    }
  for (int k = 0; k < 4; ++k)
    for (int y = 0; y < 10; ++y)
      for (int x = 0; x < 10; ++x) {
        double want = cb[k];
        for (int c = 0; c < 3; ++c)
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) {
              int iy = y + r - 1, ix = x + s - 1;
              if (iy >= 0 && iy < 10 && ix >= 0 && ix < 10)
                want += (double)X[(c * 10 + iy) * 10 + ix] * Wt[((k * 3 + c) * 3 + r) * 3 + s];
            }
        if (!Close(want, Y[(k * 10 + y) * 10 + x])) { printf("conv %d %d %d\n", k, y, x); return 1; }
      }
  printf("OK\n");
  return 0;
}
)";

// A record of `tpl` with `config` taking `secs`, as a worker would have measured it.
void Commit(TuningLog& log, const std::string& workload, const std::string& tpl,
            const std::string& config, double secs) {
  Record r;
  r.workload = workload;
  r.target = Target::Parse(kLibsTarget)->Resolved().ToString();
  r.device_key = Target::Parse(kLibsTarget)->DeviceKey();
  r.template_name = tpl;
  r.template_version = 1;
  r.config = config;
  r.measurement.round_secs = {secs};
  r.measurement.number = 1;
  r.tune_version = kTuneVersion;
  r.llvm_version = kLlvmVersion;
  ASSERT_TRUE(log.CommitRecord(r).ok());
}

TEST(LibraryCandidatesTest, ACProgramLinksALibraryWhoseBestKernelsAreLibraryKernels) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  const std::string gemm = "gemm:M=24,N=20,K=16,epilogue=bias_relu";
  const std::string conv = "conv2d:N=1,C=3,H=10,W=10,K=4,R=3,S=3,stride=1,pad=1,epilogue=bias";
  {
    auto log = TuningLog::Open(db);
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_NO_FATAL_FAILURE(Commit(**log, gemm, "gemm.cpu.openblas", R"({"epilogue":1})", 1e-6));
    ASSERT_NO_FATAL_FAILURE(
        Commit(**log, gemm, "gemm.cpu.dnnl", R"({"epilogue":0,"layout":0})", 2e-6));
    ASSERT_NO_FATAL_FAILURE(
        Commit(**log, conv, "conv2d.cpu.dnnl", R"({"algorithm":0,"epilogue":1,"layout":1})", 1e-6));
    ASSERT_NO_FATAL_FAILURE(Commit(**log, conv, "conv2d.cpu.im2col_openblas",
                                   R"({"epilogue":0,"im2col":0,"pq_block":100})", 3e-6));
  }
  CommandResult compiled = RunCommand(
      {Binaries::Compile(), "--db", db, "--target", kLibsTarget, "--workload", gemm, "--workload",
       conv, "--out", dir.File("libkernels.so"), "--header", dir.File("kernels.h")});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_THAT(compiled.err, AllOf(HasSubstr("gemm.cpu.openblas"), HasSubstr("conv2d.cpu.dnnl")));
  std::ifstream header(dir.File("kernels.h"));
  std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, AllOf(HasSubstr("libtune_openblas.so"), HasSubstr("libtune_dnnl.so")));

  // Linked like any library: the shims come in through its DT_NEEDED entries and RUNPATH.
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
