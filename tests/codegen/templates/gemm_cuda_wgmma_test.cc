// gemm.cuda.wgmma, Hopper's warpgroup tensor-core GEMM: its space and seeds, the targets and
// layouts it refuses, its launch (whole warpgroups, tensor maps, 1024-byte aligned shared arrays)
// and its PTX (wgmma, the async-proxy fence; no spills, no serialised wgmma) through ptxas when
// it is installed. Its kernels on the simulator are gemm_cuda_wgmma_sim_test.cc's.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/ir/printer.h"
#include "codegen/llvm/gpu_backend.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/split_reduction.h"
#include "codegen/templates/stream_k.h"
#include "codegen/templates/template.h"
#include "codegen/templates/wgmma_kernel.h"
#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"
#include "tests/codegen/templates/gpu_template_check.h"
#include "tests/codegen/templates/wgmma_test_configs.h"

namespace tune {
namespace {
using namespace testing::wgmma;  // NOLINT(google-build-using-namespace)

using testing::GpuTemplate;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kName[] = "gemm.cuda.wgmma";

// The count of the PTX's `setmaxnreg.<action>` ("inc" or "dec"), if it has one.
std::optional<int64_t> SetMaxRegisters(const std::string& ptx, const std::string& action) {
  const std::string op = "setmaxnreg." + action + ".sync.aligned.u32 ";
  const size_t at = ptx.find(op);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(ptx.substr(at + op.size()));
}

// The registers per thread of ptxas -v's report ("Used 168 registers").
std::optional<int64_t> PtxasRegisters(const std::string& report) {
  const std::string used = "Used ";
  const size_t at = report.find(used);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(report.substr(at + used.size()));
}

TEST(GemmCudaWgmma, Fp8KernelsPromoteTheirSumsThroughASecondSetOfAccumulators) {
  const Workload w = *Workload::Parse("gemm:M=256,N=256,K=256,layout=NT,dtype=fp8e4m3");
  const KernelTemplate* tpl = GpuTemplate(kName, Sm90a(), w);
  ASSERT_NE(tpl, nullptr);
  // 128 accumulators a thread, and as many partial sums: past the registers of a thread.
  EXPECT_THAT(tpl->space(w, Sm90a()).Validate(Knobs(128, 256, 2, 1, 4, 16)).message(),
              HasSubstr("twice as many for the 8-bit floats"));
  absl::StatusOr<ir::LoweredFunc> lowered =
      testing::BuildLoweredGpu(kName, w, Knobs(128, 128, 2, 1, 4, 16), Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::string text = ir::ToText(lowered->body);
  EXPECT_THAT(text, HasSubstr("warpgroup_mma.fp8e4m3(part[0]"));
  EXPECT_THAT(text, HasSubstr("pending 0, overwrite)"));
  EXPECT_THAT(text, Not(HasSubstr("pending 1")));
  // The step's first instruction overwrites part (scale-d 0) instead of part being zeroed.
  EXPECT_THAT(text, Not(HasSubstr("part[j] = 0")));
}

TEST(GemmCudaWgmma, Fp8SumsMayBePromotedEveryTwoStepsInTmaPipelines) {
  // Five steps of K: two pairs, then the last step alone.
  const Workload w = *Workload::Parse("gemm:M=256,N=256,K=640,layout=NT,dtype=fp8e4m3");
  const KernelTemplate* tpl = GpuTemplate(kName, Sm90a(), w);
  ASSERT_NE(tpl, nullptr);
  const ConfigSpace space = tpl->space(w, Sm90a());
  EXPECT_EQ(space.FindKnob("promote_steps")->values, (std::vector<int64_t>{1, 2}));
  const Workload bf16 = *Workload::Parse("gemm:M=256,N=256,K=640,layout=NT,dtype=bf16");
  EXPECT_EQ(tpl->space(bf16, Sm90a()).FindKnob("promote_steps")->values, (std::vector<int64_t>{1}));
  EXPECT_THAT(space.Validate(PromotedEveryTwoSteps(Knobs(128, 128, 2, 1, 4, 16))).message(),
              HasSubstr("promote_steps 2 needs tma 1"));
  absl::StatusOr<ir::LoweredFunc> lowered =
      testing::BuildLoweredGpu(kName, w, PromotedEveryTwoSteps(Tma(128, 128, 2, 1, 4)), Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::string text = ir::ToText(lowered->body);
  // Even steps overwrite part and stay in flight; odd steps add to it and are waited for.
  EXPECT_THAT(text, HasSubstr("pending 1, overwrite)"));
  EXPECT_THAT(text, HasSubstr("pending 0)"));
  EXPECT_THAT(text, HasSubstr("pending 0, overwrite)"));  // the last, odd, step
}

TEST(StreamKPartition, TilesAreSharedByAsManyBlocksAsTheirStepsMeet) {
  // 4 tiles of 7 steps: 28 iterations.
  EXPECT_EQ(StreamKPartition(4, 7, 3).MaxParts(), 2);   // ranges of 9 or 10
  EXPECT_EQ(StreamKPartition(4, 7, 5).MaxParts(), 3);   // of 5 or 6: 6 + 1 at most 2, bound 3
  EXPECT_EQ(StreamKPartition(4, 7, 13).MaxParts(), 4);  // of 2 or 3
  EXPECT_EQ(StreamKPartition(4, 7, 28).MaxParts(), 7);  // one step each
  EXPECT_TRUE(StreamKPartition::Fits(4, 7, 14, 2));
  EXPECT_FALSE(StreamKPartition::Fits(4, 7, 15, 2));
}

TEST(GemmCudaWgmma, StreamKIsOfferedWhereEveryBlockOfItsGridGetsTwoStepsOfK) {
  const Workload w = *Workload::Parse("gemm:M=1024,N=768,K=768,layout=NT,dtype=bf16");
  const KernelTemplate* tpl = GpuTemplate(kName, Sm90a(), w);
  ASSERT_NE(tpl, nullptr);
  const ConfigSpace space = tpl->space(w, Sm90a());
  EXPECT_THAT(space.FindKnob("streamk")->values, ::testing::ElementsAre(0, 1, 2));
  // 48 tiles of 12 steps over 132 and 264 blocks.
  EXPECT_TRUE(space.Validate(Knobs(128, 128, 2, 1, 3, 16, 8, 1, 1, 0, 0, 1)).ok());
  EXPECT_TRUE(space.Validate(Knobs(128, 64, 2, 1, 3, 16, 8, 1, 1, 0, 0, 2)).ok());
  // Two blocks of 128 x 128 (64 accumulators a thread in 256 threads) do not fit a
  // multiprocessor's registers.
  EXPECT_THAT(space.Validate(Knobs(128, 128, 2, 1, 3, 16, 8, 1, 1, 0, 0, 2)).message(),
              HasSubstr("two blocks per multiprocessor"));
  EXPECT_TRUE(space.Validate(Knobs(128, 128, 2, 1, 4, 16, 8, 1, 1, 0, 1, 1)).ok());  // TMA
  // No other split of K, and the output stored from registers.
  for (const Config& c : {Knobs(128, 128, 2, 1, 3, 16, 8, 2, 1, 0, 0, 1),     // gridk
                          Knobs(128, 128, 2, 1, 3, 16, 8, 1, 2, 0, 0, 1),     // wg_k
                          Knobs(128, 128, 2, 1, 3, 16, 8, 1, 1, 1, 0, 1)}) {  // stage_c
    EXPECT_THAT(space.Validate(c).message(), HasSubstr("streamk needs")) << ConfigToString(c);
  }
  // 256 x 256 x 256: 4 steps for each of 16 tiles of 64 x 64, too few for 132 blocks.
  const Workload small = *Workload::Parse("gemm:M=256,N=256,K=256,layout=NT,dtype=bf16");
  EXPECT_THAT(tpl->space(small, Sm90a()).FindKnob("streamk")->values, ::testing::ElementsAre(0));
  // The grid is persistent: 132 blocks, with a workspace of the most parts a tile can have.
  absl::StatusOr<ir::LoweredFunc> lowered =
      testing::BuildLoweredGpu(kName, w, Knobs(128, 128, 2, 1, 3, 16, 8, 1, 1, 0, 0, 1), Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*lowered);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->grid[0], 132u);
  EXPECT_EQ(launch->grid[2], 1u);
  EXPECT_EQ(launch->workspace_bytes, static_cast<uint64_t>(SplitWorkspaceBytes(
                                         48, 128, 128, StreamKPartition(48, 12, 132).MaxParts())));
}

TEST(GemmCudaWgmma, GridSplitsAreOfferedForEveryOutputWithTwoStepsOfKPerSplit) {
  const Workload w = *Workload::Parse("gemm:M=16,N=768,K=768,layout=NT,dtype=bf16,epilogue=relu");
  const ConfigSpace space = GpuTemplate(kName, Sm90a(), w)->space(w, Sm90a());
  // 768 bf16 elements of K: 12 steps of 128 bytes, so at most 6 splits.
  EXPECT_THAT(space.FindKnob("gridk")->values, ::testing::ElementsAre(1, 2, 3, 4, 6));
  // The workspace of a split is bounded: 1024 x 4096 four ways is 64 MiB and its counters.
  const Workload big = *Workload::Parse("gemm:M=1024,N=4096,K=4096,layout=NT,dtype=bf16");
  const ConfigSpace big_space = GpuTemplate(kName, Sm90a(), big)->space(big, Sm90a());
  const absl::Status refused = big_space.Validate(Knobs(128, 128, 2, 1, 4, 16, 1, 4));
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("workspace"));
  EXPECT_TRUE(big_space.Validate(Knobs(128, 128, 2, 1, 4, 16, 1, 2)).ok());
}

TEST(GemmCudaWgmmaLaunch, AClusteredPipelineLaunchesPairsOfBlocksOverTileRowsPaddedToEven) {
  const Workload w = *Workload::Parse("gemm:M=130,N=96,K=584,layout=NT,dtype=bf16");
  absl::StatusOr<ir::LoweredFunc> lowered =
      testing::BuildLoweredGpu(kName, w, Clustered(Tma(64, 32, 1, 1, 3)), Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<GpuArch> arch = GpuArchFor(Sm90a());
  ASSERT_TRUE(arch.ok());
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*lowered, &*arch);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->cluster, (std::array<uint32_t, 3>{2, 1, 1}));
  EXPECT_EQ(launch->grid[0], 4u * 3u);  // three tile rows padded to four, three tile columns
  // B's map copies half the tile's rows: 16 of 32.
  ASSERT_EQ(launch->tensor_maps.size(), 2u);
  EXPECT_EQ(launch->tensor_maps[1].box[1], 16u);
}

TEST(GemmCudaWgmmaLaunch, AGridSplitInClustersLaunchesEachTilesSplitsAsOneClusterAlongX) {
  const Workload w = *Workload::Parse("gemm:M=256,N=768,K=3072,layout=NT,dtype=bf16");
  absl::StatusOr<ir::LoweredFunc> lowered =
      testing::BuildLoweredGpu(kName, w, SplitInCluster(Tma(128, 128, 2, 1, 4, 6)), Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<GpuArch> arch = GpuArchFor(Sm90a());
  ASSERT_TRUE(arch.ok());
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*lowered, &*arch);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->cluster, (std::array<uint32_t, 3>{6, 1, 1}));
  EXPECT_EQ(launch->grid, (std::array<uint32_t, 3>{2 * 6 * 6, 1, 1}));  // 12 tiles, 6 splits each
  // Clusters of more than 8 blocks, and of one, are refused.
  const ConfigSpace space = GpuTemplate(kName, Sm90a(), w)->space(w, Sm90a());
  EXPECT_FALSE(space.Validate(SplitInCluster(Tma(128, 128, 2, 1, 4, 12))).ok());
  EXPECT_FALSE(space.Validate(SplitInCluster(Tma(128, 128, 2, 1, 4, 1))).ok());
  EXPECT_TRUE(space.Validate(SplitInCluster(Tma(128, 128, 2, 1, 4, 8))).ok());
}

