// The builder's build of one task (tuner/build_child.h) with real templates and LLVM: the
// features it reads off the kernel it lowered are those the cost model computes for the config.
#include "tuner/builder/build_child.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template_features.h"

namespace tune::tuner {
namespace {

struct FeatureCase {
  const char* template_name;
  const char* workload;
  const char* target;
};

TEST(BuildChildTest, TheFeaturesABuildReturnsEqualThoseComputedForTheConfig) {
  const FeatureCase cases[] = {
      {"gemm.cpu.blocked", "gemm:M=24,N=40,K=16", "llvm -mcpu=skylake-avx512 -threads=1"},
      {"gemm.cpu.blocked", "gemm:M=24,N=40,K=16,weights=prepared",
       "llvm -mcpu=skylake-avx512 -threads=1"},
      {"conv2d.cpu.direct", "conv2d:N=1,C=8,H=10,W=10,K=8,R=3,S=3,stride=1,pad=1",
       "llvm -mcpu=skylake-avx512 -threads=1"},
      {"conv2d.cpu.winograd", "conv2d:N=1,C=8,H=10,W=10,K=8,R=3,S=3,stride=1,pad=1",
       "llvm -mcpu=skylake-avx512 -threads=1"},
      {"gemm.cpu.openblas", "gemm:M=24,N=40,K=16", "llvm -threads=1 -libs=openblas"},
      {"gemm.gpu.tiled", "gemm:M=64,N=64,K=32", "cuda -arch=sm_90"},
  };
  ArtifactMemo memo;
  uint64_t id = 0;
  for (const FeatureCase& c : cases) {
    SCOPED_TRACE(c.template_name + std::string(" ") + c.workload);
    const Workload w = *Workload::Parse(c.workload);
    const Target t = Target::Parse(c.target)->Resolved();
    const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(c.template_name, t.kind);
    ASSERT_NE(tpl, nullptr);
    const ConfigSpace space = tpl->space(w, t);
    std::mt19937_64 rng(7);
    std::set<std::string> seen;
    for (int i = 0; i < 3; ++i) {
      const Config config = i == 0 ? tpl->default_config(w, t) : *space.Sample(rng);
      if (!seen.insert(ConfigToString(config)).second) {
        continue;
      }
      v1::BuildChildTask task;
      task.set_task_id(++id);
      task.set_workload(w.ToString());
      task.set_target(t.ToString());
      task.set_template_name(std::string(tpl->name));
      task.set_template_version(tpl->version);
      task.set_config(ConfigToString(config));
      task.set_func_name(DefaultFunctionName(w));
      const v1::BuildChildResult result = BuildOne(Catalog::BuiltIn(), task, &memo);
      ASSERT_EQ(result.error(), "") << ConfigToString(config);
      const std::vector<float> built(result.features().values().begin(),
                                     result.features().values().end());
      EXPECT_EQ(built, TemplateFeatures(*tpl, w, t, space, config)) << ConfigToString(config);
      if (tpl->library.empty()) {
        EXPECT_NE(built, TemplateFeaturesWithoutIr(w, space, config)) << "no loop features";
      }
    }
  }
}

}  // namespace
}  // namespace tune::tuner
