// Filling tune-bench-best-query's tuning log (best_query_main.cc) with the records of a plan
// (best_query_plan.h), through TuningLog's public API: JSON lines imported in large transactions,
// then the decided bests of the jobs that re-measured finalists.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "bench/best_query_plan.h"

namespace tune::bench {

struct FillStats {
  double generate_import_secs = 0;
  double decide_secs = 0;
  int64_t decisions = 0;
};

// Fills the (empty) log at `path` with the plan's records, `chunk` records per import; `seed`
// draws the records' configs, failures and times.
absl::StatusOr<FillStats> Fill(const Plan& plan, uint64_t seed, const std::string& path,
                               int64_t chunk);

}  // namespace tune::bench
