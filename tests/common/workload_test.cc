#include "common/workload.h"

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(WorkloadTest, GemmRoundTripsThroughCanonicalText) {
  auto w = Workload::Parse("gemm:M=512,N=3072,K=768");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->op(), OpKind::kGemm);
  EXPECT_EQ(w->gemm().n, 3072);
  EXPECT_EQ(w->ToString(), "gemm:M=512,N=3072,K=768");
  EXPECT_DOUBLE_EQ(w->Flops(), 2.0 * 512 * 3072 * 768);
}

TEST(WorkloadTest, FieldOrderAndDefaultsNormalise) {
  auto w = Workload::Parse("gemm:K=3,N=2,M=1,dtype=f32,epilogue=none");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->ToString(), "gemm:M=1,N=2,K=3");
}

TEST(WorkloadTest, Conv2dComputesOutputShapeAndOmitsDefaults) {
  auto w = Workload::Parse("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,dilation=1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->conv2d().p(), 56);
  EXPECT_EQ(w->conv2d().q(), 56);
  EXPECT_EQ(w->ToString(), "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1");
  auto args = w->Arguments();
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[2].name, "output");
  EXPECT_EQ(args[2].shape, (std::vector<int64_t>{1, 64, 56, 56}));
}

TEST(WorkloadTest, BiasEpilogueAddsAnArgumentBeforeTheOutput) {
  auto w = Workload::Parse("gemm:M=4,N=5,K=6,epilogue=bias_relu");
  ASSERT_TRUE(w.ok()) << w.status();
  auto args = w->Arguments();
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[2].name, "bias");
  EXPECT_EQ(args[2].shape, std::vector<int64_t>{5});
  EXPECT_EQ(w->ToString(), "gemm:M=4,N=5,K=6,epilogue=bias_relu");
}

TEST(WorkloadTest, BlockedLayoutRoundTripsAndBlocksTheArgumentShapes) {
  auto w = Workload::Parse("conv2d:layout=NCHW16c,N=1,C=32,H=7,W=7,K=64,R=3,S=3,stride=1,pad=1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->conv2d().block, 16);
  EXPECT_EQ(w->ToString(), "conv2d:N=1,C=32,H=7,W=7,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c");
  auto args = w->Arguments();
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0].shape, (std::vector<int64_t>{1, 2, 7, 7, 16}));
  EXPECT_EQ(args[1].shape, (std::vector<int64_t>{4, 2, 3, 3, 16, 16}));
  EXPECT_EQ(args[2].shape, (std::vector<int64_t>{1, 4, 7, 7, 16}));
  // NCHW is the default and is omitted.
  EXPECT_EQ(
      Workload::Parse("conv2d:N=1,C=3,H=7,W=7,K=4,R=3,S=3,stride=1,pad=1,layout=NCHW")->ToString(),
      "conv2d:N=1,C=3,H=7,W=7,K=4,R=3,S=3,stride=1,pad=1");
}

TEST(WorkloadTest, PreparedWeightsRoundTripAndKeepTheCanonicalWeightArgument) {
  auto w = Workload::Parse(
      "conv2d:weights=prepared,N=1,C=32,H=7,W=7,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->prepared_weights());
  EXPECT_EQ(w->ToString(),
            "conv2d:N=1,C=32,H=7,W=7,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c,weights=prepared");
  // The weight argument is what the preparation reads: the canonical tensor.
  EXPECT_EQ(w->Arguments()[1].shape, (std::vector<int64_t>{4, 2, 3, 3, 16, 16}));
  // Canonical is the default and is omitted; the two forms are different workloads.
  auto canonical = Workload::Parse("gemm:M=4,N=5,K=6,weights=canonical");
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  EXPECT_FALSE(canonical->prepared_weights());
  EXPECT_EQ(canonical->ToString(), "gemm:M=4,N=5,K=6");
  const Workload prepared = canonical->WithWeightForm(WeightForm::kPrepared);
  EXPECT_EQ(prepared.ToString(), "gemm:M=4,N=5,K=6,weights=prepared");
  EXPECT_FALSE(prepared == *canonical);
  EXPECT_EQ(PrepareFunctionName("k"), "k_prepare");
  EXPECT_EQ(PreparedFloatsName("k"), "k_prepared_floats");
}

TEST(WorkloadTest, AFilterLargerThanThePaddedInputIsRefusedWhateverTheStride) {
  // R=3 taps do not fit H=2 rows; with stride 2 the output-size formula alone rounds to 1.
  auto w = Workload::Parse("conv2d:N=1,C=3,H=2,W=2,K=1,R=3,S=3,stride=2,pad=0");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(w.status().message().find("does not fit the padded input"), std::string_view::npos)
      << w.status().message();
  // A filter that just fits, strided, is fine.
  auto fits = Workload::Parse("conv2d:N=1,C=3,H=3,W=4,K=1,R=3,S=3,stride=2,pad=0");
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->conv2d().p(), 1);
  EXPECT_EQ(fits->conv2d().q(), 1);
}

