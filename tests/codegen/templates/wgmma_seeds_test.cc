// gemm.cuda.wgmma's seeds (wgmma_seeds.cc): the tiles that fill whole waves, two blocks per
// multiprocessor, staged outputs before deeper rings, short reductions, products that stream B,
// splits; stream-K and persistent grids left to the search.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"
#include "tests/codegen/templates/wgmma_test_configs.h"

namespace tune {
namespace {
using namespace testing::wgmma;  // NOLINT(google-build-using-namespace)

using testing::GpuTemplate;

constexpr char kName[] = "gemm.cuda.wgmma";

TEST(GemmCudaWgmma, SeedsOfferTilesThatFitTwoBlocksPerMultiprocessor) {
  // Short reductions need two blocks per multiprocessor: a 128 x 128 tile of 3 stages (96 KiB).
  const Workload w = *Workload::Parse("gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16");
  const KernelTemplate* tpl = GpuTemplate(kName, Sm90a(), w);
  ASSERT_NE(tpl, nullptr);
  bool found = false;
  for (const Config& c : tpl->seeds(w, Sm90a())) {
    found = found || (c.at("bm") == 128 && c.at("bn") == 128 && c.at("stages") == 3 &&
                      c.at("wg_m") == 2 && c.at("wg_k") == 1);
  }
  EXPECT_TRUE(found);
}

TEST(GemmCudaWgmma, TheOneClusteredSeedPairsBlocksAlongMAsTheUnclusteredTileItFollows) {
  // Clusters along N (sharing A) ran slower than clusters along M on the H100 (wgmma_seeds.cc):
  // the first wave-fitting TMA seed has one clustered twin, along M, right after it.
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  for (const char* text : {"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16",
                           "gemm:M=4096,N=3072,K=768,layout=NT,dtype=bf16",
                           "gemm:M=1024,N=768,K=3072,layout=NT,dtype=bf16"}) {
    const std::vector<Config> seeds = tpl->seeds(*Workload::Parse(text), Sm90a());
    int clustered = 0;
    for (size_t i = 0; i < seeds.size(); ++i) {
      if (seeds[i].at("cluster") == 1 && seeds[i].at("cluster_n") == 1) {
        continue;
      }
      ++clustered;
      EXPECT_EQ(seeds[i].at("cluster"), 2) << text;
      EXPECT_EQ(seeds[i].at("cluster_n"), 1) << text;
      ASSERT_GT(i, 0u) << text;
      Config twin = seeds[i];
      twin["cluster"] = 1;
      EXPECT_EQ(seeds[i - 1], twin) << text;
    }
    EXPECT_EQ(clustered, 1) << text;
  }
}

TEST(GemmCudaWgmma, PersistentGridsAreLeftToTheSearchUnseeded) {
  // Offered, but measured slower than their one-block-per-tile twins (wgmma_seeds.cc).
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  for (const char* text : {"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                           "gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3",
                           "gemm:M=4096,N=3072,K=768,layout=NT,dtype=bf16",
                           "gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16"}) {
    const Workload w = *Workload::Parse(text);
    ASSERT_EQ(tpl->space(w, Sm90a()).FindKnob("persistent")->values.size(), 2u) << text;
    const std::vector<Config> seeds = tpl->seeds(w, Sm90a());
    ASSERT_FALSE(seeds.empty()) << text;
    for (const Config& c : seeds) {
      EXPECT_EQ(c.at("persistent"), 0) << text << " " << ConfigToString(c);
    }
  }
}

TEST(GemmCudaWgmma, SeedsLeadWithTheTilesWhoseBlocksFillWholeWavesOfTheGpu) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  struct Case {
    const char* workload;
    int64_t bm, bn;  // the first seed's tile
  };
  for (const Case& c : {
           // 128 x 128 tiles: 192 blocks, a wave and a half; 128 x 192: 128, one wave.
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16", 128, 192},
           Case{"gemm:M=1024,N=3072,K=768,layout=NT,dtype=bf16", 128, 192},
           // 48 tiles of 128 x 128 leave most multiprocessors idle; 64 x 96 makes 128.
           Case{"gemm:M=1024,N=768,K=768,layout=NT,dtype=f16", 64, 96},
           // Hundreds of tiles of any shape: the largest, as the presets have it.
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", 128, 256},
       }) {
    const Workload w = *Workload::Parse(c.workload);
    const std::vector<Config> seeds = tpl->seeds(w, Sm90a());
    ASSERT_FALSE(seeds.empty()) << c.workload;
    EXPECT_EQ(seeds.front().at("bm"), c.bm) << c.workload;
    EXPECT_EQ(seeds.front().at("bn"), c.bn) << c.workload;
    EXPECT_EQ(seeds.front().at("tma"), 1) << c.workload;
    EXPECT_EQ(seeds.front().at("gridk"), 1) << c.workload;
  }
}

TEST(GemmCudaWgmma, WaveFittingSeedsStageTheOutputTileBeforeDeepeningTheRing) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  struct Case {
    const char* workload;
    int64_t bn, stages;  // the first seed's: 128 x bn tiles of two warpgroups, output staged
  };
  for (const Case& c : {
           // Five stages of 128 x 192 and the staged tile exceed the 227 KiB of shared memory;
           // four take 208 KiB.
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16", 192, 4},
           Case{"gemm:M=1024,N=3072,K=768,layout=NT,dtype=bf16", 192, 4},
           // 128 x 256: three stages and the staged tile, not four stages storing from
           // registers.
           Case{"gemm:M=4096,N=3072,K=768,layout=NT,dtype=bf16", 256, 3},
       }) {
    const Workload w = *Workload::Parse(c.workload);
    const std::vector<Config> seeds = tpl->seeds(w, Sm90a());
    ASSERT_FALSE(seeds.empty()) << c.workload;
    const Config& first = seeds.front();
    EXPECT_EQ(first.at("bm"), 128) << c.workload;
    EXPECT_EQ(first.at("bn"), c.bn) << c.workload;
    EXPECT_EQ(first.at("wg_m"), 2) << c.workload;
    EXPECT_EQ(first.at("stage_c"), 1) << c.workload;
    EXPECT_EQ(first.at("stages"), c.stages) << c.workload;
  }
}

