// The cost model and the strategies that learn (xgb, auto, ga), on spaces whose "time" is a
// fixed function of the config: what is under test is the search, so the cost is computed, not
// measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <random>
#include <set>
#include <string>

#include "search/strategy.h"
#include "search/xgb_cost_model.h"

namespace tune {
namespace {

// 8^4 = 4,096 points, no constraints beyond "a * b <= 32" (about a third of them invalid).
ConfigSpace TileSpace() {
  ConfigSpace space;
  space.AddKnob("a", {1, 2, 3, 4, 6, 8, 12, 16});
  space.AddKnob("b", {1, 2, 3, 4, 6, 8, 12, 16});
  space.AddKnob("c", {0, 1, 2, 3, 4, 5, 6, 7});
  space.AddKnob("d", {16, 32, 64, 128, 256, 512, 1024, 2048});
  space.AddConstraint("a * b <= 32", [](const Config& c) { return c.at("a") * c.at("b") <= 32; });
  return space;
}

// A time with structure a model can learn: the register tile a x b is best at 4 x 6, blocks
// d are best at 256, knob c matters little; all terms interact through a product.
double Secs(const Config& c) {
  const double a = std::log2(static_cast<double>(c.at("a")));
  const double b = std::log2(static_cast<double>(c.at("b")));
  const double d = std::log2(static_cast<double>(c.at("d")));
  const double tile = (a - 2) * (a - 2) + (b - std::log2(6.0)) * (b - std::log2(6.0));
  const double block = (d - 8) * (d - 8) / 4;
  return 1e-3 * (1 + tile) * (1 + block) * (1 + 0.01 * static_cast<double>(c.at("c")));
}

double BestSecs(const ConfigSpace& space) {
  double best = 1e9;
  for (const Config& c : space.EnumerateValid(100000)) {
    best = std::min(best, Secs(c));
  }
  return best;
}

// Trials a search needs until one is within 5% of the space's best (budget + 1 when none is).
int TrialsToWithin5Percent(std::string_view strategy, uint64_t seed, int budget, int batch) {
  const ConfigSpace space = TileSpace();
  const double target = BestSecs(space) * 1.05;
  auto search = MakeStrategy(strategy, space, seed, {});
  EXPECT_TRUE(search.ok()) << search.status();
  int trials = 0;
  while (trials < budget) {
    std::vector<Config> configs = (*search)->Propose(batch);
    if (configs.empty()) {
      break;
    }
    std::vector<TrialOutcome> outcomes;
    for (const Config& c : configs) {
      ++trials;
      if (Secs(c) <= target) {
        return trials;
      }
      outcomes.push_back({c, ErrorKind::kNone, Secs(c)});
    }
    (*search)->Observe(outcomes);
  }
  return budget + 1;
}

// A family of workloads of one "operator": the best block d grows with the workload's size.
double SecsOf(int size, const Config& c) {
  const double a = std::log2(static_cast<double>(c.at("a")));
  const double b = std::log2(static_cast<double>(c.at("b")));
  const double d = std::log2(static_cast<double>(c.at("d")));
  const double best_d = 5 + size;
  const double tile = (a - 2) * (a - 2) + (b - std::log2(6.0)) * (b - std::log2(6.0));
  return 1e-3 * (1 + tile) * (1 + (d - best_d) * (d - best_d) / 4) * std::pow(2.0, size);
}

FeatureFn SizedFeatures(const ConfigSpace& space, int size) {
  return [&space, size](const std::vector<Config>& configs) {
    std::vector<std::vector<float>> rows;
    for (const Config& c : configs) {
      rows.push_back(KnobFeatures(space, c));
      rows.back().push_back(static_cast<float>(size));
    }
    return rows;
  };
}

// Trials until within 5% of the best of workload `size`, searching with xgb after learning
// from 200 random measurements of each of `others` (none: no transfer).
int TransferTrials(int size, const std::vector<int>& others, uint64_t seed) {
  const ConfigSpace space = TileSpace();
  double best = 1e9;
  for (const Config& c : space.EnumerateValid(100000)) {
    best = std::min(best, SecsOf(size, c));
  }
  auto search = *MakeStrategy("xgb", space, seed, {}, "", SizedFeatures(space, size));
  std::vector<TransferSample> samples;
  std::mt19937_64 rng(seed + 100);
  for (int other : others) {
    FeatureFn features = SizedFeatures(space, other);
    for (int i = 0; i < 200; ++i) {
      Config c = *space.Sample(rng);
      samples.push_back({features({c}).front(), ErrorKind::kNone, SecsOf(other, c),
                         static_cast<uint32_t>(other + 1)});
    }
  }
  search->Transfer(samples);
  int trials = 0;
  while (trials < 400) {
    std::vector<TrialOutcome> outcomes;
    for (const Config& c : search->Propose(8)) {
      ++trials;
      if (SecsOf(size, c) <= 1.05 * best) {
        return trials;
      }
      outcomes.push_back({c, ErrorKind::kNone, SecsOf(size, c)});
    }
    search->Observe(outcomes);
  }
  return 401;
}

int Median(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(XgbStrategyTest, ReachesTheBestFasterThanRandomSearch) {
  std::vector<int> xgb, random;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    xgb.push_back(TrialsToWithin5Percent("xgb", seed, 400, 8));
    random.push_back(TrialsToWithin5Percent("random", seed, 400, 8));
  }
  const int xgb_median = Median(xgb), random_median = Median(random);
  std::cout << "trials to within 5% of the best (median of 5 seeds): xgb " << xgb_median
            << ", random " << random_median << "\n";
  EXPECT_LE(xgb_median, 64);
  EXPECT_LT(2 * xgb_median, random_median);
}

TEST(GaStrategyTest, ReachesTheBestFasterThanRandomSearch) {
  std::vector<int> ga, random;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    ga.push_back(TrialsToWithin5Percent("ga", seed, 400, 8));
    random.push_back(TrialsToWithin5Percent("random", seed, 400, 8));
  }
  std::cout << "trials to within 5% of the best (median of 5 seeds): ga " << Median(ga)
            << ", random " << Median(random) << "\n";
  EXPECT_LT(Median(ga), Median(random));
}

TEST(XgbStrategyTest, LearningFromOtherShapesFirstFindsTheBestInFewerTrials) {
  std::vector<int> with, without;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    with.push_back(TransferTrials(3, {0, 1, 2, 4}, seed));
    without.push_back(TransferTrials(3, {}, seed));
  }
  std::cout << "trials to within 5% of the best (median of 5 seeds): xgb with transfer "
            << Median(with) << ", without " << Median(without) << "\n";
  EXPECT_LE(Median(with), 16);
  EXPECT_LT(Median(with), Median(without));
}

