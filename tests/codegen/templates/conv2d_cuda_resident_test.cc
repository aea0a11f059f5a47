// conv2d.cuda.wgmma's resident pipeline (knob resident, wgmma_kernel.h): persistent blocks that
// keep B's stages and take tiles in turn. On the simulator against the reference: narrow-channel
// convolutions whose input rows a block stages whole and whose A stages it builds in shared
// memory (several tiles per block and per output row, rows outside the image, strides,
// dilation), 1x1 convolutions whose A is copied direct into two sets of stages, the output
// staged or not, two blocks per multiprocessor; and where the space offers it.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

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
constexpr char kPointwise[] =
    "conv2d:N=8,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=bf16";

// A resident config of bm x bn tiles (one warpgroup) copying `copy` bytes at a time, the output
// staged or not, compiled for `blocks` blocks per multiprocessor.
Config Resident(int64_t bm, int64_t bn, int64_t copy, int64_t stage_c = 0, int64_t blocks = 1) {
  Config c = Knobs(bm, bn, 1, 1, 3, copy, 1, 1, 1, stage_c);
  c["resident"] = 1;
  c["blocks"] = blocks;
  return c;
}

TEST(Conv2dCudaResidentSim, StemWindowsBuiltFromStagedRowsMatchTheReference) {
  // 7x7, stride 2, pad 3, three channels (147 taps: three steps, the last part zeros): 20 tiles
  // of one output row over 3 and 7 blocks, the windows of the first and last rows and columns
  // reaching into the padding.
  const std::string stem =
      "conv2d:N=2,C=3,H=20,W=20,K=16,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16,out=f32";
  CheckOnAGpuOf(3, stem, Resident(64, 32, 2));
  CheckOnAGpuOf(7, stem, Resident(128, 32, 2, 0, 2));
  // The output staged in shared memory, bf16 out, two blocks per multiprocessor.
  CheckOnAGpuOf(4, "conv2d:N=2,C=3,H=20,W=20,K=32,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16",
                Resident(64, 32, 2, 1, 2));
}

TEST(Conv2dCudaResidentSim, RowsOfSeveralTilesDilationAndNarrowOutputsMatchTheReference) {
  // 150 output pixels a row: three tiles of 64 (the last of 22), a bias and ReLU, f16.
  CheckOnAGpuOf(2,
                "conv2d:N=1,C=3,H=5,W=150,K=24,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=f16,"
                "epilogue=bias_relu",
                Resident(64, 32, 2));
  // Five channels, 5x5 taps of dilation 2 and stride 2 over an odd image (rows 10 bytes: copies
  // of one element), 40 output channels in a tile of 48, staged.
  CheckOnAGpuOf(3,
                "conv2d:N=1,C=5,H=13,W=11,K=40,R=5,S=5,stride=2,pad=3,dilation=2,layout=NHWC,"
                "dtype=bf16,epilogue=bias",
                Resident(64, 48, 2, 1));
}

TEST(Conv2dCudaResidentSim, PointwiseTilesCopiedIntoAlternateSetsMatchTheReference) {
  // 1x1 over 64 channels (one step): 7 tiles of 64 pixels (the last of 12) over 2 and 3 blocks,
  // so that each block alternates its sets of A's stages; 96 output channels, bias and ReLU.
  const std::string one_step =
      "conv2d:N=1,C=64,H=10,W=40,K=96,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=bf16,"
      "epilogue=bias_relu";
  CheckOnAGpuOf(2, one_step, Resident(64, 96, 16));
  CheckOnAGpuOf(3, one_step, Resident(64, 96, 16, 1, 2));
  // 128 channels (two steps), 256 output channels staged, f16 into f32.
  CheckOnAGpuOf(2,
                "conv2d:N=2,C=128,H=9,W=15,K=256,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=f16,"
                "out=f32",
                Resident(128, 256, 8));
}

TEST(Conv2dCudaResident, LeadsTheSeedsOfNarrowChannelsAndFollowsTheShortReductionsOnes) {
  const Workload stem = *Workload::Parse(kStem);
  const KernelTemplate* tpl = GpuTemplate(kWgmma, Sm90a(), stem);
  ASSERT_NE(tpl, nullptr);
  const ConfigSpace space = tpl->space(stem, Sm90a());
  ASSERT_NE(space.FindKnob("resident"), nullptr);
  EXPECT_EQ(space.FindKnob("resident")->values, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(tpl->default_config(stem, Sm90a()).at("resident"), 1);
  const std::vector<Config> seeds = tpl->seeds(stem, Sm90a());
  ASSERT_FALSE(seeds.empty());
  EXPECT_EQ(seeds.front().at("resident"), 1);
  EXPECT_EQ(seeds.front().at("bn"), 64);
  // The knobs it ignores are pinned, and what it cannot do is refused by name.
  Config two_warpgroups = Resident(128, 64, 2);
  two_warpgroups["wg_m"] = 2;
  EXPECT_THAT(std::string(space.Validate(two_warpgroups).message()), HasSubstr("resident 1 needs"));
  EXPECT_THAT(std::string(space.Validate(Resident(128, 32, 2)).message()), HasSubstr("bn >= N"));
  EXPECT_TRUE(space.Validate(Resident(128, 64, 2)).ok());

  // A 1x1 convolution of one step: offered after the short reductions' seeds, not the default.
  const Workload pointwise = *Workload::Parse(kPointwise);
  EXPECT_EQ(tpl->default_config(pointwise, Sm90a()).at("resident"), 0);
  const std::vector<Config> pointwise_seeds = tpl->seeds(pointwise, Sm90a());
  ASSERT_GE(pointwise_seeds.size(), 3u);
  EXPECT_EQ(pointwise_seeds.front().at("resident"), 0);
  EXPECT_TRUE(std::any_of(pointwise_seeds.begin(), pointwise_seeds.end(),
                          [](const Config& c) { return c.at("resident") == 1; }));

  // Channels of whole 4-byte copies over more than two steps are gathered as before: no knob.
  const Workload wide = *Workload::Parse(
      "conv2d:N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16");
  EXPECT_EQ(tpl->space(wide, Sm90a()).FindKnob("resident"), nullptr);
}

}  // namespace
}  // namespace tune