TEST(GemmCudaWgmma, LongReductionsInOneWaveTakeTheDeepestRingBeforeStagingTheOutput) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  // 256 x 4096 x 4096: 64 steps of K; 128 x 64 tiles fill one wave (2 x 64 blocks), with eight
  // stages storing from registers, then 64 x 128 likewise.
  const std::vector<Config> seeds =
      tpl->seeds(*Workload::Parse("gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16"), Sm90a());
  ASSERT_GE(seeds.size(), 2u);
  auto is_tile = [](const Config& c, int64_t bm, int64_t bn) {
    return c.at("bm") == bm && c.at("bn") == bn && c.at("tma") == 1 && c.at("gridk") == 1 &&
           c.at("cluster") == 1;
  };
  const auto wide = std::find_if(seeds.begin(), seeds.end(),
                                 [&](const Config& c) { return is_tile(c, 128, 64); });
  ASSERT_NE(wide, seeds.end());
  EXPECT_EQ(wide->at("wg_m"), 2);
  EXPECT_EQ(wide->at("stages"), 8);
  EXPECT_EQ(wide->at("stage_c"), 0);
  const auto tall = std::find_if(seeds.begin(), seeds.end(),
                                 [&](const Config& c) { return is_tile(c, 64, 128); });
  ASSERT_NE(tall, seeds.end());
  EXPECT_GT(tall - seeds.begin(), wide - seeds.begin());
  EXPECT_EQ(tall->at("stages"), 8);
  EXPECT_EQ(tall->at("stage_c"), 0);
  // A long reduction over more than a wave of tiles, or in tiles larger than 128 x 64, keeps
  // the output staged first.
  for (const char* text : {"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                           "gemm:M=1024,N=4096,K=4096,layout=NT,dtype=bf16"}) {
    const std::vector<Config> big = tpl->seeds(*Workload::Parse(text), Sm90a());
    ASSERT_FALSE(big.empty()) << text;
    EXPECT_EQ(big.front().at("stage_c"), 1) << text;
  }
}

