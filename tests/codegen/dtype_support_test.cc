#include "codegen/dtype_support.h"

#include <gtest/gtest.h>

#include <string>

namespace tune {
namespace {

Target Parsed(std::string_view text) {
  auto t = Target::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

// One row of the table in codegen/dtype_support.h.
struct Row {
  const char* target;
  const char* dtypes;
};

class DtypeMatrixTest : public ::testing::TestWithParam<Row> {};

TEST_P(DtypeMatrixTest, EveryCellOfTheMatrixIsAsDocumented) {
  const Target target = Parsed(GetParam().target);
  EXPECT_EQ(TargetDtypes(target).Names(), GetParam().dtypes) << GetParam().target;
  const Workload gemm = *Workload::Parse("gemm:M=64,N=64,K=64");
  for (Dtype d : AllDtypes()) {
    const bool runs = TargetDtypes(target).Has(d);
    EXPECT_EQ(CheckDtypeOnTarget(gemm.WithTypes(d), target).ok(), runs)
        << GetParam().target << " " << DtypeName(d);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Targets, DtypeMatrixTest,
    ::testing::Values(Row{"cuda -arch=sm_80", "f32|tf32|f16|bf16|i8|u8i8"},
                      Row{"cuda -arch=sm_86", "f32|tf32|f16|bf16|i8|u8i8"},
                      Row{"cuda -arch=sm_89", "f32|tf32|f16|bf16|i8|u8i8|fp8e4m3|fp8e5m2"},
                      Row{"cuda -arch=sm_90", "f32|tf32|f16|bf16|i8|u8i8|fp8e4m3|fp8e5m2"},
                      Row{"rocm -mcpu=gfx90a", "f32|f16|bf16|i8"},
                      Row{"rocm -mcpu=gfx942", "f32|f16|bf16|i8|fp8e4m3fnuz|fp8e5m2fnuz"},
                      Row{"rocm -mcpu=gfx1100", "f32|f16|bf16|i8|u8i8"},
                      Row{"llvm -mcpu=znver4", "f32|bf16|i8|u8i8"},
                      Row{"llvm -mcpu=haswell", "f32|bf16|i8|u8i8"},
                      Row{"llvm -mcpu=sapphirerapids", "f32|f16|bf16|i8|u8i8"}));

TEST(DtypeSupportTest, ARefusalNamesTheFieldTheTargetWhyAndTheAcceptedDtypes) {
  const Workload fp8 = *Workload::Parse("gemm:M=64,N=64,K=64,layout=NT,dtype=fp8e4m3");
  absl::Status s = CheckDtypeOnTarget(fp8, Parsed("cuda -arch=sm_80"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "dtype=fp8e4m3 is not run on 'cuda -arch=sm_80': FP8 tensor cores need sm_89 or "
            "later; accepted there: f32|tf32|f16|bf16|i8|u8i8");
  s = CheckDtypeOnTarget(fp8, Parsed("rocm -mcpu=gfx942"));
  EXPECT_NE(s.message().find("gfx942 runs the FNUZ encodings"), std::string_view::npos)
      << s.message();
  s = CheckDtypeOnTarget(fp8.WithTypes(Dtype::kF16), Parsed("llvm -mcpu=znver4"));
  EXPECT_NE(s.message().find("f16 needs AVX512-FP16"), std::string_view::npos) << s.message();
  s = CheckDtypeOnTarget(fp8.WithTypes(Dtype::kU8I8), Parsed("rocm -mcpu=gfx90a"));
  EXPECT_NE(s.message().find("signed operands only"), std::string_view::npos) << s.message();
}

}  // namespace
}  // namespace tune