TEST(WorkloadTest, ATensorTooLargeToCountIsRefusedNamingIt) {
  // Every field is in range, but the input would have 2^124 elements.
  auto w = Workload::Parse(
      "conv2d:N=2147483648,C=2147483648,H=2147483648,W=2147483648,K=1,R=1,S=1,stride=1,pad=0");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(w.status().message().find("tensor 'input' would have more than 2^40 elements"),
            std::string_view::npos)
      << w.status().message();
  EXPECT_FALSE(Workload::Parse("gemm:M=2147483648,N=1,K=2147483648").ok());
  // The largest GEMM operand allowed: exactly kMaxTensorElements.
  auto largest = Workload::Parse("gemm:M=1048576,N=1,K=1048576");
  ASSERT_TRUE(largest.ok()) << largest.status();
  EXPECT_EQ(largest->Arguments()[0].NumElements(), kMaxTensorElements);
}

struct BadWorkload {
  const char* text;
  const char* names;  // a substring the error must contain
};

class WorkloadRejectsTest : public ::testing::TestWithParam<BadWorkload> {};

TEST_P(WorkloadRejectsTest, WithInvalidArgumentNamingTheProblem) {
  auto w = Workload::Parse(GetParam().text);
  ASSERT_FALSE(w.ok()) << GetParam().text;
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(w.status().message().find(GetParam().names), std::string_view::npos)
      << w.status().message();
  EXPECT_NE(w.status().message().find("accepted form"), std::string_view::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, WorkloadRejectsTest,
    ::testing::Values(
        BadWorkload{"gemm", "expected '<op>:<fields>'"},
        BadWorkload{"matmul:M=1,N=1,K=1", "op 'matmul'"},
        BadWorkload{"gemm:M=0,N=1,K=1", "'M' = 0"}, BadWorkload{"gemm:M=-4,N=1,K=1", "'M' = -4"},
        BadWorkload{"gemm:M=1,N=1", "'K' is missing"},
        BadWorkload{"gemm:M=1,N=1,K=x", "not an integer"},
        BadWorkload{"gemm:M=1,N=1,K=1,Z=3", "'Z' is unknown"},
        BadWorkload{"gemm:M=1,M=2,N=1,K=1", "given twice"},
        BadWorkload{"gemm:M=1,,N=1,K=1", "key=value"},
        BadWorkload{"gemm:M=1,N=1,K=1,epilogue=gelu", "epilogue 'gelu'"},
        BadWorkload{"gemm:M=1,N=1,K=1,dtype=f16", "dtype 'f16'"},
        BadWorkload{"conv2d:N=1,C=1,H=2,W=2,K=1,R=5,S=5,stride=1,pad=0", "output would be empty"},
        BadWorkload{"conv2d:N=1,C=1,H=2,W=2,K=1,R=1,S=1,stride=0,pad=0", "'stride' = 0"},
        BadWorkload{"conv2d:N=1,C=4,H=2,W=2,K=4,R=1,S=1,groups=2", "groups"},
        BadWorkload{"conv2d:N=1,C=3,H=8,W=8,K=64,R=3,S=3,pad=1,layout=NCHW16c",
                    "multiples of 16 (C=3, K=64)"},
        BadWorkload{"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=NHWC", "layout 'NHWC'"},
        BadWorkload{"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=NCHW32c",
                    "layout 'NCHW32c'"},
        BadWorkload{"gemm:M=1,N=1,K=1,layout=NCHW16c", "'layout' is unknown"},
        BadWorkload{"gemm:M=1,N=1,K=1,weights=packed",
                    "weights 'packed' is unknown (canonical, "
                    "prepared)"},
        BadWorkload{"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,weights=",
                    "'weights=' is not of the form key=value"}));

}  // namespace
}  // namespace tune