// A search that cannot rank yet refuses suggestions (its caller proposes them). One that learnt
// from another workload takes them: a suggested config the model ranks best is in its first
// batch, where a search not given it does not reach it among 16^8 configs; a poor one is not.
TEST(XgbStrategyTest, SuggestedConfigsAreMeasuredWhenTheModelRanksThemHigh) {
  // Each of eight knobs makes a trial 1.5 times slower unless it is 0: all zeros is the best.
  ConfigSpace space;
  std::vector<int64_t> values(16);
  std::iota(values.begin(), values.end(), 0);
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "h"}) {
    space.AddKnob(name, values);
  }
  auto secs = [&space](const Config& c) {
    double t = 1e-3;
    for (const Knob& knob : space.knobs()) {
      t *= c.at(knob.name) == 0 ? 1.0 : 1.5;
    }
    return t;
  };
  Config best, poor;
  for (const Knob& knob : space.knobs()) {
    best[knob.name] = 0;
    poor[knob.name] = 15;
  }
  EXPECT_FALSE((*MakeStrategy("xgb", space, 1, {}))->Suggest({best, poor}));

  // A workload whose times are these: what the model learns from.
  std::vector<TransferSample> samples;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    Config c = *space.Sample(rng);
    samples.push_back({KnobFeatures(space, c), ErrorKind::kNone, secs(c), 1});
  }
  auto first_batch = [&](bool suggest) {
    auto search = *MakeStrategy("xgb", space, 1, {});
    search->Transfer(samples);
    if (suggest) {
      EXPECT_TRUE(search->Suggest({best, poor}));
    }
    return search->Propose(8);
  };
  auto holds = [](const std::vector<Config>& batch, const Config& c) {
    return std::find(batch.begin(), batch.end(), c) != batch.end();
  };
  const std::vector<Config> suggested = first_batch(true);
  EXPECT_TRUE(holds(suggested, best));
  EXPECT_FALSE(holds(suggested, poor));
  EXPECT_FALSE(holds(first_batch(false), best)) << "found without the suggestion: a weak test";
}

