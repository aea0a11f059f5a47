#include "common/measurement.h"

#include <gtest/gtest.h>

#include <string>

namespace tune {
namespace {

// The one rule of what a search may learn from, kind by kind: a new kind must be placed here.
TEST(MeasurementTest, AFailedMeasurementCarriesItsKindAndMessageAndNoTime) {
  const Measurement m = Measurement::Failed(ErrorKind::kWrongAnswer, "element 3: 1 != 2");
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(m.error, ErrorKind::kWrongAnswer);
  EXPECT_EQ(m.message, "element 3: 1 != 2");
  EXPECT_TRUE(m.round_secs.empty());
  EXPECT_EQ(m.MedianSecs(), 0);
}

TEST(MeasurementTest, VerdictsAreTheOutcomesOfTheConfigsOwnCodeAndNothingTheWorkersCaused) {
  struct Row {
    ErrorKind kind;
    bool verdict;
  };
  constexpr Row kTable[] = {
      {ErrorKind::kNone, true},         {ErrorKind::kBuildError, true},
      {ErrorKind::kLoadError, true},    {ErrorKind::kRuntimeCrash, true},
      {ErrorKind::kTimeout, true},      {ErrorKind::kWrongAnswer, true},
      {ErrorKind::kUnsupported, true},  {ErrorKind::kWorkerLost, false},
      {ErrorKind::kWorkerError, false},
  };
  ASSERT_EQ(std::size(kTable), kErrorKindCount) << "every kind is in the table";
  for (size_t i = 0; i < kErrorKindCount; ++i) {
    EXPECT_EQ(kTable[i].kind, static_cast<ErrorKind>(i));
    EXPECT_EQ(IsVerdict(kTable[i].kind), kTable[i].verdict) << ErrorKindName(kTable[i].kind);
  }
}

TEST(MeasurementTest, EveryKindHasANameThatParsesBack) {
  for (size_t i = 0; i < kErrorKindCount; ++i) {
    const auto kind = static_cast<ErrorKind>(i);
    EXPECT_NE(ErrorKindName(kind), "UNKNOWN");
    EXPECT_EQ(ParseErrorKind(ErrorKindName(kind)), kind);
  }
  EXPECT_EQ(ParseErrorKind("WORKER_ERROR"), ErrorKind::kWorkerError);
}

TEST(MeasurementTest, ATimeoutIsLearntAsAtLeastAsSlowAsItsDeadlineAndOtherFailuresAsNoTime) {
  Measurement ok;
  ok.round_secs = {2e-3, 1e-3, 3e-3};
  EXPECT_DOUBLE_EQ(LearnedSecs(ok, 10000), 2e-3);
  Measurement timeout;
  timeout.error = ErrorKind::kTimeout;
  EXPECT_DOUBLE_EQ(LearnedSecs(timeout, 2500), 2.5);
  Measurement wrong;
  wrong.error = ErrorKind::kWrongAnswer;
  EXPECT_EQ(LearnedSecs(wrong, 2500), 0);
}

}  // namespace
}  // namespace tune
