#include "rpc_server/gpu/gpu_timing.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/status.h"
#include "common/strings.h"
#include "fmt/format.h"

namespace tune::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// `number` never grows past this (as timing.cc).
constexpr int64_t kMaxNumber = int64_t{1} << 30;

class Event {
 public:
  explicit Event(GpuDevice* device) : device_(device) {}
  ~Event() { device_->DestroyEvent(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  absl::Status Create() {
    ASSIGN_OR_RETURN(event_, device_->CreateEvent());
    return absl::OkStatus();
  }
  void* get() const { return event_; }

 private:
  GpuDevice* device_;
  void* event_ = nullptr;
};

// One executable graph of `calls` calls, destroyed with its owner.
class Graph {
 public:
  explicit Graph(GpuDevice* device) : device_(device) {}
  ~Graph() { device_->DestroyGraph(exec_); }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Captures `calls` calls, replacing the graph held. An error is a refusal: the capture has
  // been ended and nothing is held.
  absl::Status Capture(const std::function<absl::Status()>& call, int64_t calls) {
    device_->DestroyGraph(exec_);
    exec_ = nullptr;
    calls_ = 0;
    RETURN_IF_ERROR(device_->BeginCapture());
    absl::Status captured;
    for (int64_t i = 0; i < calls && captured.ok(); ++i) {
      captured = call();
    }
    absl::StatusOr<void*> exec = device_->EndCapture();
    if (!captured.ok()) {
      if (exec.ok()) {
        device_->DestroyGraph(*exec);
      }
      return absl::Status(captured.code(),
                          StrCat("a call during the capture failed: ", captured.message(),
                                 exec.ok() ? "" : StrCat("; then ", exec.status().message())));
    }
    RETURN_IF_ERROR(exec.status());
    exec_ = *exec;
    calls_ = calls;
    return absl::OkStatus();
  }
  int64_t calls() const { return calls_; }
  void* exec() const { return exec_; }

 private:
  GpuDevice* device_;
  void* exec_ = nullptr;
  int64_t calls_ = 0;
};

// The seconds of one round and the calls it ran (at least the `number` asked for).
struct RoundTime {
  double secs = 0;
  int64_t calls = 0;
};
using RoundFn = std::function<absl::StatusOr<RoundTime>(int64_t number)>;

// A refusal to time by graph; `status` says why. Not an error of the trial.
struct Refused {
  absl::Status status;
};

// TVM's rule over `round`: rounds of `number` calls, raised until a round lasts min_repeat_ms,
// until EnoughRounds. Fills `rounds` and `number`; a TIMEOUT measurement when the next round
// would pass the deadline (`what` names the reading in its message).
absl::StatusOr<std::optional<Measurement>> RunRounds(const RoundFn& round,
                                                     const TimingOptions& options,
                                                     Clock::time_point deadline,
                                                     std::string_view what,
                                                     std::vector<double>& rounds, int64_t& number) {
  const double min_round = std::max(options.min_repeat_ms, 0) * 1e-3;
  double secs_per_call = 0;
  while (!EnoughRounds(rounds, options)) {
    while (true) {
      if (secs_per_call > 0) {
        auto predicted = std::chrono::duration<double>(secs_per_call * static_cast<double>(number));
        if (Clock::now() + std::chrono::duration_cast<Clock::duration>(predicted) > deadline) {
          Measurement m;
          m.error = ErrorKind::kTimeout;
          m.message = fmt::format(
              "kernel too slow for timeout_ms={}: {} rounds timed by {} done, the next of {} "
              "calls at {:.3g} s per call would pass the deadline",
              options.timeout_ms, rounds.size(), what, number, secs_per_call);
          return std::optional<Measurement>(std::move(m));
        }
      }
      ASSIGN_OR_RETURN(RoundTime t, round(number));
      number = t.calls;
      secs_per_call = std::max(t.secs / static_cast<double>(t.calls), 1e-12);
      if (t.secs >= min_round || number >= kMaxNumber) {
        rounds.push_back(t.secs / static_cast<double>(t.calls));
        break;
      }
      double wanted = std::ceil(min_round / secs_per_call * 1.1);
      number = std::min<int64_t>(
          kMaxNumber, std::max<int64_t>(number * 2, static_cast<int64_t>(std::min(wanted, 1e18))));
    }
  }
  return std::optional<Measurement>();
}

}  // namespace

absl::StatusOr<GpuTimes> TimeOnGpu(GpuDevice& dev, const std::function<absl::Status()>& call,
                                   const TimingOptions& options, Clock::time_point deadline,
                                   const GpuFlush& flush) {
  Event start(&dev), end(&dev);
  RETURN_IF_ERROR(start.Create());
  RETURN_IF_ERROR(end.Create());
  auto elapsed = [&]() -> absl::StatusOr<double> {
    ASSIGN_OR_RETURN(float ms, dev.ElapsedMs(start.get(), end.get()));
    return ms * 1e-3;
  };
  // With flush_cache every call starts after a write of the flush buffer and only the calls
  // are timed: `timed` queues one call (or one replay of a one-call graph).
  auto flushed_round = [&](const std::function<absl::Status()>& timed,
                           int64_t number) -> absl::StatusOr<RoundTime> {
    RoundTime t{0, number};
    for (int64_t i = 0; i < number; ++i) {
      RETURN_IF_ERROR(dev.Memset8(flush.data, static_cast<uint8_t>(i), size_t(flush.bytes)));
      RETURN_IF_ERROR(dev.Record(start.get()));
      RETURN_IF_ERROR(timed());
      RETURN_IF_ERROR(dev.Record(end.get()));
      ASSIGN_OR_RETURN(double secs, elapsed());
      t.secs += secs;
    }
    return t;
  };

  // Events: calls queued one by one.
  const RoundFn events_round = [&](int64_t number) -> absl::StatusOr<RoundTime> {
    if (options.flush_cache) {
      return flushed_round(call, number);
    }
    RETURN_IF_ERROR(dev.Record(start.get()));
    for (int64_t i = 0; i < number; ++i) {
      RETURN_IF_ERROR(call());
    }
    RETURN_IF_ERROR(dev.Record(end.get()));
    ASSIGN_OR_RETURN(double secs, elapsed());
    return RoundTime{secs, number};
  };

  // Graph: one graph of up to kMaxCallsPerGraph calls, captured again only when a round needs
  // fewer calls than it holds; a round replays it whole, as often as `number` asks.
  Graph graph(&dev);
  std::optional<Refused> refused;
  const RoundFn graph_round = [&](int64_t number) -> absl::StatusOr<RoundTime> {
    const int64_t per_graph = options.flush_cache ? 1 : std::min(number, kMaxCallsPerGraph);
    if (graph.calls() != per_graph) {
      if (absl::Status s = graph.Capture(call, per_graph); !s.ok()) {
        refused = Refused{s};
        return s;
      }
    }
    auto replay = [&] { return dev.LaunchGraph(graph.exec()); };
    if (options.flush_cache) {
      return flushed_round(replay, number);
    }
    const int64_t replays = (number + per_graph - 1) / per_graph;
    RETURN_IF_ERROR(dev.Record(start.get()));
    for (int64_t i = 0; i < replays; ++i) {
      RETURN_IF_ERROR(replay());
    }
    RETURN_IF_ERROR(dev.Record(end.get()));
    ASSIGN_OR_RETURN(double secs, elapsed());
    return RoundTime{secs, replays * per_graph};
  };

  GpuTimes out;
  Measurement& m = out.measurement;
  int64_t number = std::max(options.number, 1);
  absl::StatusOr<std::optional<Measurement>> graphed =
      RunRounds(graph_round, options, deadline, "graph replay", m.round_secs, number);
  if (refused) {
    // Events are the trial's time; the rounds replayed before a later refusal are dropped.
    out.graph_refused = std::string(refused->status.message());
    m.round_secs.clear();
    number = std::max(options.number, 1);
    ASSIGN_OR_RETURN(
        std::optional<Measurement> timeout,
        RunRounds(events_round, options, deadline, "events", m.host_round_secs, number));
    if (timeout) {
      return GpuTimes{*std::move(timeout), out.graph_refused};
    }
    m.gpu_clock = GpuClock::kEvents;
    m.round_secs = m.host_round_secs;
    m.number = static_cast<int>(std::min<int64_t>(number, INT32_MAX));
    return out;
  }
  RETURN_IF_ERROR(graphed.status());
  if (*graphed) {
    return GpuTimes{**std::move(graphed), ""};
  }
  m.gpu_clock = GpuClock::kGraph;
  m.number = static_cast<int>(std::min<int64_t>(number, INT32_MAX));
  // The call-by-call reading beside it, from the same number of calls per round. It is not the
  // trial's time: when the deadline leaves no room for it, the record has none.
  int64_t events_number = number;
  ASSIGN_OR_RETURN(
      std::optional<Measurement> events_timeout,
      RunRounds(events_round, options, deadline, "events", m.host_round_secs, events_number));
  if (events_timeout) {
    m.host_round_secs.clear();
  }
  return out;
}

}  // namespace tune::gpu