TEST(XgbStrategyTest, TransferredSamplesOfAnotherFeatureWidthAreIgnored) {
  const ConfigSpace space = TileSpace();
  auto search = *MakeStrategy("xgb", space, 1, {});
  search->Transfer(
      {{{1.0f, 2.0f}, ErrorKind::kNone, 1e-3, 1}, {{1.0f, 3.0f}, ErrorKind::kNone, 2e-3, 1}});
  // Nothing usable was transferred: the first batches are drawn at random, without error.
  EXPECT_EQ(search->Propose(8).size(), 8u);
}

// A daemon that restarts feeds the strategy the tuning log's records of the job; the model is
// refitted from them, so the resumed search proposes what the uninterrupted one would have.
TEST(XgbStrategyTest, ResumedWithTheLogsRecordsItProposesWhatTheUninterruptedSearchWould) {
  const ConfigSpace space = TileSpace();
  auto run = [&](SearchStrategy& search, int batches, std::vector<TrialOutcome>& log) {
    std::vector<Config> proposed;
    for (int i = 0; i < batches; ++i) {
      std::vector<TrialOutcome> outcomes;
      for (const Config& c : search.Propose(8)) {
        proposed.push_back(c);
        outcomes.push_back({c, ErrorKind::kNone, Secs(c)});
      }
      search.Observe(outcomes);
      log.insert(log.end(), outcomes.begin(), outcomes.end());
    }
    return proposed;
  };
  std::vector<TrialOutcome> log_a, log_b;
  auto whole = *MakeStrategy("xgb", space, 7, {});
  std::vector<Config> uninterrupted = run(*whole, 6, log_a);

  auto first = *MakeStrategy("xgb", space, 7, {});
  std::vector<Config> joined = run(*first, 3, log_b);
  std::vector<Config> measured;
  for (const TrialOutcome& o : log_b) {
    measured.push_back(o.config);
  }
  auto resumed = *MakeStrategy("xgb", space, 7, measured, first->SaveState());
  resumed->Observe(log_b);
  for (const Config& c : run(*resumed, 3, log_b)) {
    joined.push_back(c);
  }
  EXPECT_EQ(joined, uninterrupted);
}

TEST(XgbStrategyTest, FailedTrialsAreNeverProposedAgainAndDoNotStopTheModel) {
  const ConfigSpace space = TileSpace();
  auto search = *MakeStrategy("xgb", space, 3, {});
  std::set<Config> seen;
  for (int i = 0; i < 8; ++i) {
    std::vector<TrialOutcome> outcomes;
    for (const Config& c : search->Propose(8)) {
      EXPECT_TRUE(seen.insert(c).second) << "proposed twice: " << ConfigToString(c);
      EXPECT_TRUE(space.IsValid(c));
      // Every config with a == 16 "crashes".
      const bool ok = c.at("a") != 16;
      outcomes.push_back({c, ok ? ErrorKind::kNone : ErrorKind::kRuntimeCrash, ok ? Secs(c) : 0});
    }
    search->Observe(outcomes);
  }
  EXPECT_EQ(seen.size(), 64u);
}