TEST(GemmCudaWgmma, ShortReductionsOverManyTilesLeadWithSmallTilesOfCpAsyncStagesStagingC) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  // One step of K (64 channels) over 100352 x 256 outputs: 64 x 64, then 128 x 64.
  const Workload conv = *Workload::Parse(
      "conv2d:N=32,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=bf16");
  const KernelTemplate* conv_tpl = Catalog::BuiltIn().FindTemplate("conv2d.cuda.wgmma");
  ASSERT_NE(conv_tpl, nullptr);
  const std::vector<Config> seeds = conv_tpl->seeds(conv, Sm90a());
  ASSERT_GE(seeds.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(seeds[i].at("bm"), i == 0 ? 64 : 128);
    EXPECT_EQ(seeds[i].at("wg_m"), i == 0 ? 1 : 2);
    EXPECT_EQ(seeds[i].at("bn"), 64);
    EXPECT_EQ(seeds[i].at("tma"), 0);
    EXPECT_EQ(seeds[i].at("stage_c"), 1);
  }
  // Twelve steps of K, or one step over 49 tiles: the seeds lead as before.
  for (const char* text : {"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16",
                           "gemm:M=3136,N=64,K=64,layout=NT,dtype=bf16"}) {
    const std::vector<Config> others = tpl->seeds(*Workload::Parse(text), Sm90a());
    ASSERT_FALSE(others.empty()) << text;
    EXPECT_FALSE(others.front().at("bn") == 64 && others.front().at("tma") == 0 &&
                 others.front().at("stage_c") == 1)
        << text;
  }
}

TEST(GemmCudaWgmma, SkinnyProductsThatStreamBLeadWithDeepRingsOfOneWarpgroup) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  // A TMA pipeline of one m64 warpgroup (the seeds' raster groups of 8 rows: one row of tiles).
  auto streaming = [](int64_t bn, int64_t stages, int64_t gridk = 1) {
    Config c = Tma(64, bn, 1, 1, stages, gridk);
    c["raster"] = 8;
    return c;
  };
  // 64 x 4096 x 4096: 32 MiB of B. 128 tiles of 32 columns fill 97% of a wave; 64 tiles of 64
  // columns are split in two.
  const Workload w = *Workload::Parse("gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16");
  const std::vector<Config> seeds = tpl->seeds(w, Sm90a());
  ASSERT_GE(seeds.size(), 3u);
  EXPECT_EQ(seeds[0], streaming(32, 16)) << ConfigToString(seeds[0]);
  EXPECT_EQ(seeds[1].at("bn"), 64);
  EXPECT_EQ(seeds[1].at("gridk"), 1);
  EXPECT_EQ(seeds[2].at("bn"), 64);
  EXPECT_EQ(seeds[2].at("gridk"), 2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(seeds[i].at("tma"), 1);
    EXPECT_EQ(seeds[i].at("wg_m") * seeds[i].at("wg_n") * seeds[i].at("wg_k"), 1);
    EXPECT_GE(seeds[i].at("stages"), 8) << ConfigToString(seeds[i]);
  }
  // 16 x 11008 x 4096: 344 tiles of 32 columns fill 87% of three waves; split in three, 98%.
  const Workload wide = *Workload::Parse("gemm:M=16,N=11008,K=4096,layout=NT,dtype=bf16");
  const std::vector<Config> wide_seeds = tpl->seeds(wide, Sm90a());
  ASSERT_GE(wide_seeds.size(), 2u);
  EXPECT_EQ(wide_seeds[0], streaming(32, 16)) << ConfigToString(wide_seeds[0]);
  EXPECT_EQ(wide_seeds[1], streaming(32, 16, 3)) << ConfigToString(wide_seeds[1]);
  // 16 x 768 x 3072 reads 4.5 MiB of B, and its splits of light tiles still lead.
  const Workload small = *Workload::Parse("gemm:M=16,N=768,K=3072,layout=NT,dtype=bf16");
  const std::vector<Config> small_seeds = tpl->seeds(small, Sm90a());
  ASSERT_FALSE(small_seeds.empty());
  EXPECT_LE(small_seeds[0].at("stages"), 6);
  EXPECT_GT(small_seeds[0].at("gridk"), 1);
}

