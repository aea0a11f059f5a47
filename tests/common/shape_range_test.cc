#include "common/shape_range.h"

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(ShapeRangeTest, ParsesAGemmRangeIntoItsCanonicalText) {
  absl::StatusOr<ShapeRange> r = ShapeRange::Parse("gemm:K=4096,N=4096,M=1..4096");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ToString(), "gemm:M=1..4096,N=4096,K=4096");
  EXPECT_EQ(r->dim(), "M");
  EXPECT_EQ(r->lo(), 1);
  EXPECT_EQ(r->hi(), 4096);
  EXPECT_TRUE(r->Splittable());
  EXPECT_EQ(r->At(37).ToString(), "gemm:M=37,N=4096,K=4096");
  EXPECT_EQ(ShapeRange::Parse(r->ToString())->ToString(), r->ToString());
}

TEST(ShapeRangeTest, KeepsTheOtherFieldsOfTheWorkload) {
  absl::StatusOr<ShapeRange> r =
      ShapeRange::Parse("gemm:M=64,N=16..1024,K=768,layout=NT,dtype=bf16,epilogue=bias");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ToString(), "gemm:M=64,N=16..1024,K=768,layout=NT,dtype=bf16,epilogue=bias");
  EXPECT_EQ(r->Before(), "gemm:M=64,N=");
  EXPECT_EQ(r->After(), ",K=768,layout=NT,dtype=bf16,epilogue=bias");
  EXPECT_FALSE(r->Splittable());
  EXPECT_EQ(r->SizeOf(r->At(100)), 100);
  EXPECT_EQ(r->SizeOf(*Workload::Parse("gemm:M=64,N=100,K=768,layout=NT,dtype=bf16")), 0);
  EXPECT_EQ(
      r->SizeOf(*Workload::Parse("gemm:M=64,N=2048,K=768,layout=NT,dtype=bf16,epilogue=bias")),
      0);  // outside
}

TEST(ShapeRangeTest, AConvolutionRangesOverItsBatch) {
  absl::StatusOr<ShapeRange> r =
      ShapeRange::Parse("conv2d:N=1..64,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ToString(), "conv2d:N=1..64,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1");
  EXPECT_TRUE(r->Splittable());
  EXPECT_EQ(r->At(3).conv2d().n, 3);
}

TEST(ShapeRangeTest, RefusesBadRangesNamingWhatIsWrong) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {
           Case{"gemm:M=4096..1,N=64,K=64", "min 4096 is above its max 1"},
           Case{"gemm:M=8..8,N=64,K=64", "give the size itself"},
           Case{"gemm:M=0..8,N=64,K=64", "least size 0 is below 1"},
           Case{"gemm:M=1..8,N=1..8,K=64", "are both ranges"},
           Case{"gemm:M=1..x,N=64,K=64", "integer bounds"},
           Case{"conv2d:N=1,C=1..64,H=8,W=8,K=8,R=1,S=1", "field 'C' may not be a range"},
           Case{"gemm:M=1..8,N=64,K=64,layout=NT,dtype=bf16", nullptr},
           Case{"gemm:M=1..8,N=64,K=64,weights=prepared", "weights=prepared is not accepted"},
           Case{"gemm:M=1..8,N=64", "field 'K'"},
           Case{"gemm:M=1..8,N=64,K=64,epilogue=nope", "at M=1"},
           Case{"conv2d:N=1..4,C=3,H=2,W=2,K=8,R=3,S=3", "does not fit"},
           Case{"gemm:M=64,N=64,K=64", "no field is a range"},
       }) {
    absl::StatusOr<ShapeRange> r = ShapeRange::Parse(c.text);
    if (c.says == nullptr) {
      EXPECT_TRUE(r.ok()) << c.text << ": " << r.status();
      continue;
    }
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.says), std::string_view::npos) << r.status();
    EXPECT_NE(r.status().message().find("accepted form"), std::string_view::npos);
  }
}

TEST(ShapeRangeTest, TunesPowersOfTwoAndBuildsKernelsAQuarterOctaveApart) {
  ShapeRange r = *ShapeRange::Parse("gemm:M=1..100,N=8,K=8");
  EXPECT_EQ(r.TunedSizes(), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 100}));
  EXPECT_EQ(r.Midpoints(), (std::vector<int64_t>{3, 6, 11, 23, 45, 80}));
  EXPECT_EQ(r.KernelSizes(), (std::vector<int64_t>{1,  2,  3,  4,  5,  6,  7,  8,  10, 12, 14, 16,
                                                   20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 100}));
  ShapeRange narrow = *ShapeRange::Parse("gemm:M=8,N=300..520,K=8");
  EXPECT_EQ(narrow.TunedSizes(), (std::vector<int64_t>{300, 512, 520}));
  for (int64_t s : narrow.KernelSizes()) {
    EXPECT_TRUE(narrow.Contains(s)) << s;
  }
  // No size is more than 25% below the next kernel above it.
  std::vector<int64_t> sizes = ShapeRange::Parse("gemm:M=1..5000,N=8,K=8")->KernelSizes();
  for (size_t i = 1; i < sizes.size(); ++i) {
    EXPECT_LE(sizes[i], (sizes[i - 1] + 1) * 5 / 4 + 1) << sizes[i - 1] << " " << sizes[i];
  }
}

TEST(ShapeRangeTest, TellsARangeFromAWorkload) {
  EXPECT_TRUE(ShapeRange::IsRange("gemm:M=1..8,N=8,K=8"));
  EXPECT_FALSE(ShapeRange::IsRange("gemm:M=1,N=8,K=8"));
}

}  // namespace
}  // namespace tune
