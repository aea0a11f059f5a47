// gemm.cuda.wgmma's kernels on the simulator against the typed reference: every dtype and
// layout, edges, element copies, warpgroups splitting K, grid splits, stream-K, TMA pipelines
// (deep rings, short A boxes, clusters, seeded interleavings of their threads) and staged
// output tiles, persistent grids.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lower.h"
#include "codegen/sim/gpu_sim.h"
#include "codegen/templates/template.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "codegen/templates/wgmma_kernel.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_check.h"
#include "tests/codegen/templates/wgmma_sim_check.h"
#include "tests/codegen/templates/wgmma_test_configs.h"

namespace tune {
namespace {

using namespace testing::wgmma;  // NOLINT(google-build-using-namespace)
using testing::GpuTemplate;

constexpr char kName[] = "gemm.cuda.wgmma";

void CheckOnSimulator(const std::string& text, int random, std::vector<Config> extra = {},
                      uint64_t schedule_seed = 0) {
  testing::CheckTemplateOnSimulator(kName, Sm90a(), text, random, std::move(extra), schedule_seed);
}

TEST(GemmCudaWgmmaSim, Bf16AndF16GemmsMatchTheReference) {
  CheckOnSimulator("gemm:M=128,N=128,K=192,layout=NT,dtype=bf16", 1,
                   {Knobs(64, 64, 1, 1, 3, 16), Knobs(128, 64, 1, 1, 4, 16, 4),
                    Knobs(128, 128, 2, 1, 3, 8), Knobs(64, 128, 1, 2, 5, 16)});
  CheckOnSimulator("gemm:M=64,N=96,K=128,layout=NT,dtype=f16,epilogue=bias_relu", 1,
                   {Knobs(64, 64, 1, 1, 3, 16)});
}

TEST(GemmCudaWgmmaSim, EdgesThatAreNotMultiplesOfTheTileAreZeroFilledAndGuarded) {
  // K = 200: the last step is part zeros; M and N leave partial block tiles; N odd: single
  // columns.
  CheckOnSimulator("gemm:M=70,N=75,K=200,layout=NT,dtype=bf16,out=f32,epilogue=bias", 1,
                   {Knobs(64, 64, 1, 1, 4, 16, 4)});
}

TEST(GemmCudaWgmmaSim, RowsOfAnOddLengthAreCopiedElementByElement) {
  const Workload w = *Workload::Parse("gemm:M=64,N=40,K=17,layout=NT,dtype=bf16");
  const KernelTemplate* tpl = GpuTemplate(kName, Sm90a(), w);
  ASSERT_NE(tpl, nullptr);
  EXPECT_EQ(tpl->space(w, Sm90a()).FindKnob("copy")->values, (std::vector<int64_t>{2}));
  CheckOnSimulator("gemm:M=64,N=40,K=17,layout=NT,dtype=bf16", 1);
}

TEST(GemmCudaWgmmaSim, Tf32AndFp8GemmsMatchTheReferenceWithTheirScales) {
  CheckOnSimulator("gemm:M=64,N=64,K=72,layout=NT,dtype=tf32,epilogue=bias", 1,
                   {Knobs(64, 64, 1, 1, 3, 16)});
  CheckOnSimulator("gemm:M=64,N=64,K=256,layout=NT,dtype=fp8e4m3", 1, {Knobs(64, 64, 1, 1, 3, 16)});
  CheckOnSimulator("gemm:M=64,N=32,K=160,layout=NT,dtype=fp8e5m2,out=f32,epilogue=relu", 0);
}

TEST(GemmCudaWgmmaSim, IntegerGemmsMatchTheReferenceExactlyOrDequantised) {
  // i32 outputs: the wrapped sums, exact, with an i32 bias and ReLU; f32 outputs: scaled.
  CheckOnSimulator("gemm:M=64,N=48,K=256,layout=NT,dtype=i8,epilogue=bias_relu", 1,
                   {Knobs(64, 32, 1, 1, 3, 16)});
  CheckOnSimulator("gemm:M=70,N=64,K=200,layout=NT,dtype=u8i8", 0, {Knobs(64, 64, 1, 1, 3, 8)});
  CheckOnSimulator("gemm:M=64,N=32,K=384,layout=NT,dtype=i8,out=f32,epilogue=bias", 0,
                   {Knobs(64, 32, 1, 1, 3, 16, 1, 1, 2)});
}

TEST(GemmCudaWgmmaSim, WarpgroupsSplittingKAddTheirSumsThroughSharedMemory) {
  // 7 steps of K over 2 and 4 ranges: the last ranges are part or wholly zeros.
  CheckOnSimulator("gemm:M=40,N=64,K=440,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
                   {Knobs(64, 32, 1, 1, 3, 16, 1, 1, 2), Knobs(64, 32, 1, 1, 3, 16, 1, 1, 4),
                    Knobs(64, 64, 1, 2, 3, 8, 1, 1, 2)});
  // With a grid split of a float output too, and with fp8's promoted sums.
  CheckOnSimulator("gemm:M=16,N=32,K=1024,layout=NT,dtype=bf16,out=f32", 0,
                   {Knobs(64, 32, 1, 1, 3, 16, 1, 2, 2)});
  CheckOnSimulator("gemm:M=16,N=64,K=512,layout=NT,dtype=fp8e4m3", 0,
                   {Knobs(64, 64, 1, 1, 3, 16, 1, 1, 2)});
}

TEST(GemmCudaWgmmaSim, AGridSplitsLastBlockAddsThePartialTilesAndRunsTheEpilogue) {
  // Every output type and epilogue: bf16 with bias and ReLU (the splits of the last tiles
  // cover a partial step), float32, i8's exact i32 sums, fp8's scales; blocks of two tiles
  // on two simulator threads, so that either block of a tile may arrive last.
  CheckOnSimulator("gemm:M=100,N=96,K=1000,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
                   {Knobs(64, 64, 1, 1, 3, 16, 1, 3), Knobs(64, 32, 1, 1, 4, 16, 1, 2, 2)});
  CheckOnSimulator("gemm:M=64,N=64,K=1024,layout=NT,dtype=bf16,out=f32,epilogue=bias", 0,
                   {Knobs(64, 64, 1, 1, 3, 16, 1, 4)});
  CheckOnSimulator("gemm:M=64,N=48,K=1024,layout=NT,dtype=i8,epilogue=bias_relu", 0,
                   {Knobs(64, 32, 1, 1, 3, 16, 1, 2)});
  CheckOnSimulator("gemm:M=40,N=64,K=768,layout=NT,dtype=fp8e4m3", 0,
                   {Knobs(64, 64, 1, 1, 3, 16, 1, 3)});
  // Odd columns: partial tiles parked one element at a time, C written a column at a time.
  CheckOnSimulator("gemm:M=64,N=37,K=512,dtype=f16", 0, {Knobs(64, 64, 1, 1, 3, 2, 1, 2)});
  // A TMA pipeline: the consumers park and finish among themselves (named barriers), one
  // warpgroup or two; the producer's warpgroup takes no part.
  CheckOnSimulator("gemm:M=64,N=128,K=1024,layout=NT,dtype=bf16,epilogue=bias", 0,
                   {Tma(64, 64, 1, 1, 4, 4)});
  CheckOnSimulator("gemm:M=130,N=128,K=1024,layout=NT,dtype=bf16,epilogue=bias", 0,
                   {Tma(128, 64, 2, 1, 4, 3)});
}

TEST(GemmCudaWgmmaSim, AGridSplitInOneClusterSharesTheSumOfThePartialTilesAmongItsBlocks) {
  // Splits of 2, 3 (the tile's 64 rows shared unevenly, in chunks) and 4, edges of M and N,
  // every output type; cp.async stages and a TMA pipeline, whose consumers finish while its
  // producer's warpgroup passes the cluster barrier in a branch of its own.
  CheckOnSimulator("gemm:M=100,N=96,K=1000,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
                   {SplitInCluster(Knobs(64, 64, 1, 1, 3, 16, 1, 3)),
                    SplitInCluster(Knobs(64, 32, 1, 1, 4, 16, 1, 2))});
  CheckOnSimulator("gemm:M=64,N=64,K=1024,layout=NT,dtype=bf16,out=f32,epilogue=bias", 0,
                   {SplitInCluster(Knobs(64, 64, 1, 1, 3, 16, 1, 4))});
  CheckOnSimulator("gemm:M=64,N=48,K=1024,layout=NT,dtype=i8,epilogue=bias_relu", 0,
                   {SplitInCluster(Knobs(64, 32, 1, 1, 3, 16, 1, 2))});
  CheckOnSimulator("gemm:M=40,N=64,K=768,layout=NT,dtype=fp8e4m3", 0,
                   {SplitInCluster(Knobs(64, 64, 1, 1, 3, 16, 1, 3))});
  CheckOnSimulator("gemm:M=64,N=37,K=512,dtype=f16", 0,
                   {SplitInCluster(Knobs(64, 64, 1, 1, 3, 2, 1, 2))});
  CheckOnSimulator("gemm:M=130,N=128,K=1024,layout=NT,dtype=bf16,epilogue=bias", 0,
                   {SplitInCluster(Tma(128, 64, 2, 1, 4, 4))});
  // A 3x3 convolution's implicit GEMM, A through an im2col map.
  testing::CheckTemplateOnSimulator(
      "conv2d.cuda.wgmma", Sm90a(),
      "conv2d:N=1,C=64,H=5,W=5,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16", 0,
      {SplitInCluster(Tma(64, 64, 1, 1, 3, 3))});
}

// A stream-K config of `tile` (bm, bn, wg_m, stages) on a grid of `blocks` blocks.
void CheckStreamKOnSimulator(const std::string& text, Config tile, int64_t blocks,
                             uint64_t schedule_seed = 0) {
  tile["streamk"] = 1;
  CheckOnAGpuOf(blocks, text, tile, schedule_seed);
}

TEST(GemmCudaWgmmaSim, StreamKBlocksStoreTheTilesTheyHoldAndTheLastOfASharedTilesAddsItsParts) {
  // 4 tiles of 7 steps over 3 blocks (whole tiles and shared ones), 5 (every tile shared by
  // two) and 13 (by up to four, segments of two or three steps); bf16 with a bias and ReLU.
  const std::string bf16 = "gemm:M=128,N=128,K=448,layout=NT,dtype=bf16,epilogue=bias_relu";
  for (int64_t blocks : {3, 5, 13}) {
    CheckStreamKOnSimulator(bf16, Knobs(64, 64, 1, 1, 3, 16), blocks);
  }
  // Edges in M, N and K (the last step part zeros), two warpgroups, a raster of the tiles.
  CheckStreamKOnSimulator("gemm:M=100,N=72,K=440,layout=NT,dtype=bf16,epilogue=bias",
                          Knobs(128, 64, 2, 1, 4, 16, 2), 4);
  // Every output type: float32, i8's exact i32 sums, fp8's promoted sums and scales, and odd
  // columns parked and stored one at a time.
  CheckStreamKOnSimulator("gemm:M=64,N=64,K=640,layout=NT,dtype=f16,out=f32",
                          Knobs(64, 32, 1, 1, 3, 16), 7);
  CheckStreamKOnSimulator("gemm:M=64,N=48,K=1024,layout=NT,dtype=i8,epilogue=bias_relu",
                          Knobs(64, 32, 1, 1, 3, 16), 5);
  CheckStreamKOnSimulator("gemm:M=40,N=64,K=768,layout=NT,dtype=fp8e4m3",
                          Knobs(64, 64, 1, 1, 3, 16), 4);
  CheckStreamKOnSimulator("gemm:M=64,N=37,K=512,dtype=f16", Knobs(64, 64, 1, 1, 3, 2), 3);
  // A convolution's implicit GEMM: windows gathered per segment (9 steps of one tile over 4
  // blocks), in NHWC.
  CheckStreamKOnSimulator(
      "conv2d:N=1,C=64,H=8,W=8,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16,epilogue=relu",
      Knobs(64, 64, 1, 1, 3, 16), 4);
}

TEST(GemmCudaWgmmaSim, StreamKOverATmaRingStreamsTheNextSegmentsStagesWhileTheLastIsFinished) {
  // One ring of stages for all of a block's segments: 4 tiles of 7 steps over 3, 5 and 13
  // blocks (segments longer and shorter than the ring), the ring wrapping mid-segment.
  const std::string bf16 = "gemm:M=128,N=128,K=448,layout=NT,dtype=bf16,epilogue=bias_relu";
  for (int64_t blocks : {3, 5, 13}) {
    CheckStreamKOnSimulator(bf16, Tma(64, 64, 1, 1, 3), blocks);
  }
  // Edges in M and K that the copy engine fills with zeros, two consumer warpgroups, layout=NN
  // (B in atoms of 64 columns), i8 and fp8 outputs.
  CheckStreamKOnSimulator("gemm:M=100,N=64,K=584,layout=NT,dtype=bf16,epilogue=bias",
                          Tma(128, 64, 2, 1, 4), 5);
  CheckStreamKOnSimulator("gemm:M=64,N=128,K=320,dtype=f16", Tma(64, 128, 1, 1, 3), 4);
  CheckStreamKOnSimulator("gemm:M=64,N=48,K=1024,layout=NT,dtype=i8", Tma(64, 32, 1, 1, 4), 5);
  CheckStreamKOnSimulator("gemm:M=64,N=64,K=768,layout=NT,dtype=fp8e4m3", Tma(64, 64, 1, 1, 3), 4);
}

// A persistent config of `tile` (a TMA pipeline) on a GPU of `multiprocessors`, so that each
// block takes several tiles on the simulator.
void CheckPersistentOnSimulator(const std::string& text, Config tile, int64_t multiprocessors,
                                uint64_t schedule_seed = 0) {
  tile["persistent"] = 1;
  CheckOnAGpuOf(multiprocessors, text, tile, schedule_seed);
}

TEST(GemmCudaWgmmaSim, PersistentBlocksTakeWholeTilesInTurnThroughOneRing) {
  // 12 tiles of 7 steps over 5 blocks (three take three tiles, two take two, so the ring's
  // phases run on across tiles of unequal counts) and over 2 blocks of a 3-stage ring; bf16
  // with a bias and ReLU.
  const std::string bf16 = "gemm:M=192,N=256,K=448,layout=NT,dtype=bf16,epilogue=bias_relu";
  CheckPersistentOnSimulator(bf16, Tma(64, 64, 1, 1, 3), 5);
  CheckPersistentOnSimulator(bf16, Tma(64, 64, 1, 1, 4), 2);
  // Two blocks per multiprocessor; a raster of the tiles; two consumer warpgroups; edges in M, N
  // and K that the copy engine fills with zeros.
  Config two = Tma(64, 64, 1, 1, 3);
  two["blocks"] = 2;
  two["raster"] = 2;
  CheckPersistentOnSimulator("gemm:M=130,N=200,K=296,layout=NT,dtype=bf16,epilogue=bias", two, 2);
  CheckPersistentOnSimulator("gemm:M=200,N=130,K=584,layout=NT,dtype=f16", Tma(128, 64, 2, 1, 3),
                             2);
  // Two consumer warpgroups side by side in N, two blocks per multiprocessor.
  Config side = Tma(64, 96, 1, 2, 5);
  side["blocks"] = 2;
  side["raster"] = 4;
  CheckPersistentOnSimulator("gemm:M=192,N=480,K=512,layout=NT,dtype=bf16", side, 2);
  // Every output type: layout=NN's B atoms, float32, i8's exact i32 sums, fp8's promoted sums
  // and scales, odd columns stored one at a time.
  CheckPersistentOnSimulator("gemm:M=128,N=256,K=320,dtype=f16,out=f32", Tma(64, 128, 1, 1, 3), 3);
  CheckPersistentOnSimulator("gemm:M=128,N=96,K=1024,layout=NT,dtype=i8,epilogue=bias_relu",
                             Tma(64, 32, 1, 1, 4), 4);
  CheckPersistentOnSimulator("gemm:M=128,N=128,K=768,layout=NT,dtype=fp8e4m3", Tma(64, 64, 1, 1, 3),
                             3);
  CheckPersistentOnSimulator("gemm:M=192,N=37,K=256,layout=NT,dtype=bf16,out=f32",
                             Tma(64, 32, 1, 1, 3), 2);
  // The output tile staged in shared memory and copied out by the consumers alone, tile after
  // tile, between barriers of theirs: edges in M and N, one and two consumer warpgroups, fp8.
  CheckPersistentOnSimulator("gemm:M=200,N=136,K=256,layout=NT,dtype=bf16,epilogue=bias_relu",
                             Tma(64, 64, 1, 1, 3, 1, 1), 3);
  CheckPersistentOnSimulator("gemm:M=256,N=128,K=384,layout=NT,dtype=f16,out=f32",
                             Tma(128, 64, 2, 1, 3, 1, 1), 2);
  CheckPersistentOnSimulator("gemm:M=128,N=192,K=512,layout=NT,dtype=fp8e4m3,epilogue=bias",
                             Tma(64, 64, 1, 1, 4, 1, 1), 4);
  // A convolution's windows through its im2col map, tile after tile.
  CheckPersistentOnSimulator(
      "conv2d:N=2,C=64,H=8,W=8,K=128,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16,epilogue=relu",
      Tma(64, 64, 1, 1, 3), 3);
  // The block's threads interleaved at every hand-off in orders drawn from seeds.
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    CheckPersistentOnSimulator(bf16, Tma(64, 64, 1, 1, 3), 5, seed);
    CheckPersistentOnSimulator(bf16, Tma(128, 64, 2, 1, 3, 1, 1), 2, seed);
  }
}

TEST(GemmCudaWgmmaSim, Fp8SumsPromotedEveryTwoStepsMatchTheReference) {
  // One to five steps of K (the steps run in pairs: odd and even counts end differently), two
  // consumer warpgroups along M and along N, a staged output tile.
  for (const char* k : {"128", "256", "384", "640"}) {
    CheckOnSimulator(std::string("gemm:M=128,N=128,K=") + k + ",layout=NT,dtype=fp8e4m3", 0,
                     {PromotedEveryTwoSteps(Tma(128, 64, 2, 1, 3)),
                      PromotedEveryTwoSteps(Tma(64, 128, 1, 2, 4, 1, 1))});
  }
  // e5m2 into float32 with a bias; edges in M, N and K (the last of three steps part zeros); a
  // cluster; a grid split (blocks of two and of three steps).
  CheckOnSimulator("gemm:M=100,N=72,K=592,layout=NT,dtype=fp8e5m2,out=f32,epilogue=bias", 0,
                   {PromotedEveryTwoSteps(Tma(64, 32, 1, 1, 3)),
                    Clustered(PromotedEveryTwoSteps(Tma(64, 32, 1, 1, 4))),
                    PromotedEveryTwoSteps(Tma(64, 32, 1, 1, 3, 2))});
  // Tile after tile on a persistent grid, segments of stream-K (steps counted at run time), and
  // the block's threads interleaved at every hand-off in orders drawn from seeds.
  const std::string tiles = "gemm:M=128,N=192,K=640,layout=NT,dtype=fp8e4m3,epilogue=bias";
  CheckPersistentOnSimulator(tiles, PromotedEveryTwoSteps(Tma(64, 64, 1, 1, 3)), 4);
  CheckStreamKOnSimulator(tiles, PromotedEveryTwoSteps(Tma(64, 64, 1, 1, 3)), 5);
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    CheckPersistentOnSimulator(tiles, PromotedEveryTwoSteps(Tma(64, 64, 1, 1, 3, 1, 1)), 2, seed);
  }
}

