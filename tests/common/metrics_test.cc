#include "common/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tune::metrics {
namespace {

TEST(MetricsTest, ExpositionHasHelpTypeAndSamplesInTheOrderAdded) {
  Registry registry;
  registry.AddCounter("test_events_total", "Events seen").Increment(3);
  registry.AddGauge("test_temperature", "Degrees").Set(-1.5);
  EXPECT_EQ(registry.Exposition(),
            "# HELP test_events_total Events seen\n"
            "# TYPE test_events_total counter\n"
            "test_events_total 3\n"
            "# HELP test_temperature Degrees\n"
            "# TYPE test_temperature gauge\n"
            "test_temperature -1.5\n");
}

TEST(MetricsTest, FamilyChildrenAreSortedByLabelValueAndEscaped) {
  Registry registry;
  Family<Counter>& trials = registry.AddCounterFamily("test_trials_total", "Trials", "outcome");
  trials.With("timeout").Increment();
  trials.With("ok").Increment(2);
  trials.With("ok").Increment();
  Family<Gauge>& odd = registry.AddGaugeFamily("test_odd", "Help with \\ and\nnewline", "key");
  odd.With("a\"b\\c\nd").Set(1);
  EXPECT_EQ(registry.Exposition(),
            "# HELP test_trials_total Trials\n"
            "# TYPE test_trials_total counter\n"
            "test_trials_total{outcome=\"ok\"} 3\n"
            "test_trials_total{outcome=\"timeout\"} 1\n"
            "# HELP test_odd Help with \\\\ and\\nnewline\n"
            "# TYPE test_odd gauge\n"
            "test_odd{key=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInclusiveBoundsAndCountEqualsInf) {
  Registry registry;
  Histogram& latency = registry.AddHistogram("test_seconds", "Latency", {0.1, 1});
  for (double v : {0.05, 0.1, 0.5, 1.0, 7.0}) {
    latency.Observe(v);
  }
  EXPECT_EQ(registry.Exposition(),
            "# HELP test_seconds Latency\n"
            "# TYPE test_seconds histogram\n"
            "test_seconds_bucket{le=\"0.1\"} 2\n"
            "test_seconds_bucket{le=\"1\"} 4\n"
            "test_seconds_bucket{le=\"+Inf\"} 5\n"
            "test_seconds_sum 8.65\n"
            "test_seconds_count 5\n");
}

TEST(MetricsTest, ConcurrentUpdatesAreAllCounted) {
  Registry registry;
  Counter& counter = registry.AddCounter("test_total", "n");
  Gauge& gauge = registry.AddGauge("test_gauge", "n");
  Histogram& histogram = registry.AddHistogram("test_h", "n", {1});
  Family<Counter>& family = registry.AddCounterFamily("test_f_total", "n", "k");
  constexpr int kThreads = 4;
  constexpr int kEach = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        counter.Increment();
        gauge.Add(1);
        histogram.Observe(i % 2 == 0 ? 0.5 : 2);
        family.With(i % 2 == 0 ? "even" : "odd").Increment();
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(counter.Value(), uint64_t{kThreads * kEach});
  EXPECT_EQ(gauge.Value(), double{kThreads * kEach});
  Histogram::Snapshot s = histogram.Take();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{kThreads * kEach / 2, kThreads * kEach}));
  EXPECT_EQ(s.count, uint64_t{kThreads * kEach});
  EXPECT_EQ(family.With("even").Value(), uint64_t{kThreads * kEach / 2});
}

TEST(MetricsTest, SpecialGaugeValuesUseThePrometheusSpelling) {
  Registry registry;
  registry.AddGauge("test_inf", "x").Set(std::numeric_limits<double>::infinity());
  registry.AddGauge("test_nan", "x").Set(std::numeric_limits<double>::quiet_NaN());
  const std::string page = registry.Exposition();
  EXPECT_NE(page.find("test_inf +Inf\n"), std::string::npos) << page;
  EXPECT_NE(page.find("test_nan NaN\n"), std::string::npos) << page;
}

TEST(MetricsTest, ProcessStartTimeIsInThePastAndRecent) {
  const double start = ProcessStartTimeSeconds();
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LE(start, now + 1);  // clock-tick rounding
  EXPECT_GT(start, 1.6e9);
}

TEST(MetricsDeathTest, InvalidOrDuplicateNamesAreBugs) {
  Registry registry;
  registry.AddCounter("test_total", "n");
  EXPECT_DEATH(registry.AddCounter("test_total", "again"), "registered twice");
  EXPECT_DEATH(registry.AddGauge("9lives", "n"), "not valid");
  EXPECT_DEATH(registry.AddCounterFamily("test_x", "n", "le"), "label name");
  EXPECT_DEATH(registry.AddHistogram("test_h", "n", {1, 1}), "strictly increasing");
}

}  // namespace
}  // namespace tune::metrics
