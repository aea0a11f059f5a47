#include "search/composite_search.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/search/synthetic_spaces.h"

namespace tune {
namespace {

using synthetic::DescribeA;
using synthetic::DescribeB;

const std::string kWorkload = "gemm:M=64,N=64,K=64";
const std::vector<float> kShape = {64, 64, 64};

std::unique_ptr<CompositeSearch> Create(
    std::vector<SearchSpace> spaces, std::string_view strategy, uint64_t seed,
    const std::vector<RecordedConfig>& measured = {}, std::string_view state = "",
    const std::vector<RecordedTrial>& history = {},
    const std::map<std::string, std::vector<LentTrial>, std::less<>>& transfer = {}) {
  auto search = CompositeSearch::Create(kWorkload, kShape, std::move(spaces), strategy, seed,
                                        measured, state, history, transfer);
  EXPECT_TRUE(search.ok()) << search.status();
  return search.ok() ? std::move(search).value() : nullptr;
}

std::string Key(const CompositeSearch& search, const Proposal& p) {
  return search.space(p.space).name + " " + ConfigToString(p.config);
}

RecordedConfig Record(const CompositeSearch& search, const Proposal& p) {
  const SearchSpace& desc = search.space(p.space);
  return {desc.name, desc.version, ConfigToString(p.config)};
}

TEST(CompositeSearchTest, NeverProposesAConfigTwiceNorOneAlreadyMeasured) {
  auto first = Create({DescribeA(), DescribeB()}, "random", 7);
  std::vector<Proposal> measured = first->Propose(5);
  ASSERT_EQ(measured.size(), 5u);
  std::vector<RecordedConfig> log;
  std::set<std::string> seen;
  for (const Proposal& p : measured) {
    log.push_back(Record(*first, p));
    seen.insert(Key(*first, p));
  }
  auto second = Create({DescribeA(), DescribeB()}, "random", 7, log);
  for (const Proposal& p : second->Propose(100)) {
    EXPECT_TRUE(seen.insert(Key(*second, p)).second) << "proposed twice: " << Key(*second, p);
  }
}

TEST(CompositeSearchTest, ProposesEachSpacesDefaultConfigFirstAndOnlyOnce) {
  auto search = Create({DescribeA(), DescribeB()}, "grid", 1);
  std::vector<Proposal> first = search->Propose(2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].space, 0u);
  EXPECT_EQ(first[0].config, DescribeA().default_config);
  EXPECT_EQ(first[1].space, 1u);
  EXPECT_EQ(first[1].config, DescribeB().default_config);
  for (const Proposal& p : search->Propose(500)) {
    EXPECT_NE(p.config, search->space(p.space).default_config) << "a default was proposed twice";
  }
}

TEST(CompositeSearchTest, ProposesTheSeedsInOrderAfterTheDefaultAndBeforeItsStrategy) {
  SearchSpace a = DescribeA();
  // The default among the seeds is proposed once, as the default; an invalid seed never.
  a.seeds.insert(a.seeds.begin() + 1, a.default_config);
  a.seeds.push_back({{"x", 32}, {"y", 8}, {"z", 0}});
  auto search = Create({a}, "random", 1);
  std::vector<Proposal> got = search->Propose(20);
  ASSERT_EQ(got.size(), 20u);
  EXPECT_EQ(got[0].config, a.default_config);
  const std::vector<Config> seeds = DescribeA().seeds;
  for (size_t i = 0; i < seeds.size(); ++i) {
    EXPECT_EQ(got[1 + i].config, seeds[i]) << "proposal " << 1 + i;
  }
  std::set<std::string> keys;
  for (const Proposal& p : got) {
    EXPECT_TRUE(keys.insert(Key(*search, p)).second) << "proposed twice: " << Key(*search, p);
    EXPECT_TRUE(a.space.IsValid(p.config)) << Key(*search, p);
  }
}

TEST(CompositeSearchTest, SeedsAlreadyMeasuredOrOutstandingInASavedStateAreNotProposedAgain) {
  const SearchSpace a = DescribeA();
  const Config& measured = a.seeds[1];
  const std::vector<RecordedConfig> log = {{a.name, a.version, ConfigToString(measured)}};
  auto first = Create({a}, "random", 1, log);
  std::vector<Proposal> proposed = first->Propose(2);  // the default and a seed, outstanding
  const std::string state = first->SaveState();
  auto again = Create({a}, "random", 1, log, state);
  std::map<std::string, int> times;
  for (const Proposal& p : again->Propose(20)) {
    ++times[Key(*again, p)];
    EXPECT_NE(p.config, measured) << "a measured seed was proposed";
  }
  for (const Proposal& p : proposed) {
    EXPECT_EQ(times[Key(*first, p)], 1) << Key(*first, p) << " outstanding before the save";
  }
  for (const auto& [key, n] : times) {
    EXPECT_EQ(n, 1) << key;
  }
}

TEST(CompositeSearchTest, SkipsTheDefaultConfigWhenTheLogHasItForTheSameVersionOnly) {
  const SearchSpace a = DescribeA();
  const std::string text = ConfigToString(a.default_config);
  auto same = Create({a}, "random", 1, {{a.name, a.version, text}});
  for (const Proposal& p : same->Propose(50)) {
    EXPECT_NE(ConfigToString(p.config), text);
  }
  auto older = Create({a}, "random", 1, {{a.name, a.version - 1, text}});
  EXPECT_EQ(ConfigToString(older->Propose(1).at(0).config), text)
      << "a record of another version is of another space";
}

TEST(CompositeSearchTest, ResumesTheSameSequenceFromItsSavedState) {
  auto a = Create({DescribeA(), DescribeB()}, "random", 3);
  std::vector<RecordedConfig> log;
  std::vector<RecordedTrial> history;
  for (const Proposal& p : a->Propose(4)) {
    a->Observe(p.space, TrialOutcome{p.config, ErrorKind::kNone, 1e-3});
    log.push_back(Record(*a, p));
    history.push_back({log.back(), ErrorKind::kNone, 1e-3});
  }
  const std::string state = a->SaveState();
  std::vector<Proposal> next_a = a->Propose(8);
  auto b = Create({DescribeA(), DescribeB()}, "random", 3, log, state, history);
  std::vector<Proposal> next_b = b->Propose(8);
  ASSERT_EQ(next_a.size(), next_b.size());
  for (size_t i = 0; i < next_a.size(); ++i) {
    EXPECT_EQ(Key(*a, next_a[i]), Key(*b, next_b[i]));
  }
}

TEST(CompositeSearchTest, AStateOfAnotherLayoutOrSpaceStartsAfreshInsteadOfFailing) {
  const std::string foreign = R"({"next":0,"states":{"synthetic.a":"{\"strategy\":\"random\"}"}})";
  EXPECT_FALSE(Create({DescribeA()}, "random", 1, {}, foreign)->Propose(1).empty());
  // A state of synthetic.a saved when its space had other knobs.
  auto b = Create({DescribeB()}, "random", 1);
  b->Propose(3);
  std::string state = b->SaveState();
  for (size_t at = state.find("synthetic.b"); at != std::string::npos;
       at = state.find("synthetic.b")) {
    state.replace(at, 11, "synthetic.a");
  }
  auto search = Create({DescribeA()}, "random", 1, {}, state);
  std::vector<Proposal> got = search->Propose(3);
  ASSERT_EQ(got.size(), 3u);
  for (const Proposal& p : got) {
    EXPECT_TRUE(DescribeA().space.IsValid(p.config)) << Key(*search, p);
  }
}

