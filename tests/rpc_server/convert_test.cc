#include "proto/convert.h"

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(ConvertTest, EveryErrorKindSurvivesTheWireWithTheSameName) {
  for (size_t i = 0; i < kErrorKindCount; ++i) {
    const auto kind = static_cast<ErrorKind>(i);
    v1::ErrorKind wire = ErrorKindToProto(kind);
    EXPECT_EQ(v1::ErrorKind_Name(wire), "ERROR_KIND_" + std::string(ErrorKindName(kind)));
    absl::StatusOr<ErrorKind> back = ErrorKindFromProto(wire);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, kind);
  }
}

TEST(ConvertTest, UnspecifiedErrorKindIsInvalidArgumentNamingTheField) {
  absl::StatusOr<ErrorKind> kind =
      ErrorKindFromProto(v1::ERROR_KIND_UNSPECIFIED, "result.measurement.error_kind");
  EXPECT_TRUE(absl::IsInvalidArgument(kind.status()));
  EXPECT_NE(std::string(kind.status().message()).find("result.measurement.error_kind"),
            std::string::npos);
}

TEST(ConvertTest, ZeroTimingFieldsTakeTheDefaults) {
  absl::StatusOr<TimingOptions> options = TimingOptionsFromProto(v1::TimingOptions());
  ASSERT_TRUE(options.ok());
  TimingOptions defaults;
  EXPECT_EQ(options->number, defaults.number);
  EXPECT_EQ(options->repeat, defaults.repeat);
  EXPECT_EQ(options->min_repeat_ms, defaults.min_repeat_ms);
  EXPECT_EQ(options->timeout_ms, defaults.timeout_ms);
  EXPECT_EQ(options->seed, defaults.seed);
  EXPECT_FALSE(options->flush_cache);
}

TEST(ConvertTest, TimingOptionsRoundTrip) {
  TimingOptions t{.number = 4,
                  .repeat = 7,
                  .min_repeat_ms = 50,
                  .timeout_ms = 900,
                  .flush_cache = true,
                  .seed = 99};
  absl::StatusOr<TimingOptions> back = TimingOptionsFromProto(TimingOptionsToProto(t));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->number, 4);
  EXPECT_EQ(back->repeat, 7);
  EXPECT_EQ(back->min_repeat_ms, 50);
  EXPECT_EQ(back->timeout_ms, 900);
  EXPECT_TRUE(back->flush_cache);
  EXPECT_EQ(back->seed, 99u);
}

TEST(ConvertTest, NegativeTimingFieldIsInvalidArgumentNamingIt) {
  v1::TimingOptions proto;
  proto.set_min_repeat_ms(-5);
  absl::StatusOr<TimingOptions> options = TimingOptionsFromProto(proto);
  EXPECT_TRUE(absl::IsInvalidArgument(options.status()));
  EXPECT_NE(std::string(options.status().message()).find("timing.min_repeat_ms"),
            std::string::npos);
}

TEST(ConvertTest, MeasurementRoundTrip) {
  Measurement m;
  m.error = ErrorKind::kWrongAnswer;
  m.message = "output[3] = 1, expected 2";
  m.round_secs = {1e-3, 2e-3};
  m.number = 8;
  m.device_fingerprint = "cpu/x86_64/znver4 cores=8";
  m.library_info = "openblas: OpenBLAS 0.3.21; core=Haswell; threads=1";
  absl::StatusOr<Measurement> back = MeasurementFromProto(MeasurementToProto(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->error, m.error);
  EXPECT_EQ(back->message, m.message);
  EXPECT_EQ(back->round_secs, m.round_secs);
  EXPECT_EQ(back->number, 8);
  EXPECT_EQ(back->device_fingerprint, m.device_fingerprint);
  EXPECT_EQ(back->library_info, m.library_info);
  EXPECT_EQ(back->gpu_clock, GpuClock::kNone);
  EXPECT_TRUE(back->host_round_secs.empty());
}

TEST(ConvertTest, AGpuMeasurementKeepsItsClockAndItsCallByCallReading) {
  for (GpuClock clock : {GpuClock::kNone, GpuClock::kEvents, GpuClock::kGraph}) {
    Measurement m;
    m.round_secs = {1e-5, 1.1e-5};
    m.number = 64;
    m.gpu_clock = clock;
    m.host_round_secs = {0.1 + 0.2, 1.6e-5};
    v1::Measurement wire = MeasurementToProto(m);
    absl::StatusOr<Measurement> back = MeasurementFromProto(wire);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->gpu_clock, clock) << GpuClockName(clock);
    EXPECT_EQ(back->host_round_secs, m.host_round_secs);
    EXPECT_EQ(GpuClockFromProto(GpuClockToProto(clock)), clock);
  }
  EXPECT_EQ(GpuClockToProto(GpuClock::kGraph), v1::GPU_CLOCK_GRAPH);
  EXPECT_EQ(GpuClockToProto(GpuClock::kEvents), v1::GPU_CLOCK_EVENTS);
  // A value this build does not know (a newer peer's) reads as no clock.
  EXPECT_EQ(GpuClockFromProto(static_cast<v1::GpuClock>(42)), GpuClock::kNone);
}

}  // namespace
}  // namespace tune
