// tune-compile as a user runs it: the real binary in a child process, real files.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/subprocess.h"
#include "common/target.h"
#include "common/version.h"
#include "db/tuning_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class TuneCompileCli : public ::testing::Test {
 protected:
  std::string File(const std::string& name) const { return dir_.File(name); }

  static std::string Read(const std::string& path) { return ReadFile(path).value_or(""); }

  // Runs tune-compile with `args`; returns the exit code and keeps stderr in err_.
  int Run(const std::vector<std::string>& args) {
    SpawnOptions spawn;
    spawn.argv = {TUNE_COMPILE_PATH};
    spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
    spawn.stdout_path = "/dev/null";
    spawn.stderr_path = File("stderr.txt");
    absl::StatusOr<pid_t> pid = Spawn(spawn);
    EXPECT_TRUE(pid.ok()) << pid.status();
    int status = pid.ok() ? Reap(*pid) : -1;
    err_ = Read(File("stderr.txt"));
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::vector<std::string> Args(const std::string& workload,
                                const std::string& target = "llvm -mcpu=native -threads=1") {
    return {"--target", target,          "--workload", workload,
            "--out",    File("libk.so"), "--header",   File("k.h")};
  }

  // The arguments without a --workload, for --workloads-file and --model.
  std::vector<std::string> OutArgs(const std::string& target = "llvm -mcpu=native -threads=1") {
    return {"--target", target, "--out", File("libk.so"), "--header", File("k.h")};
  }

  // Writes `text` to the test's folder as `name`; returns its path.
  std::string WriteText(const std::string& name, const std::string& text) {
    EXPECT_TRUE(WriteFileAtomically(File(name), text).ok());
    return File(name);
  }

  TempDir dir_ = TempDir::Create("tune-compile-cli-").value();
  std::string err_;
};

TEST_F(TuneCompileCli, WithoutATuningLogEveryKernelUsesItsDefaultAndSaysSo) {
  std::vector<std::string> args = Args("gemm:M=16,N=16,K=16");
  args.insert(args.end(), {"--workload", "conv2d:N=1,C=2,H=6,W=6,K=3,R=3,S=3,stride=1,pad=1",
                           "--name", "g16", "--emit-llvm", File("k.ll")});
  ASSERT_EQ(Run(args), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("no --db given"));
  EXPECT_THAT(err_, HasSubstr("default config"));
  std::string header = Read(File("k.h"));
  EXPECT_THAT(header, HasSubstr("int g16(const float* A, const float* B, float* C);"));
  EXPECT_THAT(header, HasSubstr("int tune_conv2d_N1_C2_H6_W6_K3_R3_S3_s1_p1("));
  EXPECT_TRUE(fs::exists(File("libk.so")));
  EXPECT_THAT(Read(File("k.ll")), HasSubstr("define"));
}

// A record of gemm:M=16,N=16,K=16 with `config` measured with `target` (-mcpu=native resolved).
void CommitGemmRecord(const std::string& db, const std::string& target, const std::string& config,
                      double secs) {
  auto log = TuningLog::Open(db);
  ASSERT_TRUE(log.ok()) << log.status();
  Record r;
  r.workload = "gemm:M=16,N=16,K=16";
  r.target = Target::Parse(target)->Resolved().ToString();
  r.device_key = Target::Parse(target)->Resolved().DeviceKey();
  r.template_name = "gemm.cpu.blocked";
  r.template_version = 1;
  r.config = config;
  r.measurement.round_secs = {secs};
  r.measurement.number = 1;
  r.tune_version = kTuneVersion;
  r.llvm_version = kLlvmVersion;
  ASSERT_TRUE((*log)->CommitRecord(r).ok());
}

