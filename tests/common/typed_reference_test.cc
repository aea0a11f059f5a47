// The reference, its inputs and its bound for workloads whose dtype is not f32.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "common/conv_layout.h"
#include "common/element_type.h"
#include "common/reference.h"

namespace tune {
namespace {

Workload Parsed(std::string_view text) {
  auto w = Workload::Parse(text);
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

// The reference output of `w` on the seeded inputs of `tensors`, in ReferenceType(w).
std::vector<uint32_t> ReferenceOf(const Workload& w, const TensorSet& tensors) {
  std::vector<uint32_t> want(tensors.output_size());
  RunReference(w, tensors.Inputs(), want.data());
  return want;
}

// Kernels read the tensors as a caller's allocator gives them: every tensor on a cache line (an
// AMX tile row of 64 bytes then lies on one line).
TEST(TypedReferenceTest, EveryTensorStartsOnACacheLine) {
  for (const char* text :
       {"gemm:M=7,N=9,K=11,dtype=bf16,epilogue=bias", "gemm:M=3,N=5,K=7,dtype=i8,out=f32"}) {
    TensorSet tensors(Parsed(text), 1);
    for (void* p : tensors.AbiPointers()) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << text;
    }
  }
}

TEST(TypedReferenceTest, ABf16OutputOneUlpOffPassesAndTwoElementsOutsideTheBoundIsAWrongAnswer) {
  const Workload w = Parsed("gemm:M=17,N=33,K=129,dtype=bf16,epilogue=bias");
  TensorSet tensors(w, 7);
  const std::vector<uint32_t> want = ReferenceOf(w, tensors);
  const float* ref = reinterpret_cast<const float*>(want.data());
  const int64_t n = tensors.output_size();
  std::vector<uint16_t> got(n);
  // The correctly rounded result, one ulp away from it in the direction away from zero.
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t rounded = RoundToBf16(ref[i]);
    got[i] = (rounded & 0x7fff) == 0 ? rounded : static_cast<uint16_t>(rounded + 1);
  }
  CompareResult one_ulp = CompareOutputs(w, got.data(), want.data(), n);
  EXPECT_TRUE(one_ulp.ok) << one_ulp.message;
  EXPECT_GT(one_ulp.max_error_ratio, 0.3);
  // Two elements just outside the bound: two mismatches, the message names the first.
  for (int64_t i : {int64_t{5}, int64_t{300}}) {
    const double bound = OutputBound(w, ref[i], ref[i], 1.0);
    double bad = ref[i] + 1.5 * bound;
    while (std::abs(Bf16ToFloat(RoundToBf16(static_cast<float>(bad))) - ref[i]) <=
           OutputBound(w, ref[i], Bf16ToFloat(RoundToBf16(static_cast<float>(bad))), 1.0)) {
      bad += bound;
    }
    got[i] = RoundToBf16(static_cast<float>(bad));
  }
  CompareResult wrong = CompareOutputs(w, got.data(), want.data(), n);
  EXPECT_FALSE(wrong.ok);
  EXPECT_EQ(wrong.mismatches, 2);
  EXPECT_EQ(wrong.first_bad_index, 5);
  EXPECT_NE(wrong.message.find("output[5]"), std::string::npos) << wrong.message;
  EXPECT_NE(wrong.message.find("for bf16 output"), std::string::npos) << wrong.message;
}

TEST(TypedReferenceTest, AnF16OutputThreeUlpsOffIsAWrongAnswer) {
  const Workload w = Parsed("gemm:M=4,N=8,K=16,dtype=f16");
  TensorSet tensors(w, 3);
  const std::vector<uint32_t> want = ReferenceOf(w, tensors);
  const float* ref = reinterpret_cast<const float*>(want.data());
  std::vector<uint16_t> got(tensors.output_size());
  for (size_t i = 0; i < got.size(); ++i) {
    got[i] = RoundToF16(ref[i]);
  }
  EXPECT_TRUE(CompareOutputs(w, got.data(), want.data(), got.size()).ok);
  // Three ulps above an element of magnitude about 1: beyond 2 ulps and far beyond the
  // accumulation term (1e-6 * 17).
  int64_t i = 0;
  while (std::abs(ref[i]) < 0.5 || std::abs(ref[i]) > 0.95) {
    ++i;
  }
  got[i] = static_cast<uint16_t>(RoundToF16(std::abs(ref[i])) + 3);
  got[i] |= std::signbit(ref[i]) ? 0x8000 : 0;
  CompareResult r = CompareOutputs(w, got.data(), want.data(), got.size());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_index, i);
}

TEST(TypedReferenceTest, AnI32OutputOffByOneIsAWrongAnswer) {
  const Workload w = Parsed("gemm:M=5,N=6,K=64,dtype=i8,epilogue=bias_relu");
  TensorSet tensors(w, 11);
  std::vector<uint32_t> got = ReferenceOf(w, tensors);
  const std::vector<uint32_t> want = got;
  EXPECT_TRUE(CompareOutputs(w, got.data(), want.data(), got.size()).ok);
  got[13] += 1;
  CompareResult r = CompareOutputs(w, got.data(), want.data(), got.size());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_bad_index, 13);
}