TEST(GemmCudaWgmma, SkinnyShapesSplitTheirReductionByDefaultAndInSeedsLargeOnesDoNot) {
  // 16 x 768: a dozen tiles for 132 multiprocessors, and 3072 of K to share.
  const Workload skinny = *Workload::Parse("gemm:M=16,N=768,K=3072,layout=NT,dtype=bf16");
  const KernelTemplate* tpl = GpuTemplate(kName, Sm90a(), skinny);
  ASSERT_NE(tpl, nullptr);
  EXPECT_GT(tpl->default_config(skinny, Sm90a()).at("gridk"), 1);
  int splits = 0;
  for (const Config& c : tpl->seeds(skinny, Sm90a())) {
    splits += c.at("gridk") > 1;
  }
  EXPECT_GT(splits, 0);
  // 4096 x 4096: hundreds of tiles already.
  const Workload large = *Workload::Parse("gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16");
  EXPECT_EQ(tpl->default_config(large, Sm90a()).at("gridk"), 1);
  for (const Config& c : tpl->seeds(large, Sm90a())) {
    EXPECT_EQ(c.at("gridk"), 1) << ConfigToString(c);
  }
}

TEST(GemmCudaWgmma, StreamKIsLeftToTheSearchUnseeded) {
  // Offered, but measured slower than the data-parallel tiles (wgmma_seeds.cc): short and long
  // reductions, few tiles and many, skinny products and a convolution take no stream-K seed.
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  for (const char* text : {"gemm:M=1024,N=768,K=768,layout=NT,dtype=bf16",
                           "gemm:M=16,N=768,K=3072,layout=NT,dtype=bf16",
                           "gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16"}) {
    const Workload w = *Workload::Parse(text);
    ASSERT_GT(tpl->space(w, Sm90a()).FindKnob("streamk")->values.size(), 1u) << text;
    for (const Config& c : tpl->seeds(w, Sm90a())) {
      EXPECT_EQ(c.at("streamk"), 0) << text << " " << ConfigToString(c);
    }
  }
}

TEST(GemmCudaWgmma, Fp8SeedsTakeFourStagesOf128By128TilesBeforeFive) {
  // Measured on the H100: four stages ran 5% faster than five (wgmma_seeds.cc's Presets).
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  const Workload w = *Workload::Parse("gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3");
  const std::vector<Config> seeds = tpl->seeds(w, Sm90a());
  std::string order;
  std::vector<int64_t> stages;  // of the 128 x 128 TMA pipelines, in order
  bool side_by_side = false;
  for (const Config& c : seeds) {
    order += ConfigToString(c) + "\n";
    if (c.at("tma") == 1 && c.at("bm") == 128 && c.at("bn") == 128 && c.at("cluster") == 1) {
      stages.push_back(c.at("stages"));
    }
    side_by_side = side_by_side || (c.at("tma") == 1 && c.at("bm") == 64 && c.at("bn") == 256 &&
                                    c.at("wg_n") == 2 && c.at("stages") == 4);
  }
  ASSERT_GE(stages.size(), 2u) << order;
  EXPECT_EQ(stages[0], 4) << order;
  EXPECT_TRUE(side_by_side) << order;
  // Sixteen-bit types keep their order: 128 x 128 TMA pipelines of five stages first.
  const Workload bf16 = *Workload::Parse("gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16");
  for (const Config& c : tpl->seeds(bf16, Sm90a())) {
    if (c.at("tma") == 1 && c.at("bm") == 128 && c.at("bn") == 128 && c.at("cluster") == 1) {
      EXPECT_EQ(c.at("stages"), 5) << ConfigToString(c);
      break;
    }
  }
}