TEST(GemmCudaWgmma, ClustersAreOfferedForTmaPipelinesOfAKMajorB) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  const Workload nt = *Workload::Parse("gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16");
  const ConfigSpace space = tpl->space(nt, Sm90a());
  EXPECT_THAT(space.FindKnob("cluster")->values, ::testing::ElementsAre(1, 2));
  EXPECT_TRUE(space.Validate(Clustered(Tma(128, 192, 2, 1, 4))).ok());
  EXPECT_FALSE(space.Validate(Clustered(Knobs(128, 192, 2, 1, 4, 16))).ok());  // cp.async
  EXPECT_FALSE(space.Validate(Clustered(Tma(128, 192, 2, 1, 4, 2))).ok());     // a grid split
  // layout=NN reads B N-major: no clusters.
  const Workload nn = *Workload::Parse("gemm:M=4096,N=768,K=768,dtype=bf16");
  EXPECT_THAT(tpl->space(nn, Sm90a()).FindKnob("cluster")->values, ::testing::ElementsAre(1));
  // The wave-fitting TMA seeds come with their clustered twins.
  bool clustered = false;
  for (const Config& c : tpl->seeds(nt, Sm90a())) {
    clustered = clustered || c.at("cluster") == 2;
  }
  EXPECT_TRUE(clustered);
}

