// The job's search as the daemon drives it: tune's templates described by SearchSpaceOf and
// proposals named by template. The search's own rules (defaults, seeds, transfer, turns, resume)
// are tested over hand-made spaces in tests/search/composite_search_test.cc.
#include "tuner/scheduler/job_search.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <set>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template_features.h"
#include "tests/fault/fault_templates.h"

namespace tune::tuner {
namespace {

struct GemmCase {
  Workload workload = *Workload::Parse("gemm:M=64,N=64,K=64");
  Target target = Target::Parse("llvm -threads=1")->Resolved();
  std::vector<const KernelTemplate*> templates = Catalog::BuiltIn().TemplatesFor(workload, target);
};

std::string Key(const Candidate& c) {
  return std::string(c.tpl->name) + " " + ConfigToString(c.config);
}

TEST(JobSearchTest, NeverProposesAConfigTwiceNorOneAlreadyMeasured) {
  GemmCase s;
  ASSERT_FALSE(s.templates.empty());
  absl::StatusOr<std::unique_ptr<JobSearch>> first =
      JobSearch::Create(s.workload, s.target, s.templates, "random", 7, {}, "");
  ASSERT_TRUE(first.ok()) << first.status();
  std::vector<Candidate> measured = (*first)->Propose(5);
  ASSERT_EQ(measured.size(), 5u);
  std::vector<ConfigKey> log;
  for (const Candidate& c : measured) {
    log.push_back({std::string(c.tpl->name), c.tpl->version, ConfigToString(c.config)});
  }
  absl::StatusOr<std::unique_ptr<JobSearch>> second =
      JobSearch::Create(s.workload, s.target, s.templates, "random", 7, log, "");
  ASSERT_TRUE(second.ok()) << second.status();
  std::set<std::string> seen;
  for (const Candidate& c : measured) {
    seen.insert(Key(c));
  }
  for (const Candidate& c : (*second)->Propose(40)) {
    EXPECT_TRUE(seen.insert(Key(c)).second) << "proposed twice: " << Key(c);
  }
}

// gemm.gpu.tiled offers seeds (its presets with grid splits of K) for a 1024^3 GEMM on CUDA.
struct GpuGemmCase {
  Workload workload = *Workload::Parse("gemm:M=1024,N=1024,K=1024");
  Target target = *Target::Parse("cuda -arch=sm_90");
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate("gemm.gpu.tiled", TargetKind::kCuda);
  std::vector<Config> seeds = tpl->seeds(workload, target);
};

TEST(JobSearchTest, ProposesTheTemplatesSeedsInOrderAfterTheDefaultAndBeforeItsStrategy) {
  GpuGemmCase s;
  ASSERT_GT(s.seeds.size(), 4u);
  auto search = JobSearch::Create(s.workload, s.target, {s.tpl}, "random", 1, {}, "");
  ASSERT_TRUE(search.ok()) << search.status();
  std::vector<Candidate> got = (*search)->Propose(static_cast<int>(s.seeds.size()) + 20);
  ASSERT_EQ(got.size(), s.seeds.size() + 20);
  EXPECT_EQ(got[0].config, s.tpl->default_config(s.workload, s.target));
  size_t next_seed = 0;
  std::set<std::string> keys;
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_TRUE(keys.insert(Key(got[i])).second) << "proposed twice: " << Key(got[i]);
    if (next_seed < s.seeds.size() && s.seeds[next_seed] == got[0].config) {
      ++next_seed;  // the default is one of the seeds: proposed once, as the default
    }
    if (next_seed < s.seeds.size()) {
      EXPECT_EQ(got[i].config, s.seeds[next_seed]) << "proposal " << i;
      ++next_seed;
    }
  }
}

TEST(JobSearchTest, SearchSpaceOfDescribesTheTemplateForTheWorkloadAndWhatOtherWorkloadsLend) {
  GpuGemmCase s;
  InProcessFeatureSource source;
  const SearchSpace desc = SearchSpaceOf(*s.tpl, s.workload, s.target, source);
  EXPECT_EQ(desc.name, s.tpl->name);
  EXPECT_EQ(desc.version, s.tpl->version);
  EXPECT_EQ(desc.space.Fingerprint(), s.tpl->space(s.workload, s.target).Fingerprint());
  EXPECT_EQ(desc.default_config, s.tpl->default_config(s.workload, s.target));
  EXPECT_EQ(desc.seeds, s.seeds);
  ASSERT_TRUE(desc.features);
  EXPECT_EQ(desc.features({desc.default_config}),
            source.Rows(*s.tpl, s.workload, s.target, desc.space, {desc.default_config}));
  const Workload other = *Workload::Parse("gemm:M=256,N=512,K=128");
  std::optional<LendingWorkload> lender = desc.lending(other.ToString());
  ASSERT_TRUE(lender.has_value());
  EXPECT_EQ(lender->space.Fingerprint(), s.tpl->space(other, s.target).Fingerprint());
  EXPECT_EQ(lender->shape, WorkloadFeatures(other));
  EXPECT_FALSE(desc.lending("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3").has_value());
  EXPECT_FALSE(desc.lending("gemm:M=0").has_value());
}

// Handing the seeds to the model is part of the saved state: a job resumed from it proposes
// what the uninterrupted job proposes.
TEST(JobSearchTest, AResumedJobWithTransferProposesWhatTheUninterruptedOneWould) {
  GemmCase s;
  const KernelTemplate* tpl = s.templates.front();
  const Workload near = *Workload::Parse("gemm:M=64,N=64,K=48");
  const std::vector<Config> valid = tpl->space(near, s.target).EnumerateValid(64);
  std::map<std::string, std::vector<TemplateTrial>, std::less<>> transfer;
  for (size_t i = 0; i < valid.size(); ++i) {
    transfer[std::string(tpl->name)].push_back({near.ToString(), ConfigToString(valid[i]),
                                                ErrorKind::kNone,
                                                1e-3 * static_cast<double>(1 + (i * 5) % 11)});
  }
  auto secs = [](const Candidate& c) {
    return 1e-3 * (1 + static_cast<double>(std::hash<std::string>()(Key(c)) % 97));
  };
  auto uninterrupted =
      *JobSearch::Create(s.workload, s.target, {tpl}, "xgb", 3, {}, "", {}, transfer);
  std::vector<ConfigKey> log;
  std::vector<PastTrial> history;
  std::vector<std::string> before;
  for (const Candidate& c : uninterrupted->Propose(12)) {
    uninterrupted->Observe(c.tpl, TrialOutcome{c.config, ErrorKind::kNone, secs(c)});
    log.push_back({std::string(c.tpl->name), c.tpl->version, ConfigToString(c.config)});
    history.push_back(PastTrial{log.back(), ErrorKind::kNone, secs(c)});
    before.push_back(Key(c));
  }
  const std::string saved = uninterrupted->SaveState();
  auto resumed =
      *JobSearch::Create(s.workload, s.target, {tpl}, "xgb", 3, log, saved, history, transfer);
  std::vector<std::string> next, next_resumed;
  for (const Candidate& c : uninterrupted->Propose(16)) {
    next.push_back(Key(c));
  }
  for (const Candidate& c : resumed->Propose(16)) {
    next_resumed.push_back(Key(c));
  }
  EXPECT_EQ(next_resumed, next);
}

// A model job's tasks lend each other their trials as they are recorded: the lent trials train
// the cost model before the search has data of its own, so its first proposals follow the model
// instead of a random draw. Trials that cannot teach it anything change nothing.
TEST(JobSearchTest, LentTrialsOfAnotherWorkloadTrainTheModelAndOthersAreIgnored) {
  GemmCase s;
  const KernelTemplate* tpl = s.templates.front();
  const Workload sibling = *Workload::Parse("gemm:M=64,N=64,K=48");
  const ConfigSpace there = tpl->space(sibling, s.target);
  const std::vector<Config> valid = there.EnumerateValid(32);
  ASSERT_EQ(valid.size(), 32u);
  auto proposals = [&](const std::string& lent_workload) {
    auto search = JobSearch::Create(s.workload, s.target, {tpl}, "xgb", 7, {}, "");
    EXPECT_TRUE(search.ok()) << search.status();
    for (size_t i = 0; i < valid.size() && !lent_workload.empty(); ++i) {
      (*search)->Lend(tpl, {lent_workload, ConfigToString(valid[i]),
                            i % 7 != 3 ? ErrorKind::kNone : ErrorKind::kWrongAnswer,
                            1e-3 * static_cast<double>(1 + (i * 5) % 11)});
    }
    std::vector<std::string> keys;
    for (const Candidate& c : (*search)->Propose(48)) {
      keys.push_back(Key(c));
    }
    return keys;
  };
  const std::vector<std::string> alone = proposals("");
  EXPECT_NE(proposals(sibling.ToString()), alone);
  EXPECT_EQ(proposals(s.workload.ToString()), alone) << "its own workload is observed, not lent";
  EXPECT_EQ(proposals("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3"), alone) << "another operator";
  EXPECT_EQ(proposals("gemm:M=0"), alone) << "a malformed workload";
}

// A fault template's build aborts the process that runs it: the daemon's cost model must never
// build one to describe its configs (a builder process builds them, and dies instead).
TEST(JobSearchTest, AModelSearchOfATemplateWhoseBuildAbortsNeverBuildsItInTheDaemon) {
  GemmCase s;
  const KernelTemplate* tpl = FindFaultTemplate(kFaultBuildCrashTemplate, OpKind::kGemm);
  ASSERT_NE(tpl, nullptr);
  const ConfigSpace space = tpl->space(s.workload, s.target);
  std::vector<Config> valid = space.EnumerateValid(40);
  ASSERT_GE(valid.size(), 40u);
  std::vector<PastTrial> history;
  std::map<std::string, std::vector<TemplateTrial>, std::less<>> transfer;
  for (size_t i = 0; i < 20; ++i) {
    history.push_back(PastTrial{{std::string(tpl->name), tpl->version, ConfigToString(valid[i])},
                                ErrorKind::kNone,
                                1e-3 * static_cast<double>(1 + i % 5)});
    transfer[std::string(tpl->name)].push_back(
        {"gemm:M=64,N=64,K=48", ConfigToString(valid[20 + i]),
         i % 2 == 0 ? ErrorKind::kNone : ErrorKind::kWrongAnswer, 2e-3});
  }
  auto search = JobSearch::Create(s.workload, s.target, {tpl}, "xgb", 1, {}, "", history, transfer);
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_EQ((*search)->Propose(16).size(), 16u);
}

// A 3x3 convolution that Winograd and the direct template both build (Winograd leads).
struct TwoTemplateCase {
  Workload workload = *Workload::Parse("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1");
  Target target = *Target::Parse("llvm -mcpu=znver4 -threads=1");
  std::vector<const KernelTemplate*> templates = Catalog::BuiltIn().TemplatesFor(workload, target);
};

std::map<const KernelTemplate*, int> CountByTemplate(const std::vector<Candidate>& candidates) {
  std::map<const KernelTemplate*, int> count;
  for (const Candidate& c : candidates) {
    ++count[c.tpl];
  }
  return count;
}

// A random search of both templates whose defaults were measured, the second's twice as slow.
std::unique_ptr<JobSearch> SearchWhoseSecondTemplateTrails(const TwoTemplateCase& s) {
  auto search = JobSearch::Create(s.workload, s.target, s.templates, "random", 1, {}, "");
  EXPECT_TRUE(search.ok()) << search.status();
  if (!search.ok()) {
    return nullptr;
  }
  std::vector<Candidate> defaults = (*search)->Propose(2);
  EXPECT_EQ(defaults.size(), 2u);
  for (const Candidate& c : defaults) {
    (*search)->Observe(
        c.tpl, TrialOutcome{c.config, ErrorKind::kNone, c.tpl == s.templates[0] ? 1e-3 : 2e-3});
  }
  return std::move(*search);
}

TEST(JobSearchTest, ATrailingTemplateTakesEveryTurnWhileNoOtherCanPropose) {
  TwoTemplateCase s;
  ASSERT_EQ(s.templates.size(), 2u);
  const KernelTemplate* trailing = s.templates[1];
  std::unique_ptr<JobSearch> search = SearchWhoseSecondTemplateTrails(s);
  ASSERT_NE(search, nullptr);
  // The leader's library is on no worker now (the filter), so the trailing template proposes.
  std::vector<Candidate> batch =
      search->Propose(12, [&](const KernelTemplate* tpl) { return tpl == trailing; });
  EXPECT_EQ(batch.size(), 12u);
  EXPECT_EQ(CountByTemplate(batch)[trailing], 12);
}

TEST(JobSearchTest, OutstandingProposalsOfASavedStateComeFirstUnlessRecordedMeanwhile) {
  GemmCase s;
  auto a = JobSearch::Create(s.workload, s.target, s.templates, "random", 5, {}, "");
  ASSERT_TRUE(a.ok()) << a.status();
  std::vector<Candidate> proposed = (*a)->Propose(4);
  ASSERT_EQ(proposed.size(), 4u);
  (*a)->Observe(proposed[1].tpl, TrialOutcome{proposed[1].config, ErrorKind::kNone, 1e-3});
  EXPECT_EQ((*a)->outstanding().size(), 3u);
  std::string state = (*a)->SaveState();

  // Another job recorded proposed[2] since; proposed[1] is this job's own record.
  std::vector<ConfigKey> log;
  for (int i : {1, 2}) {
    log.push_back({std::string(proposed[i].tpl->name), proposed[i].tpl->version,
                   ConfigToString(proposed[i].config)});
  }
  auto b = JobSearch::Create(s.workload, s.target, s.templates, "random", 5, log, state);
  ASSERT_TRUE(b.ok()) << b.status();
  std::vector<Candidate> again = (*b)->Propose(2);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(Key(again[0]), Key(proposed[0]));
  EXPECT_EQ(Key(again[1]), Key(proposed[3]));
  std::vector<Candidate> next = (*b)->Propose(1);
  ASSERT_EQ(next.size(), 1u);
  for (const Candidate& c : proposed) {
    EXPECT_NE(Key(next[0]), Key(c));
  }
}

}  // namespace
}  // namespace tune::tuner
