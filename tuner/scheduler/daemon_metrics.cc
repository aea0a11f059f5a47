#include "tuner/scheduler/daemon_metrics.h"

#include <cctype>
#include <map>

namespace tune::tuner {
namespace {

// Builds take tens of milliseconds (a memoized lowering) to minutes (a large conv2d nest).
const std::vector<double> kBuildBounds = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                          2.5,  5,     10,   30,  60,   120, 300};
// From dispatch to result: loading, a warm-up, the timing rounds and the way back.
const std::vector<double> kMeasurementBounds = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                2.5,  5,     10,   30,  60,   120};
// One transaction with synchronous=FULL: a few fsyncs.
const std::vector<double> kDbWriteBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                            0.05,   0.1,   0.25,   0.5,   1,    2.5};

}  // namespace

DaemonMetrics::DaemonMetrics()
    : jobs_(registry_.AddGaugeFamily("tune_jobs", "Jobs in the daemon's queue, by state", "state")),
      pending_trials_(registry_.AddGaugeFamily(
          "tune_trials_pending",
          "Trials proposed and not yet recorded, by stage (waiting: built, waiting for a worker; "
          "following: built, waiting for another trial's measurement of the same code)",
          "stage")),
      workers_(registry_.AddGaugeFamily("tune_workers", "Connected workers, by device key",
                                        "device_key")),
      build_seconds_(registry_.AddHistogram("tune_build_duration_seconds",
                                            "Time a builder process spent building one config",
                                            kBuildBounds)),
      measurement_seconds_(registry_.AddHistogram(
          "tune_measurement_duration_seconds",
          "Time from sending a trial to a worker to receiving its result", kMeasurementBounds)),
      db_write_seconds_(registry_.AddHistogram(
          "tune_db_write_duration_seconds",
          "Time to commit one group of trials to the tuning log in one transaction (records, "
          "counters and search states)",
          kDbWriteBounds)),
      stored_artifacts_(registry_.AddCounter(
          "tune_stored_artifacts_total",
          "Trials whose artifact came from the artifact store instead of a build")),
      quarantine_skips_(registry_.AddCounter(
          "tune_trials_quarantined_total",
          "Trials recorded without a measurement because their code is quarantined on every "
          "worker that could run them")),
      second_opinions_(registry_.AddCounter(
          "tune_second_opinions_total",
          "Crashes and wrong answers of one worker sent to another worker of the same device "
          "key and fingerprint to confirm")) {
  metrics::Family<metrics::Counter>& trials = registry_.AddCounterFamily(
      "tune_trials_total", "Trials of job budgets recorded in the tuning log, by outcome",
      "outcome");
  for (size_t i = 0; i < trials_.size(); ++i) {
    trials_[i] = &trials.With(OutcomeLabel(static_cast<ErrorKind>(i)));
  }
  registry_
      .AddGauge("tune_process_start_time_seconds",
                "Start time of the daemon process since the Unix epoch in seconds")
      .Set(metrics::ProcessStartTimeSeconds());
  SetQueue(QueueDepth{});
}

std::string DaemonMetrics::OutcomeLabel(ErrorKind kind) {
  if (kind == ErrorKind::kNone) {
    return "ok";
  }
  std::string label(ErrorKindName(kind));
  for (char& c : label) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return label;
}

void DaemonMetrics::SetQueue(const QueueDepth& depth) {
  jobs_.With("queued").Set(depth.jobs_queued);
  jobs_.With("running").Set(depth.jobs_running);
  pending_trials_.With("building").Set(depth.trials_building);
  pending_trials_.With("waiting").Set(depth.trials_waiting);
  pending_trials_.With("following").Set(depth.trials_following);
  pending_trials_.With("in_flight").Set(depth.trials_in_flight);
  pending_trials_.With("committing").Set(depth.trials_committing);
}

void DaemonMetrics::SetWorkers(const std::vector<v1::WorkerInfo>& workers) {
  std::map<std::string, int> per_key;
  for (const v1::WorkerInfo& worker : workers) {
    if (worker.state() != v1::WORKER_STATE_LOST) {
      ++per_key[worker.device_key()];
    }
  }
  workers_.ForEach([&](const std::string& key, metrics::Gauge& gauge) {
    if (!per_key.contains(key)) {
      gauge.Set(0);
    }
  });
  for (const auto& [key, count] : per_key) {
    workers_.With(key).Set(count);
  }
}

}  // namespace tune::tuner
