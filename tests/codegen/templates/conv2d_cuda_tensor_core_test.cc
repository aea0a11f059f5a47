// conv2d.cuda.wgmma and conv2d.cuda.mma, NHWC convolutions as implicit GEMMs on the tensor-core
// kernels: their kernels on the simulator against the typed reference (padding, strides,
// dilation, 1x1 and 7x7 filters, element copies of 3-channel inputs, every dtype, the epilogue,
// the grid split), the forms and targets they refuse, and their PTX through ptxas when it is
// installed (no spills).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/llvm/gpu_backend.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "codegen/templates/template_util.h"
#include "common/files.h"
#include "common/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"
#include "tests/codegen/templates/gpu_template_check.h"
#include "tests/codegen/templates/wgmma_test_configs.h"

namespace tune {
namespace {

using testing::GpuTemplate;
using ::testing::HasSubstr;
using testing::wgmma::Knobs;
using testing::wgmma::NotResident;
using testing::wgmma::Sm90a;

constexpr char kWgmma[] = "conv2d.cuda.wgmma";
constexpr char kMma[] = "conv2d.cuda.mma";

const Target& Sm80() {
  static const Target target = *Target::Parse("cuda -arch=sm_80");
  return target;
}

Config MmaKnobs(int64_t bm, int64_t bn, int64_t bk, int64_t warps_m, int64_t warps_n,
                int64_t stages, int64_t copy, int64_t raster = 1, int64_t gridk = 1) {
  return {{"bm", bm},           {"bn", bn},           {"bk", bk},
          {"warps_m", warps_m}, {"warps_n", warps_n}, {"stages", stages},
          {"copy", copy},       {"raster", raster},   {"gridk", gridk}};
}

TEST(Conv2dCudaWgmmaSim, PaddedStridedAndDilatedWindowsMatchTheReference) {
  // 3x3, pad 1: windows reach into the padding on every side; M = 2 * 8 * 8 = 128 pixels, K =
  // 9 * 16 = 144 taps (the last step part zeros), 24 output channels (a partial block tile).
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(), "conv2d:N=2,C=16,H=8,W=8,K=24,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16",
      1, {Knobs(64, 32, 1, 1, 3, 16), Knobs(128, 32, 2, 1, 4, 8, 4)});
  // Stride 2 and dilation 2, odd image sizes, a bias and ReLU.
  testing::CheckTemplateOnSimulator(kWgmma, Sm90a(),
                                    "conv2d:N=1,C=8,H=11,W=9,K=16,R=3,S=3,stride=2,pad=2,"
                                    "dilation=2,layout=NHWC,dtype=f16,epilogue=bias_relu",
                                    1, {Knobs(64, 32, 1, 1, 3, 16)});
  // 1x1, no padding: A is the input itself, which TMA copies read too (98 pixels: a partial
  // tile the copy engine fills with zeros).
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(), "conv2d:N=2,C=64,H=7,W=7,K=32,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=bf16",
      1,
      {NotResident(Knobs(64, 32, 1, 1, 3, 16)),
       NotResident(Knobs(64, 32, 1, 1, 3, 16, 1, 1, 1, 0, 1))});
}

TEST(Conv2dCudaWgmma, TmaCopiesReadDenseInputsAndWindowsWhoseTapsAreWholeRows) {
  auto tma_values = [](const std::string& text) {
    const Workload w = *Workload::Parse(text);
    return testing::GpuTemplate(kWgmma, Sm90a(), w)->space(w, Sm90a()).FindKnob("tma")->values;
  };
  EXPECT_THAT(tma_values("conv2d:N=8,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,layout=NHWC,"
                         "dtype=bf16"),
              ::testing::ElementsAre(0, 1));
  // A 3x3 window and a strided 1x1 of 128-byte taps: an im2col map reads their columns.
  EXPECT_THAT(tma_values("conv2d:N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,"
                         "dtype=bf16"),
              ::testing::ElementsAre(0, 1));
  EXPECT_THAT(tma_values("conv2d:N=8,C=64,H=56,W=56,K=256,R=1,S=1,stride=2,pad=0,layout=NHWC,"
                         "dtype=bf16"),
              ::testing::ElementsAre(0, 1));
  // Taps of 64 bytes (32 channels of bf16, 64 of i8) share a row of K: cp.async gathers them.
  EXPECT_THAT(tma_values("conv2d:N=8,C=32,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,"
                         "dtype=bf16"),
              ::testing::ElementsAre(0));
  EXPECT_THAT(tma_values("conv2d:N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,"
                         "dtype=i8"),
              ::testing::ElementsAre(0));
}

