// conv2d.cuda.wgmma's window pipeline (knob window, conv_window.h): narrow-channel convolutions
// whose input rows a block stages whole and whose A stages it builds in shared memory, on the
// simulator against the reference (several tiles per block, several tiles per output row, rows
// outside the image, strides, dilation, the output staged or not, two blocks per
// multiprocessor), and where the space offers it.
#include <cstdint>
#include <string>

#include "codegen/templates/template.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"
#include "tests/codegen/templates/wgmma_sim_check.h"
#include "tests/codegen/templates/wgmma_test_configs.h"

namespace tune {
namespace {

using testing::GpuTemplate;
using ::testing::HasSubstr;
using testing::wgmma::CheckOnAGpuOf;
using testing::wgmma::Knobs;
using testing::wgmma::Sm90a;

constexpr char kWgmma[] = "conv2d.cuda.wgmma";
constexpr char kStem[] =
    "conv2d:N=8,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16";

// A window config of bm x bn tiles (one warpgroup), the output staged or not, compiled for
// `blocks` blocks per multiprocessor.
Config Window(int64_t bm, int64_t bn, int64_t stage_c = 0, int64_t blocks = 1) {
  Config c = Knobs(bm, bn, 1, 1, 3, 2, 1, 1, 1, stage_c);
  c["window"] = 1;
  c["blocks"] = blocks;
  return c;
}

TEST(Conv2dCudaWindowSim, StemWindowsBuiltFromStagedRowsMatchTheReference) {
  // 7x7, stride 2, pad 3, three channels (147 taps: three steps, the last part zeros): 20 tiles
  // of one output row over 3 and 7 blocks, the windows of the first and last rows and columns
  // reaching into the padding.
  const std::string stem =
      "conv2d:N=2,C=3,H=20,W=20,K=16,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16,out=f32";
  CheckOnAGpuOf(3, stem, Window(64, 32));
  CheckOnAGpuOf(7, stem, Window(128, 32, 0, 2));
  // The output staged in shared memory, bf16 out, two blocks per multiprocessor.
  CheckOnAGpuOf(4, "conv2d:N=2,C=3,H=20,W=20,K=32,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16",
                Window(64, 32, 1, 2));
}

TEST(Conv2dCudaWindowSim, RowsOfSeveralTilesDilationAndNarrowOutputsMatchTheReference) {
  // 150 output pixels a row: three tiles of 64 (the last of 22), a bias and ReLU, f16.
  CheckOnAGpuOf(2,
                "conv2d:N=1,C=3,H=5,W=150,K=24,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=f16,"
                "epilogue=bias_relu",
                Window(64, 32));
  // Five channels, 5x5 taps of dilation 2 and stride 2 over an odd image (rows 10 bytes: copies
  // of one element), 40 output channels in a tile of 48, staged.
  CheckOnAGpuOf(3,
                "conv2d:N=1,C=5,H=13,W=11,K=40,R=5,S=5,stride=2,pad=3,dilation=2,layout=NHWC,"
                "dtype=bf16,epilogue=bias",
                Window(64, 48, 1));
}

TEST(Conv2dCudaWindow, IsOfferedForNarrowChannelsOnlyAndLeadsTheirSeeds) {
  const Workload stem = *Workload::Parse(kStem);
  const KernelTemplate* tpl = GpuTemplate(kWgmma, Sm90a(), stem);
  ASSERT_NE(tpl, nullptr);
  const ConfigSpace space = tpl->space(stem, Sm90a());
  ASSERT_NE(space.FindKnob("window"), nullptr);
  EXPECT_EQ(space.FindKnob("window")->values, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(tpl->default_config(stem, Sm90a()).at("window"), 1);
  const std::vector<Config> seeds = tpl->seeds(stem, Sm90a());
  ASSERT_FALSE(seeds.empty());
  EXPECT_EQ(seeds.front().at("window"), 1);
  EXPECT_EQ(seeds.front().at("bn"), 64);
  // The knobs it ignores are pinned, and what it cannot do is refused by name.
  Config two_warpgroups = Window(128, 64);
  two_warpgroups["wg_m"] = 2;
  EXPECT_THAT(std::string(space.Validate(two_warpgroups).message()), HasSubstr("window 1 needs"));
  EXPECT_THAT(std::string(space.Validate(Window(128, 32)).message()), HasSubstr("bn >= N"));
  EXPECT_TRUE(space.Validate(Window(128, 64)).ok());
  // Channels of whole 4-byte copies are gathered as before: no knob.
  const Workload wide = *Workload::Parse(
      "conv2d:N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16");
  EXPECT_EQ(tpl->space(wide, Sm90a()).FindKnob("window"), nullptr);
}

}  // namespace
}  // namespace tune
