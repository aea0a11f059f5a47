// The builder's memory of compiled artifacts, through BuildOne with real templates and LLVM.
#include "tuner/builder/artifact_memo.h"

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <optional>

#include "codegen/templates/catalog.h"
#include "tuner/builder/build_child.h"

namespace tune::tuner {
namespace {

v1::BuildChildTask Task(uint64_t id, const Workload& w, const Target& t, const KernelTemplate& tpl,
                        const Config& config) {
  v1::BuildChildTask task;
  task.set_task_id(id);
  task.set_workload(w.ToString());
  task.set_target(t.ToString());
  task.set_template_name(std::string(tpl.name));
  task.set_template_version(tpl.version);
  task.set_config(ConfigToString(config));
  task.set_func_name("kernel");
  return task;
}

TEST(ArtifactMemoTest, ConfigsThatLowerToTheSameIrAreCompiledOnce) {
  const Workload w = *Workload::Parse("gemm:M=8,N=16,K=8");
  const Target t = Target::Parse("llvm -threads=1")->Resolved();
  const KernelTemplate* tpl =
      Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked", TargetKind::kLlvm);
  ASSERT_NE(tpl, nullptr);
  // Two configs with the same lowered IR (knobs this small shape makes irrelevant) and one
  // with other IR.
  Compiler compiler(Catalog::BuiltIn(), t);
  std::map<std::string, Config> by_ir;
  std::optional<std::pair<Config, Config>> twins;
  std::optional<Config> other;
  for (const Config& c : tpl->space(w, t).EnumerateValid(5000)) {
    absl::StatusOr<LoweredKernel> lowered = compiler.Lower(w, *tpl, c, "kernel");
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    auto [it, fresh] = by_ir.emplace(lowered->text, c);
    if (!fresh && !twins) {
      twins = std::make_pair(it->second, c);
    } else if (fresh && by_ir.size() > 1 && !other) {
      other = c;
    }
  }
  ASSERT_TRUE(twins.has_value()) << "no two configs of " << by_ir.size() << " lower alike";
  ASSERT_TRUE(other.has_value());
  std::cout << by_ir.size() << " distinct kernels among the valid configs of " << w.ToString()
            << "\n";

  ArtifactMemo memo;
  v1::BuildChildResult first =
      BuildOne(Catalog::BuiltIn(), Task(1, w, t, *tpl, twins->first), &memo);
  ASSERT_EQ(first.error(), "");
  EXPECT_FALSE(first.reused());
  v1::BuildChildResult second =
      BuildOne(Catalog::BuiltIn(), Task(2, w, t, *tpl, twins->second), &memo);
  ASSERT_EQ(second.error(), "");
  EXPECT_TRUE(second.reused());
  EXPECT_EQ(second.artifact().hash(), first.artifact().hash());
  EXPECT_EQ(second.artifact().config(), ConfigToString(twins->second)) << "the request's config";
  EXPECT_EQ(second.code().shared_object(), first.code().shared_object());
  v1::BuildChildResult third = BuildOne(Catalog::BuiltIn(), Task(3, w, t, *tpl, *other), &memo);
  ASSERT_EQ(third.error(), "");
  EXPECT_FALSE(third.reused());
  EXPECT_EQ(memo.entries(), 2u);
  EXPECT_FALSE(BuildOne(Catalog::BuiltIn(), Task(4, w, t, *tpl, twins->second)).reused())
      << "no memo";
}

TEST(ArtifactMemoTest, ForgetsTheLeastRecentlyUsedBeyondItsBytes) {
  ArtifactMemo memo(100);
  Artifact a;
  a.code = std::string(60, 'a');
  memo.Insert("a", a);
  memo.Insert("b", a);  // 120 bytes: "a" goes
  EXPECT_FALSE(memo.Find("a").has_value());
  EXPECT_TRUE(memo.Find("b").has_value());
  a.code = std::string(200, 'c');
  memo.Insert("c", a);  // larger than the memo: not kept
  EXPECT_FALSE(memo.Find("c").has_value());
  EXPECT_EQ(memo.entries(), 1u);
}

}  // namespace
}  // namespace tune::tuner
