// SearchSpace: what a composite search (composite_search.h) knows of one space it searches, a
// schedule template's for one workload and target, described without the template: its name and
// version, its knobs, the default config, the seeds, and how to describe configs to a cost model,
// for this workload and for others that lend their trials. The caller (tuner/, which may see the
// templates) builds one per template. Also the plain records of the tuning log that a search
// learns from.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/measurement.h"
#include "search/config_space.h"
#include "search/features.h"

namespace tune {

/// Another workload (of the same operator and target) whose trials in a space a search may
/// learn from.
struct LendingWorkload {
  ConfigSpace space;         // the space's knobs for that workload
  FeatureFn features;        // features of its configs (empty: the knob values)
  std::vector<float> shape;  // the workload's size: the nearest workloads are those at the
                             // smallest Euclidean distance from the search's own shape
};

/// The LendingWorkload of a workload given by its canonical text; nullopt when its trials can
/// teach nothing here (a malformed workload, another operator).
using LendingWorkloadFn = std::function<std::optional<LendingWorkload>(std::string_view workload)>;

/// One space of a composite search.
struct SearchSpace {
  std::string name;  // unique within the search: names it in records and saved states
  int version = 0;   // records of another version are of another space
  ConfigSpace space;
  Config default_config;      // valid; proposed before anything else of the space
  std::vector<Config> seeds;  // best guesses, proposed right after the default
  FeatureFn features;         // features of its configs (empty: the knob values)
  LendingWorkloadFn lending;  // empty: no other workload lends its trials
};

/// A config the tuning log holds for the search's workload and target.
struct RecordedConfig {
  std::string space;   // SearchSpace::name
  int version = 0;     // SearchSpace::version
  std::string config;  // canonical text
};

/// A verdict the tuning log holds for the search's workload and target.
struct RecordedTrial {
  RecordedConfig key;
  ErrorKind error = ErrorKind::kNone;  // a verdict (IsVerdict)
  double secs = 0;  // LearnedSecs: the median when ok, the deadline of a TIMEOUT, else 0
  bool ok() const { return error == ErrorKind::kNone; }
};

/// A trial of a space on another workload of the same target.
struct LentTrial {
  std::string workload;                // canonical text
  std::string config;                  // canonical text
  ErrorKind error = ErrorKind::kNone;  // a verdict (IsVerdict)
  double secs = 0;                     // as RecordedTrial's
};

}  // namespace tune