TEST(GemmCudaWgmmaSim, LayoutNnReadsBNMajorForSixteenBitDtypes) {
  CheckOnSimulator("gemm:M=128,N=128,K=192,dtype=bf16", 1,
                   {Knobs(64, 128, 1, 1, 3, 16), Knobs(128, 128, 2, 2, 4, 8, 4),
                    Knobs(64, 64, 1, 1, 3, 16, 1, 1, 2)});
  // Edges in every dimension, a bias and ReLU; N = 130: rows of 260 bytes, 4-byte copies.
  CheckOnSimulator("gemm:M=70,N=130,K=100,dtype=f16,epilogue=bias_relu", 1,
                   {Knobs(64, 64, 1, 1, 4, 4)});
  // N odd: element copies.
  CheckOnSimulator("gemm:M=64,N=65,K=64,dtype=bf16,out=f32", 0, {Knobs(64, 128, 1, 1, 3, 2)});
}

TEST(GemmCudaWgmmaSim, AStagedOutputTileIsWrittenInSixteenByteRowsWithTheEpilogue) {
  // Edges in M and N (N = 72: rows of 144 bytes, whole chunks), a bias and ReLU.
  CheckOnSimulator(
      "gemm:M=70,N=72,K=130,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
      {Knobs(64, 64, 1, 1, 3, 4, 1, 1, 1, 1), Knobs(128, 128, 2, 1, 3, 4, 4, 1, 1, 1)});
  // Float32 and raw int32 outputs, fp8 scales.
  CheckOnSimulator("gemm:M=64,N=64,K=64,layout=NT,dtype=f16,out=f32", 0,
                   {Knobs(64, 64, 1, 1, 3, 16, 1, 1, 1, 1)});
  CheckOnSimulator("gemm:M=64,N=96,K=128,layout=NT,dtype=i8", 0,
                   {Knobs(64, 64, 1, 1, 3, 16, 1, 1, 1, 1)});
  CheckOnSimulator("gemm:M=64,N=64,K=128,layout=NT,dtype=fp8e4m3,epilogue=bias", 0,
                   {Knobs(64, 64, 1, 1, 3, 16, 1, 1, 1, 1)});
}

