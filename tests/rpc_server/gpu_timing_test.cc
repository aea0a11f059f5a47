// TimeOnGpu's protocol (graph replay, the call-by-call reading beside it, the fallback to events
// when capture is refused) on a device model that needs no GPU: a GpuDevice whose stream is a
// timeline, where a call queued by itself costs the larger of its host and device times and a
// replayed graph costs only its calls' device time. The real CUDA path is tested by the gpu tests
// (gpu_measure_test.cc).
#include "rpc_server/gpu/gpu_timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "common/stats.h"
#include "common/strings.h"

namespace tune::gpu {
namespace {

class TimelineDevice final : public GpuDevice {
 public:
  TimelineDevice(double host_us, double device_us) : host_us_(host_us), device_us_(device_us) {}

  // A call of the candidate: one kernel launch.
  absl::Status Call() { return Launch(nullptr, GpuLaunch{}, nullptr); }

  bool graph_api_missing = false;
  bool refuse_in_capture = false;  // a launch during a capture fails and invalidates it
  bool replay_fails = false;       // a graph replay is a sticky error
  int captures = 0;
  int live_graphs() const { return static_cast<int>(graphs_.size()); }
  bool capturing() const { return capturing_; }

  void* stream() const override { return nullptr; }
  absl::StatusOr<DevicePtr> Allocate(size_t) override { return DevicePtr{4096}; }
  void Free(DevicePtr) override {}
  absl::Status CopyToDevice(DevicePtr, const void*, size_t) override { return absl::OkStatus(); }
  absl::Status CopyToHost(void*, DevicePtr, size_t) override { return absl::OkStatus(); }
  absl::Status Memset8(DevicePtr, uint8_t, size_t) override {
    now_us_ += 100;  // the flush write: outside every timed interval
    return absl::OkStatus();
  }
  absl::Status Memset32(DevicePtr, uint32_t, size_t) override { return absl::OkStatus(); }
  absl::StatusOr<void*> LoadModule(std::string_view) override { return nullptr; }
  void UnloadModule(void*) override {}
  absl::StatusOr<void*> GetFunction(void*, const std::string&) override { return nullptr; }
  KernelAttributes Attributes(void*) override { return {}; }
  absl::Status Launch(void*, const GpuLaunch&, void**) override {
    if (capturing_) {
      if (refuse_in_capture) {
        invalidated_ = true;
        return absl::InternalError("cuStreamSynchronize: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
      }
      ++captured_;
      return absl::OkStatus();
    }
    now_us_ += std::max(host_us_, device_us_);
    return absl::OkStatus();
  }
  absl::Status EncodeTensorMap(const GpuTensorMap&, uint32_t, DevicePtr, void*) override {
    return absl::OkStatus();
  }
  absl::StatusOr<void*> CreateEvent() override {
    events_.push_back(0);
    return reinterpret_cast<void*>(events_.size());
  }
  void DestroyEvent(void*) override {}
  absl::Status Record(void* event) override {
    events_.at(reinterpret_cast<size_t>(event) - 1) = now_us_;
    return absl::OkStatus();
  }
  absl::StatusOr<float> ElapsedMs(void* start, void* end) override {
    return static_cast<float>((events_.at(reinterpret_cast<size_t>(end) - 1) -
                               events_.at(reinterpret_cast<size_t>(start) - 1)) /
                              1000);
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }
  absl::Status BeginCapture() override {
    if (graph_api_missing) {
      return absl::UnimplementedError("the driver (libcuda.so.1) lacks cuStreamBeginCapture_v2");
    }
    EXPECT_FALSE(capturing_) << "a capture began inside another";
    capturing_ = true;
    invalidated_ = false;
    captured_ = 0;
    ++captures;
    return absl::OkStatus();
  }
  absl::StatusOr<void*> EndCapture() override {
    EXPECT_TRUE(capturing_) << "EndCapture without BeginCapture";
    capturing_ = false;
    if (invalidated_) {
      return absl::InternalError("cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED");
    }
    void* handle = reinterpret_cast<void*>(static_cast<uintptr_t>(++next_graph_));
    graphs_[handle] = captured_;
    return handle;
  }
  absl::Status LaunchGraph(void* graph) override {
    if (replay_fails) {
      broken_ = true;
      return absl::InternalError("cuGraphLaunch: CUDA_ERROR_ILLEGAL_ADDRESS");
    }
    now_us_ += static_cast<double>(graphs_.at(graph)) * device_us_;
    return absl::OkStatus();
  }
  void DestroyGraph(void* graph) override {
    if (graph != nullptr) {
      EXPECT_EQ(graphs_.erase(graph), 1u) << "a graph destroyed twice";
    }
  }

 private:
  const double host_us_;
  const double device_us_;
  double now_us_ = 0;
  std::vector<double> events_;
  bool capturing_ = false;
  bool invalidated_ = false;
  int64_t captured_ = 0;
  int next_graph_ = 0;
  std::map<void*, int64_t> graphs_;
};

TimingOptions Rounds() {
  TimingOptions options;
  options.number = 1;
  options.repeat = 3;
  options.max_repeat = 3;
  options.min_repeat_ms = 1;
  options.timeout_ms = 60000;
  return options;
}

absl::StatusOr<GpuTimes> Time(TimelineDevice& dev, const TimingOptions& options = Rounds()) {
  return TimeOnGpu(
      dev, [&] { return dev.Call(); }, options,
      std::chrono::steady_clock::now() + std::chrono::hours(1), GpuFlush{4096, 1 << 20});
}

TEST(GpuTimingTest, AHostBoundCallReadsAsDeviceTimeByGraphAndAsItsCallRateByEvents) {
  TimelineDevice dev(/*host_us=*/20, /*device_us=*/5);
  absl::StatusOr<GpuTimes> t = Time(dev);
  ASSERT_TRUE(t.ok()) << t.status();
  const Measurement& m = t->measurement;
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.gpu_clock, GpuClock::kGraph);
  EXPECT_TRUE(t->graph_refused.empty()) << t->graph_refused;
  ASSERT_EQ(m.round_secs.size(), 3u);
  ASSERT_EQ(m.host_round_secs.size(), 3u);
  EXPECT_NEAR(Median(m.round_secs), 5e-6, 1e-9);
  EXPECT_NEAR(Median(m.host_round_secs), 20e-6, 1e-9);
  // 1 ms at 5 us per call takes >= 200 calls: whole replays of a 64-call graph.
  EXPECT_GE(m.number, 200);
  EXPECT_EQ(m.number % kMaxCallsPerGraph, 0) << m.number;
  EXPECT_EQ(dev.live_graphs(), 0);
  EXPECT_FALSE(dev.capturing());
}

TEST(GpuTimingTest, ADeviceBoundCallReadsTheSameBothWays) {
  TimelineDevice dev(/*host_us=*/5, /*device_us=*/40);
  absl::StatusOr<GpuTimes> t = Time(dev);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->measurement.gpu_clock, GpuClock::kGraph);
  EXPECT_NEAR(Median(t->measurement.round_secs), 40e-6, 1e-9);
  EXPECT_NEAR(Median(t->measurement.host_round_secs), 40e-6, 1e-9);
  EXPECT_FALSE(MediansDiffer(t->measurement.round_secs, t->measurement.host_round_secs));
}

TEST(GpuTimingTest, WithoutAGraphApiTheEventsReadingIsTheTrialsTimeAndTheRefusalIsSaid) {
  TimelineDevice dev(20, 5);
  dev.graph_api_missing = true;
  absl::StatusOr<GpuTimes> t = Time(dev);
  ASSERT_TRUE(t.ok()) << t.status();
  const Measurement& m = t->measurement;
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.gpu_clock, GpuClock::kEvents);
  EXPECT_NE(t->graph_refused.find("lacks cuStreamBeginCapture_v2"), std::string::npos)
      << t->graph_refused;
  EXPECT_EQ(m.round_secs, m.host_round_secs);
  EXPECT_NEAR(Median(m.round_secs), 20e-6, 1e-9);
}

