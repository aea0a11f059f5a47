#include "common/element_type.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"

namespace tune {
namespace {

constexpr ElementType kFp8Formats[] = {ElementType::kFp8E4m3, ElementType::kFp8E5m2,
                                       ElementType::kFp8E4m3Fnuz, ElementType::kFp8E5m2Fnuz};

TEST(ElementTypeTest, EveryDtypeAndElementTypeNameRoundTrips) {
  for (Dtype d : AllDtypes()) {
    std::optional<Dtype> parsed = ParseDtype(DtypeName(d));
    ASSERT_TRUE(parsed.has_value()) << DtypeName(d);
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(AllDtypes().size(), static_cast<size_t>(kNumDtypes));
  for (ElementType t :
       {ElementType::kF32, ElementType::kF16, ElementType::kBf16, ElementType::kI8,
        ElementType::kU8, ElementType::kI32, ElementType::kFp8E4m3, ElementType::kFp8E5m2,
        ElementType::kFp8E4m3Fnuz, ElementType::kFp8E5m2Fnuz}) {
    EXPECT_EQ(ParseElementType(ElementTypeName(t)), t) << ElementTypeName(t);
  }
  EXPECT_FALSE(ParseDtype("float16").has_value());
  EXPECT_FALSE(ParseDtype("fp8").has_value());
  EXPECT_EQ(DtypeNames(), "f32|tf32|f16|bf16|i8|u8i8|fp8e4m3|fp8e5m2|fp8e4m3fnuz|fp8e5m2fnuz");
}

TEST(ElementTypeTest, OutputDefaultsAndAcceptedSetsMatchTheTable) {
  EXPECT_EQ(DefaultOutputType(Dtype::kF32), ElementType::kF32);
  EXPECT_EQ(DefaultOutputType(Dtype::kTf32), ElementType::kF32);
  EXPECT_EQ(DefaultOutputType(Dtype::kF16), ElementType::kF16);
  EXPECT_EQ(DefaultOutputType(Dtype::kBf16), ElementType::kBf16);
  EXPECT_EQ(DefaultOutputType(Dtype::kI8), ElementType::kI32);
  EXPECT_EQ(DefaultOutputType(Dtype::kU8I8), ElementType::kI32);
  EXPECT_EQ(DefaultOutputType(Dtype::kFp8E4m3), ElementType::kBf16);
  EXPECT_EQ(DefaultOutputType(Dtype::kFp8E5m2Fnuz), ElementType::kBf16);
  // out=f32 is accepted for every float dtype; f16 is no output of bf16 and the reverse.
  for (Dtype d : AllDtypes()) {
    EXPECT_TRUE(AcceptsOutput(d, ElementType::kF32)) << DtypeName(d);
    EXPECT_TRUE(AcceptsOutput(d, DefaultOutputType(d))) << DtypeName(d);
  }
  EXPECT_FALSE(AcceptsOutput(Dtype::kBf16, ElementType::kF16));
  EXPECT_FALSE(AcceptsOutput(Dtype::kF16, ElementType::kBf16));
  EXPECT_FALSE(AcceptsOutput(Dtype::kF32, ElementType::kBf16));
  EXPECT_FALSE(AcceptsOutput(Dtype::kI8, ElementType::kI8));
  EXPECT_EQ(ActivationType(Dtype::kU8I8), ElementType::kU8);
  EXPECT_EQ(WeightType(Dtype::kU8I8), ElementType::kI8);
  EXPECT_EQ(ActivationType(Dtype::kTf32), ElementType::kF32);
  EXPECT_EQ(AccumulatorType(Dtype::kI8), ElementType::kI32);
  EXPECT_EQ(AccumulatorType(Dtype::kFp8E4m3), ElementType::kF32);
  // Scales: fp8 always; integers only with a float output; never f32/f16/bf16/tf32.
  EXPECT_TRUE(TakesScales(Dtype::kFp8E4m3, ElementType::kBf16));
  EXPECT_TRUE(TakesScales(Dtype::kFp8E5m2, ElementType::kF32));
  EXPECT_TRUE(TakesScales(Dtype::kI8, ElementType::kF32));
  EXPECT_FALSE(TakesScales(Dtype::kI8, ElementType::kI32));
  EXPECT_FALSE(TakesScales(Dtype::kBf16, ElementType::kBf16));
  EXPECT_FALSE(TakesScales(Dtype::kTf32, ElementType::kF32));
}

TEST(ElementTypeTest, DtypeSetNamesItsMembersInTableOrder) {
  DtypeSet s{Dtype::kBf16, Dtype::kF32, Dtype::kFp8E4m3};
  EXPECT_TRUE(s.Has(Dtype::kBf16));
  EXPECT_FALSE(s.Has(Dtype::kF16));
  EXPECT_EQ(s.Names(), "f32|bf16|fp8e4m3");
  EXPECT_EQ((s & DtypeSet{Dtype::kF16, Dtype::kBf16}).Names(), "bf16");
  EXPECT_TRUE(DtypeSet{}.empty());
  EXPECT_EQ(DtypeSet::All().ToVector().size(), static_cast<size_t>(kNumDtypes));
}

TEST(ElementTypeTest, Bf16RoundsHalfToEvenAndKeepsNaNQuiet) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even 1.
  EXPECT_EQ(RoundToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: ties up to the even one.
  EXPECT_EQ(RoundToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // Just above halfway rounds up.
  EXPECT_EQ(RoundToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(RoundToBf16(-2.0f), 0xc000);
  EXPECT_EQ(RoundToBf16(std::numeric_limits<float>::max()), 0x7f80);  // overflows to +inf
  // A signalling NaN whose payload lies only in the low half stays a NaN (quiet bit set).
  const float snan = std::bit_cast<float>(uint32_t{0x7f800001});
  const uint16_t nan_bits = RoundToBf16(snan);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(nan_bits)));
  EXPECT_NE(nan_bits & 0x0040, 0);
  EXPECT_TRUE(std::signbit(Bf16ToFloat(RoundToBf16(-std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = Bf16ToFloat(static_cast<uint16_t>(bits));
    if (!std::isnan(f)) {
      ASSERT_EQ(RoundToBf16(f), bits) << std::hex << bits;
    }
  }
}

TEST(ElementTypeTest, F16RoundTripsEveryCodeAndRoundsSubnormalsToNearestEven) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = F16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f)) {
      ASSERT_EQ(bits & 0x7c00, 0x7c00u) << std::hex << bits;
      ASSERT_NE(bits & 0x03ff, 0u) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(RoundToF16(f), bits) << std::hex << bits;
  }
  EXPECT_EQ(F16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(F16ToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(F16ToFloat(0x0001), std::ldexp(1.0f, -24));
  // Halfway between the two smallest subnormals: ties to the even (0x0002), and between 0 and
  // the smallest one to 0.
  EXPECT_EQ(RoundToF16(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(RoundToF16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(RoundToF16(-std::ldexp(1.0f, -25)), 0x8000);
  // 65520 is halfway between 65504 and 65536 (beyond the range): rounds to infinity.
  EXPECT_EQ(RoundToF16(65520.0f), 0x7c00);
  EXPECT_EQ(RoundToF16(65519.0f), 0x7bff);
  EXPECT_EQ(RoundToF16(-HUGE_VALF), 0xfc00);
  EXPECT_TRUE(std::isnan(F16ToFloat(RoundToF16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(ElementTypeTest, Tf32ZeroesTheLow13BitsRoundingToNearestEven) {
  const float one_plus_half_ulp = 1.0f + std::ldexp(1.0f, -11);  // tie: to even, 1
  EXPECT_EQ(RoundToTf32(one_plus_half_ulp), 1.0f);
  const float three_half_ulps = 1.0f + 3 * std::ldexp(1.0f, -11);  // tie: up to 1 + 2^-9
  EXPECT_EQ(RoundToTf32(three_half_ulps), 1.0f + std::ldexp(1.0f, -9));
  for (float f : {0.1f, -0.7f, 3.14159f, 1e-30f, 12345.678f}) {
    const float r = RoundToTf32(f);
    EXPECT_EQ(std::bit_cast<uint32_t>(r) & 0x1fff, 0u) << f;
    EXPECT_LE(std::fabs(r - f), std::ldexp(std::fabs(f), -11)) << f;
  }
  EXPECT_TRUE(std::isnan(RoundToTf32(std::numeric_limits<float>::quiet_NaN())));
}

TEST(ElementTypeTest, Fp8E4m3DecodesAll256CodesAndOnly0x7fAnd0xffAreNaN) {
  int nans = 0;
  for (uint32_t bits = 0; bits < 256; ++bits) {
    const float f = Fp8ToFloat(ElementType::kFp8E4m3, static_cast<uint8_t>(bits));
    EXPECT_FALSE(std::isinf(f)) << bits;
    if (std::isnan(f)) {
      ++nans;
      EXPECT_TRUE(bits == 0x7f || bits == 0xff) << bits;
    }
  }
  EXPECT_EQ(nans, 2);
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E4m3, 0x7e), 448.0f);
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E4m3, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E4m3, 0x38), 1.0f);
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E5m2, 0x7b), 57344.0f);
  EXPECT_TRUE(std::isinf(Fp8ToFloat(ElementType::kFp8E5m2, 0x7c)));
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E5m2, 0x3c), 1.0f);
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E4m3Fnuz, 0x7f), 240.0f);
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E4m3Fnuz, 0x40), 1.0f);
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E5m2Fnuz, 0x7f), 57344.0f);
  EXPECT_EQ(Fp8ToFloat(ElementType::kFp8E5m2Fnuz, 0x40), 1.0f);
}

