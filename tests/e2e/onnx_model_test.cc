// An ONNX model as a user has it: `tune-client submit --onnx` tunes its Conv, Gemm and MatMul
// nodes as a model job, and `tune-compile --onnx` builds every kernel from the log's records.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"
#include "tests/model_import/onnx_builder.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A stem convolution with bias and ReLU, a grouped convolution (which tune cannot run), and a
// MatMul over [2][8][32] tokens: two workloads, one node skipped.
std::string SmallModel() {
  ModelBuilder b;
  b.Input("image", {int64_t{1}, int64_t{8}, int64_t{8}, int64_t{8}})
      .Input("tokens", {int64_t{2}, int64_t{8}, int64_t{32}})
      .Weight("w", {8, 8, 3, 3})
      .Weight("bias", {8})
      .Weight("w_grouped", {8, 2, 3, 3})
      .Weight("proj", {32, 48})
      .Output("act")
      .Output("grouped")
      .Output("projected");
  SetInts(b.Node("Conv", {"image", "w", "bias"}, {"conv"}, "stem"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"conv"}, {"act"});
  onnx::NodeProto& grouped = b.Node("Conv", {"image", "w_grouped"}, {"grouped"}, "grouped");
  SetInt(grouped, "group", 4);
  SetInts(grouped, "pads", {1, 1, 1, 1});
  b.Node("MatMul", {"tokens", "proj"}, {"projected"}, "projection");
  return b.Bytes();
}

TEST(OnnxModelTest, AnOnnxModelIsTunedAsAModelJobAndItsKernelsBuiltFromTheLog) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  const std::string model = dir.File("small.onnx");
  std::ofstream(model, std::ios::binary) << SmallModel();
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  CommandResult listed = RunClient(address, {"onnx", model});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("# skipped grouped (Conv): grouped convolution (group=4)"));

  CommandResult submitted = RunClient(
      address, {"submit", "--onnx", model, "--target", "llvm -mcpu=native -threads=1", "--trials",
                "4", "--strategy", "random", "--repeat", "2", "--min-repeat-ms", "1"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_THAT(submitted.err, HasSubstr("skipped grouped (Conv): grouped convolution (group=4)"));
  const uint64_t id = std::stoull(submitted.out);
  auto done = WaitForJob(address, id, seconds(240));
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->spec().name(), model);
  ASSERT_EQ(done->tasks_size(), 2);
  EXPECT_EQ(done->tasks(0).workload(),
            "conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1,epilogue=bias_relu");
  EXPECT_EQ(done->tasks(1).workload(), "gemm:M=16,N=48,K=32");
  for (const v1::TaskProgress& task : done->tasks()) {
    EXPECT_TRUE(task.has_best()) << task.workload();
  }

  CommandResult compiled = RunCommand({Binaries::Compile(), "--db", db, "--target",
                                       "llvm -mcpu=native -threads=1", "--onnx", model, "--out",
                                       dir.File("libmodel.so"), "--header", dir.File("model.h")});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_THAT(compiled.err, HasSubstr("skipped grouped (Conv)"));
  EXPECT_THAT(compiled.err, Not(HasSubstr("default config"))) << "both kernels come from the log";
  std::string header = ReadFile(dir.File("model.h")).value_or("");
  EXPECT_THAT(header, HasSubstr("tune_gemm_M16_N48_K32("));
  EXPECT_THAT(header, HasSubstr("tune_conv2d_N1_C8_H8_W8_K8_R3_S3_s1_p1"));
}

TEST(OnnxModelTest, AFileThatIsNoModelIsRefusedBeforeAnythingIsSubmitted) {
  TempDir dir;
  const std::string path = dir.File("weights.onnx");
  std::ofstream(path) << "not a protobuf";
  CommandResult submitted = RunClient(
      "127.0.0.1:9", {"submit", "--onnx", path, "--target", "llvm -mcpu=native", "--trials", "4"});
  EXPECT_EQ(submitted.exit_code, 2);
  EXPECT_THAT(submitted.err, HasSubstr(path + ": not an ONNX model"));
}

}  // namespace
}  // namespace tune::testing