TEST(Conv2dCudaWgmmaSim, Im2colTmaPipelinesMatchTheReference) {
  // 3x3, pad 1, 64 channels: 2 * 7 * 7 = 98 pixels (the second tile's column runs past the last
  // image), one 128-byte row of K per tap, a partial block of columns.
  const Config tma_64x32 = Knobs(64, 32, 1, 1, 3, 16, 1, 1, 1, 0, 1);
  const Config tma_128x64_staged = Knobs(128, 64, 2, 1, 4, 16, 1, 1, 1, 1, 1);
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(), "conv2d:N=2,C=64,H=7,W=7,K=48,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16",
      1, {tma_64x32, tma_128x64_staged});
  // Stride 2, pad 2, dilation 2 over odd sizes, 128 channels (two rows per tap), bias and ReLU.
  testing::CheckTemplateOnSimulator(kWgmma, Sm90a(),
                                    "conv2d:N=2,C=128,H=11,W=9,K=32,R=3,S=3,stride=2,pad=2,"
                                    "dilation=2,layout=NHWC,dtype=f16,epilogue=bias_relu",
                                    1, {tma_64x32});
  // A strided 1x1 (no padding) and 8-bit inputs of 128 channels.
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(), "conv2d:N=1,C=64,H=9,W=9,K=32,R=1,S=1,stride=2,pad=0,layout=NHWC,dtype=bf16",
      1, {tma_64x32});
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(), "conv2d:N=1,C=128,H=6,W=6,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=i8",
      0, {tma_64x32});
}

TEST(Conv2dCudaWgmmaSim, ThreeChannelInputsAreCopiedElementByElement) {
  // The stem layer's shape class: 7x7, stride 2, 3 channels (6 bytes per tap: no 4-byte copy),
  // outside the resident pipeline (conv2d_cuda_resident_test.cc), which the default takes.
  const Config elements = NotResident(Knobs(64, 32, 1, 1, 3, 2));
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(),
      "conv2d:N=1,C=3,H=20,W=20,K=16,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16,out=f32", 0,
      {elements});
}

TEST(Conv2dCudaWgmmaSim, IntegerTf32AndFp8ConvolutionsMatchTheReference) {
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(), "conv2d:N=1,C=32,H=6,W=6,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=i8",
      0, {Knobs(64, 32, 1, 1, 3, 16)});
  testing::CheckTemplateOnSimulator(kWgmma, Sm90a(),
                                    "conv2d:N=1,C=32,H=6,W=6,K=32,R=3,S=3,stride=1,pad=1,"
                                    "layout=NHWC,dtype=u8i8,out=f32,epilogue=bias",
                                    0, {Knobs(64, 32, 1, 1, 3, 16)});
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(),
      "conv2d:N=1,C=16,H=6,W=6,K=16,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=fp8e4m3", 0,
      {Knobs(64, 32, 1, 1, 3, 16)});
  testing::CheckTemplateOnSimulator(
      kWgmma, Sm90a(),
      "conv2d:N=1,C=8,H=6,W=6,K=16,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=tf32,out=f32", 0,
      {Knobs(64, 32, 1, 1, 3, 16, 1, 1, 2)});
}

TEST(Conv2dCudaMmaSim, ConvolutionsMatchTheReferenceOnWarpLevelMma) {
  testing::CheckTemplateOnSimulator(
      kMma, Sm80(), "conv2d:N=2,C=16,H=8,W=8,K=24,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16", 1,
      {MmaKnobs(64, 32, 32, 2, 2, 3, 16), MmaKnobs(32, 16, 64, 1, 2, 2, 8)});
  testing::CheckTemplateOnSimulator(kMma, Sm80(),
                                    "conv2d:N=1,C=3,H=12,W=12,K=8,R=7,S=7,stride=2,pad=3,"
                                    "layout=NHWC,dtype=f16,epilogue=bias_relu",
                                    0, {MmaKnobs(32, 16, 32, 2, 2, 2, 2)});
  testing::CheckTemplateOnSimulator(
      kMma, Sm80(), "conv2d:N=1,C=32,H=6,W=6,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=i8", 0,
      {MmaKnobs(32, 32, 64, 2, 2, 2, 16)});
}