TEST(ElementTypeTest, Fp8RoundTripsEveryFiniteCodeOfEachFormat) {
  for (ElementType format : kFp8Formats) {
    for (uint32_t bits = 0; bits < 256; ++bits) {
      const float f = Fp8ToFloat(format, static_cast<uint8_t>(bits));
      if (std::isnan(f) || std::isinf(f)) {
        continue;
      }
      EXPECT_EQ(RoundToFp8(format, f), bits) << ElementTypeName(format) << " " << bits;
    }
  }
}

TEST(ElementTypeTest, Fp8TiesRoundToEvenAndOverflowSaturatesToMaxFinite) {
  // E4M3: 1.0625 is halfway between 1 (0x38, even) and 1.125 (0x39).
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E4m3, 1.0625f), 0x38);
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E4m3, 1.1875f), 0x3a);  // between 0x39 and 0x3a: even
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E4m3, 1000.0f), 0x7e);
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E4m3, -1e30f), 0xfe);
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E4m3, 464.0f), 0x7e);  // a tie beyond 448 saturates
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E5m2, 1e6f), 0x7b);
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E4m3Fnuz, 300.0f), 0x7f);
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E4m3, std::numeric_limits<float>::quiet_NaN()), 0x7f);
  // Below half the smallest subnormal: zero of the value's sign.
  EXPECT_EQ(RoundToFp8(ElementType::kFp8E4m3, -std::ldexp(1.0f, -11)), 0x80);
}