TEST(CompositeSearchTest, GridOverSmallSpacesEndsExhausted) {
  auto search = Create({DescribeA(), DescribeB()}, "grid", 1);
  size_t total = 0;
  while (true) {
    std::vector<Proposal> batch = search->Propose(16);
    if (batch.empty()) {
      break;
    }
    total += batch.size();
    ASSERT_LE(total, 88u + 36u);
  }
  EXPECT_EQ(total, 88u + 36u);
  EXPECT_TRUE(search->Exhausted());
}

TEST(CompositeSearchTest, ProposesTheNearestWorkloadsBestConfigsRightAfterTheDefault) {
  const SearchSpace a = DescribeA();
  const std::string near = "gemm:M=64,N=64,K=48";
  const std::string far = "gemm:M=64,N=64,K=256";
  const Config lend0 = {{"x", 1}, {"y", 1}, {"z", 0}};
  const Config lend1 = {{"x", 1}, {"y", 2}, {"z", 0}};
  const Config lend2 = {{"x", 1}, {"y", 3}, {"z", 0}};
  std::map<std::string, std::vector<LentTrial>, std::less<>> transfer;
  transfer[a.name] = {
      {far, ConfigToString(lend2), ErrorKind::kNone, 1e-3},
      {near, ConfigToString(lend0), ErrorKind::kNone, 1e-3},
      {near, ConfigToString(lend1), ErrorKind::kNone, 2e-3},  // slower: not lent
      {"conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3", ConfigToString(lend1), ErrorKind::kNone,
       1e-4},  // another operator
  };
  // Four lent trials cannot train xgb's model: both strategies propose the seeds themselves.
  for (const std::string strategy : {"random", "xgb"}) {
    auto search = Create({a}, strategy, 1, {}, "", {}, transfer);
    std::vector<Config> first;
    for (const Proposal& p : search->Propose(static_cast<int>(3 + a.seeds.size()))) {
      first.push_back(p.config);
    }
    ASSERT_EQ(first.size(), 3 + a.seeds.size()) << strategy;
    // The default, the lent configs (nearest workload first), then the seeds.
    EXPECT_EQ(first[0], a.default_config) << strategy;
    EXPECT_EQ(first[1], lend0) << strategy;
    EXPECT_EQ(first[2], lend2) << strategy;
    EXPECT_EQ(std::vector<Config>(first.begin() + 3, first.end()), a.seeds) << strategy;
  }
}

