#include "tuner/job_search.h"

#include <gtest/gtest.h>

#include <set>

#include "common/host_cpu.h"

namespace tune::tuner {
namespace {

struct GemmCase {
  Workload workload = *Workload::Parse("gemm:M=64,N=64,K=64");
  Target target = Target::Parse("llvm -threads=1")->Resolved();
  std::vector<const KernelTemplate*> templates = TemplatesFor(workload, target);
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

TEST(JobSearchTest, ProposesEachTemplatesDefaultConfigFirstAndOnlyOnce) {
  GemmCase s;
  auto search = JobSearch::Create(s.workload, s.target, s.templates, "grid", 1, {}, "");
  ASSERT_TRUE(search.ok()) << search.status();
  std::vector<Candidate> first = (*search)->Propose(1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].config, s.templates[0]->default_config(s.workload, s.target));
  const std::string default_key = Key(first[0]);
  for (const Candidate& c : (*search)->Propose(500)) {
    EXPECT_NE(Key(c), default_key) << "the default config was proposed twice";
  }
}

TEST(JobSearchTest, SkipsTheDefaultConfigWhenTheLogAlreadyHasIt) {
  GemmCase s;
  const KernelTemplate* tpl = s.templates[0];
  std::vector<ConfigKey> log = {{std::string(tpl->name), tpl->version,
                                 ConfigToString(tpl->default_config(s.workload, s.target))}};
  auto search = JobSearch::Create(s.workload, s.target, s.templates, "random", 1, log, "");
  ASSERT_TRUE(search.ok()) << search.status();
  for (const Candidate& c : (*search)->Propose(50)) {
    EXPECT_NE(ConfigToString(c.config), log[0].config);
  }
}

TEST(JobSearchTest, ResumesTheSameSequenceFromItsSavedState) {
  GemmCase s;
  auto a = JobSearch::Create(s.workload, s.target, s.templates, "random", 3, {}, "");
  ASSERT_TRUE(a.ok()) << a.status();
  (*a)->Propose(4);
  std::string state = (*a)->SaveState();
  std::vector<Candidate> next_a = (*a)->Propose(4);

  auto b = JobSearch::Create(s.workload, s.target, s.templates, "random", 3, {}, state);
  ASSERT_TRUE(b.ok()) << b.status();
  std::vector<Candidate> next_b = (*b)->Propose(4);
  ASSERT_EQ(next_a.size(), next_b.size());
  for (size_t i = 0; i < next_a.size(); ++i) {
    EXPECT_EQ(Key(next_a[i]), Key(next_b[i]));
  }
}

TEST(JobSearchTest, AStateOfAnotherSpaceStartsAfreshInsteadOfFailing) {
  GemmCase s;
  std::string foreign = R"({"next":0,"states":{"gemm.cpu.blocked":"{\"strategy\":\"random\"}"}})";
  auto search = JobSearch::Create(s.workload, s.target, s.templates, "random", 1, {}, foreign);
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_FALSE((*search)->Propose(1).empty());
}

TEST(JobSearchTest, GridOverASmallSpaceEndsExhausted) {
  Workload tiny = *Workload::Parse("gemm:M=1,N=1,K=1");
  Target target = Target::Parse("llvm -threads=1")->Resolved();
  auto search = JobSearch::Create(tiny, target, TemplatesFor(tiny, target), "grid", 1, {}, "");
  ASSERT_TRUE(search.ok()) << search.status();
  size_t total = 0;
  while (true) {
    std::vector<Candidate> batch = (*search)->Propose(64);
    if (batch.empty()) {
      break;
    }
    total += batch.size();
    ASSERT_LT(total, 100000u);
  }
  EXPECT_GT(total, 0u);
  EXPECT_TRUE((*search)->Exhausted());
}

}  // namespace
}  // namespace tune::tuner
