// The cost models' features computed in a builder process (tuner/feature_source.h), with real
// builder processes (tune-daemon --build-child) and real templates.
#include "tuner/builder/feature_source.h"

#include <gtest/gtest.h>

#include <mutex>
#include <random>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template_features.h"
#include "common/files.h"
#include "tests/fault/fault_templates.h"
#include "tuner/builder/artifact_store.h"
#include "tuner/builder/builder_pool.h"

namespace tune::tuner {
namespace {

BuilderOptions Options() { return BuilderOptions{.executable = TUNE_FAULT_DAEMON_PATH}; }

struct Case {
  Workload workload = *Workload::Parse("gemm:M=64,N=48,K=32");
  Target target = Target::Parse("llvm -threads=1")->Resolved();
};

std::vector<Config> Samples(const ConfigSpace& space, int n) {
  std::mt19937_64 rng(5);
  std::vector<Config> configs;
  for (int i = 0; i < n; ++i) {
    configs.push_back(*space.Sample(rng));
  }
  return configs;
}

std::vector<std::vector<float>> WithoutIr(const Case& c, const ConfigSpace& space,
                                          const std::vector<Config>& configs) {
  std::vector<std::vector<float>> rows;
  for (const Config& config : configs) {
    rows.push_back(TemplateFeaturesWithoutIr(c.workload, space, config));
  }
  return rows;
}

TEST(BuilderFeatureSourceTest, RowsFromTheBuilderEqualThoseComputedInProcess) {
  Case c;
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
  ASSERT_NE(tpl, nullptr);
  const ConfigSpace space = tpl->space(c.workload, c.target);
  const std::vector<Config> configs = Samples(space, 12);
  BuilderFeatureSource source(Options());
  InProcessFeatureSource here;
  const std::vector<std::vector<float>> rows =
      source.Rows(*tpl, c.workload, c.target, space, configs);
  EXPECT_EQ(rows, here.Rows(*tpl, c.workload, c.target, space, configs));
  EXPECT_NE(rows, WithoutIr(c, space, configs)) << "the rows carry no loop features";
  EXPECT_EQ(source.fallbacks(), 0);
  EXPECT_EQ(source.started(), 1);
}

// The build pool hands the rows its builders read off the kernels they built to the feature
// source, which answers those configs without a builder of its own (here one that cannot
// start, so any request would fall back); a config nobody built is still asked for. An artifact
// the store answers carries its row too.
TEST(BuilderFeatureSourceTest, ConfigsThePoolBuiltAreAnsweredWithTheBuildsRows) {
  Case c;
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
  ASSERT_NE(tpl, nullptr);
  const ConfigSpace space = tpl->space(c.workload, c.target);
  std::vector<Config> configs = space.EnumerateValid(4);
  ASSERT_EQ(configs.size(), 4u);
  const Config unbuilt = configs.back();
  configs.pop_back();
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-feature-source-test-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  absl::StatusOr<std::unique_ptr<ArtifactStore>> store = ArtifactStore::Open(
      dir->File("store"), uint64_t{1} << 28, ArtifactStore::BuildEnvironment({}));
  ASSERT_TRUE(store.ok()) << store.status();
  auto build_all = [&](BuilderFeatureSource& features) {
    int built = 0;
    std::mutex mu;
    BuilderPool pool(
        Options(),
        [&](uint64_t, BuildOutcome outcome) {
          std::lock_guard lock(mu);
          built += outcome.artifact != nullptr && !outcome.features.empty() ? 1 : 0;
        },
        store->get(), &features);
    for (size_t i = 0; i < configs.size(); ++i) {
      BuildTask task;
      task.trial_id = i + 1;
      task.task.set_workload(c.workload.ToString());
      task.task.set_target(c.target.ToString());
      task.task.set_template_name(std::string(tpl->name));
      task.task.set_template_version(tpl->version);
      task.task.set_config(ConfigToString(configs[i]));
      task.task.set_func_name("kernel");
      pool.Submit(std::move(task));
    }
    pool.WaitIdle();
    return built;
  };
  InProcessFeatureSource here;
  std::vector<Config> asked = configs;
  asked.push_back(unbuilt);
  std::vector<std::vector<float>> expected = here.Rows(*tpl, c.workload, c.target, space, configs);
  expected.push_back(TemplateFeaturesWithoutIr(c.workload, space, unbuilt));

  BuilderOptions no_builder = Options();
  no_builder.executable = "/nonexistent/tune-daemon";
  BuilderFeatureSource built_here(no_builder);
  ASSERT_EQ(build_all(built_here), 3);
  EXPECT_EQ(built_here.Rows(*tpl, c.workload, c.target, space, asked), expected);
  EXPECT_EQ(built_here.remembered_rows_used(), 3);
  EXPECT_EQ(built_here.fallbacks(), 1) << "only the config nobody built was asked for";

  BuilderFeatureSource from_store(no_builder);
  ASSERT_EQ(build_all(from_store), 3);
  EXPECT_EQ((*store)->counts().hits, 3u);
  EXPECT_EQ(from_store.Rows(*tpl, c.workload, c.target, space, configs),
            here.Rows(*tpl, c.workload, c.target, space, configs));
  EXPECT_EQ(from_store.remembered_rows_used(), 3);
  EXPECT_EQ(from_store.fallbacks(), 0);
}

// A template that aborts while building IR (as a failed check would) ends the builder, not the
// caller; the configs asked about get rows without loop features, and the next request is
// answered by a fresh builder.
TEST(BuilderFeatureSourceTest,
     ATemplateAbortingInItsIrEndsTheBuilderAndItsConfigsGetRowsWithoutIr) {
  Case c;
  const KernelTemplate* crash = FindFaultTemplate(kFaultBuildCrashTemplate, OpKind::kGemm);
  const KernelTemplate* blocked = Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
  ASSERT_NE(crash, nullptr);
  const ConfigSpace crash_space = crash->space(c.workload, c.target);
  const std::vector<Config> crash_configs = Samples(crash_space, 3);
  BuilderFeatureSource source(Options());
  EXPECT_EQ(source.Rows(*crash, c.workload, c.target, crash_space, crash_configs),
            WithoutIr(c, crash_space, crash_configs));
  EXPECT_EQ(source.fallbacks(), 1);

  const ConfigSpace space = blocked->space(c.workload, c.target);
  const std::vector<Config> configs = Samples(space, 2);
  InProcessFeatureSource here;
  EXPECT_EQ(source.Rows(*blocked, c.workload, c.target, space, configs),
            here.Rows(*blocked, c.workload, c.target, space, configs));
  EXPECT_EQ(source.fallbacks(), 1);
  EXPECT_EQ(source.started(), 2);
}

TEST(BuilderFeatureSourceTest,
     ATemplateHangingInItsIrIsKilledAtTheTimeoutAndItsConfigsGetRowsWithoutIr) {
  Case c;
  const KernelTemplate* hang = FindFaultTemplate(kFaultBuildHangTemplate, OpKind::kGemm);
  ASSERT_NE(hang, nullptr);
  const ConfigSpace space = hang->space(c.workload, c.target);
  const std::vector<Config> configs = Samples(space, 2);
  BuilderFeatureSource source(Options(), /*timeout_ms=*/300);
  EXPECT_EQ(source.Rows(*hang, c.workload, c.target, space, configs), WithoutIr(c, space, configs));
  EXPECT_EQ(source.fallbacks(), 1);
}

TEST(BuilderFeatureSourceTest, AfterStopEveryRequestGetsRowsWithoutIrAndStartsNoBuilder) {
  Case c;
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
  const ConfigSpace space = tpl->space(c.workload, c.target);
  const std::vector<Config> configs = Samples(space, 2);
  BuilderFeatureSource source(Options());
  source.Stop();
  EXPECT_EQ(source.Rows(*tpl, c.workload, c.target, space, configs), WithoutIr(c, space, configs));
  EXPECT_EQ(source.started(), 0);
}

}  // namespace
}  // namespace tune::tuner