TEST_F(TuneCompileCli, ARecordOfAnotherThreadCountIsAFallbackThatIsReported) {
  ASSERT_NO_FATAL_FAILURE(CommitGemmRecord(
      File("tuning.db"), "llvm -mcpu=native -threads=2",
      R"({"kc":16,"mc":16,"mr":2,"nc":16,"nr":16,"order":1,"pack_a":0,"pack_b":0,"unroll_k":1})",
      1e-6));
  std::vector<std::string> args = Args("gemm:M=16,N=16,K=16");
  args.insert(args.end(), {"--db", File("tuning.db")});
  ASSERT_EQ(Run(args), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("FALLBACK: no record for"));
  EXPECT_THAT(err_, HasSubstr("-threads=2"));
  EXPECT_THAT(Read(File("k.h")), HasSubstr("FALLBACK"));
}

TEST_F(TuneCompileCli, UsesTheBestRecordOfTheTuningLog) {
  const std::string fastest =
      R"({"kc":16,"mc":16,"mr":2,"nc":16,"nr":16,"order":1,"pack_a":0,"pack_b":0,"unroll_k":1})";
  const std::string target = "llvm -mcpu=native -threads=1";
  // Slower records before and after the fastest, so neither order nor recency decides.
  ASSERT_NO_FATAL_FAILURE(CommitGemmRecord(
      File("tuning.db"), target,
      R"({"kc":16,"mc":16,"mr":2,"nc":16,"nr":16,"order":2,"pack_a":1,"pack_b":0,"unroll_k":1})",
      3e-6));
  ASSERT_NO_FATAL_FAILURE(CommitGemmRecord(File("tuning.db"), target, fastest, 1e-6));
  ASSERT_NO_FATAL_FAILURE(CommitGemmRecord(
      File("tuning.db"), target,
      R"({"kc":16,"mc":16,"mr":2,"nc":16,"nr":16,"order":1,"pack_a":0,"pack_b":1,"unroll_k":2})",
      2e-6));
  std::vector<std::string> args = Args("gemm:M=16,N=16,K=16");
  args.insert(args.end(), {"--db", File("tuning.db")});
  ASSERT_EQ(Run(args), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("(the tuning log, exact match"));
  EXPECT_THAT(Read(File("k.h")), HasSubstr(fastest));
}

TEST_F(TuneCompileCli, AMissingTuningLogFallsBackToDefaults) {
  std::vector<std::string> args = Args("gemm:M=4,N=4,K=4");
  args.insert(args.end(), {"--db", File("absent.db")});
  ASSERT_EQ(Run(args), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("does not exist"));
}

TEST_F(TuneCompileCli, PrintsTheIrAfterEveryStage) {
  std::vector<std::string> args = Args("gemm:M=4,N=4,K=4");
  args.push_back("--print-ir-after-all");
  ASSERT_EQ(Run(args), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("IR after"));
  EXPECT_THAT(err_, HasSubstr("for."));
}

TEST_F(TuneCompileCli, AMalformedWorkloadIsAUsageErrorNamingTheForm) {
  EXPECT_EQ(Run(Args("gemm:M=4,N=4")), 2);
  EXPECT_THAT(err_, HasSubstr("'K' is missing"));
  EXPECT_THAT(err_, HasSubstr("accepted form"));
  EXPECT_FALSE(fs::exists(File("libk.so")));
}

TEST_F(TuneCompileCli, ABadTargetIsAUsageError) {
  EXPECT_EQ(Run(Args("gemm:M=4,N=4,K=4", "llvm -threads=zero")), 2);
  EXPECT_THAT(err_, HasSubstr("-threads"));
}

TEST_F(TuneCompileCli, AGpuTargetBuildsAHostLibraryThatNeedsTheGpuRuntime) {
  EXPECT_EQ(Run(Args("gemm:M=4,N=4,K=4", "rocm -mcpu=gfx90a")), 0) << err_;
  EXPECT_THAT(err_, HasSubstr("needs libtune_gpurt.so"));
  EXPECT_THAT(Read(File("k.h")), HasSubstr("float* C, void* stream);"));
  EXPECT_TRUE(fs::exists(File("libk.so")));
}

