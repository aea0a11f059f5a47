// conv2d.rocm.mfma and conv2d.rocm.wmma, NHWC convolutions on gemm.rocm.mfma's kernel: the
// implicit GEMMs on the simulator against the reference (padding, strides, the 3-channel stem
// read element by element, i8 and FNUZ fp8 on gfx942; f16, bf16, i8 and u8i8 on gfx1100's WMMA),
// where each applies, and their code objects inspected (the MFMA / WMMA instructions present, no
// scratch). No AMD GPU has run these kernels.
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"
#include "tests/codegen/templates/gpu_template_check.h"
#include "tests/codegen/templates/hsaco_inspect.h"

namespace tune {
namespace {

using testing::GpuTemplate;

Target Rocm(const std::string& arch) { return *Target::Parse("rocm -mcpu=" + arch); }

Config Knobs(int64_t bm, int64_t bn, int64_t bk, int64_t waves_m, int64_t waves_n, int64_t inst,
             int64_t stages, int64_t copy) {
  return {{"bm", bm},           {"bn", bn},     {"bk", bk},         {"waves_m", waves_m},
          {"waves_n", waves_n}, {"inst", inst}, {"stages", stages}, {"copy", copy},
          {"raster", 1},        {"gridk", 1}};
}

void CheckOnSimulator(const std::string& arch, const std::string& text, int random,
                      std::vector<Config> extra = {}) {
  testing::CheckTemplateOnSimulator(arch == "gfx1100" ? "conv2d.rocm.wmma" : "conv2d.rocm.mfma",
                                    Rocm(arch), text, random, std::move(extra));
}

// --- conv2d.rocm.mfma ------------------------------------------------------------------------

TEST(Conv2dRocmMfmaSim, NhwcConvolutionsMatchTheReferenceAsImplicitGemms) {
  CheckOnSimulator("gfx942",
                   "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16", 2,
                   {Knobs(64, 32, 32, 2, 1, 32, 2, 16), Knobs(32, 32, 64, 2, 2, 16, 1, 8)});
  CheckOnSimulator(
      "gfx90a",
      "conv2d:N=2,C=8,H=7,W=7,K=16,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=f16,epilogue=bias_relu",
      2);
}

TEST(Conv2dRocmMfmaSim, ThreeChannelStemAndIntegerAndFp8ConvolutionsMatchTheReference) {
  // C = 3: 6-byte windows per tap, read element by element.
  CheckOnSimulator("gfx942",
                   "conv2d:N=1,C=3,H=9,W=9,K=16,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=bf16", 1);
  CheckOnSimulator("gfx942",
                   "conv2d:N=1,C=32,H=6,W=6,K=32,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=i8", 1);
  CheckOnSimulator(
      "gfx942", "conv2d:N=1,C=32,H=5,W=5,K=16,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=fp8e4m3fnuz",
      1);
}

TEST(Conv2dRocmMfma, AppliesToNhwcLayersOnMfmaArchsOnly) {
  const Workload nhwc = *Workload::Parse(
      "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16");
  EXPECT_NE(GpuTemplate("conv2d.rocm.mfma", Rocm("gfx942"), nhwc), nullptr);
  EXPECT_EQ(GpuTemplate("conv2d.rocm.mfma", Rocm("gfx1100"), nhwc), nullptr);
  const Workload nchw = *Workload::Parse("conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1");
  EXPECT_EQ(GpuTemplate("conv2d.rocm.mfma", Rocm("gfx942"), nchw), nullptr);
}

TEST(Conv2dRocmMfmaCodeObject, AResNetLayerHoldsMfmaInstructionsAndNeedsNoScratch) {
  if (!testing::HaveLlvmObjectTools()) {
    GTEST_SKIP() << "llvm-readelf-19 / llvm-objdump-19 are not installed";
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-mfma-conv-hsaco-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  testing::ExpectMatrixKernelWithoutScratch(
      *dir, "conv2d.rocm.mfma", "gfx942",
      "conv2d:N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16",
      "v_mfma_f32_32x32x8_bf16");
  testing::ExpectMatrixKernelWithoutScratch(
      *dir, "conv2d.rocm.mfma", "gfx90a",
      "conv2d:N=8,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=f16",
      "v_mfma_f32_32x32x8f16");  // 1568 pixels: 26 tiles of 128 x 128, each split 6 ways
}

// --- conv2d.rocm.wmma -------------------------------------------------------------------------

TEST(Conv2dRocmWmmaSim, NhwcConvolutionsMatchTheReferenceOnWmmaTiles) {
  CheckOnSimulator("gfx1100",
                   "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16", 2,
                   {Knobs(32, 32, 32, 2, 1, 16, 2, 16)});
  CheckOnSimulator(
      "gfx1100",
      "conv2d:N=2,C=8,H=7,W=7,K=16,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=f16,epilogue=bias_relu",
      2);
  // The 3-channel stem element by element, and the integer dtypes (i32 sums).
  CheckOnSimulator("gfx1100",
                   "conv2d:N=1,C=3,H=9,W=9,K=16,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=f16", 1);
  CheckOnSimulator("gfx1100",
                   "conv2d:N=1,C=32,H=6,W=6,K=32,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=i8", 1);
  CheckOnSimulator("gfx1100",
                   "conv2d:N=1,C=16,H=5,W=5,K=16,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=u8i8", 1);
}

TEST(Conv2dRocmWmma, AppliesToNhwcLayersOnGfx1100Only) {
  const Workload nhwc = *Workload::Parse(
      "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16");
  EXPECT_NE(GpuTemplate("conv2d.rocm.wmma", Rocm("gfx1100"), nhwc), nullptr);
  EXPECT_EQ(GpuTemplate("conv2d.rocm.wmma", Rocm("gfx942"), nhwc), nullptr);
  const Workload nchw = *Workload::Parse("conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1");
  EXPECT_EQ(GpuTemplate("conv2d.rocm.wmma", Rocm("gfx1100"), nchw), nullptr);
}

TEST(Conv2dRocmWmmaCodeObject, AResNetLayerHoldsWmmaInstructionsAndNeedsNoScratch) {
  if (!testing::HaveLlvmObjectTools()) {
    GTEST_SKIP() << "llvm-readelf-19 / llvm-objdump-19 are not installed";
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-wmma-conv-hsaco-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  testing::ExpectMatrixKernelWithoutScratch(
      *dir, "conv2d.rocm.wmma", "gfx1100",
      "conv2d:N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=f16",
      "v_wmma_f32_16x16x16_f16");
  testing::ExpectMatrixKernelWithoutScratch(
      *dir, "conv2d.rocm.wmma", "gfx1100",
      "conv2d:N=8,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=i8",
      "v_wmma_i32_16x16x16_iu8");
}

}  // namespace
}  // namespace tune
