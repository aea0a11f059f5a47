// gemm.cuda.wgmma, Hopper's warpgroup tensor-core GEMM: its space, the targets and layouts it
// refuses and its launch (whole warpgroups, tensor maps, 1024-byte aligned shared arrays). Its
// seeds are wgmma_seeds_test.cc's, its PTX through ptxas gemm_cuda_wgmma_ptxas_test.cc's, its
// kernels on the simulator gemm_cuda_wgmma_sim_test.cc's.
#include <algorithm>
#include <array>
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
#include "common/status.h"
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

TEST(GemmCudaWgmma, ClustersAlongNAreOfferedWhereTmaReadsAWholeTileOfAInTiledBoxes) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  const Workload nt = *Workload::Parse("gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16");
  const ConfigSpace space = tpl->space(nt, Sm90a());
  EXPECT_THAT(space.FindKnob("cluster_n")->values, ::testing::ElementsAre(1, 2, 4));
  EXPECT_TRUE(space.Validate(ClusteredMxN(Tma(128, 64, 2, 1, 8), 1, 2)).ok());
  EXPECT_TRUE(space.Validate(ClusteredMxN(Tma(64, 32, 1, 1, 8), 2, 4)).ok());
  EXPECT_FALSE(space.Validate(ClusteredMxN(Knobs(128, 64, 2, 1, 4, 16), 1, 2)).ok());  // cp.async
  EXPECT_FALSE(space.Validate(ClusteredMxN(Tma(128, 64, 2, 1, 4, 2), 1, 2)).ok());     // a split
  // A persistent grid of clusters: more rectangles of tiles than a wave holds clusters (64 of
  // 128 x 64 tiles in pairs: no; 4096 x 3072 in 256 x 128 tiles, 192 pairs: yes).
  EXPECT_FALSE(space.Validate(Persistent(ClusteredMxN(Tma(128, 64, 2, 1, 4), 1, 2))).ok());
  EXPECT_TRUE(tpl->space(*Workload::Parse("gemm:M=4096,N=3072,K=768,layout=NT,dtype=bf16"), Sm90a())
                  .Validate(Persistent(ClusteredMxN(Tma(256, 128, 2, 1, 4), 1, 2)))
                  .ok());
  // A tile of more rows than M has (rounded up to 8): A's box would be cut short.
  const Workload few = *Workload::Parse("gemm:M=100,N=4096,K=4096,layout=NT,dtype=bf16");
  const ConfigSpace few_space = tpl->space(few, Sm90a());
  EXPECT_TRUE(few_space.Validate(ClusteredMxN(Tma(64, 64, 1, 1, 4), 1, 4)).ok());
  EXPECT_FALSE(few_space.Validate(ClusteredMxN(Tma(128, 64, 2, 1, 4), 1, 2)).ok());
  // Fewer than 64 rows, or a convolution's windows read through an im2col map: none.
  EXPECT_THAT(tpl->space(*Workload::Parse("gemm:M=16,N=4096,K=4096,layout=NT,dtype=bf16"), Sm90a())
                  .FindKnob("cluster_n")
                  ->values,
              ::testing::ElementsAre(1));
  const KernelTemplate* conv = Catalog::BuiltIn().FindTemplate("conv2d.cuda.wgmma");
  ASSERT_NE(conv, nullptr);
  const Workload windows = *Workload::Parse(
      "conv2d:N=8,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16");
  EXPECT_THAT(conv->space(windows, Sm90a()).FindKnob("cluster_n")->values,
              ::testing::ElementsAre(1));
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
  // In clusters: 256 pairs of tiles over the 66 pairs a wave holds.
  EXPECT_TRUE(space.IsValid(Persistent(Clustered(Tma(128, 256, 2, 1, 4)))));
  EXPECT_TRUE(space.IsValid(Persistent(ClusteredMxN(Tma(256, 128, 2, 1, 4), 1, 2))));
  // Not with cp.async stages or a grid split.
  const std::string rule = "persistent 1 needs tma 1";
  EXPECT_THAT(space.Validate(Persistent(Knobs(128, 256, 2, 1, 4, 16))).message(), HasSubstr(rule));
  const Workload half = *Workload::Parse("gemm:M=2048,N=2048,K=4096,layout=NT,dtype=bf16");
  EXPECT_THAT(tpl->space(half, Sm90a()).Validate(Persistent(Tma(128, 128, 2, 1, 4, 2))).message(),
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

}  // namespace
}  // namespace tune