TEST(GemmCudaWgmma, FewTilesOfTwoWarpgroupsAreSplitToFillOneWaveInSeeds) {
  // The split of a 128 x bn TMA pipeline of two consumer warpgroups among the seeds of `text`
  // (gemm.cuda.wgmma's or conv2d.cuda.wgmma's), its tile's blocks in one cluster or not, or 0.
  auto split_of = [&](const std::string& text, int64_t bn, int64_t in_cluster = 0) -> int64_t {
    const Workload w = *Workload::Parse(text);
    const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(
        w.op() == OpKind::kGemm ? "gemm.cuda.wgmma" : "conv2d.cuda.wgmma");
    EXPECT_NE(tpl, nullptr);
    if (tpl == nullptr) {
      return -1;
    }
    for (const Config& c : tpl->seeds(w, Sm90a())) {
      if (c.at("bm") == 128 && c.at("bn") == bn && c.at("wg_m") == 2 && c.at("tma") == 1 &&
          c.at("gridk") > 1 && c.at("blocks") == 1 && c.at("split_cluster") == in_cluster) {
        return c.at("gridk");
      }
    }
    return 0;
  };
  // 2 x 22 tiles of 128 x 192, three ways: 132 blocks; 2 x 32 of 128 x 128, two ways: 128.
  EXPECT_EQ(split_of("gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16", 192), 3);
  EXPECT_EQ(split_of("gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16", 128), 2);
  // 13 x 4 tiles of 128 x 128 at 7 x 7 pixels, batch 32: two ways, 104 blocks.
  EXPECT_EQ(split_of("conv2d:N=32,C=512,H=7,W=7,K=512,R=3,S=3,pad=1,layout=NHWC,dtype=bf16", 128),
            2);
  // Tiles enough for a wave unsplit, and skinny products: none.
  EXPECT_EQ(split_of("gemm:M=1024,N=4096,K=4096,layout=NT,dtype=bf16", 128), 0);
  EXPECT_EQ(split_of("gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16", 128), 0);
}