TEST(GemmCudaWgmma, TmaIsOfferedWhereTensorMapsCanDescribeTheOperands) {
  auto tma_values = [](const std::string& text) {
    const Workload w = *Workload::Parse(text);
    const KernelTemplate* tpl = GpuTemplate(kName, Sm90a(), w);
    return tpl == nullptr ? std::vector<int64_t>{} : tpl->space(w, Sm90a()).FindKnob("tma")->values;
  };
  EXPECT_THAT(tma_values("gemm:M=64,N=64,K=64,layout=NT,dtype=bf16"), ::testing::ElementsAre(0, 1));
  // Rows of 200 bytes: no tensor-map stride (a multiple of 16 bytes).
  EXPECT_THAT(tma_values("gemm:M=64,N=64,K=100,layout=NT,dtype=bf16"), ::testing::ElementsAre(0));
  EXPECT_THAT(tma_values("gemm:M=64,N=100,K=64,dtype=bf16"), ::testing::ElementsAre(0));
  const Workload w = *Workload::Parse("gemm:M=256,N=256,K=256,layout=NT,dtype=bf16");
  const ConfigSpace space = GpuTemplate(kName, Sm90a(), w)->space(w, Sm90a());
  EXPECT_TRUE(space.Validate(Tma(128, 128, 2, 1, 4)).ok());
  EXPECT_FALSE(space.Validate(Knobs(128, 128, 2, 1, 4, 16, 1, 1, 2, 0, 1)).ok());  // wg_k 2
  // The producer gives registers to the consumers (setmaxnreg): two of 64 x 256 fit, with
  // 128 accumulators each; fp8's promoted sums (twice as many) do not.
  EXPECT_TRUE(space.Validate(Tma(128, 256, 2, 1, 4)).ok());
  const Workload fp8 = *Workload::Parse("gemm:M=256,N=256,K=256,layout=NT,dtype=fp8e4m3");
  EXPECT_FALSE(
      GpuTemplate(kName, Sm90a(), fp8)->space(fp8, Sm90a()).Validate(Tma(128, 256, 2, 1, 4)).ok());
  std::vector<Config> seeds = GpuTemplate(kName, Sm90a(), w)->seeds(w, Sm90a());
  EXPECT_TRUE(
      std::any_of(seeds.begin(), seeds.end(), [](const Config& c) { return c.at("tma") == 1; }));
}

