#include "common/workload.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/workload_list.h"

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

TEST(WorkloadTest, F32TextsOfEveryExistingFormAreUnchanged) {
  // dtype=f32, out= of the dtype's default, layout=NN and layout=NCHW are all omitted, so every
  // key an older log holds reads back as the same text.
  for (const char* text : {
           "gemm:M=512,N=3072,K=768",
           "gemm:M=1,N=1000,K=2048,epilogue=bias",
           "gemm:M=64,N=64,K=64,weights=prepared",
           "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,epilogue=bias_relu",
           "conv2d:N=1,C=32,H=7,W=7,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c,weights=prepared",
           "conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3,stride=2,pad=2,dilation=2",
       }) {
    auto w = Workload::Parse(text);
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->ToString(), text);
    EXPECT_EQ(w->dtype(), Dtype::kF32);
    EXPECT_EQ(w->out_type(), ElementType::kF32);
    EXPECT_FALSE(w->has_scales());
    for (const TensorArg& arg : w->Arguments()) {
      EXPECT_EQ(arg.type, ElementType::kF32) << text << " " << arg.name;
    }
  }
  auto spelled = Workload::Parse("gemm:M=2,N=3,K=4,layout=NN,dtype=f32,out=f32");
  ASSERT_TRUE(spelled.ok()) << spelled.status();
  EXPECT_EQ(spelled->ToString(), "gemm:M=2,N=3,K=4");
  auto nchw = Workload::Parse("conv2d:N=1,C=2,H=3,W=3,K=2,R=1,S=1,layout=NCHW,dtype=f32");
  ASSERT_TRUE(nchw.ok()) << nchw.status();
  EXPECT_EQ(nchw->ToString(), "conv2d:N=1,C=2,H=3,W=3,K=2,R=1,S=1,stride=1,pad=0");
}

TEST(WorkloadTest, DtypeOutAndLayoutRoundTripAndTheDefaultOutIsDropped) {
  auto w = Workload::Parse("gemm:dtype=bf16,M=64,N=4096,K=4096,out=bf16,layout=NT,epilogue=bias");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->ToString(), "gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16,epilogue=bias");
  EXPECT_EQ(w->dtype(), Dtype::kBf16);
  EXPECT_EQ(w->out_type(), ElementType::kBf16);
  EXPECT_EQ(w->gemm().layout, GemmLayout::kNT);
  auto f32_out = Workload::Parse("gemm:M=8,N=8,K=8,dtype=f16,out=f32");
  ASSERT_TRUE(f32_out.ok()) << f32_out.status();
  EXPECT_EQ(f32_out->ToString(), "gemm:M=8,N=8,K=8,dtype=f16,out=f32");
  EXPECT_FALSE(*f32_out == f32_out->WithTypes(Dtype::kF16));
  EXPECT_EQ(f32_out->WithTypes(Dtype::kF16).ToString(), "gemm:M=8,N=8,K=8,dtype=f16");
  for (Dtype d : AllDtypes()) {
    for (ElementType out : AcceptedOutputTypes(d)) {
      const Workload typed = w->WithTypes(d, out);
      auto again = Workload::Parse(typed.ToString());
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_EQ(again->ToString(), typed.ToString());
      EXPECT_EQ(again->dtype(), d);
      EXPECT_EQ(again->out_type(), out);
    }
  }
}

TEST(WorkloadTest, NtLayoutStoresBAsNByK) {
  auto w = Workload::Parse("gemm:M=3,N=5,K=7,layout=NT,dtype=f16");
  ASSERT_TRUE(w.ok()) << w.status();
  const std::vector<TensorArg> args = w->Arguments();
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0].shape, (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(args[1].shape, (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(args[1].type, ElementType::kF16);
  EXPECT_EQ(args[1].NumBytes(), 5 * 7 * 2);
  EXPECT_EQ(args[2].type, ElementType::kF16);
  EXPECT_TRUE(args[2].is_output);
}

TEST(WorkloadTest, NhwcStoresKrscWeightsAndNpqkOutput) {
  auto w = Workload::Parse(
      "conv2d:N=2,C=16,H=8,W=8,K=32,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=bf16,"
      "epilogue=bias_relu");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->conv2d().nhwc);
  EXPECT_FALSE(w->conv2d().blocked());
  EXPECT_EQ(w->ToString(),
            "conv2d:N=2,C=16,H=8,W=8,K=32,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=bf16,"
            "epilogue=bias_relu");
  const std::vector<TensorArg> args = w->Arguments();
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0].shape, (std::vector<int64_t>{2, 8, 8, 16}));
  EXPECT_EQ(args[1].shape, (std::vector<int64_t>{32, 3, 3, 16}));
  EXPECT_EQ(args[2].shape, (std::vector<int64_t>{32}));
  EXPECT_EQ(args[2].type, ElementType::kBf16);
  EXPECT_EQ(args[3].shape, (std::vector<int64_t>{2, 4, 4, 32}));
  EXPECT_EQ(w->OutputIndex(), 3);
}

