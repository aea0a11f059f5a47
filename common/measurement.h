// What a measurement is: the error kinds a trial can end with, the timing protocol's options,
// and the result. Shared by the worker (which produces it), the daemon and the tuning log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tune {

/// How a trial ended. A failed trial is data, recorded like a successful one. Whether a kind is
/// a verdict on the config (what a search may learn from) is IsVerdict's to say.
enum class ErrorKind : uint8_t {
  kNone = 0,      // measured and correct
  kBuildError,    // codegen or linking failed
  kLoadError,     // the artifact's own code could not be loaded (bad object, missing symbol)
  kRuntimeCrash,  // the kernel crashed (signal) or returned non-zero
  kTimeout,       // the kernel did not finish before the deadline
  kWrongAnswer,   // the output differed from the reference
  kUnsupported,   // the kernel asks for more than workers of this device key offer (launch
                  // limits, device memory, a shape its library rejects)
  kWorkerLost,    // not a verdict: given up after its workers were lost or could not measure
                  // it too many times; later jobs measure the config again
  kWorkerError,   // not a verdict: the worker or its device could not measure it (a library
                  // or driver it lacks, a busy device); the daemon measures it again elsewhere
};

/// The last ErrorKind, and how many there are.
inline constexpr ErrorKind kLastErrorKind = ErrorKind::kWorkerError;
inline constexpr size_t kErrorKindCount = static_cast<size_t>(kLastErrorKind) + 1;

/// True when a trial that ended so says something about its config: it was measured, or its own
/// code failed (BUILD_ERROR, LOAD_ERROR, RUNTIME_CRASH, TIMEOUT, WRONG_ANSWER, UNSUPPORTED).
/// False for what the infrastructure caused (WORKER_LOST, WORKER_ERROR): such a trial is never
/// shown to a search or a cost model, never counts in a job's budget, and is measured again.
bool IsVerdict(ErrorKind kind);

std::string_view ErrorKindName(ErrorKind kind);  // "NONE", "BUILD_ERROR", ...
/// Inverse of ErrorKindName; nullopt for unknown names.
std::optional<ErrorKind> ParseErrorKind(std::string_view name);

/// TVM's timing rule: one warm-up call, then `repeat` rounds of `number` calls each, `number`
/// raised until one round lasts at least `min_repeat_ms`; then more rounds, up to
/// `max_repeat`, while the median is not known to within `target_ci` (EnoughRounds). Every
/// round is kept.
struct TimingOptions {
  int number = 1;            // initial calls per round
  int repeat = 3;            // rounds at least
  int max_repeat = 10;       // rounds at most (at or below `repeat`: exactly `repeat` rounds)
  double target_ci = 0.02;   // the median's 95% confidence half-width relative to it that stops
                             // the rounds early (MedianRelativeCi)
  int min_repeat_ms = 10;    // minimum duration of one round
  int timeout_ms = 10000;    // deadline for running the kernel (warm-up, check and every
                             // round), counted once it is loaded and the reference is ready
  bool flush_cache = false;  // write a buffer larger than the last-level cache between rounds
  uint64_t seed = 1;         // seed of the random inputs
};

/// True when `round_secs` (the rounds so far) are enough under `options`: at least `repeat`,
/// and either `max_repeat` rounds or a median known to within `target_ci`.
bool EnoughRounds(const std::vector<double>& round_secs, const TimingOptions& options);

/// How a GPU trial's round_secs were timed. CPU trials have no GPU clock.
enum class GpuClock : uint8_t {
  kNone = 0,  // not a GPU trial
  kEvents,    // `number` calls queued one by one between two events: device time only while the
              // host queues calls faster than the device runs them (a host-bound library call
              // reads as the host's call rate)
  kGraph,     // `number` calls captured once into a graph (CUDA / HIP graphs) and replayed
              // between two events: device time, whatever a call costs the host
};

std::string_view GpuClockName(GpuClock clock);  // "", "events", "graph"
/// Inverse of GpuClockName ("" is kNone); nullopt for unknown names.
std::optional<GpuClock> ParseGpuClock(std::string_view name);

struct Measurement {
  ErrorKind error = ErrorKind::kNone;
  std::string message;                   // empty on success; what went wrong otherwise
  std::vector<double> round_secs;        // mean seconds per call, one entry per round
  int number = 0;                        // calls per round actually used
  std::string device_fingerprint;        // what ran it: CPU model, cores, library versions
  std::string library_info;              // the external libraries the kernel called, as they ran:
                                         // version, the kernel set or ISA chosen, the last error
  GpuClock gpu_clock = GpuClock::kNone;  // how round_secs were timed (GPU trials)
  std::vector<double> host_round_secs;   // GPU trials: rounds timed call by call (events),
                                         // round_secs' own reading when gpu_clock is kEvents;
                                         // empty for CPU trials and in GPU records made before
                                         // it was kept

  bool ok() const { return error == ErrorKind::kNone; }
  /// Median(round_secs) (common/stats.h; 0 when empty).
  double MedianSecs() const;

  /// A measurement that ended with `kind` (not kNone), `message` saying what went wrong.
  static Measurement Failed(ErrorKind kind, std::string message);
};

/// The seconds a search learns from a trial that ended with `m`, timed with a deadline of
/// `timeout_ms`: the median when it succeeded; the deadline when it timed out (it is at least
/// that slow); 0 for any other outcome.
double LearnedSecs(const Measurement& m, int timeout_ms);

}  // namespace tune