TEST(GemmCudaWgmma, OneWaveSplitsInClustersFitTheWaveOfClustersTheGpcsHold) {
  const Workload w = *Workload::Parse("gemm:M=1024,N=768,K=3072,layout=NT,dtype=bf16");
  const std::vector<Config> seeds =
      Catalog::BuiltIn().FindTemplate("gemm.cuda.wgmma")->seeds(w, Sm90a());
  // The first 128 x 192 split of each kind: the clustered twin comes first.
  std::vector<std::pair<int64_t, int64_t>> splits;  // (split_cluster, gridk)
  for (const Config& c : seeds) {
    if (c.at("bm") == 128 && c.at("bn") == 192 && c.at("wg_m") == 2 && c.at("gridk") > 1) {
      splits.emplace_back(c.at("split_cluster"), c.at("gridk"));
    }
  }
  // 8 x 4 tiles: four ways make 128 blocks, one wave of single blocks but past the 120 that
  // clusters of four fill; three ways make 96.
  ASSERT_GE(splits.size(), 2u);
  EXPECT_EQ(splits[0], (std::pair<int64_t, int64_t>{1, 3}));
  EXPECT_EQ(splits[1], (std::pair<int64_t, int64_t>{0, 4}));
  // 2 x 4 tiles of 256 x 768 x 3072: eight ways in clusters (64 blocks), sixteen without (128).
  const Workload few = *Workload::Parse("gemm:M=256,N=768,K=3072,layout=NT,dtype=bf16");
  std::vector<int64_t> few_splits;
  for (const Config& c : Catalog::BuiltIn().FindTemplate("gemm.cuda.wgmma")->seeds(few, Sm90a())) {
    if (c.at("bm") == 128 && c.at("bn") == 192 && c.at("wg_m") == 2 && c.at("gridk") > 1) {
      few_splits.push_back(c.at("split_cluster") * 100 + c.at("gridk"));
    }
  }
  ASSERT_GE(few_splits.size(), 2u);
  EXPECT_EQ(few_splits[0], 108);
  EXPECT_EQ(few_splits[1], 16);
  // Then 4 x 12 light tiles of 64 x 64, split two ways in clusters (96 blocks), each block's 24
  // steps of K on the deepest ring; its 4 steps a block, 128 x 192 split eight ways keeps four.
  auto light = [&](const Config& c) {
    return c.at("bm") == 64 && c.at("bn") == 64 && c.at("gridk") > 1 && c.at("split_cluster") == 1;
  };
  const std::vector<Config> few_seeds =
      Catalog::BuiltIn().FindTemplate("gemm.cuda.wgmma")->seeds(few, Sm90a());
  const auto it = std::find_if(few_seeds.begin(), few_seeds.end(), light);
  ASSERT_NE(it, few_seeds.end());
  EXPECT_EQ(it->at("gridk"), 2);
  EXPECT_EQ(it->at("wg_m"), 1);
  EXPECT_EQ(it->at("stages"), 8);
  EXPECT_EQ(it->at("tma"), 1);
  for (const Config& c : few_seeds) {
    if (c.at("bm") == 128 && c.at("bn") == 192 && c.at("gridk") == 8) {
      EXPECT_EQ(c.at("stages"), 4);
    }
  }
  // Two warpgroups' tiles split over a long reduction keep four stages (256 x 4096 x 11008: 128
  // x 128 split two ways, 86 steps a block).
  const Workload deep = *Workload::Parse("gemm:M=256,N=4096,K=11008,layout=NT,dtype=bf16");
  for (const Config& c : Catalog::BuiltIn().FindTemplate("gemm.cuda.wgmma")->seeds(deep, Sm90a())) {
    if (c.at("bm") == 128 && c.at("bn") == 128 && c.at("gridk") == 2 && c.at("blocks") == 1) {
      EXPECT_EQ(c.at("stages"), 4) << ConfigToString(c);
    }
  }
}

TEST(GemmCudaWgmma, Fp8SeedsTryEachTmaPipelinePromotedEveryTwoStepsFirst) {
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(kName);
  ASSERT_NE(tpl, nullptr);
  const Workload w = *Workload::Parse("gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3");
  const std::vector<Config> seeds = tpl->seeds(w, Sm90a());
  std::string order;
  for (const Config& c : seeds) {
    order += ConfigToString(c) + "\n";
  }
  int twins = 0;
  for (size_t i = 0; i < seeds.size(); ++i) {
    if (seeds[i].at("tma") == 0) {
      EXPECT_EQ(seeds[i].at("promote_steps"), 1) << order;
    } else if (seeds[i].at("promote_steps") == 2) {  // its twin follows
      ++twins;
      ASSERT_LT(i + 1, seeds.size()) << order;
      Config twin = seeds[i];
      twin["promote_steps"] = 1;
      EXPECT_EQ(seeds[i + 1], twin) << order;
    } else {  // its twin came first
      ASSERT_GT(i, 0u) << order;
      Config twin = seeds[i];
      twin["promote_steps"] = 2;
      EXPECT_EQ(seeds[i - 1], twin) << order;
    }
  }
  EXPECT_GE(twins, 2) << order;
  const Workload bf16 = *Workload::Parse("gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16");
  for (const Config& c : tpl->seeds(bf16, Sm90a())) {
    EXPECT_EQ(c.at("promote_steps"), 1) << ConfigToString(c);
  }
}

}  // namespace
}  // namespace tune