TEST(GpuTimingTest, ACallRefusedDuringTheCaptureEndsItAndTheEventsReadingStands) {
  TimelineDevice dev(20, 5);
  dev.refuse_in_capture = true;
  absl::StatusOr<GpuTimes> t = Time(dev);
  ASSERT_TRUE(t.ok()) << t.status();
  const Measurement& m = t->measurement;
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_EQ(m.gpu_clock, GpuClock::kEvents);
  EXPECT_NE(t->graph_refused.find("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"), std::string::npos)
      << t->graph_refused;
  EXPECT_NE(t->graph_refused.find("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"), std::string::npos)
      << t->graph_refused;
  EXPECT_FALSE(dev.capturing());
  EXPECT_EQ(dev.captures, 1);
  EXPECT_EQ(dev.live_graphs(), 0);
  EXPECT_EQ(m.round_secs, m.host_round_secs);
  EXPECT_EQ(m.round_secs.size(), 3u);
}

TEST(GpuTimingTest, ColdL2TimingReplaysAOneCallGraphAfterEachFlush) {
  TimelineDevice dev(20, 5);
  TimingOptions options = Rounds();
  options.flush_cache = true;
  absl::StatusOr<GpuTimes> t = Time(dev, options);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->measurement.gpu_clock, GpuClock::kGraph);
  // The flush (100 us on this timeline) is outside every timed interval.
  EXPECT_NEAR(Median(t->measurement.round_secs), 5e-6, 1e-9);
  EXPECT_NEAR(Median(t->measurement.host_round_secs), 20e-6, 1e-9);
  EXPECT_EQ(dev.captures, 1);
}

TEST(GpuTimingTest, AFailedReplayIsTheTrialsErrorNotARefusal) {
  TimelineDevice dev(20, 5);
  dev.replay_fails = true;
  absl::StatusOr<GpuTimes> t = Time(dev);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos)
      << t.status();
  EXPECT_TRUE(dev.broken());
}

}  // namespace
}  // namespace tune::gpu