TEST(GemmCudaWgmmaSim, ATmaPipelineMatchesTheReferenceInEveryLayoutAndDtype) {
  // More steps of K than stages (the ring wraps and the producer waits for the consumers), edges
  // in M, N and K that the copy engine fills with zeros, a bias and ReLU.
  CheckOnSimulator("gemm:M=130,N=96,K=584,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
                   {Tma(64, 64, 1, 1, 3), Tma(128, 64, 2, 1, 4), Tma(128, 128, 1, 2, 3)});
  CheckOnSimulator("gemm:M=70,N=128,K=320,dtype=f16", 0,
                   {Tma(64, 128, 1, 1, 3), Tma(64, 64, 1, 1, 4)});
  CheckOnSimulator("gemm:M=64,N=64,K=200,layout=NT,dtype=tf32,out=f32", 0, {Tma(64, 64, 1, 1, 3)});
  CheckOnSimulator("gemm:M=64,N=48,K=512,layout=NT,dtype=i8", 0, {Tma(64, 32, 1, 1, 3)});
  CheckOnSimulator("gemm:M=64,N=64,K=384,layout=NT,dtype=fp8e4m3,epilogue=bias", 0,
                   {Tma(64, 64, 1, 1, 3)});
  // A grid split of a float output, and the staged output tile copied out by every thread.
  CheckOnSimulator("gemm:M=64,N=64,K=1024,layout=NT,dtype=bf16,out=f32", 0,
                   {Tma(64, 64, 1, 1, 3, 4)});
  CheckOnSimulator("gemm:M=100,N=72,K=256,layout=NT,dtype=bf16,epilogue=bias", 0,
                   {Tma(128, 64, 2, 1, 3, 1, 1)});
}

