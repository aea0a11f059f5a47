#include "common/target.h"

#include <gtest/gtest.h>

#include "common/host_cpu.h"

namespace tune {
namespace {

TEST(TargetTest, LlvmTargetIsCanonicalisedWithDefaults) {
  auto t = Target::Parse("llvm  -libs=openblas,dnnl -mcpu=znver4");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "llvm -mcpu=znver4 -threads=1 -libs=dnnl,openblas");
  EXPECT_EQ(t->DeviceKey(), "cpu/x86_64/znver4");
}

TEST(TargetTest, NativeResolvesToTheHostCpu) {
  auto t = Target::Parse("llvm -mcpu=native -threads=2");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Resolved().cpu, GetHostCpu().name);
  EXPECT_EQ(t->DeviceKey(), "cpu/x86_64/" + GetHostCpu().name);
  EXPECT_EQ(t->threads, 2);
}

TEST(TargetTest, GpuTargetsMapToTheirDeviceKeys) {
  auto cuda = Target::Parse("cuda -arch=sm_90 -libs=cublas");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->DeviceKey(), "cuda/sm_90");
  auto rocm = Target::Parse("rocm -mcpu=gfx90a");
  ASSERT_TRUE(rocm.ok()) << rocm.status();
  EXPECT_EQ(rocm->DeviceKey(), "rocm/gfx90a");
}

TEST(TargetTest, AnArchSpecificCudaTargetRunsOnWorkersOfItsBaseArch) {
  auto sm90a = Target::Parse("cuda -arch=sm_90a");
  ASSERT_TRUE(sm90a.ok()) << sm90a.status();
  EXPECT_EQ(sm90a->ToString(), "cuda -arch=sm_90a");
  EXPECT_EQ(sm90a->DeviceKey(), "cuda/sm_90");
}

TEST(TargetTest, RocmCodeObjectVersionIsParsedAndPrintedOnlyWhenNotTheDefault) {
  auto v5 = Target::Parse("rocm -mcpu=gfx90a");
  ASSERT_TRUE(v5.ok()) << v5.status();
  EXPECT_EQ(v5->code_object_version, 5);
  EXPECT_EQ(v5->ToString(), "rocm -mcpu=gfx90a");
  auto v4 = Target::Parse("rocm -mcpu=gfx942 -code-object-version=4");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->code_object_version, 4);
  EXPECT_EQ(v4->ToString(), "rocm -mcpu=gfx942 -code-object-version=4");
  auto again = Target::Parse(v4->ToString());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *v4);
  EXPECT_EQ(Target::Parse("rocm -mcpu=gfx90a -code-object-version=5")->ToString(),
            "rocm -mcpu=gfx90a");
}

TEST(TargetTest, CodeObjectVersionOutsideRocmOrUnsupportedIsRejectedNamingTheValues) {
  auto bad = Target::Parse("rocm -mcpu=gfx90a -code-object-version=6");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("-code-object-version=6"), std::string_view::npos);
  EXPECT_NE(bad.status().message().find("(4, 5)"), std::string_view::npos);
  for (const char* other :
       {"cuda -arch=sm_90 -code-object-version=5", "llvm -mcpu=znver4 -code-object-version=5",
        "rocm -mcpu=gfx90a -code-object-version=4 -code-object-version=5"}) {
    auto t = Target::Parse(other);
    EXPECT_FALSE(t.ok()) << "'" << other << "' was accepted";
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(TargetTest, ThreadBindingIsParsedAndPrintedOnlyWhenNotNone) {
  absl::StatusOr<Target> t = Target::Parse("llvm -mcpu=znver4 -threads=4 -bind=spread");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->bind, ThreadBinding::kSpread);
  EXPECT_EQ(t->ToString(), "llvm -mcpu=znver4 -threads=4 -bind=spread");
  EXPECT_EQ(t->DeviceKey(), "cpu/x86_64/znver4");
  EXPECT_EQ(Target::Parse("llvm -mcpu=znver4 -threads=4 -bind=close")->ToString(),
            "llvm -mcpu=znver4 -threads=4 -bind=close");
  EXPECT_EQ(Target::Parse("llvm -mcpu=znver4 -threads=4 -bind=none")->ToString(),
            "llvm -mcpu=znver4 -threads=4");
  absl::StatusOr<Target> bad = Target::Parse("llvm -threads=2 -bind=cores");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("-bind=cores is not a thread binding (none, close, "
                                        "spread)"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(Target::Parse("cuda -arch=sm_90 -bind=close").ok());
  EXPECT_FALSE(Target::Parse("llvm -bind=close -bind=spread").ok());
}

TEST(TargetTest, RejectsUnknownKindsOptionsAndLibraryNamesThatAreNotNames) {
  for (const char* bad : {"", "opencl", "llvm -threads=0", "llvm -threads=x", "llvm -foo=1",
                          "llvm -libs=cu-dnn", "llvm -libs=dnnl,", "cuda", "cuda -arch=90",
                          "rocm -mcpu=sm_90", "llvm mcpu=znver4", "llvm -mcpu=a -mcpu=b"}) {
    auto t = Target::Parse(bad);
    EXPECT_FALSE(t.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("accepted forms"), std::string_view::npos);
  }
}

TEST(TargetTest, WhichLibrariesExistIsNotTheParsersToSay) {
  // Syntax only: a catalog (codegen/templates/catalog.h) says which names exist for which kind.
  absl::StatusOr<Target> t = Target::Parse("llvm -libs=cudnn,my_ukernel");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "llvm -mcpu=native -threads=1 -libs=cudnn,my_ukernel");
}

TEST(TargetTest, NonAsciiBytesInAnArchAreInvalidArgumentNotACrash) {
  // Every byte above 0x7f is a negative plain char: the check must not pass it to isalnum as is.
  for (int byte = 0x80; byte <= 0xff; ++byte) {
    std::string text = "cuda -arch=sm_9";
    text.push_back(static_cast<char>(byte));
    auto t = Target::Parse(text);
    ASSERT_FALSE(t.ok()) << "byte " << byte << " was accepted";
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("is not of the form sm_<nn>"), std::string_view::npos)
        << t.status();
  }
}

}  // namespace
}  // namespace tune
