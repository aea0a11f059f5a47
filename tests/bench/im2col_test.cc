#include "bench/im2col.h"

#include <gtest/gtest.h>

#include <vector>

#include "bench/openblas_baseline.h"
#include "common/reference.h"

namespace tune::bench {
namespace {

// The im2col matrix written out from its definition, one element at a time.
std::vector<float> Im2colByDefinition(const Conv2dShape& s, const float* in) {
  const int64_t p_size = s.p(), q_size = s.q();
  std::vector<float> columns(s.c * s.r * s.s * p_size * q_size);
  for (int64_t c = 0; c < s.c; ++c) {
    for (int64_t r = 0; r < s.r; ++r) {
      for (int64_t t = 0; t < s.s; ++t) {
        for (int64_t p = 0; p < p_size; ++p) {
          for (int64_t q = 0; q < q_size; ++q) {
            const int64_t h = p * s.stride - s.pad + r * s.dilation;
            const int64_t w = q * s.stride - s.pad + t * s.dilation;
            const bool inside = h >= 0 && h < s.h && w >= 0 && w < s.w;
            columns[(((c * s.r + r) * s.s + t) * p_size + p) * q_size + q] =
                inside ? in[(c * s.h + h) * s.w + w] : 0.0f;
          }
        }
      }
    }
  }
  return columns;
}

// Shapes where the padding reaches past whole output rows and columns, strides that skip pixels,
// dilated taps, and a filter as wide as the padded image.
const char* const kShapes[] = {
    "conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3",
    "conv2d:N=1,C=4,H=9,W=11,K=2,R=3,S=3,stride=1,pad=1",
    "conv2d:N=1,C=2,H=5,W=7,K=2,R=3,S=3,stride=3,pad=2",
    "conv2d:N=1,C=2,H=10,W=9,K=2,R=3,S=3,stride=2,pad=2,dilation=2",
    "conv2d:N=1,C=3,H=6,W=6,K=2,R=5,S=5,stride=1,pad=4",
    "conv2d:N=1,C=2,H=3,W=4,K=2,R=1,S=1,stride=1,pad=1",
    "conv2d:N=1,C=2,H=8,W=8,K=2,R=1,S=1,stride=2,pad=0",
    "conv2d:N=1,C=1,H=4,W=5,K=1,R=4,S=5,stride=1,pad=0",
    "conv2d:N=1,C=2,H=2,W=2,K=1,R=3,S=3,stride=1,pad=3,dilation=3",
};

TEST(Im2colTest, MatchesTheDefinitionOnPaddedStridedAndDilatedShapes) {
  for (const char* text : kShapes) {
    SCOPED_TRACE(text);
    absl::StatusOr<Workload> w = Workload::Parse(text);
    ASSERT_TRUE(w.ok()) << w.status();
    const Conv2dShape s = w->conv2d();
    std::vector<float> in(s.c * s.h * s.w);
    FillRandom(in.data(), static_cast<int64_t>(in.size()), 7);
    const std::vector<float> want = Im2colByDefinition(s, in.data());
    std::vector<float> got(want.size(), -42.0f);  // every element must be written
    Im2col(s, in.data(), got.data());
    EXPECT_EQ(got, want);
  }
}

TEST(Im2colTest, OnlyAOneByOneFilterAtStrideOneWithoutPaddingIsTheImageItself) {
  const Conv2dShape pointwise =
      Workload::Parse("conv2d:N=1,C=5,H=3,W=4,K=2,R=1,S=1,stride=1,pad=0")->conv2d();
  ASSERT_TRUE(Im2colIsIdentity(pointwise));
  std::vector<float> in(5 * 3 * 4);
  FillRandom(in.data(), static_cast<int64_t>(in.size()), 3);
  EXPECT_EQ(Im2colByDefinition(pointwise, in.data()), in);
  for (const char* text : {"conv2d:N=1,C=2,H=3,W=4,K=2,R=1,S=1,stride=1,pad=1",
                           "conv2d:N=1,C=2,H=8,W=8,K=2,R=1,S=1,stride=2,pad=0",
                           "conv2d:N=1,C=2,H=8,W=8,K=2,R=3,S=3,stride=1,pad=0"}) {
    EXPECT_FALSE(Im2colIsIdentity(Workload::Parse(text)->conv2d())) << text;
  }
}

TEST(OpenblasKernelTest, ConvolutionMatchesTheReferenceWithAndWithoutTheCopy) {
  for (const char* text : {"conv2d:N=2,C=8,H=7,W=9,K=6,R=1,S=1,stride=1,pad=0,epilogue=bias_relu",
                           "conv2d:N=2,C=3,H=11,W=10,K=4,R=3,S=3,stride=2,pad=1,epilogue=bias",
                           "conv2d:N=1,C=4,H=9,W=9,K=5,R=3,S=3,stride=1,pad=2,dilation=2"}) {
    SCOPED_TRACE(text);
    const Workload w = *Workload::Parse(text);
    TensorSet tensors(w, 5);
    OpenblasKernel kernel(w);
    ASSERT_EQ(kernel.Run(tensors.InputPointers(), tensors.output()), 0);
    std::vector<float> want(tensors.output_size());
    RunReference(w, tensors.InputPointers(), want.data());
    CompareResult cmp = CompareOutputs(w, tensors.output(), want.data(), tensors.output_size());
    EXPECT_TRUE(cmp.ok) << cmp.message;
  }
}

}  // namespace
}  // namespace tune::bench