// 64 lent trials of another workload, fast and slow by a fixed rule.
std::map<std::string, std::vector<LentTrial>, std::less<>> LentTrials(size_t step, size_t modulo) {
  std::map<std::string, std::vector<LentTrial>, std::less<>> transfer;
  const std::vector<Config> valid = synthetic::SpaceA().EnumerateValid(64);
  for (size_t i = 0; i < valid.size(); ++i) {
    transfer["synthetic.a"].push_back({"gemm:M=64,N=64,K=48", ConfigToString(valid[i]),
                                       ErrorKind::kNone,
                                       1e-3 * static_cast<double>(1 + (i * step) % modulo)});
  }
  return transfer;
}

// Enough lent trials to train the cost model: the lent best config follows the default, and
// the seeds are no longer first in line (the model ranks them).
TEST(CompositeSearchTest, WithAModelTrainedOnLentTrialsTheSeedsAreNotProposedFirst) {
  const SearchSpace a = DescribeA();
  auto search = Create({a}, "xgb", 1, {}, "", {}, LentTrials(7, 13));
  std::vector<Config> first;
  for (const Proposal& p : search->Propose(static_cast<int>(2 + a.seeds.size()))) {
    first.push_back(p.config);
  }
  ASSERT_EQ(first.size(), 2 + a.seeds.size());
  EXPECT_EQ(first[0], a.default_config);
  EXPECT_EQ(first[1], synthetic::SpaceA().EnumerateValid(1)[0]) << "the fastest lent config";
  EXPECT_NE(
      std::vector<Config>(first.end() - static_cast<std::ptrdiff_t>(a.seeds.size()), first.end()),
      a.seeds)
      << "the seeds were proposed before the model's picks";
}

// Handing the seeds to the model is part of the saved state: a job resumed from it proposes
// what the uninterrupted job proposes.
TEST(CompositeSearchTest, AResumedJobWithTransferProposesWhatTheUninterruptedOneWould) {
  const auto transfer = LentTrials(5, 11);
  auto uninterrupted = Create({DescribeA()}, "xgb", 3, {}, "", {}, transfer);
  std::vector<RecordedConfig> log;
  std::vector<RecordedTrial> history;
  for (const Proposal& p : uninterrupted->Propose(12)) {
    const TrialOutcome o = synthetic::Outcome(p.config);
    uninterrupted->Observe(p.space, o);
    log.push_back(Record(*uninterrupted, p));
    history.push_back({log.back(), o.error, o.secs});
  }
  auto resumed =
      Create({DescribeA()}, "xgb", 3, log, uninterrupted->SaveState(), history, transfer);
  std::vector<std::string> next, next_resumed;
  for (const Proposal& p : uninterrupted->Propose(16)) {
    next.push_back(Key(*uninterrupted, p));
  }
  for (const Proposal& p : resumed->Propose(16)) {
    next_resumed.push_back(Key(*resumed, p));
  }
  EXPECT_EQ(next_resumed, next);
}

