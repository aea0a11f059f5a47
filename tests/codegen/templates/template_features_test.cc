#include "codegen/templates/template_features.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "codegen/ir/loop_features.h"
#include "codegen/templates/catalog.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

// Every CPU template that builds IR gives rows of one width per (workload, target), with finite
// values, and tells different configs apart by their loop nests, not only by their knobs.
TEST(TemplateFeaturesTest, RowsHaveOneWidthPerSpaceAndDistinguishConfigsByTheirLoopNests) {
  const Target target = *Target::Parse("llvm -mcpu=native -threads=2");
  std::mt19937_64 rng(5);
  for (const char* text :
       {"gemm:M=197,N=768,K=768", "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
        "conv2d:N=1,C=64,H=28,W=28,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c"}) {
    const Workload workload = *Workload::Parse(text);
    for (const KernelTemplate* tpl : Catalog::BuiltIn().TemplatesFor(workload, target)) {
      if (!tpl->build) {
        continue;
      }
      const ConfigSpace space = tpl->space(workload, target);
      const std::vector<float> base =
          TemplateFeatures(*tpl, workload, target, space, tpl->default_config(workload, target));
      ASSERT_EQ(base.size(),
                kWorkloadFeatureCount + ir::kLoopFeatureCount + 1 + space.knobs().size())
          << tpl->name;
      int differ = 0;
      for (int i = 0; i < 8; ++i) {
        std::optional<Config> config = space.Sample(rng);
        ASSERT_TRUE(config.has_value());
        std::vector<float> row = TemplateFeatures(*tpl, workload, target, space, *config);
        ASSERT_EQ(row.size(), base.size()) << tpl->name << " " << ConfigToString(*config);
        for (float v : row) {
          EXPECT_TRUE(std::isfinite(v)) << tpl->name << " " << ConfigToString(*config);
        }
        const size_t loops = kWorkloadFeatureCount;
        differ += std::equal(row.begin() + loops, row.begin() + loops + ir::kLoopFeatureCount,
                             base.begin() + loops)
                      ? 0
                      : 1;
      }
      EXPECT_GT(differ, 0) << tpl->name << " on " << text
                           << ": the loop features of 8 random configs all equal the default's";
    }
  }
}

TEST(TemplateFeaturesTest, WorkloadFeaturesTellShapesApart) {
  EXPECT_NE(WorkloadFeatures(*Workload::Parse("gemm:M=128,N=768,K=768")),
            WorkloadFeatures(*Workload::Parse("gemm:M=128,N=3072,K=768")));
  EXPECT_EQ(WorkloadFeatures(*Workload::Parse("gemm:M=1,N=2,K=3")).size(),
            WorkloadFeatures(*Workload::Parse("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3")).size());
}

}  // namespace
TEST(TemplateFeatures, TheDtypeAndLayoutAreFeaturesAndAnF32RowEndsInTwoZeros) {
  const std::vector<float> f32 = WorkloadFeatures(*Workload::Parse("gemm:M=64,N=4096,K=4096"));
  const std::vector<float> bf16_nt =
      WorkloadFeatures(*Workload::Parse("gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16"));
  ASSERT_EQ(f32.size(), bf16_nt.size());
  EXPECT_EQ(f32[f32.size() - 2], 0.0f);
  EXPECT_EQ(f32.back(), 0.0f);
  EXPECT_EQ(bf16_nt[bf16_nt.size() - 2], static_cast<float>(static_cast<int>(Dtype::kBf16)));
  EXPECT_EQ(bf16_nt.back(), 1.0f);
  EXPECT_TRUE(std::equal(f32.begin(), f32.end() - 2, bf16_nt.begin()));
  const std::vector<float> nhwc = WorkloadFeatures(
      *Workload::Parse("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NHWC"));
  EXPECT_EQ(nhwc.back(), 1.0f);
}

}  // namespace tune
