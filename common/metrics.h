// Metrics: counters, gauges and histograms with fixed buckets, and their exposition in the
// Prometheus text format (version 0.0.4), for a process's /metrics page.
//
// Updating a metric is a few relaxed atomic operations, no lock: cheap enough for every trial.
// A metric lives as long as its Registry and never moves, so hot paths keep references to it;
// a family's children (one per label value) are created on first use, under the family's lock,
// and then live as long as the family too. Every class here is thread-safe.
//
//   metrics::Registry registry;
//   metrics::Family<metrics::Counter>& trials =
//       registry.AddCounterFamily("tune_trials_total", "Trials recorded, by outcome", "outcome");
//   metrics::Counter& ok = trials.With("ok");  // keep it
//   ok.Increment();
//   std::string page = registry.Exposition();
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace tune::metrics {

/// A count that only goes up.
class Counter {
 public:
  void Increment(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

/// A value that goes up and down.
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

/// Observations counted in fixed buckets, with their sum.
class Histogram {
 public:
  /// `bounds`: the buckets' upper bounds, strictly increasing and finite (checked: a bug
  /// otherwise); a last bucket, +Inf, is implied.
  explicit Histogram(std::vector<double> bounds);

  void Observe(double value);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (== count)
    double sum = 0;
    uint64_t count = 0;
  };
  /// The buckets as Prometheus shows them (cumulative). The count is the +Inf bucket's, so the
  /// two always agree even while observations land.
  Snapshot Take() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1, not cumulative
  std::atomic<double> sum_{0};
};

/// Metrics of one name told apart by the value of one label, e.g. trials by `outcome`.
template <typename Metric>
class Family {
 public:
  explicit Family(std::string label) : label_(std::move(label)) {}

  /// The child for `value`, created (at zero) on first use.
  Metric& With(std::string_view value) {
    std::lock_guard lock(mu_);
    auto it = children_.find(value);
    if (it == children_.end()) {
      it = children_.emplace(std::string(value), std::make_unique<Metric>()).first;
    }
    return *it->second;
  }

  /// Calls `fn(value, metric)` for every child, in label-value order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    std::lock_guard lock(mu_);
    for (const auto& [value, metric] : children_) {
      fn(value, *metric);
    }
  }

  const std::string& label() const { return label_; }

 private:
  const std::string label_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Metric>, std::less<>> children_ ABSL_GUARDED_BY(mu_);
};

/// Owns a process's metrics and writes them out. Names must match [a-zA-Z_:][a-zA-Z0-9_:]*
/// and be unique, label names [a-zA-Z_][a-zA-Z0-9_]* (not `le`); breaking either is a bug
/// (TUNE_CHECK).
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Counter& AddCounter(std::string name, std::string help);
  Gauge& AddGauge(std::string name, std::string help);
  Histogram& AddHistogram(std::string name, std::string help, std::vector<double> bounds);
  Family<Counter>& AddCounterFamily(std::string name, std::string help, std::string label);
  Family<Gauge>& AddGaugeFamily(std::string name, std::string help, std::string label);

  /// Every metric in the Prometheus text format, in the order they were added, each with its
  /// HELP and TYPE lines; label values and help texts escaped as the format requires.
  std::string Exposition() const;

 private:
  struct Entry;
  Entry& Add(std::string name, std::string help);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
};

/// When this process started, in seconds since the Unix epoch (from /proc: the kernel's own
/// record, so it holds however late it is asked); the current time if /proc cannot be read.
double ProcessStartTimeSeconds();

}  // namespace tune::metrics
