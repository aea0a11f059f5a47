// What the search benchmarks share: a table of measured times kept in a TSV file (so that every
// strategy, policy and rerun sees the same time for a config, measured once), the timer they
// measure with (tune-server's measurement supervisor, as a tuning job), and small helpers.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/kernel_timer.h"

namespace tune::bench {

// Measured times by (workload, template, config), kept in a tab-separated file, one line per
// config: workload, config, seconds (or "fail") when the template is left out (a table of one
// template, tune-bench-search's), else workload, template, config, seconds. Loaded at start,
// appended to as configs are measured.
class Table {
 public:
  struct Entry {
    std::string tpl;  // empty in a table of one template
    std::string config;
    std::optional<double> secs;  // nullopt: failed
  };

  explicit Table(std::string path);

  /// The time of a config (nullopt inside: it failed); nullptr when it was never measured.
  const std::optional<double>* Find(const std::string& workload, const std::string& tpl,
                                    const std::string& config) const;
  void Add(const std::string& workload, const std::string& tpl, const std::string& config,
           std::optional<double> secs);
  /// Every entry of `workload`, in key order.
  std::vector<Entry> Of(const std::string& workload) const;
  /// The fastest time the table holds for `workload` (+inf when none).
  double Best(const std::string& workload) const;

  const std::string& path() const { return path_; }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // workload, template, config
  std::string path_;
  std::map<Key, std::optional<double>> times_;
  std::ofstream out_;
};

// A config's time, measured once by the timer and remembered in the table.
class MeasuredTimes {
 public:
  /// `keep_template`: key the table by template too (false: a table of one template).
  MeasuredTimes(KernelTimer& timer, std::string table_path, bool keep_template)
      : timer_(timer), table_(std::move(table_path)), keep_template_(keep_template) {}

  std::optional<double> Measure(const Workload& w, const KernelTemplate& tpl, const Config& config);

  /// Measures the `top` fastest configs the table holds for `w` (of `tpl`, in a table keyed by
  /// template) again, in `passes` passes that each measure every one of them once (so a drift of
  /// the machine touches each alike), and keeps the median of its re-measurements as each one's
  /// time. The fastest of thousands of single measurements is biased low by their noise (the
  /// winner's curse); a reference set by it would be out of reach of any search. Returns how
  /// many configs were measured again.
  int Remeasure(const Workload& w, const KernelTemplate& tpl, size_t top, int passes);

  const Table& table() const { return table_; }
  KernelTimer& timer() { return timer_; }
  /// Configs measured (not found in the table) so far.
  int measured() const { return measured_; }

 private:
  KernelTimer& timer_;
  Table table_;
  bool keep_template_;
  int measured_ = 0;
};

/// The timer of the search benchmarks: tune-server (`worker_binary`) as the measurement child
/// with the target's thread count, a worker's artifact cache, and the timing of a job (median of
/// at least 5 rounds of >= 20 ms).
absl::StatusOr<std::unique_ptr<KernelTimer>> OpenKernelTimer(const Target& target,
                                                             const std::string& worker_binary);

/// Creates the parent directories of each path.
void CreateParentDirectories(const std::vector<std::string>& paths);

/// The upper median (the middle element; of an even count, the larger middle); 0 when empty.
double MedianOf(std::vector<double> v);

}  // namespace tune::bench