// A model job's tasks lend each other their trials as they are recorded: the lent trials train
// the cost model before the search has data of its own, so its first proposals follow the model
// instead of a random draw. Trials that cannot teach it anything change nothing.
TEST(CompositeSearchTest, LentTrialsOfAnotherWorkloadTrainTheModelAndOthersAreIgnored) {
  const std::vector<Config> valid = synthetic::SpaceA().EnumerateValid(32);
  auto proposals = [&](const std::string& lent_workload, bool lending) {
    SearchSpace a = DescribeA();
    if (!lending) {
      a.lending = {};
    }
    auto search = Create({a}, "xgb", 7);
    for (size_t i = 0; i < valid.size() && !lent_workload.empty(); ++i) {
      search->Lend(0, {lent_workload, ConfigToString(valid[i]),
                       i % 7 != 3 ? ErrorKind::kNone : ErrorKind::kWrongAnswer,
                       1e-3 * static_cast<double>(1 + (i * 5) % 11)});
    }
    std::vector<std::string> keys;
    for (const Proposal& p : search->Propose(40)) {
      keys.push_back(Key(*search, p));
    }
    return keys;
  };
  const std::string sibling = "gemm:M=64,N=64,K=48";
  const std::vector<std::string> alone = proposals("", true);
  EXPECT_NE(proposals(sibling, true), alone);
  EXPECT_EQ(proposals(sibling, false), alone) << "a space that takes no lent trials";
  EXPECT_EQ(proposals(kWorkload, true), alone) << "its own workload is observed, not lent";
  EXPECT_EQ(proposals("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3", true), alone) << "another operator";
  EXPECT_EQ(proposals("gemm:M=0", true), alone) << "a malformed workload";
}

std::map<size_t, int> CountBySpace(const std::vector<Proposal>& proposals) {
  std::map<size_t, int> count;
  for (const Proposal& p : proposals) {
    ++count[p.space];
  }
  return count;
}

// A random search of two spaces whose defaults were measured, the second's twice as slow.
std::unique_ptr<CompositeSearch> SearchWhoseSecondSpaceTrails() {
  auto search = Create({DescribeA(), DescribeB()}, "random", 1);
  std::vector<Proposal> defaults = search->Propose(2);
  EXPECT_EQ(defaults.size(), 2u);
  for (const Proposal& p : defaults) {
    search->Observe(p.space, TrialOutcome{p.config, ErrorKind::kNone, p.space == 0 ? 1e-3 : 2e-3});
  }
  return search;
}

TEST(CompositeSearchTest, ASpaceTrailingTheJobsBestTakesOneTurnInFourUntilItCatchesUp) {
  std::unique_ptr<CompositeSearch> search = SearchWhoseSecondSpaceTrails();
  // Each round of turns the leader proposes once; the trailing space in one round of four.
  std::vector<Proposal> batch = search->Propose(30);
  ASSERT_EQ(batch.size(), 30u);
  std::map<size_t, int> count = CountBySpace(batch);
  EXPECT_GE(count[1], 30 / 5 - 1);
  EXPECT_LE(count[1], 30 / 5 + 1);
  for (const Proposal& p : batch) {
    search->Observe(p.space, TrialOutcome{p.config, ErrorKind::kNone, p.space == 0 ? 1e-3 : 2e-3});
  }
  // One of its configs comes within kTrailingFactor of the best: turns are even again.
  std::vector<Proposal> next = search->Propose(10);
  auto caught_up =
      std::find_if(next.begin(), next.end(), [](const Proposal& p) { return p.space == 1; });
  ASSERT_NE(caught_up, next.end());
  for (const Proposal& p : next) {
    const bool close = &p == &*caught_up;
    search->Observe(p.space, TrialOutcome{p.config, ErrorKind::kNone, close ? 1.05e-3 : 2e-3});
  }
  count = CountBySpace(search->Propose(10));
  EXPECT_EQ(count[0], 5);
  EXPECT_EQ(count[1], 5);
}

TEST(CompositeSearchTest, ATrailingSpaceTakesEveryTurnWhileNoOtherCanPropose) {
  std::unique_ptr<CompositeSearch> search = SearchWhoseSecondSpaceTrails();
  // The leader's library is on no worker now (the filter), so the trailing space proposes.
  std::vector<Proposal> batch = search->Propose(12, [](size_t space) { return space == 1; });
  EXPECT_EQ(batch.size(), 12u);
  EXPECT_EQ(CountBySpace(batch)[1], 12);
}

TEST(CompositeSearchTest, AResumedSearchKnowsWhichSpaceTrailsFromTheLogAndKeepsItsRound) {
  std::vector<RecordedConfig> log;
  std::vector<RecordedTrial> history;
  auto a = Create({DescribeA(), DescribeB()}, "random", 2);
  for (int i = 0; i < 3; ++i) {
    for (const Proposal& p : a->Propose(5)) {
      const double secs = p.space == 0 ? 1e-3 : 3e-3;
      a->Observe(p.space, TrialOutcome{p.config, ErrorKind::kNone, secs});
      log.push_back(Record(*a, p));
      history.push_back({log.back(), ErrorKind::kNone, secs});
    }
  }
  auto b = Create({DescribeA(), DescribeB()}, "random", 2, log, a->SaveState(), history);
  std::vector<Proposal> next_a = a->Propose(15);
  std::vector<Proposal> next_b = b->Propose(15);
  ASSERT_EQ(next_a.size(), next_b.size());
  for (size_t i = 0; i < next_a.size(); ++i) {
    EXPECT_EQ(Key(*a, next_a[i]), Key(*b, next_b[i])) << "proposal " << i;
  }
  EXPECT_LE(CountBySpace(next_b)[1], 4);
}