TEST(GemmCudaWgmmaSim, ClustersOfTwoBlocksMulticastTheirHalvesOfBsTileIntoBoth) {
  // Three tile rows of 64 (130 rows): the third pair's second block lies past M and still
  // copies its half of B for its peer. The ring wraps (9 steps over 3 stages), edges in N and K
  // are the copy engine's zeros; one and two consumer warpgroups; the staged output tile.
  CheckOnSimulator("gemm:M=130,N=96,K=584,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
                   {Clustered(Tma(64, 64, 1, 1, 3)), Clustered(Tma(64, 96, 1, 1, 4)),
                    Clustered(Tma(128, 64, 2, 1, 3)), Clustered(Tma(64, 32, 1, 1, 3, 1, 1))});
  CheckOnSimulator("gemm:M=64,N=48,K=512,layout=NT,dtype=i8", 0, {Clustered(Tma(64, 48, 1, 1, 3))});
  CheckOnSimulator("gemm:M=100,N=64,K=384,layout=NT,dtype=fp8e4m3,epilogue=bias", 0,
                   {Clustered(Tma(64, 64, 1, 1, 3))});
  CheckOnSimulator("gemm:M=64,N=64,K=200,layout=NT,dtype=tf32,out=f32", 0,
                   {Clustered(Tma(64, 64, 1, 1, 3))});
  // A 1x1 convolution, whose implicit GEMM TMA reads too.
  testing::CheckTemplateOnSimulator(
      "conv2d.cuda.wgmma", Sm90a(),
      "conv2d:N=2,C=64,H=6,W=6,K=96,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=bf16", 0,
      {NotResident(Clustered(Tma(64, 32, 1, 1, 3)))});
}

