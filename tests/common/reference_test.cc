#include "common/reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/conv_layout.h"

namespace tune {
namespace {

TEST(ReferenceTest, GemmMatchesHandComputedProductWithBiasRelu) {
  auto w = Workload::Gemm({2, 2, 2}, Epilogue::kBiasRelu);
  const float a[] = {1, 2, 3, 4};
  const float b[] = {1, -1, 1, -1};
  const float bias[] = {0.5f, 0.5f};
  float c[4];
  RunReference(w, {a, b, bias}, c);
  EXPECT_FLOAT_EQ(c[0], 3.5f);  // 1+2+0.5
  EXPECT_FLOAT_EQ(c[1], 0.0f);  // relu(-3+0.5)
  EXPECT_FLOAT_EQ(c[2], 7.5f);
  EXPECT_FLOAT_EQ(c[3], 0.0f);
}

TEST(ReferenceTest, Conv2dWithPaddingSumsOnlyInsideTheImage) {
  auto w = Workload::Conv2d(
      {.n = 1, .c = 1, .h = 2, .w = 2, .k = 1, .r = 3, .s = 3, .stride = 1, .pad = 1});
  const float in[] = {1, 2, 3, 4};
  float weight[9];
  std::fill(weight, weight + 9, 1.0f);
  float out[4];
  RunReference(w, {in, weight}, out);
  for (float v : out) {
    EXPECT_FLOAT_EQ(v, 10.0f);  // every window covers the whole 2x2 image
  }
}

TEST(ReferenceTest, BlockedConv2dIsThePlainConv2dInBlockedLayouts) {
  Workload plain = *Workload::Parse("conv2d:N=2,C=8,H=5,W=6,K=16,R=3,S=3,stride=1,pad=1");
  Workload blocked =
      *Workload::Parse("conv2d:N=2,C=8,H=5,W=6,K=16,R=3,S=3,stride=1,pad=1,layout=NCHW4c");
  const Conv2dShape& s = blocked.conv2d();
  TensorSet tensors(plain, 7);
  std::vector<const float*> in = tensors.InputPointers();
  std::vector<float> want(tensors.output_size());
  RunReference(plain, in, want.data());

  std::vector<float> input = BlockActivations(in[0], s.n, s.c, s.h, s.w, 4);
  std::vector<float> weight = BlockWeights(in[1], s);
  // Element (n=1, c=5, y=2, x=3) sits at [1][5/4][2][3][5%4].
  EXPECT_EQ(input[(((1 * 2 + 1) * 5 + 2) * 6 + 3) * 4 + 1], in[0][((1 * 8 + 5) * 5 + 2) * 6 + 3]);
  // Weight (k=6, c=5, r=1, s=2) sits at [6/4][5/4][1][2][5%4][6%4].
  EXPECT_EQ(weight[((((1 * 2 + 1) * 3 + 1) * 3 + 2) * 4 + 1) * 4 + 2],
            in[1][((6 * 8 + 5) * 3 + 1) * 3 + 2]);
  std::vector<float> got(want.size());
  RunReference(blocked, {input.data(), weight.data()}, got.data());
  EXPECT_EQ(UnblockActivations(got.data(), s.n, s.k, s.p(), s.q(), 4), want);
  EXPECT_EQ(UnblockWeights(weight.data(), s),
            std::vector<float>(in[1], in[1] + s.k * s.c * s.r * s.s));
}

TEST(ReferenceTest, CompareFlagsNaNAndLargeErrorsButAcceptsRounding) {
  auto w = Workload::Gemm({1, 3, 64});
  const float want[] = {1.0f, 2.0f, 3.0f};
  // Rounding of a 64-term sum is far below 1e-5 relative; 1e-4 is not rounding.
  const float close[] = {1.00001f, 2.0f, 3.0f};
  EXPECT_TRUE(CompareOutputs(w, close, want, 3).ok);
  const float off[] = {1.0001f, 2.0f, 3.0f};
  EXPECT_FALSE(CompareOutputs(w, off, want, 3).ok);
  const float wrong[] = {1.0f, 2.5f, std::nanf("")};
  CompareResult r = CompareOutputs(w, wrong, want, 3);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.first_bad_index, 1);
}

TEST(ReferenceTest, AToleranceScaleWidensTheBoundAndIsNamedInTheMessage) {
  auto w = Workload::Gemm({1, 2, 64});
  const float want[] = {1.0f, 2.0f};
  const float off[] = {1.0002f, 2.0f};  // 2.7 times the standard bound (7.5e-5 at 1.0)
  CompareResult standard = CompareOutputs(w, off, want, 2);
  EXPECT_FALSE(standard.ok);
  EXPECT_NEAR(standard.max_error_ratio, 2.7, 0.1);
  EXPECT_THAT(standard.message, ::testing::Not(::testing::HasSubstr("times the standard bound")));
  EXPECT_TRUE(CompareOutputs(w, off, want, 2, 4.0).ok);
  CompareResult scaled = CompareOutputs(w, off, want, 2, 2.0);
  EXPECT_FALSE(scaled.ok);
  EXPECT_THAT(scaled.message, ::testing::HasSubstr("2 times the standard bound"));
}

TEST(ReferenceTest, TensorSetIsDeterministicPerSeed) {
  auto w = Workload::Gemm({3, 4, 5});
  TensorSet a(w, 7), b(w, 7), c(w, 8);
  EXPECT_EQ(a.InputPointers()[0][0], b.InputPointers()[0][0]);
  EXPECT_NE(a.InputPointers()[0][0], c.InputPointers()[0][0]);
  EXPECT_EQ(a.output_size(), 12);
}

}  // namespace
}  // namespace tune