TEST(GemmCudaWgmmaLaunch, ATmaPipelineLaunchesAProducerWarpgroupAndItsTensorMaps) {
  const Workload w = *Workload::Parse("gemm:M=1024,N=1024,K=512,dtype=bf16");  // layout NN
  absl::StatusOr<ir::LoweredFunc> lowered =
      testing::BuildLoweredGpu(kName, w, Tma(128, 128, 2, 1, 4), Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<GpuArch> arch = GpuArchFor(Sm90a());
  ASSERT_TRUE(arch.ok());
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*lowered, &*arch);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->ThreadsPerBlock(), 384u);
  ASSERT_EQ(launch->tensor_maps.size(), 2u);
  // A [1024][512] in boxes of 128 rows of 64 elements; B [512][1024] in atoms of 64 columns by
  // 64 rows of K.
  EXPECT_EQ(launch->tensor_maps[0].arg, 0u);
  EXPECT_EQ(launch->tensor_maps[0].dims[0], 512u);
  EXPECT_EQ(launch->tensor_maps[0].strides[0], 1024u);
  EXPECT_EQ(launch->tensor_maps[0].box[1], 128u);
  EXPECT_EQ(launch->tensor_maps[1].arg, 1u);
  EXPECT_EQ(launch->tensor_maps[1].dims[0], 1024u);
  EXPECT_EQ(launch->tensor_maps[1].strides[0], 2048u);
  EXPECT_EQ(launch->tensor_maps[1].box[0], 64u);
  EXPECT_EQ(launch->tensor_maps[1].box[1], 64u);
}

TEST(GemmCudaWgmmaLaunch, ATmaBoxCopiesOnlyTheRowsOfAnAShorterThanItsTile) {
  // 16 rows: boxes of 16 (the other 48 rows of each stage zeroed once); 100 in a tile of 128:
  // 104 (whole swizzle atoms of 8 rows); 1: 8; 64 and more: the tile's rows.
  for (const auto& [m, bm, box] : std::vector<std::tuple<int64_t, int64_t, uint64_t>>{
           {16, 64, 16}, {100, 128, 104}, {1, 64, 8}, {64, 64, 64}, {130, 128, 128}}) {
    const Workload w =
        *Workload::Parse("gemm:M=" + std::to_string(m) + ",N=4096,K=4096,layout=NT,dtype=bf16");
    absl::StatusOr<ir::LoweredFunc> lowered =
        testing::BuildLoweredGpu(kName, w, Tma(bm, 64, bm / 64, 1, 8), Sm90a());
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    absl::StatusOr<GpuArch> arch = GpuArchFor(Sm90a());
    ASSERT_TRUE(arch.ok());
    absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*lowered, &*arch);
    ASSERT_TRUE(launch.ok()) << launch.status();
    ASSERT_EQ(launch->tensor_maps.size(), 2u);
    EXPECT_EQ(launch->tensor_maps[0].box[1], box) << "M=" << m;
    EXPECT_EQ(launch->tensor_maps[1].box[1], 64u) << "M=" << m;
  }
}