TEST(CompositeSearchTest, OutstandingProposalsOfASavedStateComeFirstUnlessRecordedMeanwhile) {
  auto a = Create({DescribeA(), DescribeB()}, "random", 5);
  std::vector<Proposal> proposed = a->Propose(4);
  ASSERT_EQ(proposed.size(), 4u);
  a->Observe(proposed[1].space, TrialOutcome{proposed[1].config, ErrorKind::kNone, 1e-3});
  EXPECT_EQ(a->outstanding().size(), 3u);
  const std::string state = a->SaveState();
  // Another job recorded proposed[2] since; proposed[1] is this job's own record.
  auto b = Create({DescribeA(), DescribeB()}, "random", 5,
                  {Record(*a, proposed[1]), Record(*a, proposed[2])}, state);
  std::vector<Proposal> again = b->Propose(2);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(Key(*b, again[0]), Key(*a, proposed[0]));
  EXPECT_EQ(Key(*b, again[1]), Key(*a, proposed[3]));
  std::vector<Proposal> next = b->Propose(1);
  ASSERT_EQ(next.size(), 1u);
  for (const Proposal& p : proposed) {
    EXPECT_NE(Key(*b, next[0]), Key(*a, p));
  }
}

TEST(CompositeSearchTest, ProposalsGivenUpAreNeitherOutstandingNorProposedAgain) {
  auto search = Create({DescribeA(), DescribeB()}, "random", 4);
  std::vector<Proposal> proposed = search->Propose(3);
  search->GiveUp(proposed[0].space, proposed[0].config);
  EXPECT_EQ(search->outstanding().size(), 2u);
  auto resumed = Create({DescribeA(), DescribeB()}, "random", 4, {}, search->SaveState());
  for (const Proposal& p : resumed->Propose(20)) {
    EXPECT_NE(Key(*resumed, p), Key(*search, proposed[0]));
  }
}

TEST(CompositeSearchTest, NoSpaceOrAnUnknownStrategyIsAnErrorNamingTheField) {
  auto none = CompositeSearch::Create(kWorkload, kShape, {}, "random", 1, {}, "");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("spec.templates"), std::string_view::npos);
  auto unknown = CompositeSearch::Create(kWorkload, kShape, {DescribeA()}, "simplex", 1, {}, "");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("spec.strategy"), std::string_view::npos);
}

// A job of `trials` trials whose daemon keeps up to `window` proposals ahead of the recorded
// trials, as the build pipeline does. After each recorded trial the state is saved, as a commit
// saves it; at each of `kills` (numbers of recorded trials) the daemon dies: the proposals not
// recorded are lost, and a new search starts from the last saved state and the log's records.
// Returns the configs recorded, in order.
std::vector<std::string> RunJob(std::string_view strategy, int trials, int window,
                                const std::set<int>& kills) {
  std::vector<RecordedConfig> log;
  std::vector<RecordedTrial> history;
  std::vector<std::string> recorded;
  std::string saved;
  auto fresh = [&] {
    return Create({DescribeA(), DescribeB()}, strategy, 11, log, saved, history);
  };
  std::unique_ptr<CompositeSearch> search = fresh();
  std::deque<Proposal> ahead;
  std::set<int> killed;
  while (static_cast<int>(recorded.size()) < trials) {
    while (static_cast<int>(ahead.size()) < window &&
           static_cast<int>(recorded.size() + ahead.size()) < trials) {
      std::vector<Proposal> next = search->Propose(1);
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
    const Proposal done = ahead.back();
    ahead.pop_back();
    const TrialOutcome outcome = synthetic::Outcome(done.config);
    search->Observe(done.space, outcome);
    saved = search->SaveState();
    recorded.push_back(Key(*search, done));
    log.push_back(Record(*search, done));
    history.push_back({log.back(), outcome.error, outcome.secs});
  }
  return recorded;
}

std::set<std::string> AsSet(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

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

// Every strategy that searches ("seeds" measures the default and seeds alone: its test is below).
std::vector<std::string> SearchingStrategies() {
  std::vector<std::string> names = StrategyNames();
  std::erase(names, "seeds");
  return names;
}

INSTANTIATE_TEST_SUITE_P(All, EveryStrategyJobTest, testing::ValuesIn(SearchingStrategies()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tune
