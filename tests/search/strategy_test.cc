#include "search/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>

namespace tune {
namespace {

// 4 * 4 * 2 = 32 points; "a <= b" leaves 11 * 2 = 22 valid ones.
ConfigSpace SmallSpace() {
  ConfigSpace space;
  space.AddKnob("a", {1, 2, 3, 4});
  space.AddKnob("b", {1, 2, 4, 8});
  space.AddKnob("c", {0, 1});
  space.AddConstraint("a <= b", [](const Config& c) { return c.at("a") <= c.at("b"); });
  return space;
}

// 6^7 = 279,936 points, beyond the size random search enumerates: it draws instead.
// "k0 < 3" keeps half of them.
ConfigSpace LargeSpace() {
  ConfigSpace space;
  for (int i = 0; i < 7; ++i) {
    space.AddKnob("k" + std::to_string(i), {0, 1, 2, 3, 4, 5});
  }
  space.AddConstraint("k0 < 3", [](const Config& c) { return c.at("k0") < 3; });
  return space;
}

std::unique_ptr<SearchStrategy> Make(std::string_view name, const ConfigSpace& space, uint64_t seed,
                                     const std::vector<Config>& measured = {},
                                     std::string_view state = "") {
  auto strategy = MakeStrategy(name, space, seed, measured, state);
  EXPECT_TRUE(strategy.ok()) << strategy.status();
  return strategy.ok() ? std::move(strategy).value() : nullptr;
}

// Proposes in batches of `batch` until a batch comes back empty.
std::vector<Config> Drain(SearchStrategy& strategy, int batch) {
  std::vector<Config> out;
  while (true) {
    std::vector<Config> configs = strategy.Propose(batch);
    EXPECT_LE(static_cast<int>(configs.size()), batch);
    if (configs.empty()) {
      return out;
    }
    out.insert(out.end(), configs.begin(), configs.end());
  }
}

std::set<Config> AsSet(const std::vector<Config>& configs) {
  return std::set<Config>(configs.begin(), configs.end());
}

class EveryStrategyTest : public testing::TestWithParam<std::string> {};

TEST_P(EveryStrategyTest, ExhaustsExactlyTheValidSetWithoutRepeats) {
  ConfigSpace space = SmallSpace();
  auto strategy = Make(GetParam(), space, 3);
  ASSERT_NE(strategy, nullptr);
  EXPECT_EQ(strategy->name(), GetParam());
  EXPECT_FALSE(strategy->Exhausted());
  std::vector<Config> proposed = Drain(*strategy, 3);
  EXPECT_TRUE(strategy->Exhausted());
  EXPECT_EQ(proposed.size(), 22u);
  EXPECT_EQ(AsSet(proposed).size(), proposed.size()) << "a config was proposed twice";
  EXPECT_EQ(AsSet(proposed), AsSet(space.EnumerateValid(1000)));
  EXPECT_TRUE(strategy->Propose(5).empty());
}

TEST_P(EveryStrategyTest, IsExhaustedRightAfterProposingTheLastConfig) {
  ConfigSpace space = SmallSpace();
  auto strategy = Make(GetParam(), space, 3);
  EXPECT_EQ(strategy->Propose(21).size(), 21u);
  EXPECT_FALSE(strategy->Exhausted());
  EXPECT_EQ(strategy->Propose(21).size(), 1u);
  EXPECT_TRUE(strategy->Exhausted());
}

TEST_P(EveryStrategyTest, NeverProposesMeasuredConfigs) {
  ConfigSpace space = SmallSpace();
  std::vector<Config> valid = space.EnumerateValid(1000);
  std::vector<Config> measured = {valid[0],
                                  valid[7],
                                  valid[19],
                                  {{"a", 4}, {"b", 1}, {"c", 0}},  // invalid
                                  {{"a", 1}, {"x", 1}}};           // not a point of the space
  auto strategy = Make(GetParam(), space, 3, measured);
  std::vector<Config> proposed = Drain(*strategy, 4);
  EXPECT_EQ(proposed.size(), 19u);
  std::set<Config> expected = AsSet(valid);
  for (const Config& m : measured) {
    expected.erase(m);
  }
  EXPECT_EQ(AsSet(proposed), expected);
  EXPECT_EQ(AsSet(proposed).size(), proposed.size());
}

// A trial its workers could not measure says nothing of its config: the strategy neither notes
// it (its saved state is unchanged) nor stops proposing it.
TEST_P(EveryStrategyTest, IgnoresOutcomesThatAreNoVerdict) {
  ConfigSpace space = SmallSpace();
  std::vector<Config> valid = space.EnumerateValid(1000);
  auto strategy = Make(GetParam(), space, 5);
  const std::string before = strategy->SaveState();
  strategy->Observe(
      {{valid[3], ErrorKind::kWorkerLost, 0}, {valid[4], ErrorKind::kWorkerError, 0}});
  EXPECT_EQ(strategy->SaveState(), before);
  std::set<Config> proposed = AsSet(Drain(*strategy, 4));
  EXPECT_TRUE(proposed.contains(valid[3]));
  EXPECT_TRUE(proposed.contains(valid[4]));
}

TEST_P(EveryStrategyTest, NeverProposesObservedConfigs) {
  ConfigSpace space = SmallSpace();
  std::vector<Config> valid = space.EnumerateValid(1000);
  auto strategy = Make(GetParam(), space, 5);
  std::vector<Config> first = strategy->Propose(4);
  std::vector<TrialOutcome> outcomes;
  for (const Config& c : first) {
    outcomes.push_back({c, ErrorKind::kNone, 1e-3});
  }
  // Records of another job, warmed up into this search.
  outcomes.push_back({valid[18], ErrorKind::kNone, 2e-3});
  outcomes.push_back({valid[2], ErrorKind::kWrongAnswer, 0});
  strategy->Observe(outcomes);
  std::vector<Config> rest = Drain(*strategy, 4);
  std::set<Config> covered = AsSet(first);
  for (const Config& c : rest) {
    EXPECT_TRUE(covered.insert(c).second) << "repeated " << ConfigToString(c);
    EXPECT_NE(c, valid[18]);
    EXPECT_NE(c, valid[2]);
  }
  covered.insert(valid[18]);
  covered.insert(valid[2]);
  EXPECT_EQ(covered, AsSet(valid));
}

TEST_P(EveryStrategyTest, ResumedSearchContinuesTheSameSequenceWithoutRepeats) {
  ConfigSpace space = SmallSpace();
  // The same batch sizes as below: strategies that draw each batch from its own random stream
  // repeat a sequence only batch for batch.
  auto whole = Make(GetParam(), space, 11);
  std::vector<Config> uninterrupted = whole->Propose(7);
  for (const Config& c : Drain(*whole, 3)) {
    uninterrupted.push_back(c);
  }

  auto first = Make(GetParam(), space, 11);
  std::vector<Config> before = first->Propose(7);
  std::string state = first->SaveState();
  // The log knows only some of the proposals as measured when the daemon restarts; the seed
  // passed on resume is ignored in favour of the saved one.
  std::vector<Config> measured(before.begin(), before.begin() + 4);
  auto resumed = Make(GetParam(), space, 999, measured, state);
  ASSERT_NE(resumed, nullptr);
  std::vector<Config> after = Drain(*resumed, 3);

  std::vector<Config> joined = before;
  joined.insert(joined.end(), after.begin(), after.end());
  EXPECT_EQ(joined, uninterrupted);
  EXPECT_EQ(AsSet(joined).size(), 22u);
}

TEST_P(EveryStrategyTest, SavedStateOfAnExhaustedSearchStaysExhausted) {
  ConfigSpace space = SmallSpace();
  auto strategy = Make(GetParam(), space, 1);
  Drain(*strategy, 8);
  auto resumed = Make(GetParam(), space, 1, {}, strategy->SaveState());
  EXPECT_TRUE(resumed->Exhausted());
  EXPECT_TRUE(resumed->Propose(3).empty());
}

TEST_P(EveryStrategyTest, ProposesNothingForANonPositiveCount) {
  auto strategy = Make(GetParam(), SmallSpace(), 1);
  EXPECT_TRUE(strategy->Propose(0).empty());
  EXPECT_TRUE(strategy->Propose(-3).empty());
  EXPECT_EQ(Drain(*strategy, 100).size(), 22u);
}

TEST_P(EveryStrategyTest, SpaceWithoutValidConfigsIsExhaustedAtOnce) {
  ConfigSpace space = SmallSpace();
  space.AddConstraint("never", [](const Config&) { return false; });
  auto strategy = Make(GetParam(), space, 1);
  EXPECT_TRUE(strategy->Propose(4).empty());
  EXPECT_TRUE(strategy->Exhausted());
}

TEST_P(EveryStrategyTest, RejectsSavedStatesThatDoNotBelongToIt) {
  ConfigSpace space = SmallSpace();
  ConfigSpace other = SmallSpace();
  other.AddConstraint("c == 0", [](const Config& c) { return c.at("c") == 0; });
  std::string other_space_state = Make(GetParam(), other, 1)->SaveState();
  std::string other_name = GetParam() == "grid" ? "random" : "grid";
  std::string other_strategy_state = Make(other_name, space, 1)->SaveState();
  for (const std::string& bad : {std::string("not json"), std::string("[1]"), std::string("{}"),
                                 other_space_state, other_strategy_state}) {
    auto strategy = MakeStrategy(GetParam(), space, 1, {}, bad);
    ASSERT_FALSE(strategy.ok()) << bad;
    EXPECT_EQ(strategy.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(strategy.status().message()).rfind("saved_state: ", 0), 0u)
        << strategy.status();
  }
}

INSTANTIATE_TEST_SUITE_P(All, EveryStrategyTest,
                         testing::Values("grid", "random", "ga", "xgb", "auto"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(StrategyTest, UnknownNameIsRejectedListingTheAcceptedNames) {
  auto strategy = MakeStrategy("annealing", SmallSpace(), 1, {});
  ASSERT_FALSE(strategy.ok());
  EXPECT_EQ(strategy.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(strategy.status().message()),
            "search strategy 'annealing' is unknown; accepted: grid, random, ga, xgb, auto, seeds");
  EXPECT_EQ(StrategyNames(),
            (std::vector<std::string>{"grid", "random", "ga", "xgb", "auto", "seeds"}));
}

TEST(SeedsStrategyTest, ProposesNothingOfItsOwnAndIsExhaustedAtOnceAcrossARestart) {
  absl::StatusOr<std::unique_ptr<SearchStrategy>> seeds =
      MakeStrategy("seeds", SmallSpace(), 1, {});
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  EXPECT_TRUE((*seeds)->Propose(8).empty());
  EXPECT_TRUE((*seeds)->Exhausted());
  absl::StatusOr<std::unique_ptr<SearchStrategy>> resumed =
      MakeStrategy("seeds", SmallSpace(), 1, {}, (*seeds)->SaveState());
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_TRUE((*resumed)->Exhausted());
}

TEST(GridStrategyTest, VisitsValidConfigsInIndexOrder) {
  ConfigSpace space = SmallSpace();
  EXPECT_EQ(Drain(*Make("grid", space, 1), 6), space.EnumerateValid(1000));
}

TEST(GridStrategyTest, WalksHugeSpacesLazily) {
  ConfigSpace space;
  for (int i = 0; i < 12; ++i) {
    space.AddKnob("k" + std::to_string(10 + i), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  }
  // Laziness is measured as work done: how many raw points the strategy looked at.
  int checked = 0;
  space.AddConstraint("k21 is odd", [&checked](const Config& c) {
    ++checked;
    return c.at("k21") % 2 == 1;
  });
  ASSERT_EQ(space.RawSize(), 1'000'000'000'000u);
  auto strategy = Make("grid", space, 1);
  std::vector<Config> configs = strategy->Propose(3);
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(space.IndexOf(configs[2]), 5u);
  auto resumed = Make("grid", space, 1, {}, strategy->SaveState());
  std::vector<Config> next = resumed->Propose(1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(space.IndexOf(next[0]), 7u);
  EXPECT_FALSE(resumed->Exhausted());
  // Points 0..7 of 10^12 (with a few re-checks on resume), never a sweep of the space.
  EXPECT_GE(checked, 8);
  EXPECT_LE(checked, 64);
}

TEST(RandomStrategyTest, SequenceDependsOnTheSeedOnly) {
  ConfigSpace space = SmallSpace();
  std::vector<Config> a = Drain(*Make("random", space, 42), 5);
  EXPECT_EQ(a, Drain(*Make("random", space, 42), 7));
  EXPECT_NE(a, Drain(*Make("random", space, 43), 5));
  EXPECT_NE(a, space.EnumerateValid(1000)) << "not shuffled";

  // Measured configs are filtered out of the same sequence, not reshuffled.
  std::vector<Config> measured = {a[1], a[5]};
  std::vector<Config> filtered;
  for (const Config& c : a) {
    if (c != a[1] && c != a[5]) {
      filtered.push_back(c);
    }
  }
  EXPECT_EQ(Drain(*Make("random", space, 42, measured), 5), filtered);
}

TEST(RandomStrategyTest, DrawsFromLargeSpacesWithoutRepeatsAndResumesTheSameSequence) {
  ConfigSpace space = LargeSpace();
  std::vector<Config> measured = space.EnumerateValid(50);
  std::vector<Config> uninterrupted = Make("random", space, 9, measured)->Propose(400);
  ASSERT_EQ(uninterrupted.size(), 400u);
  EXPECT_EQ(AsSet(uninterrupted).size(), 400u);
  for (const Config& c : uninterrupted) {
    EXPECT_TRUE(space.IsValid(c)) << ConfigToString(c);
    EXPECT_EQ(std::find(measured.begin(), measured.end(), c), measured.end());
  }
  EXPECT_NE(uninterrupted, std::vector<Config>(Make("random", space, 10, measured)->Propose(400)));

  auto first = Make("random", space, 9, measured);
  std::vector<Config> joined = first->Propose(150);
  auto resumed = Make("random", space, 9, measured, first->SaveState());
  ASSERT_NE(resumed, nullptr);
  for (const Config& c : resumed->Propose(250)) {
    joined.push_back(c);
  }
  EXPECT_EQ(joined, uninterrupted);
  EXPECT_FALSE(resumed->Exhausted());
}

TEST(RandomStrategyTest, DrawingStopsAfterARunOfDrawsFindsNothingNew) {
  ConfigSpace space = LargeSpace();
  space.AddConstraint("k1..k6 are 0", [](const Config& c) {
    for (int i = 1; i < 7; ++i) {
      if (c.at("k" + std::to_string(i)) != 0) {
        return false;
      }
    }
    return true;
  });
  ASSERT_EQ(space.EnumerateValid(100).size(), 3u);
  // Measure all three valid configs: nothing is left to find.
  auto strategy = Make("random", space, 1, space.EnumerateValid(100));
  EXPECT_FALSE(strategy->Exhausted());
  EXPECT_TRUE(strategy->Propose(2).empty());
  EXPECT_TRUE(strategy->Exhausted());
  auto resumed = Make("random", space, 1, {}, strategy->SaveState());
  EXPECT_TRUE(resumed->Exhausted());
  EXPECT_TRUE(resumed->Propose(2).empty());
}

}  // namespace
}  // namespace tune