TEST(GemmCudaWgmma, AStagedOutputNeedsWholeSixteenByteRowsAndOneBlockPerReduction) {
  const Workload odd = *Workload::Parse("gemm:M=64,N=100,K=64,layout=NT,dtype=bf16");  // 200 B
  const KernelTemplate* tpl = GpuTemplate(kName, Sm90a(), odd);
  ASSERT_NE(tpl, nullptr);
  EXPECT_THAT(tpl->space(odd, Sm90a()).FindKnob("stage_c")->values, ::testing::ElementsAre(0));
  const Workload w = *Workload::Parse("gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16,out=f32");
  const ConfigSpace space = tpl->space(w, Sm90a());
  EXPECT_TRUE(space.Validate(Knobs(64, 64, 1, 1, 3, 16, 1, 1, 1, 1)).ok());
  EXPECT_FALSE(space.Validate(Knobs(64, 64, 1, 1, 3, 16, 1, 2, 1, 1)).ok());  // gridk 2
  EXPECT_FALSE(space.Validate(Knobs(64, 64, 1, 1, 3, 16, 1, 1, 2, 1)).ok());  // wg_k 2
  // Its PTX stores 16 bytes per thread.
  absl::StatusOr<ir::LoweredFunc> lowered =
      testing::BuildLoweredGpu(kName, w, Knobs(64, 64, 1, 1, 3, 16, 1, 1, 1, 1), Sm90a());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = Sm90a()});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT(module->code, HasSubstr("st.global.v4"));
}

TEST(GemmCudaWgmma, IsOfferedOnSm90aOnlyAndInLayoutNnForSixteenBitDtypesOnly) {
  const Workload nt = *Workload::Parse("gemm:M=256,N=256,K=256,layout=NT,dtype=bf16");
  EXPECT_NE(GpuTemplate(kName, Sm90a(), nt), nullptr);
  EXPECT_EQ(GpuTemplate(kName, *Target::Parse("cuda -arch=sm_90"), nt), nullptr);
  EXPECT_NE(GpuTemplate(kName, Sm90a(), *Workload::Parse("gemm:M=256,N=256,K=256,dtype=bf16")),
            nullptr);  // layout=NN: B read N-major
  const Workload nn_tf32 = *Workload::Parse("gemm:M=256,N=256,K=256,dtype=tf32");
  EXPECT_EQ(GpuTemplate(kName, Sm90a(), nn_tf32), nullptr);
  EXPECT_THAT(CheckTemplateShape(*Catalog::BuiltIn().FindTemplate(kName), nn_tf32).message(),
              HasSubstr("dtype=tf32 with layout=NN"));
  EXPECT_EQ(GpuTemplate(kName, Sm90a(), *Workload::Parse("gemm:M=256,N=256,K=256,layout=NT")),
            nullptr);  // f32
  // Asked for by name on another arch, the build says which target it needs.
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  const Target sm90 = *Target::Parse("cuda -arch=sm_90");
  absl::StatusOr<ir::LoweredFunc> built = tpl->build(nt, sm90, tpl->default_config(nt, sm90), "f");
  EXPECT_EQ(built.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(built.status().message(), HasSubstr("cuda -arch=sm_90a"));
}

TEST(GemmCudaWgmma, PersistentGridsAreOfferedWhereTheTilesOutnumberTheirBlocks) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  const Workload w = *Workload::Parse("gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16");
  const ConfigSpace space = tpl->space(w, Sm90a());
  // 512 tiles of 128 x 256 over 132 blocks, or 264 compiled for two blocks per multiprocessor.
  EXPECT_TRUE(space.IsValid(Persistent(Tma(128, 256, 2, 1, 4))));
  EXPECT_TRUE(space.IsValid(Persistent(Tma(64, 128, 1, 1, 3), 2)));
  EXPECT_TRUE(space.IsValid(Persistent(Tma(128, 256, 2, 1, 3, 1, 1))));  // the output staged
  // Not with cp.async stages, a grid split or a cluster.
  const std::string rule = "persistent 1 needs tma 1";
  EXPECT_THAT(space.Validate(Persistent(Knobs(128, 256, 2, 1, 4, 16))).message(), HasSubstr(rule));
  const Workload half = *Workload::Parse("gemm:M=2048,N=2048,K=4096,layout=NT,dtype=bf16");
  EXPECT_THAT(tpl->space(half, Sm90a()).Validate(Persistent(Tma(128, 128, 2, 1, 4, 2))).message(),
              HasSubstr(rule));
  EXPECT_THAT(space.Validate(Persistent(Clustered(Tma(128, 256, 2, 1, 4)))).message(),
              HasSubstr(rule));
  // 96 tiles of 128 x 256 for 1024 x 3072: a block per tile already.
  const Workload few = *Workload::Parse("gemm:M=1024,N=3072,K=768,layout=NT,dtype=bf16");
  EXPECT_THAT(tpl->space(few, Sm90a()).Validate(Persistent(Tma(128, 256, 2, 1, 4))).message(),
              HasSubstr("more tiles than its grid has blocks"));
  // Where TMA cannot read the operands (rows of 200 bytes), only 0.
  const Workload odd = *Workload::Parse("gemm:M=4096,N=4096,K=100,layout=NT,dtype=bf16");
  EXPECT_EQ(tpl->space(odd, Sm90a()).FindKnob("persistent")->values, (std::vector<int64_t>{0}));
}