TEST(GemmCudaWgmmaSim, ClustersAlongNMulticastTheirSharesOfAsTileIntoTheirRow) {
  // Clusters of 1 x 2, 1 x 4 and 2 x 2 blocks: each copies 1 / cluster_n of A's rows into every
  // block of its row of the cluster (and, in 2 x 2, half of B's into every block of its column).
  // Five tile columns of 32 (152 columns): the last cluster's blocks past N still copy their
  // shares of A for their peers. The ring wraps (10 steps over 3 stages), edges in M and K are
  // the copy engine's zeros; two consumer warpgroups; the staged output tile.
  CheckOnSimulator(
      "gemm:M=130,N=152,K=600,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
      {ClusteredMxN(Tma(64, 32, 1, 1, 3), 1, 2), ClusteredMxN(Tma(64, 32, 1, 1, 3), 1, 4),
       ClusteredMxN(Tma(64, 32, 1, 1, 3), 2, 2), ClusteredMxN(Tma(128, 64, 2, 1, 4, 1, 1), 1, 2)});
  CheckOnSimulator("gemm:M=64,N=96,K=512,layout=NT,dtype=i8", 0,
                   {ClusteredMxN(Tma(64, 48, 1, 1, 3), 1, 2)});
  // B read N-major (layout=NN): A shared, B's atoms copied by every block.
  CheckOnSimulator("gemm:M=64,N=128,K=256,dtype=bf16", 0,
                   {ClusteredMxN(Tma(64, 64, 1, 1, 3), 1, 2)});
  // A 1x1 convolution, whose A TMA reads as a plain matrix.
  testing::CheckTemplateOnSimulator(
      "conv2d.cuda.wgmma", Sm90a(),
      "conv2d:N=2,C=64,H=6,W=6,K=96,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=bf16", 0,
      {NotResident(ClusteredMxN(Tma(64, 32, 1, 1, 3), 1, 2))});
}