TEST(Conv2dCudaTensorCore, AreOfferedForTypedNhwcConvolutionsOnly) {
  const Workload nhwc = *Workload::Parse(
      "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16");
  EXPECT_NE(GpuTemplate(kWgmma, Sm90a(), nhwc), nullptr);
  EXPECT_NE(GpuTemplate(kMma, Sm90a(), nhwc), nullptr);
  EXPECT_NE(GpuTemplate(kMma, Sm80(), nhwc), nullptr);
  EXPECT_EQ(GpuTemplate(kWgmma, Sm80(), nhwc), nullptr);  // wgmma: sm_90a only
  // f32, and the NCHW layout, are other templates'.
  EXPECT_EQ(GpuTemplate(kWgmma, Sm90a(),
                        *Workload::Parse("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,"
                                         "layout=NHWC")),
            nullptr);
  EXPECT_EQ(GpuTemplate(kWgmma, Sm90a(),
                        *Workload::Parse(
                            "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,dtype=bf16")),
            nullptr);
}

TEST(Conv2dCudaTensorCore, EightBitInputsWhoseChannelsAreNotAMultipleOfFourAreRefusedNamingC) {
  const Workload stem = *Workload::Parse(
      "conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=i8");
  EXPECT_EQ(GpuTemplate(kWgmma, Sm90a(), stem), nullptr);
  for (const char* name : {kWgmma, kMma}) {
    const absl::Status status = CheckTemplateShape(*Catalog::BuiltIn().FindTemplate(name), stem);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(status.message(), HasSubstr("C=3 with 8-bit elements")) << name;
    EXPECT_THAT(status.message(), HasSubstr("C a multiple of 4 for 8-bit dtypes")) << name;
  }
}

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

TEST(Conv2dCudaWgmmaPtx, TwoBlocksPerMultiprocessorHalveTheRegisterBudget) {
  const Workload w = *Workload::Parse(
      "conv2d:N=32,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16");
  const KernelTemplate* tpl = GpuTemplate(kWgmma, Sm90a(), w);
  ASSERT_NE(tpl, nullptr);
  const ConfigSpace space = tpl->space(w, Sm90a());
  // A TMA pipeline of 64 x 128 tiles: one consumer warpgroup and the producer, 256 threads.
  Config two = Knobs(64, 128, 1, 1, 3, 16, 8, 1, 1, 1, 1);
  two["blocks"] = 2;
  ASSERT_TRUE(space.Validate(two).ok()) << space.Validate(two);
  absl::StatusOr<ir::LoweredFunc> lowered = testing::BuildLoweredGpu(kWgmma, w, two, Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = Sm90a()});
  ASSERT_TRUE(module.ok()) << module.status();
  // Half of 65536 / 256 threads; the consumers get (32768 - 128 x 40) / 128.
  EXPECT_THAT(module->code, HasSubstr(".minnctapersm 2"));
  EXPECT_THAT(module->code, HasSubstr(".maxnreg 128"));
  EXPECT_THAT(module->code, HasSubstr("setmaxnreg.inc.sync.aligned.u32 216"));
  // 128 x 256 tiles hold 128 accumulators per consumer thread: not within half the registers.
  Config large = Knobs(128, 256, 2, 1, 3, 16, 8, 1, 1, 0, 1);
  ASSERT_TRUE(space.Validate(large).ok()) << space.Validate(large);
  large["blocks"] = 2;
  EXPECT_THAT(space.Validate(large).message(), HasSubstr("blocks 2 needs"));
  // Two consumer warpgroups: 384 threads launch with 80 registers (32768 / 384 rounded down to
  // 8), and the producer's release of 40 x 128 lifts 256 consumers by 20 at most: 96, not 104.
  Config three = Knobs(64, 64, 1, 2, 3, 16, 8, 1, 1, 1, 1);
  three["blocks"] = 2;
  ASSERT_TRUE(space.Validate(three).ok()) << space.Validate(three);
  lowered = testing::BuildLoweredGpu(kWgmma, w, three, Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  module = EmitGpuModule({*lowered}, {.target = Sm90a()});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT(module->code, HasSubstr(".maxnreg 80"));
  EXPECT_THAT(module->code, HasSubstr("setmaxnreg.inc.sync.aligned.u32 96"));
  // 64 x 96 tiles of promoted fp8 sums need 48 + 56: more than the consumers can be lifted to.
  const Workload fp8 = *Workload::Parse("gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3");
  Config hung = Knobs(64, 96, 1, 2, 5, 16, 4, 1, 1, 0, 1);
  hung["blocks"] = 2;
  hung["persistent"] = 1;
  EXPECT_THAT(
      GpuTemplate("gemm.cuda.wgmma", Sm90a(), fp8)->space(fp8, Sm90a()).Validate(hung).message(),
      HasSubstr("blocks 2 needs"));
}