TEST(GemmCudaWgmmaLaunch, AShortReductionAllocatesOnlyTheStageBuffersItsStepsUse) {
  // K = 64 bf16: one step of 128 bytes, so five stages need one buffer of A's and B's rows.
  const Workload w = *Workload::Parse("gemm:M=256,N=256,K=64,layout=NT,dtype=bf16");
  absl::StatusOr<GpuArch> arch = GpuArchFor(Sm90a());
  ASSERT_TRUE(arch.ok());
  for (const Config& c : {Knobs(128, 128, 2, 1, 5, 16), Tma(128, 128, 2, 1, 5)}) {
    absl::StatusOr<ir::LoweredFunc> lowered = testing::BuildLoweredGpu(kName, w, c, Sm90a());
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*lowered, &*arch);
    ASSERT_TRUE(launch.ok()) << launch.status();
    EXPECT_EQ(launch->static_shared_bytes + launch->dynamic_shared_bytes,
              (128u + 128u) * 128u + (c.at("tma") == 1 ? 1024u : 0u));
  }
  testing::CheckTemplateOnSimulator(kName, Sm90a(), "gemm:M=256,N=256,K=64,layout=NT,dtype=bf16", 0,
                                    {Knobs(128, 128, 2, 1, 5, 16), Tma(128, 128, 2, 1, 5)});
}