TEST(GemmCudaWgmmaSim, PersistentClustersTakeRectanglesOfTilesInLockstep) {
  // 3 x 4 tiles of 64: in clusters of 1 x 2, six rectangles over two clusters (a GPU of 4
  // multiprocessors); in clusters of 2 x 2, four rectangles (the tile rows padded to 4, the last
  // row's blocks past M) over two clusters (9 multiprocessors), the ring's phases running on
  // across each block's tiles while its peers multicast into its stages.
  const std::string bf16 = "gemm:M=192,N=256,K=448,layout=NT,dtype=bf16,epilogue=bias_relu";
  CheckPersistentOnSimulator(bf16, ClusteredMxN(Tma(64, 64, 1, 1, 3), 1, 2), 4);
  CheckPersistentOnSimulator(bf16, ClusteredMxN(Tma(64, 64, 1, 1, 4, 1, 1), 2, 2), 9);
  // cuBLAS's shape of tile for 4096 x 3072 x 768 (256 x 128 of two warpgroups, 1 x 2), small.
  CheckPersistentOnSimulator("gemm:M=512,N=384,K=320,layout=NT,dtype=bf16",
                             ClusteredMxN(Tma(256, 128, 2, 1, 3), 1, 2), 4);
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    CheckPersistentOnSimulator(bf16, ClusteredMxN(Tma(64, 64, 1, 1, 3), 2, 2), 9, seed);
  }
}

