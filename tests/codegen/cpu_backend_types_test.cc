// Storage types through the x86-64 backend: kernels that convert float32 to bfloat16 and
// float16, decode every 8-bit float code, and widen int8 and uint8, each checked element by
// element against common/element_type.h (the reference's conversions), in scalar and vector
// code, with no call to a compiler runtime library.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "codegen/llvm/cpu_backend.h"
#include "common/element_type.h"
#include "common/files.h"
#include "common/host_cpu.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/cpu_backend_build.h"

namespace tune {
namespace {

using ir::Buffer;
using ir::Cast;
using ir::Expr;
using ir::For;
using ir::Load;
using ir::LoopKind;
using ir::LoweredFunc;
using ir::MemoryScope;
using ir::Store;
using ir::Type;
using ir::Var;
using testing::Build;
using testing::SharedObject;

using ConvertKernel = int32_t(void*, void*);

// out[i] = Cast(out type, in[i]) for i < n, `lanes` at a time (1: scalar code).
LoweredFunc ConvertFunc(const std::string& name, Type in_type, Type out_type, int64_t n,
                        int lanes) {
  Buffer in("in", MemoryScope::kGlobal, in_type), out("out", MemoryScope::kGlobal, out_type);
  Var i("i");
  ir::Stmt body;
  if (lanes == 1) {
    body = For::Make(i, 0, n, LoopKind::kSerial,
                     Store::Make(out, i, Cast::Make(out_type, Load::Make(in, i))));
  } else {
    Var v("v");
    Expr at = i * lanes + v;
    body = For::Make(i, 0, n / lanes, LoopKind::kSerial,
                     For::Make(v, 0, lanes, LoopKind::kVectorized,
                               Store::Make(out, at, Cast::Make(out_type, Load::Make(in, at)))));
  }
  return LoweredFunc{name, {in, out}, body};
}

class TypedKernels : public ::testing::Test {
 protected:
  ConvertKernel* Kernel(Type in_type, Type out_type, int64_t n, int lanes,
                        const CpuCodegenOptions& options = {}) {
    const std::string name = "convert" + std::to_string(next_++);
    absl::StatusOr<std::unique_ptr<SharedObject>> so =
        Build({ConvertFunc(name, in_type, out_type, n, lanes)}, options, dir_, name);
    EXPECT_TRUE(so.ok()) << so.status();
    if (!so.ok()) {
      return nullptr;
    }
    libraries_.push_back(*std::move(so));
    return libraries_.back()->Get<ConvertKernel>(name.c_str());
  }

  TempDir dir_ = TempDir::Create("tune-types-test-").value();
  std::vector<std::unique_ptr<SharedObject>> libraries_;
  int next_ = 0;
};

// Ties, NaN, infinities, subnormals and random bit patterns: 16 * 64 floats.
std::vector<float> ConversionInputs() {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f + std::ldexp(1.0f, -8),
                               1.0f + 3 * std::ldexp(1.0f, -8),
                               1.0f + std::ldexp(1.0f, -11),
                               65504.0f,
                               65520.0f,
                               std::ldexp(1.0f, -25),
                               3 * std::ldexp(1.0f, -25),
                               std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::denorm_min(),
                               HUGE_VALF,
                               -HUGE_VALF,
                               std::numeric_limits<float>::quiet_NaN(),
                               std::bit_cast<float>(uint32_t{0x7f800001}),
                               -std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 gen(7);
  while (values.size() < 16 * 64) {
    values.push_back(std::bit_cast<float>(static_cast<uint32_t>(gen())));
  }
  return values;
}

// `out` against RoundToBf16 of `in`, element by element; with `flush_subnormals`, a subnormal
// input's result is the zero of its sign (vcvtneps2bf16).
void ExpectBf16Rounding(const std::vector<float>& in, const std::vector<uint16_t>& out,
                        bool flush_subnormals, const std::string& what) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (std::isnan(in[i])) {
      EXPECT_TRUE(std::isnan(Bf16ToFloat(out[i]))) << what << " " << i;
      EXPECT_EQ(out[i] & 0x8000, RoundToBf16(in[i]) & 0x8000) << what << " " << i;
    } else if (flush_subnormals && std::fpclassify(in[i]) == FP_SUBNORMAL) {
      EXPECT_EQ(out[i], std::signbit(in[i]) ? 0x8000 : 0) << what << " value " << in[i];
    } else {
      EXPECT_EQ(out[i], RoundToBf16(in[i])) << what << " value " << in[i];
    }
  }
}

