// TVM's timing rule as TimeRounds implements it, on in-process kernels with the tune ABI. The
// kernels run on a clock the test controls (each call advances it by g_call_cost), so every
// duration TimeRounds sees is exact and no assertion depends on the machine's speed or load.
#include "rpc_server/timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace tune::rpc {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;
using std::chrono::milliseconds;

Clock::time_point g_now;      // the controlled clock
Clock::duration g_call_cost;  // how long one kernel call takes on it
int g_calls = 0;
int g_fail_after = -1;  // return 7 from this call on (-1: never)

Clock::time_point FakeNow() { return g_now; }

// Call costs in order (then the last one forever): a kernel whose timing is noisy.
std::vector<Clock::duration> g_costs;

int32_t NoisyKernel(float* a, float* b, float* c) {
  c[0] = a[0] + b[0];
  g_now += g_costs[std::min<size_t>(g_calls, g_costs.size() - 1)];
  ++g_calls;
  return 0;
}

int32_t CountingKernel(float* a, float* b, float* c) {
  c[0] = a[0] + b[0];
  ++g_calls;
  g_now += g_call_cost;
  return (g_fail_after >= 0 && g_calls > g_fail_after) ? 7 : 0;
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
    g_now = Clock::time_point() + std::chrono::hours(1);
    g_call_cost = microseconds(1);
    g_calls = 0;
    g_fail_after = -1;
  }
  Measurement Time(const KernelCall& call, const TimingOptions& options,
                   Clock::duration timeout = std::chrono::seconds(10),
                   const CacheFlusher* flusher = nullptr) {
    return TimeRounds(call, options, g_now + timeout, flusher, &FakeNow);
  }
  float a_ = 1, b_ = 2, bias_ = 4, c_ = 0;
};

// Kernels of two and of nine pointer arguments (a GPU host entry: eight buffers and its
// stream) that report which arguments they were given.
int32_t TwoPointers(int* a, int* b) { return *a * 10 + *b; }
int32_t NinePointers(int* a, int* b, int* c, int* d, int* e, int* f, int* g, int* h, void* s) {
  return *a + *b + *c + *d + *e + *f + *g + *h + (s == nullptr ? 0 : 100);
}

TEST(CallWithPointersTest, PassesEveryPointerInOrderForTwoToNineAndRefusesOtherCounts) {
  int v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(CallWithPointers(reinterpret_cast<void*>(&TwoPointers), {&v[0], &v[1]}), 12);
  std::vector<void*> nine;
  for (int& x : v) {
    nine.push_back(&x);
  }
  nine.push_back(&v[0]);  // a non-null stream
  EXPECT_EQ(CallWithPointers(reinterpret_cast<void*>(&NinePointers), nine), 136);
  nine.push_back(&v[0]);
  EXPECT_EQ(CallWithPointers(reinterpret_cast<void*>(&NinePointers), nine), -1);
  EXPECT_EQ(CallWithPointers(reinterpret_cast<void*>(&TwoPointers), {&v[0]}), -1);
}