TEST_F(TuneCompileCli, AnUnknownGpuArchIsAUsageErrorNamingTheAcceptedOnes) {
  EXPECT_EQ(Run(Args("gemm:M=4,N=4,K=4", "cuda -arch=sm_42")), 2);
  EXPECT_THAT(err_, HasSubstr("sm_90"));
  EXPECT_FALSE(fs::exists(File("libk.so")));
}

TEST_F(TuneCompileCli, MoreNamesThanWorkloadsIsAUsageError) {
  std::vector<std::string> args = Args("gemm:M=4,N=4,K=4");
  args.insert(args.end(), {"--name", "a", "--name", "b"});
  EXPECT_EQ(Run(args), 2);
  EXPECT_THAT(err_, HasSubstr("--name"));
}

TEST_F(TuneCompileCli, AnUnwritableOutputFailsNamingThePath) {
  std::vector<std::string> args = {"--target",         "llvm",     "--workload",
                                   "gemm:M=4,N=4,K=4", "--out",    File("no/such/dir/libk.so"),
                                   "--header",         File("k.h")};
  EXPECT_EQ(Run(args), 1);
  EXPECT_THAT(err_, HasSubstr("no/such/dir/libk.so"));
  EXPECT_FALSE(fs::exists(File("k.h")));
}

// The function names a header declares, in order.
std::vector<std::string> DeclaredFunctions(const std::string& header) {
  static const std::regex kPrototype(R"(\nint ([A-Za-z_][A-Za-z0-9_]*)\()");
  std::vector<std::string> names;
  for (std::sregex_iterator it(header.begin(), header.end(), kPrototype), end; it != end; ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

// The names of `names` that the shared library at `path` does not export.
std::vector<std::string> MissingSymbols(const std::string& path,
                                        const std::vector<std::string>& names) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return {std::string("dlopen failed: ") + dlerror()};
  }
  std::vector<std::string> missing;
  for (const std::string& name : names) {
    if (dlsym(handle, name.c_str()) == nullptr) {
      missing.push_back(name);
    }
  }
  dlclose(handle);
  return missing;
}

TEST_F(TuneCompileCli, AWorkloadsFileBuildsOneLibraryWithAKernelPerWorkload) {
  std::string model = WriteText("model.txt",
                                "# a small model\n"
                                "gemm:M=8,N=8,K=8   2\n"
                                "\n"
                                "conv2d:N=1,C=2,H=6,W=6,K=3,R=3,S=3,stride=1,pad=1  # stem\n");
  std::vector<std::string> args = OutArgs();
  args.insert(args.end(), {"--workloads-file", model});
  ASSERT_EQ(Run(args), 0) << err_;
  const std::vector<std::string> expected = {"tune_gemm_M8_N8_K8",
                                             "tune_conv2d_N1_C2_H6_W6_K3_R3_S3_s1_p1"};
  EXPECT_EQ(DeclaredFunctions(Read(File("k.h"))), expected);
  EXPECT_THAT(MissingSymbols(File("libk.so"), expected), ::testing::IsEmpty());
}

TEST_F(TuneCompileCli, WorkloadsFromAFileFollowTheExplicitOnesAndADuplicateIsBuiltOnce) {
  std::string model = WriteText("model.txt",
                                "conv2d:N=1,C=2,H=6,W=6,K=3,R=3,S=3,stride=1,pad=1\n"
                                "gemm:M=8,N=8,K=8\n");
  std::vector<std::string> args = Args("gemm:M=8,N=8,K=8");
  args.insert(args.end(), {"--name", "my_gemm", "--workloads-file", model});
  ASSERT_EQ(Run(args), 0) << err_;
  EXPECT_EQ(DeclaredFunctions(Read(File("k.h"))),
            (std::vector<std::string>{"my_gemm", "tune_conv2d_N1_C2_H6_W6_K3_R3_S3_s1_p1"}));
}