TEST(Conv2dCudaTensorCorePtx, ResNetLayersAssembleWithoutSpills) {
  if (!std::filesystem::exists(kPtxas)) {
    GTEST_SKIP() << kPtxas << " is not installed";
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-conv-tc-ptx-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  struct Case {
    const char* name;
    const char* text;
    const Target* target;
    const char* arch;
    const char* instruction;  // the PTX must hold it
  };
  for (const Case& c : {
           Case{kWgmma,
                "conv2d:N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16",
                &Sm90a(), "sm_90a", "wgmma.mma_async.sync.aligned"},
           Case{kWgmma,
                "conv2d:N=32,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=f16,"
                "epilogue=bias_relu",
                &Sm90a(), "sm_90a", "wgmma.mma_async.sync.aligned"},
           Case{kWgmma,
                "conv2d:N=8,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16",
                &Sm90a(), "sm_90a", "wgmma.mma_async.sync.aligned"},
           Case{kWgmma,
                "conv2d:N=8,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=bf16",
                &Sm90a(), "sm_90a", "wgmma.mma_async.sync.aligned"},
           Case{kWgmma,
                "conv2d:N=8,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=bf16",
                &Sm90a(), "sm_90a", "wgmma.mma_async.sync.aligned"},
           Case{kMma,
                "conv2d:N=8,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16",
                &Sm80(), "sm_80", "mma.sync.aligned"},
       }) {
    const Workload w = *Workload::Parse(c.text);
    const KernelTemplate* tpl = GpuTemplate(c.name, *c.target, w);
    ASSERT_NE(tpl, nullptr) << c.name << " " << c.text;
    // The default and every seed.
    std::vector<Config> configs = {tpl->default_config(w, *c.target)};
    for (Config& s : tpl->seeds(w, *c.target)) {
      configs.push_back(std::move(s));
    }
    for (const Config& config : configs) {
      absl::StatusOr<ir::LoweredFunc> lowered =
          testing::BuildLoweredGpu(c.name, w, config, *c.target);
      ASSERT_TRUE(lowered.ok()) << c.text << ": " << lowered.status();
      absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = *c.target});
      ASSERT_TRUE(module.ok()) << module.status();
      EXPECT_THAT(module->code, HasSubstr(c.instruction)) << c.text;
      const std::string ptx = dir->File(lowered->name + ".ptx");
      const std::string log = ptx + ".log";
      std::ofstream(ptx) << module->code;
      const std::string cmd = std::string(kPtxas) + " -arch=" + c.arch + " -v -o /dev/null " + ptx +
                              " > " + log + " 2>&1";
      const int rc = std::system(cmd.c_str());
      std::stringstream report;
      report << std::ifstream(log).rdbuf();
      ASSERT_EQ(rc, 0) << c.text << "\n" << report.str();
      // Known, and left as it is: a bias epilogue over 128 accumulators per consumer thread of a
      // TMA pipeline (tiles of 128 x 256) spills a few registers, as the same GEMM tiles do:
      // ptxas allocates within the block's even share (168), not the consumers' setmaxnreg
      // budget. Bounded here so that it cannot grow unseen.
      const bool bias_tma = EpilogueHasBias(w.epilogue()) && KnobValue(config, "tma") == 1;
      std::smatch spill;
      const std::string text = report.str();
      ASSERT_TRUE(std::regex_search(text, spill, std::regex(R"(([0-9]+) bytes spill stores)")))
          << text;
      EXPECT_LE(std::stoi(spill[1]), bias_tma ? 128 : 0)
          << c.text << " " << ConfigToString(config) << "\n"
          << text;
    }
  }
}

}  // namespace
}  // namespace tune
