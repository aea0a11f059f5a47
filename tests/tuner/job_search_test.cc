#include "tuner/scheduler/job_search.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "common/host_cpu.h"
#include "tuner/builder/fault_templates.h"

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

// gemm.gpu.tiled offers seeds (its presets with grid splits of K) for a 1024^3 GEMM on CUDA.
struct GpuGemmCase {
  Workload workload = *Workload::Parse("gemm:M=1024,N=1024,K=1024");
  Target target = *Target::Parse("cuda -arch=sm_90");
  const KernelTemplate* tpl = FindTemplate("gemm.gpu.tiled", TargetKind::kCuda);
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

TEST(JobSearchTest, SeedsAlreadyMeasuredOrOutstandingInASavedStateAreNotProposedAgain) {
  GpuGemmCase s;
  const Config& measured = s.seeds[1];
  std::vector<ConfigKey> log = {
      {std::string(s.tpl->name), s.tpl->version, ConfigToString(measured)}};
  auto a = JobSearch::Create(s.workload, s.target, {s.tpl}, "random", 1, log, "");
  ASSERT_TRUE(a.ok()) << a.status();
  std::vector<Candidate> first = (*a)->Propose(3);  // the default and two seeds, outstanding
  std::string state = (*a)->SaveState();
  auto b = JobSearch::Create(s.workload, s.target, {s.tpl}, "random", 1, log, state);
  ASSERT_TRUE(b.ok()) << b.status();
  std::vector<Candidate> again = (*b)->Propose(static_cast<int>(s.seeds.size()) + 10);
  std::map<std::string, int> times;
  for (const Candidate& c : again) {
    ++times[Key(c)];
    EXPECT_NE(c.config, measured) << "a measured seed was proposed";
  }
  for (const Candidate& c : first) {
    EXPECT_EQ(times[Key(c)], 1) << Key(c) << " outstanding before the save";
  }
  for (const auto& [key, n] : times) {
    EXPECT_EQ(n, 1) << key;
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
  for (const Candidate& c : (*a)->Propose(4)) {
    (*a)->Observe(c.tpl, TrialOutcome{c.config, ErrorKind::kNone, 1e-3});
  }
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

// A job of `trials` trials whose daemon keeps up to `window` proposals ahead of the recorded
// trials, as the build pipeline does. After each recorded trial the state is saved, as a commit
// saves it; at each of `kills` (numbers of recorded trials) the daemon dies: the proposals not
// recorded are lost, and a new search starts from the last saved state and the log's records.
// Trial times differ by config (a fixed function of it), so that model-based strategies fit on
// them. Returns the configs recorded, in order.
std::vector<std::string> RunJob(std::string_view strategy, int trials, int window,
                                const std::set<int>& kills) {
  GemmCase s;
  std::vector<ConfigKey> log;
  std::vector<PastTrial> history;
  std::vector<std::string> recorded;
  std::string saved;
  auto fresh = [&] {
    auto search =
        JobSearch::Create(s.workload, s.target, s.templates, strategy, 11, log, saved, history);
    EXPECT_TRUE(search.ok()) << search.status();
    return std::move(*search);
  };
  std::unique_ptr<JobSearch> search = fresh();
  std::deque<Candidate> ahead;
  std::set<int> killed;
  while (static_cast<int>(recorded.size()) < trials) {
    while (static_cast<int>(ahead.size()) < window &&
           static_cast<int>(recorded.size() + ahead.size()) < trials) {
      std::vector<Candidate> next = search->Propose(1);
      if (next.empty()) {
        break;
      }
      ahead.push_back(next.front());
    }
    const int count = static_cast<int>(recorded.size());
    if (kills.contains(count) && killed.insert(count).second) {
      // The daemon dies with a full window proposed since the last save: none of it recorded.
      ahead.clear();
      search = fresh();
      continue;
    }
    if (ahead.empty()) {
      break;
    }
    // Trials finish out of order: the newest of the window first.
    Candidate done = ahead.back();
    ahead.pop_back();
    const double secs = 1e-3 * (1 + static_cast<double>(std::hash<std::string>()(Key(done)) % 97));
    search->Observe(done.tpl, TrialOutcome{done.config, ErrorKind::kNone, secs});
    saved = search->SaveState();
    recorded.push_back(Key(done));
    log.push_back({std::string(done.tpl->name), done.tpl->version, ConfigToString(done.config)});
    history.push_back(PastTrial{log.back(), ErrorKind::kNone, secs});
  }
  return recorded;
}

std::set<std::string> AsSet(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

TEST(JobSearchTest, ProposesTheNearestWorkloadsBestConfigsRightAfterTheDefault) {
  GemmCase s;
  const KernelTemplate* tpl = s.templates.front();
  const ConfigSpace space = tpl->space(s.workload, s.target);
  const std::vector<Config> seeds =
      tpl->seeds ? tpl->seeds(s.workload, s.target) : std::vector<Config>{};
  const Workload near = *Workload::Parse("gemm:M=64,N=64,K=48");
  const Workload far = *Workload::Parse("gemm:M=64,N=64,K=256");
  // Configs valid here and on the other workload, none of them a seed or the default.
  std::vector<Config> lend;
  std::vector<Config> not_lent = seeds;
  not_lent.push_back(tpl->default_config(s.workload, s.target));
  std::mt19937_64 rng(3);
  for (const Workload& other : {near, near, far}) {
    const ConfigSpace there = tpl->space(other, s.target);
    const size_t wanted = lend.size() + 1;
    for (int tries = 0; tries < 10000 && lend.size() < wanted; ++tries) {
      Config c = *space.Sample(rng);
      if (there.IsValid(c) && std::find(not_lent.begin(), not_lent.end(), c) == not_lent.end() &&
          std::find(lend.begin(), lend.end(), c) == lend.end()) {
        lend.push_back(c);
      }
    }
  }
  ASSERT_EQ(lend.size(), 3u) << "no config valid in both spaces";
  std::map<std::string, std::vector<TemplateTrial>, std::less<>> transfer;
  transfer[std::string(tpl->name)] = {
      {near.ToString(), ConfigToString(lend[0]), ErrorKind::kNone, 1e-3},
      {near.ToString(), ConfigToString(lend[1]), ErrorKind::kNone, 2e-3},  // slower: not lent
      {far.ToString(), ConfigToString(lend[2]), ErrorKind::kNone, 1e-3},
      {"conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3", ConfigToString(lend[1]), ErrorKind::kNone,
       1e-4},  // other op
  };
  // Three lent trials cannot train xgb's model: both strategies propose the seeds themselves.
  for (const std::string& strategy : {std::string("random"), std::string("xgb")}) {
    auto search = JobSearch::Create(s.workload, s.target, {tpl}, strategy, 1, {}, "", {}, transfer);
    ASSERT_TRUE(search.ok()) << search.status();
    std::vector<Config> first;
    for (const Candidate& c : (*search)->Propose(static_cast<int>(3 + seeds.size()))) {
      first.push_back(c.config);
    }
    ASSERT_EQ(first.size(), 3 + seeds.size()) << strategy;
    // The default, the lent configs (nearest workload first), then the seeds.
    EXPECT_EQ(first[1], lend[0]) << strategy;
    EXPECT_EQ(first[2], lend[2]) << strategy;
    EXPECT_EQ(std::vector<Config>(first.begin() + 3, first.end()), seeds) << strategy;
    EXPECT_EQ(std::find(first.begin(), first.end(), lend[1]), first.end())
        << strategy << ": a slower config was lent";
  }
}

// Enough lent trials of another shape to train the cost model: the lent best config follows the
// default, and the template's seeds are no longer first in line (the model ranks them).
TEST(JobSearchTest, WithAModelTrainedOnLentTrialsTheSeedsAreNotProposedFirst) {
  GemmCase s;
  const KernelTemplate* tpl = s.templates.front();
  ASSERT_TRUE(tpl->seeds);
  const std::vector<Config> seeds = tpl->seeds(s.workload, s.target);
  ASSERT_GE(seeds.size(), 4u);
  const Workload near = *Workload::Parse("gemm:M=64,N=64,K=48");
  const std::vector<Config> valid = tpl->space(near, s.target).EnumerateValid(64);
  ASSERT_EQ(valid.size(), 64u);
  std::map<std::string, std::vector<TemplateTrial>, std::less<>> transfer;
  for (size_t i = 0; i < valid.size(); ++i) {
    transfer[std::string(tpl->name)].push_back({near.ToString(), ConfigToString(valid[i]),
                                                ErrorKind::kNone,
                                                1e-3 * static_cast<double>(1 + (i * 7) % 13)});
  }
  auto search = JobSearch::Create(s.workload, s.target, {tpl}, "xgb", 1, {}, "", {}, transfer);
  ASSERT_TRUE(search.ok()) << search.status();
  std::vector<Config> first;
  for (const Candidate& c : (*search)->Propose(static_cast<int>(2 + seeds.size()))) {
    first.push_back(c.config);
  }
  ASSERT_EQ(first.size(), 2 + seeds.size());
  EXPECT_EQ(first[0], tpl->default_config(s.workload, s.target));
  const ConfigSpace space = tpl->space(s.workload, s.target);
  std::optional<Config> lent_best;  // the fastest lent config valid here
  for (size_t i = 0; i < valid.size() && !lent_best; ++i) {
    if ((i * 7) % 13 == 0 && space.IsValid(valid[i])) {
      lent_best = valid[i];
    }
  }
  if (lent_best && *lent_best != first[0]) {
    EXPECT_EQ(first[1], *lent_best);
  }
  EXPECT_NE(
      std::vector<Config>(first.end() - static_cast<std::ptrdiff_t>(seeds.size()), first.end()),
      seeds)
      << "the seeds were proposed before the model's picks";
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
  std::vector<const KernelTemplate*> templates = TemplatesFor(workload, target);
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

TEST(JobSearchTest, ATemplateTrailingTheJobsBestTakesOneTurnInFourUntilItCatchesUp) {
  TwoTemplateCase s;
  ASSERT_EQ(s.templates.size(), 2u);
  const KernelTemplate* leader = s.templates[0];
  const KernelTemplate* trailing = s.templates[1];
  std::unique_ptr<JobSearch> search = SearchWhoseSecondTemplateTrails(s);
  ASSERT_NE(search, nullptr);

  // Each round of turns the leader proposes once; the trailing template in one round of four.
  std::vector<Candidate> batch = search->Propose(40);
  ASSERT_EQ(batch.size(), 40u);
  std::map<const KernelTemplate*, int> count = CountByTemplate(batch);
  EXPECT_GE(count[trailing], 40 / 5 - 1);
  EXPECT_LE(count[trailing], 40 / 5 + 1);
  for (const Candidate& c : batch) {
    search->Observe(c.tpl, TrialOutcome{c.config, ErrorKind::kNone, c.tpl == leader ? 1e-3 : 2e-3});
  }

  // One of its configs comes within kTrailingFactor of the best: turns are even again.
  std::vector<Candidate> next = search->Propose(20);
  auto caught_up =
      std::find_if(next.begin(), next.end(), [&](const Candidate& c) { return c.tpl == trailing; });
  ASSERT_NE(caught_up, next.end());
  for (const Candidate& c : next) {
    const bool close = &c == &*caught_up;
    search->Observe(c.tpl, TrialOutcome{c.config, ErrorKind::kNone, close ? 1.05e-3 : 2e-3});
  }
  count = CountByTemplate(search->Propose(20));
  EXPECT_EQ(count[leader], 10);
  EXPECT_EQ(count[trailing], 10);
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

TEST(JobSearchTest, AResumedSearchKnowsWhichTemplateTrailsFromTheLogAndKeepsItsRound) {
  TwoTemplateCase s;
  const KernelTemplate* leader = s.templates[0];
  const KernelTemplate* trailing = s.templates[1];
  std::vector<ConfigKey> log;
  std::vector<PastTrial> history;
  auto a = JobSearch::Create(s.workload, s.target, s.templates, "random", 2, {}, "");
  ASSERT_TRUE(a.ok()) << a.status();
  for (int i = 0; i < 3; ++i) {
    for (const Candidate& c : (*a)->Propose(5)) {
      const double secs = c.tpl == leader ? 1e-3 : 3e-3;
      (*a)->Observe(c.tpl, TrialOutcome{c.config, ErrorKind::kNone, secs});
      log.push_back({std::string(c.tpl->name), c.tpl->version, ConfigToString(c.config)});
      history.push_back({log.back(), ErrorKind::kNone, secs});
    }
  }
  const std::string state = (*a)->SaveState();
  auto b = JobSearch::Create(s.workload, s.target, s.templates, "random", 2, log, state, history);
  ASSERT_TRUE(b.ok()) << b.status();
  std::vector<Candidate> next_a = (*a)->Propose(15);
  std::vector<Candidate> next_b = (*b)->Propose(15);
  ASSERT_EQ(next_a.size(), next_b.size());
  for (size_t i = 0; i < next_a.size(); ++i) {
    EXPECT_EQ(Key(next_a[i]), Key(next_b[i])) << "proposal " << i;
  }
  EXPECT_LE(CountByTemplate(next_b)[trailing], 4);
}

class EveryStrategyJobTest : public testing::TestWithParam<std::string> {};

TEST_P(EveryStrategyJobTest, AJobKilledAtAnyPointMeasuresExactlyTheConfigsOfAnUninterruptedRun) {
  constexpr int kTrials = 12;
  const std::string& strategy = GetParam();
  for (int window : {1, 3, 5}) {
    const std::vector<std::string> whole = RunJob(strategy, kTrials, window, {});
    ASSERT_EQ(whole.size(), static_cast<size_t>(kTrials));
    for (int kill = 0; kill < kTrials; ++kill) {
      std::vector<std::string> resumed = RunJob(strategy, kTrials, window, {kill});
      EXPECT_EQ(AsSet(resumed), AsSet(whole))
          << strategy << ", window " << window << ", killed after " << kill << " trials";
      EXPECT_EQ(resumed.size(), whole.size()) << "a config was measured twice";
    }
    // Killed again and again.
    std::vector<std::string> battered = RunJob(strategy, kTrials, window, {1, 2, 5, 6, 9});
    EXPECT_EQ(AsSet(battered), AsSet(whole)) << strategy << ", window " << window;
  }
}

INSTANTIATE_TEST_SUITE_P(All, EveryStrategyJobTest, testing::ValuesIn(StrategyNames()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

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
