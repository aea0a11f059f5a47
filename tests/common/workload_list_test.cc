#include "common/workload_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

namespace tune {
namespace {

using ::testing::HasSubstr;

TEST(WorkloadList, ReadsWorkloadsWithOptionalWeightsCommentsAndBlankLines) {
  auto list = ParseWorkloadList(
      "# a model\n"
      "gemm:K=768,M=128,N=768   4\n"
      "\n"
      "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1  # stage 1\n"
      "gemm:M=1,N=1000,K=2048\t0.5\r\n",
      "model.txt");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].workload.ToString(), "gemm:M=128,N=768,K=768");
  EXPECT_EQ((*list)[0].weight, 4);
  EXPECT_EQ((*list)[1].weight, 1);
  EXPECT_EQ((*list)[2].weight, 0.5);
}

TEST(WorkloadList, AddsTheWeightsOfAWorkloadListedTwice) {
  auto list = ParseWorkloadList("gemm:M=8,N=8,K=8 2\ngemm:K=8,N=8,M=8 3\n", "m");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].weight, 5);
}

TEST(WorkloadList, NamesTheLineOfAMalformedWorkload) {
  auto list = ParseWorkloadList("gemm:M=8,N=8,K=8\n\ngemm:M=8,N=8\n", "model.txt");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(list.status().message(), HasSubstr("model.txt:3: "));
  EXPECT_THAT(list.status().message(), HasSubstr("optionally followed by a weight"));
}

TEST(WorkloadList, RefusesAShapeRangeNamingWhereRangesAreAccepted) {
  auto list = ParseWorkloadList("gemm:M=8,N=8,K=8\ngemm:M=1..16,N=32,K=32 2\n", "model.txt");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(list.status().message(), HasSubstr("model.txt:2: 'gemm:M=1..16,N=32,K=32' is a "
                                                 "shape range"));
  EXPECT_THAT(list.status().message(),
              HasSubstr("tune-client submit --workload 'gemm:M=1..16,N=32,K=32'"));
}

TEST(WorkloadList, RefusesAWeightThatIsNotAPositiveNumber) {
  for (const char* weight : {"0", "-2", "abc", "nan", "inf", "1e10", "2x"}) {
    auto list =
        ParseWorkloadList(std::string("gemm:M=8,N=8,K=8\ngemm:M=4,N=8,K=8 ") + weight, "model.txt");
    ASSERT_FALSE(list.ok()) << weight;
    EXPECT_THAT(list.status().message(), HasSubstr("model.txt:2: weight"));
    EXPECT_THAT(list.status().message(), HasSubstr("not a positive number"));
  }
}

TEST(WorkloadList, RefusesWeightsOfOneWorkloadThatSumBeyondTheLargestWeight) {
  auto list = ParseWorkloadList("gemm:M=8,N=8,K=8 1e9\ngemm:K=8,N=8,M=8 0.125\n", "model.txt");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().message(),
              HasSubstr("model.txt:2: gemm:M=8,N=8,K=8 is listed before: its weights sum to more "
                        "than 1e9"));
  auto at_most = ParseWorkloadList("gemm:M=8,N=8,K=8 5e8\ngemm:K=8,N=8,M=8 5e8\n", "model.txt");
  ASSERT_TRUE(at_most.ok()) << at_most.status();
  EXPECT_EQ((*at_most)[0].weight, 1e9);
}

TEST(WorkloadList, FormatsWeightsThatParseBackExactly) {
  // {:g} printed 6 digits: 1000000.125 came back as 1e+06.
  for (double weight : {1000000.125, 0.1, 1.0 / 3, 123456789.5, 1e-300, 1e9}) {
    std::vector<WeightedWorkload> list = {{*Workload::Parse("gemm:M=8,N=8,K=8"), weight}};
    auto again = ParseWorkloadList(FormatWorkloadList(list), "again");
    ASSERT_TRUE(again.ok()) << again.status() << " for " << FormatWorkloadList(list);
    EXPECT_EQ((*again)[0].weight, weight) << FormatWorkloadList(list);
  }
}

TEST(WorkloadList, RefusesExtraFieldsAndAnEmptyList) {
  auto extra = ParseWorkloadList("gemm:M=8,N=8,K=8 2 3\n", "m");
  ASSERT_FALSE(extra.ok());
  EXPECT_THAT(extra.status().message(), HasSubstr("m:1: more than a workload and a weight"));
  auto empty = ParseWorkloadList("# nothing\n\n", "m");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("no workload"));
}

TEST(WorkloadList, FormatsAListThatParsesBackToItself) {
  auto list = ParseWorkloadList("gemm:M=8,N=8,K=8 2.5\nconv2d:N=1,C=8,H=8,W=8,K=8,R=1,S=1\n", "m");
  ASSERT_TRUE(list.ok()) << list.status();
  auto again = ParseWorkloadList(FormatWorkloadList(*list), "again");
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->size(), list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    EXPECT_EQ((*again)[i].workload, (*list)[i].workload);
    EXPECT_EQ((*again)[i].weight, (*list)[i].weight);
  }
}

TEST(WorkloadList, ReadingAMissingFileNamesIt) {
  auto list = ReadWorkloadList("/nonexistent/model.txt");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().message(), HasSubstr("/nonexistent/model.txt"));
}

TEST(BuiltinModels, EveryBuiltinModelParses) {
  ASSERT_EQ(BuiltinModelNames(), (std::vector<std::string>{"bert", "mobilenetv2", "resnet50"}));
  for (const std::string& name : BuiltinModelNames()) {
    auto list = BuiltinModel(name);
    ASSERT_TRUE(list.ok()) << name << ": " << list.status();
    EXPECT_GE(list->size(), 6u) << name;
  }
}

TEST(BuiltinModels, ResNet50HasItsFiftyThreeConvolutionsAndClassifier) {
  auto list = BuiltinModel("resnet50");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 24u);
  double layers = std::accumulate(list->begin(), list->end(), 0.0,
                                  [](double sum, const auto& w) { return sum + w.weight; });
  EXPECT_EQ(layers, 54);  // 53 convolutions (downsampling projections included) and the FC
  double gflops = 0;
  for (const WeightedWorkload& w : *list) {
    gflops += w.weight * w.workload.Flops() / 1e9;
  }
  EXPECT_NEAR(gflops, 8.2, 0.1);  // 4.1 billion multiply-adds
}

TEST(BuiltinModels, AnUnknownModelNamesTheKnownOnes) {
  auto list = BuiltinModel("vgg16");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().message(), HasSubstr("unknown model \"vgg16\""));
  EXPECT_THAT(list.status().message(), HasSubstr("bert, mobilenetv2, resnet50"));
}

}  // namespace
}  // namespace tune