TEST(GemmCudaWgmmaSim, TmaPipelinesMatchTheReferenceHoweverTheirThreadsInterleave) {
  // The block's threads interleaved at every hand-off in orders drawn from seeds: one thread per
  // consumer warpgroup releases a stage for its whole warpgroup (and, in a cluster, at every
  // block of it), which holds because a warpgroup issues its wgmma as one; a ring that wraps,
  // two consumer warpgroups, clusters (2 x 1 and 2 x 2), and a persistent block's segments over
  // one ring.
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    CheckOnSimulator("gemm:M=130,N=96,K=584,layout=NT,dtype=bf16", 0,
                     {Tma(64, 64, 1, 1, 3), Tma(128, 64, 2, 1, 3), Clustered(Tma(64, 48, 1, 1, 3)),
                      ClusteredMxN(Tma(64, 48, 1, 1, 3), 2, 2)},
                     seed);
    CheckStreamKOnSimulator("gemm:M=128,N=128,K=448,layout=NT,dtype=bf16", Tma(64, 64, 1, 1, 3), 5,
                            seed);
  }
}

TEST(GemmCudaWgmmaSim, TilesOfThreeTimesAPowerOfTwoColumnsMatchTheReference) {
  // 48, 96 and 192 columns: wgmma n of 48 and 96 (and 96 per warpgroup), TMA boxes and cp.async
  // loops over rows that are not a power of two, edges in N.
  CheckOnSimulator("gemm:M=130,N=200,K=320,layout=NT,dtype=bf16,epilogue=bias_relu", 0,
                   {Knobs(64, 96, 1, 1, 3, 16), Knobs(128, 96, 2, 1, 4, 16, 4, 1, 1, 1),
                    Knobs(64, 48, 1, 1, 3, 8), Tma(128, 192, 2, 1, 3), Tma(64, 96, 1, 1, 4),
                    Tma(128, 192, 1, 2, 3, 1, 1)});
  CheckOnSimulator("gemm:M=64,N=96,K=256,layout=NT,dtype=i8", 0,
                   {Knobs(64, 96, 1, 1, 3, 16), Tma(64, 48, 1, 1, 3)});
  CheckOnSimulator("gemm:M=70,N=200,K=192,dtype=f16", 0, {Knobs(64, 192, 1, 1, 3, 16)});
}

