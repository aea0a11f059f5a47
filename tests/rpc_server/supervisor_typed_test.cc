// The measurement child on typed workloads: inputs of each element type, a reference of the
// same rounded values, the dtype's bound, and kernels of up to six arguments.
#include <gtest/gtest.h>

#include "rpc_server/supervisor.h"
#include "tests/rpc_server/test_support.h"

namespace tune::rpc {
namespace {

using testing::FixtureRequest;
using testing::FixtureSupervisorOptions;

class SupervisorTypedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<MeasureSupervisor>> s =
        MeasureSupervisor::Create(FixtureSupervisorOptions());
    ASSERT_TRUE(s.ok()) << s.status();
    supervisor_ = std::move(*s);
  }

  // Measures `symbol` of the typed fixtures on `workload`.
  v1::Measurement Measure(std::string_view workload, const std::string& symbol) {
    v1::MeasureRequest request = FixtureRequest(++trial_, TUNE_TEST_TYPED_KERNELS, symbol);
    request.set_workload(std::string(workload));
    absl::StatusOr<v1::Measurement> m = supervisor_->Measure(request, TUNE_TEST_TYPED_KERNELS);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : v1::Measurement();
  }

  std::unique_ptr<MeasureSupervisor> supervisor_;
  uint64_t trial_ = 0;
};

constexpr std::string_view kBf16 = "gemm:M=8,N=16,K=32,dtype=bf16";

TEST_F(SupervisorTypedTest, ABf16OutputOneUlpOffPassesAndTwoElementsOutsideTheBoundIsAWrongAnswer) {
  v1::Measurement correct = Measure(kBf16, "tune_test_bf16_correct");
  EXPECT_EQ(correct.error_kind(), v1::ERROR_KIND_NONE) << correct.message();
  EXPECT_GT(correct.round_secs_size(), 0);
  v1::Measurement one_ulp = Measure(kBf16, "tune_test_bf16_one_ulp_off");
  EXPECT_EQ(one_ulp.error_kind(), v1::ERROR_KIND_NONE) << one_ulp.message();
  v1::Measurement two = Measure(kBf16, "tune_test_bf16_two_elements_off");
  EXPECT_EQ(two.error_kind(), v1::ERROR_KIND_WRONG_ANSWER);
  EXPECT_NE(two.message().find("output[53]"), std::string::npos) << two.message();
  EXPECT_NE(two.message().find("for bf16 output"), std::string::npos) << two.message();
  EXPECT_NE(two.message().find("2 of 128 elements differ"), std::string::npos) << two.message();
}

TEST_F(SupervisorTypedTest, AnI8KernelOffByOneInOneElementIsAWrongAnswer) {
  constexpr std::string_view kI8 = "gemm:M=8,N=16,K=32,dtype=i8";
  v1::Measurement correct = Measure(kI8, "tune_test_i8_correct");
  EXPECT_EQ(correct.error_kind(), v1::ERROR_KIND_NONE) << correct.message();
  v1::Measurement off = Measure(kI8, "tune_test_i8_off_by_one");
  EXPECT_EQ(off.error_kind(), v1::ERROR_KIND_WRONG_ANSWER);
  EXPECT_NE(off.message().find("output[39]"), std::string::npos) << off.message();
  EXPECT_NE(off.message().find("1 of 128 elements differ"), std::string::npos) << off.message();
}

TEST_F(SupervisorTypedTest, AU8I8KernelThatReadsActivationsSignedIsAWrongAnswer) {
  constexpr std::string_view kU8I8 = "gemm:M=8,N=16,K=32,dtype=u8i8";
  v1::Measurement correct = Measure(kU8I8, "tune_test_u8i8_correct");
  EXPECT_EQ(correct.error_kind(), v1::ERROR_KIND_NONE) << correct.message();
  v1::Measurement signed_a = Measure(kU8I8, "tune_test_u8i8_reads_a_signed");
  EXPECT_EQ(signed_a.error_kind(), v1::ERROR_KIND_WRONG_ANSWER) << signed_a.message();
}

TEST_F(SupervisorTypedTest, AnFp8KernelTakesFiveArgumentsAndIgnoringAScaleIsAWrongAnswer) {
  constexpr std::string_view kFp8 = "gemm:M=8,N=16,K=32,dtype=fp8e4m3";
  v1::Measurement correct = Measure(kFp8, "tune_test_fp8_correct");
  EXPECT_EQ(correct.error_kind(), v1::ERROR_KIND_NONE) << correct.message();
  v1::Measurement unscaled = Measure(kFp8, "tune_test_fp8_ignores_scale_b");
  EXPECT_EQ(unscaled.error_kind(), v1::ERROR_KIND_WRONG_ANSWER) << unscaled.message();
}

TEST_F(SupervisorTypedTest, AnNtKernelReadingBAsNnIsAWrongAnswer) {
  constexpr std::string_view kNt = "gemm:M=8,N=16,K=32,layout=NT,dtype=bf16";
  v1::Measurement correct = Measure(kNt, "tune_test_nt_correct");
  EXPECT_EQ(correct.error_kind(), v1::ERROR_KIND_NONE) << correct.message();
  v1::Measurement as_nn = Measure(kNt, "tune_test_nt_reads_b_as_nn");
  EXPECT_EQ(as_nn.error_kind(), v1::ERROR_KIND_WRONG_ANSWER) << as_nn.message();
}

}  // namespace
}  // namespace tune::rpc
