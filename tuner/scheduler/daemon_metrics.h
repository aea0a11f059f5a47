// DaemonMetrics: what tune-daemon exports on /metrics (common/metrics.h), every name prefixed
// `tune_`. The scheduler owns one and updates the counters and histograms as trials move; the
// gauges of its queue and workers are set from its snapshots when a page is asked for.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "common/measurement.h"
#include "common/metrics.h"
#include "tune/v1/tuner.pb.h"

namespace tune::tuner {

/// The scheduler's queue in numbers (Scheduler::Depth).
struct QueueDepth {
  int jobs_queued = 0;
  int jobs_running = 0;
  int trials_building = 0;
  int trials_waiting = 0;    // built, waiting for a worker
  int trials_following = 0;  // built, waiting for another trial's measurement of the same code
  int trials_in_flight = 0;
  int trials_committing = 0;
};

class DaemonMetrics {
 public:
  DaemonMetrics();
  DaemonMetrics(const DaemonMetrics&) = delete;
  DaemonMetrics& operator=(const DaemonMetrics&) = delete;

  /// A trial of a job's budget is in the log (finalists' re-measurements are not counted).
  void CountTrial(ErrorKind outcome) { trials_[static_cast<size_t>(outcome)]->Increment(); }
  /// Seconds a builder spent on one config.
  void ObserveBuild(double secs) { build_seconds_.Observe(secs); }
  /// A trial's artifact came from the artifact store instead of a build.
  void CountStoredArtifact() { stored_artifacts_.Increment(); }
  /// A trial was recorded without a measurement: its code is quarantined (db/quarantine.h).
  void CountQuarantineSkip() { quarantine_skips_.Increment(); }
  /// A worker's crash or wrong answer was sent to another worker to confirm.
  void CountSecondOpinion() { second_opinions_.Increment(); }
  /// Seconds from sending a trial to a worker to its result.
  void ObserveMeasurement(double secs) { measurement_seconds_.Observe(secs); }
  /// Seconds one group commit (TuningLog::CommitTrials) took.
  void ObserveDbWrite(double secs) { db_write_seconds_.Observe(secs); }

  /// Sets the gauges of jobs and pending trials.
  void SetQueue(const QueueDepth& depth);
  /// Sets the workers gauge per device key from the connected workers; a key with no worker
  /// left reads 0.
  void SetWorkers(const std::vector<v1::WorkerInfo>& workers);

  /// The Prometheus text page.
  std::string Exposition() const { return registry_.Exposition(); }

  /// "ok" for kNone, else the error kind's name in lower case ("build_error").
  static std::string OutcomeLabel(ErrorKind kind);

 private:
  metrics::Registry registry_;
  std::array<metrics::Counter*, kErrorKindCount> trials_{};
  metrics::Family<metrics::Gauge>& jobs_;
  metrics::Family<metrics::Gauge>& pending_trials_;
  metrics::Family<metrics::Gauge>& workers_;
  metrics::Histogram& build_seconds_;
  metrics::Histogram& measurement_seconds_;
  metrics::Histogram& db_write_seconds_;
  metrics::Counter& stored_artifacts_;
  metrics::Counter& quarantine_skips_;
  metrics::Counter& second_opinions_;
};

}  // namespace tune::tuner