TEST_F(TuneCompileCli, ABuiltInModelBuildsAKernelPerDistinctLayer) {
  std::vector<std::string> args = OutArgs();
  args.insert(args.end(), {"--model", "bert"});
  ASSERT_EQ(Run(args), 0) << err_;
  const std::vector<std::string> expected = {
      "tune_gemm_M128_N768_K768",  "tune_gemm_M128_N128_K64",   "tune_gemm_M128_N64_K128",
      "tune_gemm_M128_N3072_K768", "tune_gemm_M128_N768_K3072", "tune_gemm_M1_N768_K768"};
  EXPECT_EQ(DeclaredFunctions(Read(File("k.h"))), expected);
  EXPECT_THAT(MissingSymbols(File("libk.so"), expected), ::testing::IsEmpty());
}

TEST_F(TuneCompileCli, ABadLineOfAWorkloadsFileIsAUsageErrorNamingFileAndLineAndWritesNothing) {
  std::string model = WriteText("model.txt",
                                "# line 1\n"
                                "gemm:M=8,N=8,K=8\n"
                                "gemm:M=4,N=4 3\n");
  std::vector<std::string> args = OutArgs();
  args.insert(args.end(), {"--workloads-file", model});
  EXPECT_EQ(Run(args), 2);
  EXPECT_THAT(err_, HasSubstr(model + ":3:"));
  EXPECT_THAT(err_, HasSubstr("'K' is missing"));
  EXPECT_FALSE(fs::exists(File("libk.so")));
  EXPECT_FALSE(fs::exists(File("k.h")));
}

TEST_F(TuneCompileCli, AMissingWorkloadsFileIsAUsageErrorNamingThePath) {
  std::vector<std::string> args = OutArgs();
  args.insert(args.end(), {"--workloads-file", File("absent.txt")});
  EXPECT_EQ(Run(args), 2);
  EXPECT_THAT(err_, HasSubstr(File("absent.txt")));
  EXPECT_FALSE(fs::exists(File("libk.so")));
  EXPECT_FALSE(fs::exists(File("k.h")));
}

TEST_F(TuneCompileCli, AnUnknownModelIsAUsageErrorNamingTheKnownOnes) {
  std::vector<std::string> args = OutArgs();
  args.insert(args.end(), {"--model", "alexnet"});
  EXPECT_EQ(Run(args), 2);
  EXPECT_THAT(err_, HasSubstr("alexnet"));
  EXPECT_THAT(err_, HasSubstr("resnet50"));
  EXPECT_FALSE(fs::exists(File("libk.so")));
}

TEST_F(TuneCompileCli, AFileThatIsNoOnnxModelIsAUsageErrorNamingItAndWritesNothing) {
  std::string model = WriteText("weights.onnx", "not a protobuf");
  std::vector<std::string> args = OutArgs();
  args.insert(args.end(), {"--onnx", model});
  EXPECT_EQ(Run(args), 2);
  EXPECT_THAT(err_, HasSubstr("--onnx: " + model + ": not an ONNX model"));
  EXPECT_FALSE(fs::exists(File("libk.so")));
  EXPECT_FALSE(fs::exists(File("k.h")));

  args.insert(args.end(), {"--dim", "batch"});
  EXPECT_EQ(Run(args), 2);
  EXPECT_THAT(err_, HasSubstr("--dim 'batch': expected NAME=VALUE"));
}

TEST_F(TuneCompileCli, NoWorkloadAtAllIsAUsageErrorNamingTheWaysToGiveOne) {
  EXPECT_EQ(Run(OutArgs()), 2);
  EXPECT_THAT(err_, HasSubstr("--workloads-file"));
  EXPECT_THAT(err_, HasSubstr("--onnx"));
}

TEST_F(TuneCompileCli, AMissingRequiredFlagIsAUsageError) {
  EXPECT_EQ(Run({"--workload", "gemm:M=4,N=4,K=4"}), 2);
  EXPECT_THAT(err_, HasSubstr("--target"));
}

}  // namespace
}  // namespace tune