TEST(WorkloadTest, Fp8ArgumentsEndWithTwoF32ScalesAfterTheOutput) {
  auto w = Workload::Parse("gemm:M=16,N=32,K=64,layout=NT,dtype=fp8e4m3,epilogue=bias");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(w->has_scales());
  const std::vector<TensorArg> args = w->Arguments();
  ASSERT_EQ(args.size(), 6u);
  EXPECT_EQ(args[0].type, ElementType::kFp8E4m3);
  EXPECT_EQ(args[2].name, "bias");
  EXPECT_EQ(args[2].type, ElementType::kBf16);
  EXPECT_EQ(w->OutputIndex(), 3);
  EXPECT_EQ(args[3].name, "C");
  EXPECT_EQ(args[3].type, ElementType::kBf16);
  EXPECT_EQ(args[4].name, "scale_A");
  EXPECT_EQ(args[4].role, ArgRole::kScale);
  EXPECT_EQ(args[4].type, ElementType::kF32);
  EXPECT_EQ(args[4].shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(args[5].name, "scale_B");
}

TEST(WorkloadTest, IntegerDtypesOutputI32AndCountIntegerOps) {
  auto w = Workload::Parse("gemm:M=4,N=4,K=4,dtype=u8i8,epilogue=bias");
  ASSERT_TRUE(w.ok()) << w.status();
  const std::vector<TensorArg> args = w->Arguments();
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0].type, ElementType::kU8);
  EXPECT_EQ(args[1].type, ElementType::kI8);
  EXPECT_EQ(args[2].type, ElementType::kI32);
  EXPECT_EQ(args[3].type, ElementType::kI32);
  EXPECT_TRUE(w->CountsIntegerOps());
  EXPECT_FALSE(w->has_scales());
  // A float output of an integer dtype is scaled: C = scale_A * scale_B * (A x B) + bias.
  const Workload dequantised = w->WithTypes(Dtype::kI8, ElementType::kF32);
  EXPECT_TRUE(dequantised.has_scales());
  EXPECT_EQ(dequantised.Arguments().size(), 6u);
  EXPECT_EQ(dequantised.Arguments()[2].type, ElementType::kF32);
}

TEST(WorkloadTest, RequantWritesI8AndTakesAScaleAndAZeroPointAfterTheOutput) {
  auto w = Workload::Parse("gemm:M=4,N=8,K=16,layout=NT,dtype=u8i8,epilogue=requant");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->out_type(), ElementType::kI8);
  EXPECT_TRUE(w->requantizes());
  EXPECT_FALSE(w->has_scales());
  // out=i8 is implied, so the canonical text leaves it out, like every default.
  EXPECT_EQ(w->ToString(), "gemm:M=4,N=8,K=16,layout=NT,dtype=u8i8,epilogue=requant");
  EXPECT_EQ(*Workload::Parse("gemm:M=4,N=8,K=16,layout=NT,dtype=u8i8,out=i8,epilogue=requant"), *w);
  const std::vector<TensorArg> args = w->Arguments();
  ASSERT_EQ(args.size(), 5u);
  EXPECT_EQ(args[2].name, "C");
  EXPECT_EQ(args[2].type, ElementType::kI8);
  EXPECT_EQ(args[3].name, "scale");
  EXPECT_EQ(args[3].type, ElementType::kF32);
  EXPECT_EQ(args[3].role, ArgRole::kScale);
  EXPECT_EQ(args[4].name, "zero_point");
  EXPECT_EQ(args[4].type, ElementType::kI32);
  EXPECT_EQ(args[4].role, ArgRole::kZeroPoint);
  EXPECT_EQ(w->WithTypes(Dtype::kI8).ToString(),
            "gemm:M=4,N=8,K=16,layout=NT,dtype=i8,epilogue=requant");
}

