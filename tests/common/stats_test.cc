#include "common/stats.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tune
