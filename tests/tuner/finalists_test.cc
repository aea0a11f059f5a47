#include "tuner/scheduler/finalists.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/stats.h"

namespace tune::tuner {
namespace {

using ::testing::HasSubstr;

// A finalist whose rounds are `median` times 1 ± `spread` (evenly spread over 9 rounds).
Finalist At(const std::string& config, double median, double spread) {
  Finalist f{ConfigKey{"gemm.cpu.blocked", 1, config}, {}, 0, "", {}};
  for (int i = -4; i <= 4; ++i) {
    f.rounds.push_back(median * (1 + spread * i / 4));
  }
  return f;
}

TEST(Finalists, TheFastestReMeasuredFinalistWinsWhenThereIsNoIncumbent) {
  auto verdict =
      Decide({At("a", 2e-3, 0.01), At("b", 1e-3, 0.01), At("c", 3e-3, 0.01)}, std::nullopt);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->winner, 1u);
  EXPECT_DOUBLE_EQ(verdict->median_secs, 1e-3);
  EXPECT_GT(verdict->relative_ci, 0);
  EXPECT_FALSE(verdict->incumbent_kept);
}

TEST(Finalists, AChallengerWithinTheNoiseLeavesTheIncumbentInPlace) {
  // 1% faster, but each median is known only to within a few percent.
  auto verdict = Decide({At("incumbent", 1.00e-3, 0.05), At("challenger", 0.99e-3, 0.05)}, 0);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->winner, 0u);
  EXPECT_TRUE(verdict->incumbent_kept);
  EXPECT_DOUBLE_EQ(verdict->median_secs, 1.00e-3);
  EXPECT_THAT(verdict->summary, HasSubstr("within the noise"));
}

TEST(Finalists, AChallengerFasterBeyondTheNoiseReplacesTheIncumbent) {
  auto verdict = Decide({At("incumbent", 1.00e-3, 0.01), At("challenger", 0.90e-3, 0.01)}, 0);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->winner, 1u);
  EXPECT_FALSE(verdict->incumbent_kept);
  EXPECT_THAT(verdict->summary, HasSubstr("replaces"));
}

TEST(Finalists, WithinTheNoiseAndNoIncumbentTheStableOrderDecidesNotTheMeasuredFigure) {
  // b measured 1% faster this time, but both medians are known only to within ~5%: whichever
  // is faster on a run, "a" (first in the stable order) wins, on every host and every run.
  for (double b_median : {0.99e-3, 1.01e-3}) {
    auto verdict = Decide({At("b", b_median, 0.05), At("a", 1.00e-3, 0.05)}, std::nullopt);
    ASSERT_TRUE(verdict.has_value());
    EXPECT_EQ(verdict->winner, 1u) << b_median;
    EXPECT_FALSE(verdict->incumbent_kept);
    if (b_median < 1e-3) {
      EXPECT_THAT(verdict->summary, HasSubstr("within the noise of"));
      EXPECT_THAT(verdict->summary, HasSubstr("first in the stable order"));
    }
  }
  // Beyond the noise, the faster one wins whatever its place in the order.
  auto clear = Decide({At("b", 0.80e-3, 0.01), At("a", 1.00e-3, 0.01)}, std::nullopt);
  ASSERT_TRUE(clear.has_value());
  EXPECT_EQ(clear->winner, 0u);
}

TEST(Finalists, ChallengersThatBeatTheIncumbentAndTieEachOtherAreOrderedStably) {
  // Both challengers beat the incumbent beyond the noise and are within it of each other.
  auto verdict =
      Decide({At("incumbent", 2.0e-3, 0.01), At("z", 0.99e-3, 0.05), At("y", 1.0e-3, 0.05)}, 0);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->winner, 2u);
  EXPECT_THAT(verdict->summary, HasSubstr("replaces"));
}

// A finalist measured in `passes` passes, each of 9 rounds tightly around its own median (1%
// apart), the passes' medians spread evenly over median times 1 ± `between`.
Finalist Passes(const std::string& config, double median, double between, int passes) {
  Finalist f{ConfigKey{"gemm.cpu.blocked", 1, config}, {}, 0, "", {}};
  for (int p = 0; p < passes; ++p) {
    const double pass_median = median * (1 + between * (2.0 * p / (passes - 1) - 1));
    for (int i = -4; i <= 4; ++i) {
      f.rounds.push_back(pass_median * (1 + 0.001 * i / 4));
    }
    f.pass_medians.push_back(pass_median);
  }
  return f;
}

TEST(Finalists, PassesThatDisagreeWidenTheNoiseBeyondWhatTheirRoundsSay) {
  // Pooled, the rounds of b look 3% faster than a's with intervals well under 1%; but each
  // config's three passes spread over ±3%, so the next run may see them the other way round.
  const Finalist a = Passes("a", 1.00e-3, 0.03, 3);
  const Finalist b = Passes("b", 0.97e-3, 0.03, 3);
  EXPECT_NEAR(FinalistRelativeCi(a), 0.03, 1e-9);
  EXPECT_LT(MedianRelativeCi(a.rounds), FinalistRelativeCi(a));
  auto verdict = Decide({b, a}, std::nullopt);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->winner, 1u) << "within the passes' noise, the stable order decides";
  EXPECT_NEAR(verdict->relative_ci, 0.03, 1e-9);
  EXPECT_THAT(verdict->summary, HasSubstr("first in the stable order"));
  // Passes that agree leave the rounds' interval, and the same 3% is then beyond the noise.
  auto clear =
      Decide({Passes("b", 0.97e-3, 0.002, 3), Passes("a", 1.00e-3, 0.002, 3)}, std::nullopt);
  ASSERT_TRUE(clear.has_value());
  EXPECT_EQ(clear->winner, 0u);
}

TEST(Finalists, FinalistsWithoutRoundsTakeNoPart) {
  Finalist failed{ConfigKey{"gemm.cpu.blocked", 1, "x"}, {}, 0, "", {}};
  EXPECT_FALSE(Decide({failed}, std::nullopt).has_value());
  auto verdict = Decide({failed, At("b", 2e-3, 0.01)}, 0);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->winner, 1u) << "an incumbent that could not be re-measured loses its place";
}

TEST(Finalists, ReMeasurementsTakeMoreRoundsThanTheSearchAndATighterTarget) {
  TimingOptions job;
  job.repeat = 2;
  job.max_repeat = 3;
  job.target_ci = 0.05;
  TimingOptions final = FinalTiming(job);
  EXPECT_EQ(final.repeat, 5);
  EXPECT_EQ(final.max_repeat, 20);
  EXPECT_DOUBLE_EQ(final.target_ci, 0.01);
  EXPECT_EQ(final.min_repeat_ms, job.min_repeat_ms);
  job.repeat = 30;
  EXPECT_EQ(FinalTiming(job).repeat, 30);
  EXPECT_EQ(FinalTiming(job).max_repeat, 30);
}

}  // namespace
}  // namespace tune::tuner