TEST(WorkloadTest, EveryLineOfTheTypedBenchSuitesParsesToItsOwnCanonicalText) {
  for (const char* file : {"gpu_workloads.txt", "gpu_matrix_workloads.txt", "gpu_typed_smoke.txt",
                           "cpu_matrix_workloads.txt", "cpu_matrix_smoke.txt"}) {
    absl::StatusOr<std::vector<WeightedWorkload>> list =
        ReadWorkloadList(std::string(TUNE_BENCH_DIR) + "/" + file);
    ASSERT_TRUE(list.ok()) << file << ": " << list.status();
    EXPECT_GE(list->size(), 6u) << file;
    // Each line is written in the canonical form, as records and exports will show it.
    std::ifstream in(std::string(TUNE_BENCH_DIR) + "/" + file);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') {
        continue;
      }
      auto w = Workload::Parse(line);
      ASSERT_TRUE(w.ok()) << file << ": " << w.status();
      EXPECT_EQ(w->ToString(), line) << file;
    }
  }
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
        BadWorkload{"gemm:M=1,N=1,K=1,dtype=float16",
                    "dtype 'float16' is unknown (f32|tf32|f16|bf16|i8|u8i8|fp8e4m3|"},
        BadWorkload{"gemm:M=1,N=1,K=1,dtype=bf16,out=f16",
                    "out=f16 is not an output of dtype=bf16 (bf16, f32)"},
        BadWorkload{"gemm:M=1,N=1,K=1,out=bf16", "out=bf16 is not an output of dtype=f32 (f32)"},
        BadWorkload{"gemm:M=1,N=1,K=1,dtype=i8,out=i8",
                    "out=i8 is written only by epilogue=requant (a per-tensor f32 scale and an "
                    "i32 zero point); outputs of dtype=i8: i32, f32, or i8 with epilogue=requant"},
        BadWorkload{"gemm:M=1,N=1,K=1,dtype=bf16,epilogue=requant",
                    "epilogue=requant requantises an integer accumulator to i8: it needs "
                    "dtype=i8 or dtype=u8i8, not dtype=bf16"},
        BadWorkload{"gemm:M=1,N=1,K=1,dtype=u8i8,out=f32,epilogue=requant",
                    "epilogue=requant writes i8, not out=f32 (out=i8)"},
        BadWorkload{"gemm:M=1,N=1,K=1,epilogue=requant", "not dtype=f32"},
        BadWorkload{"conv2d:N=1,C=1,H=2,W=2,K=1,R=5,S=5,stride=1,pad=0", "output would be empty"},
        BadWorkload{"conv2d:N=1,C=1,H=2,W=2,K=1,R=1,S=1,stride=0,pad=0", "'stride' = 0"},
        BadWorkload{"conv2d:N=1,C=4,H=2,W=2,K=4,R=1,S=1,groups=2", "groups"},
        BadWorkload{"conv2d:N=1,C=3,H=8,W=8,K=64,R=3,S=3,pad=1,layout=NCHW16c",
                    "multiples of 16 (C=3, K=64)"},
        BadWorkload{"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=NWHC",
                    "layout 'NWHC' is unknown (NCHW, NCHW4c, NCHW8c, NCHW16c or NHWC)"},
        BadWorkload{"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=NCHW32c",
                    "layout 'NCHW32c'"},
        BadWorkload{"gemm:M=1,N=1,K=1,layout=NCHW16c", "layout 'NCHW16c' is unknown (NN, NT)"},
        BadWorkload{"gemm:M=1,N=1,K=1,weights=packed",
                    "weights 'packed' is unknown (canonical, "
                    "prepared)"},
        BadWorkload{"conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,weights=",
                    "'weights=' is not of the form key=value"}));

}  // namespace
}  // namespace tune
