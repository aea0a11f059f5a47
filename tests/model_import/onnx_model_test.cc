// ONNX models built here, node by node, read back as workloads lists.
#include "model_import/onnx_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/files.h"
#include "fmt/format.h"
#include "onnx/onnx_pb.h"
#include "tests/model_import/onnx_builder.h"

namespace tune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ModelBuilder;
using testing::SetInt;
using testing::SetInts;
using testing::SetString;
// "workload weight" per entry, for compact expectations.
std::vector<std::string> Lines(const OnnxWorkloads& model) {
  std::vector<std::string> out;
  for (const WeightedWorkload& w : model.workloads) {
    out.push_back(fmt::format("{} {}", w.workload.ToString(), w.weight));
  }
  return out;
}

std::vector<std::string> Reasons(const OnnxWorkloads& model) {
  std::vector<std::string> out;
  for (const OnnxSkippedNode& s : model.skipped) {
    out.push_back(fmt::format("{} ({}): {}", s.node, s.op_type, s.reason));
  }
  return out;
}

// A small convolutional network: a 3x3 stem with bias and ReLU, two identical 3x3 layers whose
// shapes only shape inference knows, a strided SAME_UPPER layer, then a flatten and a classifier
// with transB=1 (as PyTorch exports Linear).
ModelBuilder SmallConvNet() {
  ModelBuilder b;
  b.Input("image", {int64_t{1}, int64_t{3}, int64_t{32}, int64_t{32}})
      .Weight("w0", {16, 3, 3, 3})
      .Weight("b0", {16})
      .Weight("w1", {16, 16, 3, 3})
      .Weight("w2", {16, 16, 3, 3})
      .Weight("w3", {32, 16, 3, 3})
      .Weight("fc_w", {10, 32 * 16 * 16})
      .Weight("fc_b", {10})
      .Output("logits");
  SetInts(b.Node("Conv", {"image", "w0", "b0"}, {"c0"}, "stem"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c0"}, {"r0"});
  SetInts(b.Node("Conv", {"r0", "w1"}, {"c1"}, "layer1"), "pads", {1, 1, 1, 1});
  SetInts(b.Node("Conv", {"c1", "w2"}, {"c2"}, "layer2"), "pads", {1, 1, 1, 1});
  onnx::NodeProto& down = b.Node("Conv", {"c2", "w3"}, {"c3"}, "down");
  SetInts(down, "strides", {2, 2});
  SetString(down, "auto_pad", "SAME_UPPER");
  b.Node("Flatten", {"c3"}, {"flat"});
  SetInt(b.Node("Gemm", {"flat", "fc_w", "fc_b"}, {"logits"}, "fc"), "transB", 1);
  return b;
}

TEST(OnnxModel, MapsConvAndGemmNodesWithInferredShapesAndFusedEpilogues) {
  absl::StatusOr<OnnxWorkloads> model = ParseOnnxModel(SmallConvNet().Bytes(), "net.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->graph_name, "test_graph");
  EXPECT_EQ(model->opset, 13);
  // The stride-2 SAME_UPPER layer pads 32 -> 16 with 1 before and 0 after: asymmetric, skipped.
  EXPECT_THAT(
      Lines(*model),
      ElementsAre("conv2d:N=1,C=3,H=32,W=32,K=16,R=3,S=3,stride=1,pad=1,epilogue=bias_relu 1",
                  "conv2d:N=1,C=16,H=32,W=32,K=16,R=3,S=3,stride=1,pad=1 2",
                  "gemm:M=1,N=10,K=8192,layout=NT,epilogue=bias 1"));
  EXPECT_THAT(Reasons(*model),
              ElementsAre(HasSubstr("down (Conv): padding [0,0,1,1] (begins, then ends)")));
}

TEST(OnnxModel, SameUpperPaddingThatIsSymmetricMapsToOnePad) {
  ModelBuilder b;
  b.Input("x", {int64_t{1}, int64_t{8}, int64_t{15}, int64_t{15}}).Weight("w", {8, 8, 3, 3});
  onnx::NodeProto& conv = b.Node("Conv", {"x", "w"}, {"y"});
  SetInts(conv, "strides", {2, 2});
  SetString(conv, "auto_pad", "SAME_UPPER");
  b.Output("y");
  absl::StatusOr<OnnxWorkloads> model = ParseOnnxModel(b.Bytes(), "same.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(Lines(*model), ElementsAre("conv2d:N=1,C=8,H=15,W=15,K=8,R=3,S=3,stride=2,pad=1 1"));
}

TEST(OnnxModel, MatMulFlattensLeadingDimensionsAndTakesAFollowingBiasAddAndRelu) {
  ModelBuilder b;
  b.Input("tokens", {int64_t{2}, int64_t{128}, int64_t{768}}, onnx::TensorProto::FLOAT16)
      .Weight("w_in", {768, 3072}, onnx::TensorProto::FLOAT16)
      .Weight("b_in", {3072}, onnx::TensorProto::FLOAT16)
      .Weight("w_out", {3072, 768}, onnx::TensorProto::FLOAT16)
      .Output("out");
  b.Node("MatMul", {"tokens", "w_in"}, {"h"}, "ffn_in");
  b.Node("Add", {"h", "b_in"}, {"hb"});
  b.Node("Relu", {"hb"}, {"act"});
  b.Node("MatMul", {"act", "w_out"}, {"out"}, "ffn_out");
  absl::StatusOr<OnnxWorkloads> model = ParseOnnxModel(b.Bytes(), "ffn.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(Lines(*model), ElementsAre("gemm:M=256,N=3072,K=768,dtype=f16,epilogue=bias_relu 1",
                                         "gemm:M=256,N=768,K=3072,dtype=f16 1"));
  EXPECT_THAT(model->skipped, IsEmpty());
}

TEST(OnnxModel, ListsNodesItCannotRunWithTheirReasonsInsteadOfGuessing) {
  ModelBuilder b;
  b.Input("x", {int64_t{1}, int64_t{32}, int64_t{28}, int64_t{28}})
      .Input("q", {int64_t{4}, int64_t{64}, int64_t{32}})
      .Input("k", {int64_t{4}, int64_t{32}, int64_t{64}})
      .Input("d", {int64_t{16}, int64_t{16}}, onnx::TensorProto::DOUBLE)
      .Input("e", {int64_t{16}, int64_t{16}}, onnx::TensorProto::DOUBLE)
      .Weight("w_dw", {32, 1, 3, 3})
      .Weight("w_g", {32, 8, 3, 3})
      .Weight("w_pw", {64, 32, 1, 1})
      .Weight("c_full", {4, 64})
      .Weight("w_fc", {64, 64});
  SetInt(b.Node("Conv", {"x", "w_dw"}, {"dw"}, "depthwise"), "group", 32);
  SetInt(b.Node("Conv", {"x", "w_g"}, {"g"}, "grouped"), "group", 4);
  b.Node("Conv", {"x", "w_pw"}, {"pw"}, "pointwise");
  b.Node("MatMul", {"q", "k"}, {"scores"}, "attention");
  b.Node("MatMul", {"d", "e"}, {"de"}, "in_double");
  b.Node("Gemm", {"a_unknown", "w_fc", "c_full"}, {"z"}, "unknown_a");
  b.Node("ConvInteger", {"x", "w_pw"}, {"ci"});
  b.Output("pw").Output("scores").Output("de").Output("dw").Output("g").Output("ci");
  absl::StatusOr<OnnxWorkloads> model = ParseOnnxModel(b.Bytes(), "mixed.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(Lines(*model),
              ElementsAre("conv2d:N=1,C=32,H=28,W=28,K=64,R=1,S=1,stride=1,pad=0 1"));
  EXPECT_THAT(Reasons(*model),
              ElementsAre(HasSubstr("depthwise (Conv): depthwise convolution (group=32)"),
                          HasSubstr("grouped (Conv): grouped convolution (group=4)"),
                          HasSubstr("attention (MatMul): batched MatMul"),
                          HasSubstr("in_double (MatMul): input A 'd' holds DOUBLE"),
                          HasSubstr("unknown_a (Gemm): no shape inferred for input A 'a_unknown'"),
                          HasSubstr("ConvInteger #6 (ConvInteger): a quantized convolution")));
}

TEST(OnnxModel, GemmWithAFullMatrixCIsListedNotGuessed) {
  ModelBuilder b;
  b.Input("a", {int64_t{4}, int64_t{64}}).Weight("w", {64, 64}).Weight("c", {4, 64}).Output("z");
  b.Node("Gemm", {"a", "w", "c"}, {"z"}, "residual");
  absl::StatusOr<OnnxWorkloads> model = ParseOnnxModel(b.Bytes(), "c.onnx");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(),
              HasSubstr("c.onnx: no Conv, Gemm or MatMul node that tune can run; skipped: "
                        "residual (Gemm): C of shape [4,64] is not a bias of N=64"));
}

TEST(OnnxModel, SymbolicBatchIsSkippedUntilGivenAValue) {
  ModelBuilder b;
  b.Input("x", {std::string("batch"), int64_t{16}, int64_t{8}, int64_t{8}})
      .Weight("w", {16, 16, 1, 1})
      .Output("y");
  b.Node("Conv", {"x", "w"}, {"y"}, "proj");
  absl::StatusOr<OnnxWorkloads> symbolic = ParseOnnxModel(b.Bytes(), "dyn.onnx");
  ASSERT_FALSE(symbolic.ok());
  EXPECT_THAT(symbolic.status().message(),
              HasSubstr("proj (Conv): symbolic size 'batch' of input X 'x' (give it a value: "
                        "--dim batch=N)"));

  OnnxImportOptions options;
  ASSERT_TRUE(AddOnnxDim("batch=8", options.dims).ok());
  absl::StatusOr<OnnxWorkloads> fixed = ParseOnnxModel(b.Bytes(), "dyn.onnx", options);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_THAT(Lines(*fixed), ElementsAre("conv2d:N=8,C=16,H=8,W=8,K=16,R=1,S=1,stride=1,pad=0 1"));

  options.dims = {{"seq", 4}};
  absl::StatusOr<OnnxWorkloads> unknown = ParseOnnxModel(b.Bytes(), "dyn.onnx", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("--dim seq=4: no input of the model has a symbolic dimension 'seq'; its "
                        "symbolic dimensions: batch"));
}

TEST(OnnxModel, DimOptionNamesTheAcceptedForm) {
  std::map<std::string, int64_t> dims;
  for (const char* bad : {"batch", "=4", "batch=0", "batch=x", "batch=4x"}) {
    absl::Status s = AddOnnxDim(bad, dims);
    EXPECT_THAT(s.message(), HasSubstr("expected NAME=VALUE")) << bad;
  }
  EXPECT_THAT(dims, IsEmpty());
}

TEST(OnnxModel, UnreadableOrForeignFilesAreErrorsNamingThePath) {
  absl::StatusOr<TempDir> dir = TempDir::Create("onnx_model_test-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  absl::StatusOr<OnnxWorkloads> missing = ReadOnnxModel(dir->File("absent.onnx"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.onnx"));

  std::string text = dir->File("notes.onnx");
  std::ofstream(text) << "this is a text file, not a model\n";
  absl::StatusOr<OnnxWorkloads> foreign = ReadOnnxModel(text);
  ASSERT_FALSE(foreign.ok());
  EXPECT_THAT(foreign.status().message(),
              HasSubstr("notes.onnx: not an ONNX model (a serialized onnx.ModelProto"));
}

TEST(OnnxModel, PrintedListReadsBackAsTheSameWorkloadsFile) {
  absl::StatusOr<TempDir> dir = TempDir::Create("onnx_model_test-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  std::string path = dir->File("net.onnx");
  std::ofstream(path, std::ios::binary) << SmallConvNet().Bytes();
  absl::StatusOr<OnnxWorkloads> model = ReadOnnxModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  std::string text = FormatOnnxWorkloads(*model, "net.onnx");
  EXPECT_THAT(text, HasSubstr("# net.onnx: graph 'test_graph', opset 13, 3 workloads\n"
                              "# skipped down (Conv): padding"));
  absl::StatusOr<std::vector<WeightedWorkload>> back = ParseWorkloadList(text, "printed");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), model->workloads.size());
  for (size_t i = 0; i < back->size(); ++i) {
    EXPECT_EQ((*back)[i].workload, model->workloads[i].workload);
    EXPECT_EQ((*back)[i].weight, model->workloads[i].weight);
  }
}

}  // namespace
}  // namespace tune