TEST_F(TypedKernels, Bf16StoresRoundToNearestEvenAndKeepNaNsQuietInScalarAndVectorCode) {
  const std::vector<float> in = ConversionInputs();
  for (int lanes : {1, 8, 16}) {  // x86-64 has no bfloat16 instruction: integer arithmetic
    ConvertKernel* kernel =
        Kernel(Type::Float32(), Type::BFloat16(), in.size(), lanes, {.cpu = "x86-64"});
    ASSERT_NE(kernel, nullptr);
    std::vector<uint16_t> out(in.size());
    ASSERT_EQ(kernel(const_cast<float*>(in.data()), out.data()), 0);
    ExpectBf16Rounding(in, out, false, "x86-64, lanes " + std::to_string(lanes));
  }
}

TEST_F(TypedKernels, Bf16StoresOnAvx512Bf16RoundToNearestEvenAndFlushSubnormalsToZero) {
  if (!GetHostCpu().HasFeature("avx512bf16") || !GetHostCpu().HasFeature("avx512vl")) {
    GTEST_SKIP() << "this CPU has no AVX512-BF16 with AVX512-VL";
  }
  const std::vector<float> in = ConversionInputs();
  ASSERT_GT(std::count_if(in.begin(), in.end(),
                          [](float x) { return std::fpclassify(x) == FP_SUBNORMAL; }),
            1);
  for (int lanes : {8, 16}) {  // vcvtneps2bf16 of 256 and 512 bits
    ConvertKernel* kernel = Kernel(Type::Float32(), Type::BFloat16(), in.size(), lanes);
    ASSERT_NE(kernel, nullptr);
    std::vector<uint16_t> out(in.size());
    ASSERT_EQ(kernel(const_cast<float*>(in.data()), out.data()), 0);
    ExpectBf16Rounding(in, out, true, "native, lanes " + std::to_string(lanes));
  }
}

TEST_F(TypedKernels, F16StoresRoundToNearestEvenAndF16LoadsAreExact) {
  const std::vector<float> in = ConversionInputs();
  ConvertKernel* narrow = Kernel(Type::Float32(), Type::Float16(), in.size(), 8);
  ASSERT_NE(narrow, nullptr);
  std::vector<uint16_t> halves(in.size());
  ASSERT_EQ(narrow(const_cast<float*>(in.data()), halves.data()), 0);
  for (size_t i = 0; i < in.size(); ++i) {
    if (!std::isnan(in[i])) {
      EXPECT_EQ(halves[i], RoundToF16(in[i])) << in[i];
    }
  }
  std::vector<uint16_t> codes(65536);
  for (uint32_t c = 0; c < codes.size(); ++c) {
    codes[c] = static_cast<uint16_t>(c);
  }
  ConvertKernel* widen = Kernel(Type::Float16(), Type::Float32(), codes.size(), 8);
  ASSERT_NE(widen, nullptr);
  std::vector<float> values(codes.size());
  ASSERT_EQ(widen(codes.data(), values.data()), 0);
  for (uint32_t c = 0; c < codes.size(); ++c) {
    const float want = F16ToFloat(static_cast<uint16_t>(c));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(values[c])) << c;
    } else {
      EXPECT_EQ(values[c], want) << c;
    }
  }
}

TEST_F(TypedKernels, Fp8LoadsDecodeAll256CodesOfEachFormat) {
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) {
    codes[c] = static_cast<uint8_t>(c);
  }
  for (ElementType format : {ElementType::kFp8E4m3, ElementType::kFp8E5m2,
                             ElementType::kFp8E4m3Fnuz, ElementType::kFp8E5m2Fnuz}) {
    for (int lanes : {1, 16}) {
      ConvertKernel* kernel = Kernel(Type::Of(format), Type::Float32(), 256, lanes);
      ASSERT_NE(kernel, nullptr);
      std::vector<float> values(256);
      ASSERT_EQ(kernel(codes.data(), values.data()), 0);
      for (int c = 0; c < 256; ++c) {
        const float want = Fp8ToFloat(format, static_cast<uint8_t>(c));
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(values[c])) << ElementTypeName(format) << " " << c;
        } else {
          EXPECT_EQ(values[c], want) << ElementTypeName(format) << " code " << c;
        }
      }
    }
  }
}