TEST(TypedReferenceTest, I32AccumulationWrapsLikeTheHardware) {
  // 70000 products of 255 x 127 sum to 2267 million, past 2^31: the i32 result wraps.
  const int64_t k = 70000;
  const Workload w = Parsed("gemm:M=1,N=1,K=70000,dtype=u8i8");
  std::vector<uint8_t> a(k, 255);
  std::vector<int8_t> b(k, 127);
  int32_t c = 0;
  RunReference(w, std::vector<const void*>{a.data(), b.data()}, &c);
  const int64_t exact = k * 255 * 127;
  EXPECT_EQ(c, static_cast<int32_t>(static_cast<uint32_t>(exact)));
  EXPECT_LT(c, 0);
}

TEST(TypedReferenceTest, U8I8ReadsActivationsUnsigned) {
  const Workload u8i8 = Parsed("gemm:M=1,N=1,K=2,dtype=u8i8");
  const Workload i8 = Parsed("gemm:M=1,N=1,K=2,dtype=i8");
  const uint8_t a[] = {200, 3};  // 200 unsigned; -56 when read as s8
  const int8_t b[] = {2, -1};
  int32_t unsigned_c = 0, signed_c = 0;
  RunReference(u8i8, std::vector<const void*>{a, b}, &unsigned_c);
  RunReference(i8, std::vector<const void*>{a, b}, &signed_c);
  EXPECT_EQ(unsigned_c, 200 * 2 - 3);
  EXPECT_EQ(signed_c, -56 * 2 - 3);
  TensorSet tensors(u8i8, 1);
  EXPECT_EQ(tensors.Inputs().size(), 2u);
}

TEST(TypedReferenceTest, RequantRoundsToNearestEvenAddsTheZeroPointAndSaturates) {
  const Workload w = Parsed("gemm:M=1,N=4,K=1,dtype=i8,epilogue=requant");
  const int8_t a[] = {1};
  const int8_t b[] = {5, 7, -128, 127};
  const float scale = 0.5f;  // 2.5, 3.5, -64, 63.5
  const int32_t zero_point = -3;
  int32_t c[4] = {};
  RunReference(w, std::vector<const void*>{a, b, &scale, &zero_point}, c);
  // The zero point is added before rounding: -0.5, 0.5, -67 and 60.5, to nearest even.
  EXPECT_EQ(c[0], 0);
  EXPECT_EQ(c[1], 0);
  EXPECT_EQ(c[2], -67);
  EXPECT_EQ(c[3], 60);
  const int8_t a_big[] = {127};
  const float big = 4.0f;  // 20, 28, -512 (saturates), 508 (saturates)
  RunReference(w, std::vector<const void*>{a_big, b, &big, &zero_point}, c);
  EXPECT_EQ(c[2], -128);
  EXPECT_EQ(c[3], 127);
}

TEST(TypedReferenceTest, ARequantisedOutputOneOffPassesAndTwoOffIsAWrongAnswer) {
  const Workload w = Parsed("gemm:M=16,N=32,K=256,dtype=u8i8,layout=NT,epilogue=requant");
  TensorSet tensors(w, 5);
  const std::vector<uint32_t> want = ReferenceOf(w, tensors);
  std::vector<int8_t> got(want.size());
  int saturated = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    got[i] = static_cast<int8_t>(static_cast<int32_t>(want[i]));
    saturated += got[i] == 127 || got[i] == -128;
  }
  // The seeded scale spreads the outputs over i8's range, saturating only the tails.
  EXPECT_LT(saturated, static_cast<int>(want.size()) / 10);
  EXPECT_TRUE(CompareOutputs(w, got.data(), want.data(), got.size()).ok);
  const size_t inside = static_cast<size_t>(
      std::find_if(got.begin(), got.end(), [](int8_t v) { return v > -100 && v < 100; }) -
      got.begin());
  ASSERT_LT(inside, got.size());
  got[inside] += 1;
  EXPECT_TRUE(CompareOutputs(w, got.data(), want.data(), got.size()).ok);
  got[inside] += 1;
  CompareResult r = CompareOutputs(w, got.data(), want.data(), got.size());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_index, static_cast<int64_t>(inside));
}