TEST_F(TimingTest, RaisesNumberUntilEveryRoundLastsMinRepeatMs) {
  KernelCall call(reinterpret_cast<void*>(&CountingKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.repeat = 4;
  options.min_repeat_ms = 3;
  Measurement m = Time(call, options);
  ASSERT_TRUE(m.ok()) << m.message;
  ASSERT_EQ(m.round_secs.size(), 4u);
  // One probe call (1 us, too short), then number = 3 ms / 1 us with 10% headroom.
  EXPECT_GE(m.number, 3000);
  EXPECT_LE(m.number, 3301);
  EXPECT_EQ(g_calls, 1 + 4 * m.number);
  for (double secs : m.round_secs) {
    EXPECT_NEAR(secs, 1e-6, 1e-12);
    EXPECT_GE(secs * m.number, 0.003);
  }
  EXPECT_EQ(c_, 3.0f);
}

TEST_F(TimingTest, SteadyRoundsStopAtRepeat) {
  g_call_cost = milliseconds(2);
  KernelCall call(reinterpret_cast<void*>(&CountingKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.repeat = 3;
  options.max_repeat = 20;
  options.min_repeat_ms = 1;
  Measurement m = Time(call, options);
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.round_secs.size(), 3u);
}

// Rounds of 2 ms, 2 ms, then 1 ms: the median's confidence interval closes at 12 rounds, when
// the order statistics around the middle are all 1 ms.
TEST_F(TimingTest, NoisyRoundsContinueUntilTheMedianIsKnown) {
  g_costs = {milliseconds(2), milliseconds(2), milliseconds(1)};
  KernelCall call(reinterpret_cast<void*>(&NoisyKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.repeat = 3;
  options.max_repeat = 20;
  options.min_repeat_ms = 1;
  options.target_ci = 0.02;
  Measurement m = Time(call, options);
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.round_secs.size(), 12u);
  EXPECT_NEAR(m.MedianSecs(), 0.001, 1e-12);
}

TEST_F(TimingTest, RoundsThatNeverSettleStopAtMaxRepeat) {
  g_costs.clear();
  for (int i = 0; i < 64; ++i) {
    g_costs.push_back(i % 2 == 0 ? milliseconds(1) : milliseconds(2));
  }
  KernelCall call(reinterpret_cast<void*>(&NoisyKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.repeat = 3;
  options.max_repeat = 8;
  options.min_repeat_ms = 1;
  Measurement m = Time(call, options);
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.round_secs.size(), 8u) << "every round is kept, up to the cap";
}

TEST_F(TimingTest, SlowKernelKeepsTheInitialNumber) {
  g_call_cost = milliseconds(2);
  KernelCall call(reinterpret_cast<void*>(&CountingKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.number = 2;
  options.repeat = 2;
  options.min_repeat_ms = 1;
  Measurement m = Time(call, options);
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.number, 2);
  EXPECT_EQ(g_calls, 4);
  ASSERT_EQ(m.round_secs.size(), 2u);
  for (double secs : m.round_secs) {
    EXPECT_NEAR(secs, 0.002, 1e-12);
  }
}

TEST_F(TimingTest, NonZeroReturnDuringTimingIsRuntimeCrash) {
  g_fail_after = 5;
  KernelCall call(reinterpret_cast<void*>(&CountingKernel), {&a_, &b_, &c_});
  Measurement m = Time(call, TimingOptions{});
  EXPECT_EQ(m.error, ErrorKind::kRuntimeCrash);
  EXPECT_EQ(m.message, "kernel returned 7 during timing");
  EXPECT_TRUE(m.round_secs.empty());
}

TEST_F(TimingTest, RoundThatWouldPassTheDeadlineIsTimeoutWithoutRunningIt) {
  g_call_cost = milliseconds(2);
  KernelCall call(reinterpret_cast<void*>(&CountingKernel), {&a_, &b_, &c_});
  TimingOptions options;
  options.repeat = 50;  // 50 rounds of one 2 ms call cannot fit in 20 ms
  options.min_repeat_ms = 1;
  options.timeout_ms = 20;
  const Clock::time_point deadline = g_now + milliseconds(20);
  Measurement m = Time(call, options, milliseconds(20));
  EXPECT_EQ(m.error, ErrorKind::kTimeout);
  EXPECT_NE(m.message.find("timeout_ms=20"), std::string::npos) << m.message;
  // Ten rounds end exactly at the deadline; the eleventh would pass it and is never started.
  EXPECT_EQ(g_calls, 10);
  EXPECT_NE(m.message.find("10 rounds done"), std::string::npos) << m.message;
  EXPECT_LE(g_now, deadline);
  EXPECT_TRUE(m.round_secs.empty());
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
  Measurement m = Time(call, options, std::chrono::seconds(10), &flusher);
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.round_secs.size(), 2u);
}

}  // namespace
}  // namespace tune::rpc