TEST(GemmCudaWgmmaLaunch, SharedArraysAre1024ByteAlignedAndBlocksWholeWarpgroups) {
  const Workload w = *Workload::Parse("gemm:M=1024,N=1024,K=1024,layout=NT,dtype=bf16");
  absl::StatusOr<ir::LoweredFunc> big =
      testing::BuildLoweredGpu(kName, w, Knobs(128, 256, 2, 1, 4, 16, 8), Sm90a());
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(GpuSharedAlignment(big->body), 1024);
  absl::StatusOr<GpuArch> arch = GpuArchFor(Sm90a());
  ASSERT_TRUE(arch.ok());
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(*big, &*arch);
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->dynamic_shared_bytes, 4u * (128 + 256) * 128);
  EXPECT_EQ(launch->ThreadsPerBlock(), 256u);
  // A warpgroup step in a block of 192 threads is refused.
  ir::Buffer a("a", ir::MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  ir::Buffer b("b", ir::MemoryScope::kGpuShared, ir::Type::Of(ElementType::kBf16));
  ir::Buffer acc("acc", ir::MemoryScope::kGpuLocal, ir::Type::Float32());
  ir::Var tx("tx"), bx("bx");
  ir::Stmt mma = ir::WarpGroupMma::Make(Dtype::kBf16, a, ir::Expr(int64_t{0}), b,
                                        ir::Expr(int64_t{0}), 64, 4, acc, 0, 0);
  ir::LoweredFunc func;
  func.name = "part_warpgroups";
  func.body = ir::For::Make(
      bx, 0, 1, ir::LoopKind::kGpuBlock,
      ir::Allocate::Make(a, 4096,
                         ir::Allocate::Make(b, 4096,
                                            ir::For::Make(tx, 0, 192, ir::LoopKind::kGpuThread,
                                                          ir::Allocate::Make(acc, 32, mma)))));
  launch = GpuLaunchOf(func);
  EXPECT_EQ(launch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(launch.status().message(), HasSubstr("192 threads (not a multiple of 128)"));
  EXPECT_THAT(ir::ToText(func.body), HasSubstr("warpgroup_mma.bf16(acc[0], m64n64 x4"));
}

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

TEST(GemmCudaWgmmaPtx, PresetsUseWgmmaAndAssembleWithoutSpillsOrSerialisation) {
  if (!std::filesystem::exists(kPtxas)) {
    GTEST_SKIP() << kPtxas << " is not installed";
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-wgmma-ptx-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  struct Case {
    const char* text;
    Config config;
    const char* wgmma;  // the instruction the PTX must hold
  };
  for (const Case& c : {
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", Knobs(128, 256, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=f16", Knobs(128, 128, 2, 1, 5, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"},
           Case{"gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16,epilogue=bias",
                Knobs(64, 128, 1, 1, 5, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,dtype=bf16", Knobs(128, 256, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=16,N=4096,K=4096,layout=NT,dtype=bf16", Knobs(64, 32, 1, 1, 4, 16, 8, 1, 4),
                "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=i8", Knobs(128, 256, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8"},
           Case{"gemm:M=1024,N=1024,K=1024,layout=NT,dtype=tf32", Knobs(128, 128, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"},
           Case{"gemm:M=2048,N=2048,K=2048,layout=NT,dtype=fp8e4m3",
                Knobs(128, 128, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", Tma(128, 128, 2, 1, 5),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", Tma(128, 256, 2, 1, 4),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,dtype=bf16", Tma(128, 128, 1, 2, 4, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3", Tma(128, 64, 2, 1, 4),
                "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"},
           Case{"gemm:M=16,N=768,K=3072,layout=NT,dtype=bf16,epilogue=bias",
                Knobs(64, 64, 1, 1, 4, 16, 8, 8),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16", Tma(64, 128, 1, 1, 4, 4),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=1024,N=768,K=768,layout=NT,dtype=bf16,epilogue=bias",
                Knobs(128, 128, 2, 1, 3, 16, 8, 1, 1, 0, 0, 1),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=3072,K=768,layout=NT,dtype=bf16",
                Knobs(128, 64, 2, 1, 4, 16, 8, 1, 1, 0, 0, 2),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=1024,N=3072,K=768,layout=NT,dtype=bf16",
                Knobs(128, 128, 2, 1, 4, 16, 8, 1, 1, 0, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           // The tiles that fill whole waves (WaveFitSeeds) of 4096 x 768 and 1024 x 768.
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16", Tma(128, 192, 2, 1, 4, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16",
                Knobs(128, 192, 2, 1, 4, 16, 8, 1, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16", Tma(192, 128, 1, 2, 5),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=1024,N=768,K=768,layout=NT,dtype=bf16", Tma(64, 96, 1, 1, 5, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16"},
           // The deep rings of products that stream B (StreamingSeeds).
           Case{"gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16", Tma(64, 32, 1, 1, 16),
                "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16"},
           Case{"gemm:M=16,N=11008,K=4096,layout=NT,dtype=bf16", Tma(64, 128, 1, 1, 8, 3),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=16,N=4096,K=11008,layout=NT,dtype=bf16", Knobs(64, 64, 1, 1, 12, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           // Clusters of two sharing B's tile through TMA multicast.
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16",
                Clustered(Tma(128, 192, 2, 1, 4, 1, 1)),
                "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", Clustered(Tma(128, 256, 2, 1, 4)),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           // Persistent grids: the consumers' loop over tiles keeps the register split.
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                Persistent(Tma(128, 256, 2, 1, 4)),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3,epilogue=bias",
                Persistent(Tma(128, 128, 2, 1, 5)),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,dtype=f16", Persistent(Tma(128, 128, 2, 1, 4)),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"},
           Case{"gemm:M=4096,N=3072,K=768,layout=NT,dtype=bf16",
                Persistent(Tma(64, 128, 1, 1, 3), 2),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3",
                Persistent(Tma(128, 128, 2, 1, 5, 1, 1)),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                Persistent(Tma(128, 256, 2, 1, 3, 1, 1)),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           // Two blocks per multiprocessor of three warpgroups: 80 registers at launch, not 85.
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3",
                Persistent(Tma(64, 64, 1, 2, 5), 2),
                "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                Persistent(Tma(64, 128, 1, 1, 4), 2),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           // fp8's sums promoted every two steps: one group left in flight by even steps.
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3",
                PromotedEveryTwoSteps(Tma(128, 128, 2, 1, 4, 1, 1)),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3,epilogue=bias",
                PromotedEveryTwoSteps(Tma(64, 256, 1, 2, 4)),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=8192,N=8192,K=8192,layout=NT,dtype=fp8e5m2,out=f32",
                Persistent(PromotedEveryTwoSteps(Tma(128, 128, 2, 1, 5))),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"},
           Case{"gemm:M=4096,N=4096,K=384,layout=NT,dtype=fp8e4m3",
                Clustered(PromotedEveryTwoSteps(Tma(128, 96, 2, 1, 4, 1, 1))),
                "wgmma.mma_async.sync.aligned.m64n96k32.f32.e4m3.e4m3"},
           // Grid splits whose tile's blocks share the finish in one cluster (OneWaveSplitSeeds).
           Case{"gemm:M=256,N=768,K=3072,layout=NT,dtype=bf16",
                SplitInCluster(Tma(128, 128, 2, 1, 4, 8)),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           // Tiles of 128 accumulators a thread split, within the consumers' register budget.
           Case{"gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16",
                SplitInCluster(Tma(128, 256, 2, 1, 4, 3)),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16", Tma(256, 128, 2, 1, 4, 4),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=4096,K=11008,layout=NT,dtype=bf16,epilogue=bias",
                SplitInCluster(Tma(128, 192, 2, 1, 4, 3)),
                "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=768,K=3072,layout=NT,dtype=bf16",
                SplitInCluster(Knobs(64, 64, 1, 1, 4, 16, 8, 4)),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
       }) {
    const Workload w = *Workload::Parse(c.text);
    absl::StatusOr<ir::LoweredFunc> lowered = testing::BuildLoweredGpu(kName, w, c.config, Sm90a());
    ASSERT_TRUE(lowered.ok()) << c.text << ": " << lowered.status();
    absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = Sm90a()});
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_THAT(module->code, HasSubstr(c.wgmma)) << c.text;
    EXPECT_THAT(module->code, HasSubstr("fence.proxy.async.shared::cta"));
    // One group left in flight, but where fp8 sums are promoted every step (waited for at
    // once).
    const bool at_once = IsFp8Dtype(w.dtype()) && c.config.at("promote_steps") == 1;
    EXPECT_EQ(module->code.find("wgmma.wait_group.sync.aligned 1") == std::string::npos, at_once)
        << c.text;
    EXPECT_THAT(module->code, HasSubstr(".target sm_90a"));
    EXPECT_EQ(module->code.find("cp.async.bulk.tensor.2d") != std::string::npos,
              c.config.at("tma") == 1)
        << c.text;
    EXPECT_EQ(module->code.find(".multicast::cluster") != std::string::npos,
              c.config.at("cluster") == 2)
        << c.text;
    // The register split, but where the producer's warpgroup shares a finish (stream-K); a grid
    // split's finish runs in the consumers' branch.
    EXPECT_EQ(module->code.find("setmaxnreg.inc.sync.aligned.u32") != std::string::npos,
              c.config.at("tma") == 1 && c.config.at("streamk") == 0)
        << c.text;
    // A grid split: a zeroed module workspace, the fenced arrival, one atomic per block; in a
    // cluster, a cluster barrier instead.
    const bool split = c.config.at("gridk") > 1 || c.config.at("streamk") > 0;
    const bool in_cluster = c.config.at("split_cluster") == 1;
    EXPECT_EQ(module->code.find("_split_partials[") != std::string::npos, split) << c.text;
    EXPECT_EQ(module->code.find("atom.global.add.u32") != std::string::npos, split && !in_cluster)
        << c.text;
    EXPECT_EQ(module->code.find("fence.acq_rel.gpu") != std::string::npos, split && !in_cluster)
        << c.text;
    EXPECT_EQ(module->code.find("barrier.cluster.arrive") != std::string::npos,
              in_cluster || c.config.at("cluster") == 2)
        << c.text;
    // A persistent grid's consumers stage their output between barriers of their own, and
    // the consumers of a TMA pipeline split across blocks arrive at the tile's counter so.
    const std::string consumers_barrier =
        StrCat("bar.sync 1, ", 128 * c.config.at("wg_m") * c.config.at("wg_n"), ";");
    EXPECT_EQ(module->code.find(consumers_barrier) != std::string::npos,
              (c.config.at("persistent") == 1 && c.config.at("stage_c") == 1) ||
                  (c.config.at("tma") == 1 && c.config.at("gridk") > 1 && !in_cluster))
        << c.text;
    // layout=NN reads B transposed (imm-trans-b 1).
    EXPECT_EQ(module->code.find(", p, 1, 1, 0, 1;") != std::string::npos,
              w.gemm().layout == GemmLayout::kNN)
        << c.text;
    const std::string ptx = dir->File(lowered->name + ".ptx");
    const std::string log = ptx + ".log";
    std::ofstream(ptx) << module->code;
    const std::string cmd =
        std::string(kPtxas) + " -arch=sm_90a -v -o /dev/null " + ptx + " > " + log + " 2>&1";
    const int rc = std::system(cmd.c_str());
    const std::string report = (std::stringstream() << std::ifstream(log).rdbuf()).str();
    ASSERT_EQ(rc, 0) << c.text << "\n" << report;
    EXPECT_THAT(report, HasSubstr("0 bytes spill stores")) << c.text << "\n" << report;
    // setmaxnreg.inc waits for registers from the block's pool, which holds only what the
    // producer's warpgroup releases: asking more hangs the block.
    if (const std::optional<int64_t> raised = SetMaxRegisters(module->code, "inc")) {
      const std::optional<int64_t> launch = PtxasRegisters(report);
      ASSERT_TRUE(launch.has_value()) << report;
      const int64_t lowered_to = SetMaxRegisters(module->code, "dec").value_or(*launch);
      const int64_t consumers = 128 * c.config.at("wg_m") * c.config.at("wg_n");
      EXPECT_LE((*raised - *launch) * consumers, (*launch - lowered_to) * 128)
          << c.text << " " << ConfigToString(c.config) << ": setmaxnreg.inc " << *raised << " from "
          << *launch << " at launch\n"
          << report;
    }
    EXPECT_THAT(report, Not(HasSubstr("serialized"))) << c.text << "\n" << report;
    EXPECT_THAT(report, Not(HasSubstr("ignored"))) << c.text << "\n" << report;
  }
}

}  // namespace
}  // namespace tune