TEST_F(TypedKernels, Int8AndUint8WidenAndInt32Wraps) {
  std::vector<uint8_t> bytes(256);
  for (int c = 0; c < 256; ++c) {
    bytes[c] = static_cast<uint8_t>(c);
  }
  ConvertKernel* signed_widen = Kernel(Type::Int8(), Type::Int32(), 256, 16);
  ConvertKernel* unsigned_widen = Kernel(Type::UInt8(), Type::Int32(), 256, 1);
  ConvertKernel* narrow = Kernel(Type::Int32(), Type::Int8(), 256, 8);
  ASSERT_TRUE(signed_widen != nullptr && unsigned_widen != nullptr && narrow != nullptr);
  std::vector<int32_t> s(256), u(256);
  ASSERT_EQ(signed_widen(bytes.data(), s.data()), 0);
  ASSERT_EQ(unsigned_widen(bytes.data(), u.data()), 0);
  std::vector<int32_t> wide(256);
  for (int c = 0; c < 256; ++c) {
    EXPECT_EQ(s[c], static_cast<int8_t>(c));
    EXPECT_EQ(u[c], c);
    wide[c] = 1000 * c + 3;
  }
  std::vector<int8_t> back(256);
  ASSERT_EQ(narrow(wide.data(), back.data()), 0);
  for (int c = 0; c < 256; ++c) {
    EXPECT_EQ(back[c], static_cast<int8_t>(1000 * c + 3));
  }
}

TEST(TypedCodegen, ConversionsCallNoCompilerRuntimeFunction) {
  std::vector<LoweredFunc> funcs = {
      ConvertFunc("to_bf16", Type::Float32(), Type::BFloat16(), 64, 8),
      ConvertFunc("from_bf16", Type::BFloat16(), Type::Float32(), 64, 8),
      ConvertFunc("from_fp8", Type::Of(ElementType::kFp8E4m3), Type::Float32(), 64, 8),
      ConvertFunc("from_fp8_scalar", Type::Of(ElementType::kFp8E5m2), Type::Float32(), 64, 1)};
  for (LoweredFunc& f : funcs) {
    absl::StatusOr<LoweredFunc> lowered = Lower(f);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    f = *lowered;
  }
  absl::StatusOr<std::string> assembly = EmitCpuAssembly(funcs, {.cpu = "x86-64"});
  ASSERT_TRUE(assembly.ok()) << assembly.status();
  // A bfloat16 fptrunc becomes __truncsfbf2 on x86-64 without AVX512-BF16, which Debian 12's
  // libgcc lacks: the backend converts with integer arithmetic instead.
  EXPECT_THAT(*assembly, ::testing::Not(::testing::HasSubstr("__trunc")));
  EXPECT_THAT(*assembly, ::testing::Not(::testing::HasSubstr("__extend")));
  EXPECT_THAT(*assembly, ::testing::Not(::testing::HasSubstr("call")));
}

TEST(TypedCodegen, Bf16StoresOfWholeVectorsUseTheConversionInstructionWhereTheCpuHasIt) {
  // The assembly of one conversion loop of `lanes` for `cpu`.
  auto assembly = [](int lanes, const std::string& cpu) {
    absl::StatusOr<LoweredFunc> f =
        Lower(ConvertFunc("to_bf16", Type::Float32(), Type::BFloat16(), 64, lanes));
    EXPECT_TRUE(f.ok()) << f.status();
    absl::StatusOr<std::string> text = EmitCpuAssembly({*f}, {.cpu = cpu});
    EXPECT_TRUE(text.ok()) << text.status();
    return text.value_or("");
  };
  // 16 floats in a zmm become a ymm of bfloat16; 8 in a ymm an xmm.
  EXPECT_THAT(assembly(16, "cooperlake"), ::testing::ContainsRegex("vcvtneps2bf16.*%ymm"));
  EXPECT_THAT(assembly(8, "cooperlake"), ::testing::ContainsRegex("vcvtneps2bf16.*%xmm"));
  EXPECT_THAT(assembly(1, "cooperlake"), ::testing::Not(::testing::HasSubstr("vcvtneps2bf16")));
  EXPECT_THAT(assembly(16, "skylake-avx512"),
              ::testing::Not(::testing::HasSubstr("vcvtneps2bf16")));
}

}  // namespace
}  // namespace tune