TEST(GemmCudaWgmmaSim, DeepRingsAndShortABoxesMatchTheReference) {
  // 20 steps of K through rings of 8, 12 and 16 stages (the ring wraps, the producer waits for
  // the consumers to free a stage), 16 rows of a 64-row tile filled with zeros, a grid split.
  CheckOnSimulator("gemm:M=16,N=80,K=1280,layout=NT,dtype=bf16,epilogue=bias", 0,
                   {Tma(64, 32, 1, 1, 16), Tma(64, 48, 1, 1, 12), Tma(64, 32, 1, 1, 8, 2),
                    Knobs(64, 32, 1, 1, 8, 16), Knobs(64, 32, 1, 1, 12, 16, 1, 2)});
  // A's boxes of 8, 24 and 104 rows (1 row; 20 rows in a tile of 64, in a cluster; 100 in a
  // tile of 128), the rest zeroed once; a staged output tile; fp8 with its scales.
  CheckOnSimulator("gemm:M=1,N=64,K=512,layout=NT,dtype=bf16", 0,
                   {Tma(64, 32, 1, 1, 4), Tma(64, 64, 1, 1, 3, 1, 1)});
  CheckOnSimulator("gemm:M=20,N=64,K=384,layout=NT,dtype=f16,epilogue=bias_relu", 0,
                   {Clustered(Tma(64, 32, 1, 1, 3))});
  CheckOnSimulator("gemm:M=100,N=64,K=384,layout=NT,dtype=f16,epilogue=bias_relu", 0,
                   {Tma(128, 64, 2, 1, 3)});
  CheckOnSimulator("gemm:M=16,N=64,K=512,layout=NT,dtype=fp8e4m3", 0, {Tma(64, 64, 1, 1, 4)});
  CheckStreamKOnSimulator("gemm:M=16,N=128,K=1024,layout=NT,dtype=bf16", Tma(64, 32, 1, 1, 3), 5);
}
}  // namespace
}  // namespace tune