TEST(ElementTypeTest, FnuzHasNoNegativeZero) {
  for (ElementType format : {ElementType::kFp8E4m3Fnuz, ElementType::kFp8E5m2Fnuz}) {
    EXPECT_EQ(RoundToFp8(format, -0.0f), 0x00) << ElementTypeName(format);
    EXPECT_EQ(RoundToFp8(format, -std::ldexp(1.0f, -30)), 0x00) << ElementTypeName(format);
    EXPECT_TRUE(std::isnan(Fp8ToFloat(format, 0x80))) << ElementTypeName(format);
    EXPECT_EQ(RoundToFp8(format, std::numeric_limits<float>::quiet_NaN()), 0x80);
  }
}

TEST(ElementTypeTest, EncodeAndDecodeWrapIntegersAndRoundFloats) {
  int8_t i8[2];
  EncodeElement(ElementType::kI8, 130, i8, 0);
  EncodeElement(ElementType::kI8, -3.4, i8, 1);
  EXPECT_EQ(DecodeElement(ElementType::kI8, i8, 0), -126);
  EXPECT_EQ(DecodeElement(ElementType::kI8, i8, 1), -3);
  int32_t i32[1];
  EncodeElement(ElementType::kI32, 2147483648.0, i32, 0);
  EXPECT_EQ(i32[0], std::numeric_limits<int32_t>::min());
  uint8_t u8[1];
  EncodeElement(ElementType::kU8, 200, u8, 0);
  EXPECT_EQ(DecodeElement(ElementType::kU8, u8, 0), 200);
  uint16_t bf16[1];
  EncodeElement(ElementType::kBf16, 1.0 + std::ldexp(1.0, -8), bf16, 0);
  EXPECT_EQ(bf16[0], 0x3f80);
}

TEST(ElementTypeTest, UlpIsTheSpacingOfEachFormatAtAMagnitude) {
  EXPECT_EQ(UlpOf(ElementType::kBf16, 1.0), std::ldexp(1.0, -7));
  EXPECT_EQ(UlpOf(ElementType::kBf16, 1.99), std::ldexp(1.0, -7));
  EXPECT_EQ(UlpOf(ElementType::kBf16, 2.0), std::ldexp(1.0, -6));
  EXPECT_EQ(UlpOf(ElementType::kF16, 1.0), std::ldexp(1.0, -10));
  EXPECT_EQ(UlpOf(ElementType::kF16, 1e-7), std::ldexp(1.0, -24));  // subnormal spacing
  EXPECT_EQ(UlpOf(ElementType::kF32, 1.0), std::ldexp(1.0, -23));
  EXPECT_EQ(UlpOf(ElementType::kI32, 1e6), 1.0);
  EXPECT_EQ(UlpOf(ElementType::kFp8E4m3, 1.0), 0.125);
}

}  // namespace
}  // namespace tune
