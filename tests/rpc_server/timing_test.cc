// TVM's timing rule as TimeRounds implements it, on in-process kernels with the tune ABI.
#include "rpc_server/timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tune::rpc {
namespace {

using Clock = std::chrono::steady_clock;

int g_calls = 0;
int g_fail_after = -1;  // return 7 from this call on (-1: never)

int32_t CountingKernel(float* a, float* b, float* c) {
  c[0] = a[0] + b[0];
  ++g_calls;
  return (g_fail_after >= 0 && g_calls > g_fail_after) ? 7 : 0;
}

int32_t SleepyKernel(float*, float*, float*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return 0;
}

int32_t TwoArgs(float* in, float* out) {
  out[0] = in[0] * 2;
  return 0;
}

int32_t FourArgs(float* a, float* b, float* bias, float* out) {
  out[0] = a[0] + b[0] + bias[0];
  return 0;
}

class TimingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_calls = 0;
    g_fail_after = -1;
  }
  float a_ = 1, b_ = 2, bias_ = 4, c_ = 0;
};

TEST_F(TimingTest, RaisesNumberUntilEveryRoundLastsMinRepeatMs) {
  KernelCall call(reinterpret_cast<void*>(&CountingKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.repeat = 4;
  options.min_repeat_ms = 3;
  Measurement m = TimeRounds(call, options, Clock::now() + std::chrono::seconds(10), nullptr);
  ASSERT_TRUE(m.ok()) << m.message;
  ASSERT_EQ(m.round_secs.size(), 4u);
  EXPECT_GT(m.number, 1000) << "a trivial kernel needs many calls to fill 3 ms";
  for (double secs : m.round_secs) {
    EXPECT_GE(secs * m.number, 0.003);
  }
  EXPECT_EQ(c_, 3.0f);
}

TEST_F(TimingTest, SlowKernelKeepsTheInitialNumber) {
  KernelCall call(reinterpret_cast<void*>(&SleepyKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.number = 2;
  options.repeat = 2;
  options.min_repeat_ms = 1;
  Measurement m = TimeRounds(call, options, Clock::now() + std::chrono::seconds(10), nullptr);
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.number, 2);
  ASSERT_EQ(m.round_secs.size(), 2u);
  for (double secs : m.round_secs) {
    EXPECT_GE(secs, 0.002);
  }
}

TEST_F(TimingTest, NonZeroReturnDuringTimingIsRuntimeCrash) {
  g_fail_after = 5;
  KernelCall call(reinterpret_cast<void*>(&CountingKernel), {&a_, &b_, &c_});
  Measurement m =
      TimeRounds(call, TimingOptions{}, Clock::now() + std::chrono::seconds(10), nullptr);
  EXPECT_EQ(m.error, ErrorKind::kRuntimeCrash);
  EXPECT_EQ(m.message, "kernel returned 7 during timing");
  EXPECT_TRUE(m.round_secs.empty());
}

TEST_F(TimingTest, RoundThatWouldPassTheDeadlineIsTimeoutWithoutRunningIt) {
  KernelCall call(reinterpret_cast<void*>(&SleepyKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.repeat = 50;  // 50 rounds of >= 2 ms cannot fit in 20 ms
  options.min_repeat_ms = 1;
  options.timeout_ms = 20;
  Clock::time_point start = Clock::now();
  Measurement m = TimeRounds(call, options, start + std::chrono::milliseconds(20), nullptr);
  EXPECT_EQ(m.error, ErrorKind::kTimeout);
  EXPECT_NE(m.message.find("timeout_ms=20"), std::string::npos) << m.message;
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(20) + std::chrono::milliseconds(15));
}

TEST_F(TimingTest, CallsKernelsOfTwoAndFourArguments) {
  float out = 0;
  KernelCall two(reinterpret_cast<void*>(&TwoArgs), {&a_, &out});
  EXPECT_EQ(two(), 0);
  EXPECT_EQ(out, 2.0f);
  KernelCall four(reinterpret_cast<void*>(&FourArgs), {&a_, &b_, &bias_, &out});
  EXPECT_EQ(four(), 0);
  EXPECT_EQ(out, 7.0f);
}

TEST_F(TimingTest, FlushBetweenRoundsKeepsEveryRound) {
  KernelCall call(reinterpret_cast<void*>(&CountingKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.repeat = 2;
  options.min_repeat_ms = 1;
  options.flush_cache = true;
  const CacheFlusher flusher({{&a_, sizeof(a_)}, {&b_, sizeof(b_)}, {&c_, sizeof(c_)}});
  Measurement m = TimeRounds(call, options, Clock::now() + std::chrono::seconds(10), &flusher);
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.round_secs.size(), 2u);
}

}  // namespace
}  // namespace tune::rpc