TEST(TypedReferenceTest, Fp8ReferenceAppliesBothScales) {
  const Workload w = Parsed("gemm:M=1,N=2,K=2,dtype=fp8e4m3,out=f32");
  const uint8_t a[] = {RoundToFp8(ElementType::kFp8E4m3, 1.5f),
                       RoundToFp8(ElementType::kFp8E4m3, -0.25f)};
  const uint8_t b[] = {
      RoundToFp8(ElementType::kFp8E4m3, 2.0f), RoundToFp8(ElementType::kFp8E4m3, 1.0f),
      RoundToFp8(ElementType::kFp8E4m3, 4.0f), RoundToFp8(ElementType::kFp8E4m3, 0.5f)};
  const float scale_a = 2.0f, scale_b = 3.0f;
  float c[2];
  RunReference(w, std::vector<const void*>{a, b, &scale_a, &scale_b}, c);
  EXPECT_EQ(c[0], 6.0f * (1.5f * 2.0f - 0.25f * 4.0f));
  EXPECT_EQ(c[1], 6.0f * (1.5f * 1.0f - 0.25f * 0.5f));
  // The seeded set's scales are in [2, 4) and its bound grows with their product.
  TensorSet tensors(w, 5);
  EXPECT_GE(tensors.scale_product(), 4.0);
  EXPECT_LT(tensors.scale_product(), 16.0);
  EXPECT_GT(OutputBound(w, 0.0, 0.0, tensors.scale_product()), OutputBound(w, 0.0, 0.0, 1.0));
}

TEST(TypedReferenceTest, NtGemmEqualsNnGemmOfTheTransposedB) {
  const Workload nt = Parsed("gemm:M=7,N=9,K=11,layout=NT,dtype=bf16,out=f32");
  const Workload nn = Parsed("gemm:M=7,N=9,K=11,dtype=bf16,out=f32");
  TensorSet tensors(nt, 2);
  std::vector<const void*> inputs = tensors.Inputs();
  const uint16_t* b_nt = static_cast<const uint16_t*>(inputs[1]);
  std::vector<uint16_t> b_nn(11 * 9);
  for (int j = 0; j < 9; ++j) {
    for (int k = 0; k < 11; ++k) {
      b_nn[k * 9 + j] = b_nt[j * 11 + k];
    }
  }
  std::vector<float> from_nt(63), from_nn(63);
  RunReference(nt, inputs, from_nt.data());
  RunReference(nn, std::vector<const void*>{inputs[0], b_nn.data()}, from_nn.data());
  EXPECT_EQ(from_nt, from_nn);
}

TEST(TypedReferenceTest, NhwcConvEqualsNchwConvInOtherLayouts) {
  const char* shape = "conv2d:N=2,C=5,H=6,W=7,K=3,R=3,S=3,stride=2,pad=1,epilogue=bias";
  const Workload nchw = Parsed(shape);
  const Workload nhwc = Parsed(std::string(shape) + ",layout=NHWC");
  const Conv2dShape& s = nchw.conv2d();
  TensorSet tensors(nchw, 4);
  std::vector<const float*> in = tensors.InputPointers();
  std::vector<float> want(tensors.output_size());
  RunReference(nchw, in, want.data());
  const std::vector<float> input = NchwToNhwc(in[0], s.n, s.c, s.h, s.w);
  const std::vector<float> weight = KcrsToKrsc(in[1], s);
  std::vector<float> got(tensors.output_size());
  RunReference(nhwc, {input.data(), weight.data(), in[2]}, got.data());
  EXPECT_EQ(NhwcToNchw(got.data(), s.n, s.k, s.p(), s.q()), want);
}

TEST(TypedReferenceTest, TypedInputsAreExactlyRepresentableAndDeterministicPerSeed) {
  const Workload w = Parsed("gemm:M=8,N=8,K=8,dtype=f16,epilogue=bias");
  TensorSet one(w, 9), again(w, 9), other(w, 10);
  const std::vector<const void*> a = one.Inputs(), b = again.Inputs(), c = other.Inputs();
  EXPECT_EQ(std::memcmp(a[0], b[0], 64 * 2), 0);
  EXPECT_NE(std::memcmp(a[0], c[0], 64 * 2), 0);
  // Every f16 value is the seeded f32 uniform rounded to nearest even.
  std::vector<float> uniform(64);
  FillRandom(uniform.data(), 64, 9 * 1000003u + 0);
  const uint16_t* halves = static_cast<const uint16_t*>(a[0]);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(halves[i], RoundToF16(uniform[i])) << i;
  }
  // The output starts as NaN, so a kernel that writes nothing is a wrong answer.
  EXPECT_TRUE(std::isnan(F16ToFloat(*static_cast<uint16_t*>(one.output_data()))));
  EXPECT_EQ(one.output_type(), ElementType::kF16);
}

TEST(TypedReferenceTest, Tf32InputsHaveZeroLow13Bits) {
  const Workload w = Parsed("gemm:M=4,N=4,K=4,dtype=tf32,epilogue=bias");
  TensorSet tensors(w, 1);
  const std::vector<const void*> in = tensors.Inputs();
  for (int arg = 0; arg < 2; ++arg) {
    const uint32_t* bits = static_cast<const uint32_t*>(in[arg]);
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(bits[i] & 0x1fff, 0u) << arg << " " << i;
    }
  }
  // The bias belongs to the f32 output, not to the tensor cores' inputs: not rounded.
  const uint32_t* bias = static_cast<const uint32_t*>(in[2]);
  int unrounded = 0;
  for (int i = 0; i < 4; ++i) {
    unrounded += (bias[i] & 0x1fff) != 0;
  }
  EXPECT_GT(unrounded, 0);
}

}  // namespace
}  // namespace tune
