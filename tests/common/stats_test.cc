#include "common/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/measurement.h"

namespace tune {
namespace {

TEST(StatsTest, MedianOfOddAndEvenCountsAndOfNothing) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3}), 3);
  EXPECT_EQ(Median({5, 1, 3}), 3);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({2, 2, 9, 1}), 2);
}

TEST(StatsTest, MeasurementMedianIsTheMedianOfItsRounds) {
  Measurement m;
  m.round_secs = {0.4, 0.1, 0.3, 0.2};
  EXPECT_DOUBLE_EQ(m.MedianSecs(), 0.25);
}

TEST(StatsTest, MedianConfidenceIsHalfTheRangeForFewValuesAndOrderStatisticsForMore) {
  EXPECT_TRUE(std::isinf(MedianRelativeCi({})));
  EXPECT_TRUE(std::isinf(MedianRelativeCi({1.0})));
  EXPECT_DOUBLE_EQ(MedianRelativeCi({0.9, 1.0, 1.1}), 0.1);
  // 12 values: ranks 2..9 (0-based) bound the median; the outliers at both ends do not count.
  std::vector<double> v = {0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3};
  EXPECT_DOUBLE_EQ(MedianRelativeCi(v), 0.0);
  v = {1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2};
  EXPECT_DOUBLE_EQ(MedianRelativeCi(v), 0.5 / 2);
}

TEST(StatsTest, EnoughRoundsNeedsRepeatThenAKnownMedianOrTheCap) {
  TimingOptions options;
  options.repeat = 3;
  options.max_repeat = 5;
  options.target_ci = 0.02;
  EXPECT_FALSE(EnoughRounds({1, 1}, options));
  EXPECT_TRUE(EnoughRounds({1, 1, 1}, options));
  EXPECT_FALSE(EnoughRounds({1, 2, 1}, options));
  EXPECT_TRUE(EnoughRounds({1, 2, 1, 2, 1}, options));
  options.max_repeat = 0;  // at or below repeat: exactly repeat rounds
  EXPECT_TRUE(EnoughRounds({1, 2, 1}, options));
}

}  // namespace
}  // namespace tune