namespace tune {
namespace {

// out = Interleave(in[0 .. lanes), in[lanes .. 2 lanes), ...) of `count` vectors.
ir::LoweredFunc InterleaveFunc(const std::string& name, ir::Type type, int count, int lanes) {
  ir::Buffer in("in", ir::MemoryScope::kGlobal, type), out("out", ir::MemoryScope::kGlobal, type);
  std::vector<ir::Expr> vectors;
  for (int v = 0; v < count; ++v) {
    vectors.push_back(ir::Load::Make(in, ir::Expr(int64_t{v} * lanes), lanes));
  }
  return ir::LoweredFunc{
      name,
      {in, out},
      ir::Store::Make(out, ir::Expr(int64_t{0}), ir::Shuffle::Interleave(std::move(vectors)))};
}

// Interleaving vectors (two, three: an odd one padded while concatenating, four) in bf16 and
// int8, the way VNNI panels interleave rows of K.
TEST(ShuffleCodegen, InterleavesTheLanesOfEveryVector) {
  TempDir dir = TempDir::Create("tune-shuffle-test-").value();
  struct Case {
    ir::Type type;
    int count, lanes;
  };
  for (const Case& c : {Case{ir::Type::BFloat16(), 2, 16}, Case{ir::Type::BFloat16(), 3, 16},
                        Case{ir::Type::Int8(), 4, 16}, Case{ir::Type::Int8(), 4, 64}}) {
    const std::string name = "interleave" + std::to_string(c.count) + "x" + std::to_string(c.lanes);
    absl::StatusOr<std::unique_ptr<SharedObject>> so =
        Build({InterleaveFunc(name, c.type, c.count, c.lanes)}, {}, dir, name);
    ASSERT_TRUE(so.ok()) << so.status();
    auto* kernel = (*so)->Get<int32_t(void*, void*)>(name.c_str());
    const int total = c.count * c.lanes;
    const int bytes = c.type.Bytes();
    std::vector<uint8_t> in(static_cast<size_t>(total * bytes)), out(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = static_cast<uint8_t>(i * 7 + 1);
    }
    ASSERT_EQ(kernel(in.data(), out.data()), 0);
    for (int l = 0; l < c.lanes; ++l) {
      for (int v = 0; v < c.count; ++v) {
        const int from = v * c.lanes + l, to = l * c.count + v;
        for (int b = 0; b < bytes; ++b) {
          ASSERT_EQ(out[to * bytes + b], in[from * bytes + b]) << name << " lane " << to;
        }
      }
    }
  }
}

// out (16 x int32) = the 64 bytes of `in` read as int32, plus one; then those words read back
// as bytes into the next 64 bytes of `in`'s copy `back` (a bitcast each way).
TEST(ReinterpretCodegen, ReadsBytesAsWordsAndWordsAsBytes) {
  TempDir dir = TempDir::Create("tune-reinterpret-test-").value();
  ir::Buffer in("in", ir::MemoryScope::kGlobal, ir::Type::Int8());
  ir::Buffer out("out", ir::MemoryScope::kGlobal, ir::Type::Int32());
  ir::Buffer back("back", ir::MemoryScope::kGlobal, ir::Type::Int8());
  const ir::Expr zero(int64_t{0});
  const ir::Expr words = ir::Reinterpret::Make(ir::Type::Int32(16), ir::Load::Make(in, zero, 64));
  const ir::LoweredFunc func{
      "reinterpret",
      {in, out, back},
      ir::Block::Make(
          {ir::Store::Make(out, zero,
                           words + ir::BroadcastTo(ir::Cast::Make(ir::Type::Int32(), 1), 16)),
           ir::Store::Make(
               back, zero,
               ir::Reinterpret::Make(ir::Type::Int8(64), ir::Load::Make(out, zero, 16)))})};
  absl::StatusOr<std::unique_ptr<SharedObject>> so = Build({func}, {}, dir, "reinterpret");
  ASSERT_TRUE(so.ok()) << so.status();
  auto* kernel = (*so)->Get<int32_t(void*, void*, void*)>("reinterpret");
  std::vector<int8_t> bytes(64), bytes_back(64);
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<int8_t>(i * 37 - 100);
  }
  std::vector<int32_t> result(16);
  ASSERT_EQ(kernel(bytes.data(), result.data(), bytes_back.data()), 0);
  for (int w = 0; w < 16; ++w) {
    int32_t expected;
    std::memcpy(&expected, bytes.data() + 4 * w, 4);
    EXPECT_EQ(result[w], expected + 1) << "word " << w;
    int32_t round_trip;
    std::memcpy(&round_trip, bytes_back.data() + 4 * w, 4);
    EXPECT_EQ(round_trip, expected + 1) << "word " << w;
  }
}

}  // namespace
}  // namespace tune