TEST(CostModelTest, ATimeoutIsLabelledAtLeastAsSlowAsItsDeadlineNotLikeAWrongAnswer) {
  const std::vector<RankingSample> samples = {
      {ErrorKind::kNone, 1e-3, 0},      {ErrorKind::kNone, 4e-3, 0},
      {ErrorKind::kTimeout, 2.0, 0},    {ErrorKind::kWrongAnswer, 0, 0},
      {ErrorKind::kRuntimeCrash, 0, 0}, {ErrorKind::kTimeout, 0.5, 1},  // a group of timeouts
      {ErrorKind::kUnsupported, 0, 1},
  };
  const std::vector<float> labels = RankingLabels(samples);
  ASSERT_EQ(labels.size(), samples.size());
  EXPECT_FLOAT_EQ(labels[0], 1.0f);
  EXPECT_FLOAT_EQ(labels[1], 0.25f);
  EXPECT_FLOAT_EQ(labels[2], 1e-3f / 2.0f);  // the fastest over the deadline
  EXPECT_GT(labels[2], labels[3]);
  EXPECT_LT(labels[2], labels[1]);
  EXPECT_EQ(labels[3], 0.0f);
  EXPECT_EQ(labels[4], 0.0f);
  EXPECT_FLOAT_EQ(labels[5], 1.0f);
  EXPECT_EQ(labels[6], 0.0f);
}

TEST(CostModelDeathTest, LearnsFromNothingThatIsNoVerdict) {
  const std::vector<RankingSample> lost = {{ErrorKind::kNone, 1e-3, 0},
                                           {ErrorKind::kWorkerLost, 0, 0}};
  EXPECT_DEATH(RankingLabels(lost), "verdicts only");
}

TEST(CostModelTest, RanksUnseenConfigsInTheOrderOfTheirTimes) {
  const ConfigSpace space = TileSpace();
  std::vector<Config> valid = space.EnumerateValid(100000);
  FeatureMatrix train(4), test(4);
  std::vector<float> labels;
  std::vector<double> test_secs;
  double best = BestSecs(space);
  for (size_t i = 0; i < valid.size(); ++i) {
    std::vector<float> row;
    for (const auto& [name, value] : valid[i]) {
      row.push_back(static_cast<float>(value));
    }
    if (i % 7 == 0) {
      train.Append(row);
      labels.push_back(static_cast<float>(best / Secs(valid[i])));
    } else if (i % 7 == 1) {
      test.Append(row);
      test_secs.push_back(Secs(valid[i]));
    }
  }
  XgbCostModel model;
  ASSERT_TRUE(model.Fit(train, labels, std::vector<uint32_t>(labels.size(), 0)).ok());
  absl::StatusOr<std::vector<float>> scores = model.Predict(test);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->size(), test_secs.size()) << "one score per candidate";
  // Pairs of unseen configs whose times differ by more than 10%: the model orders most of them
  // as their times do (a random ranking would get half).
  int agree = 0, pairs = 0;
  for (size_t i = 0; i < test_secs.size(); ++i) {
    for (size_t j = i + 1; j < test_secs.size(); ++j) {
      if (std::abs(test_secs[i] - test_secs[j]) > 0.1 * std::min(test_secs[i], test_secs[j])) {
        ++pairs;
        agree += ((*scores)[i] > (*scores)[j]) == (test_secs[i] < test_secs[j]) ? 1 : 0;
      }
    }
  }
  ASSERT_GT(pairs, 1000);
  EXPECT_GT(static_cast<double>(agree) / pairs, 0.85) << agree << " of " << pairs;
}

TEST(CostModelTest, RefusesToPredictBeforeFittingAndMismatchedInput) {
  XgbCostModel model;
  FeatureMatrix x(2);
  x.Append(std::vector<float>{1, 2});
  EXPECT_EQ(model.Predict(x).status().code(), absl::StatusCode::kFailedPrecondition);
  absl::Status fitted = model.Fit(x, {1.0f, 0.5f}, {0});
  EXPECT_EQ(fitted.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(fitted.message()).find("accepted: as many of each"), std::string::npos)
      << fitted;
  ASSERT_TRUE(model.Fit(x, {1.0f}, {0}).ok());
  FeatureMatrix wider(3);
  wider.Append(std::vector<float>{1, 2, 3});
  EXPECT_EQ(model.Predict(wider).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tune
