// Finalists: what makes a job's best survive a second measurement. When a job has spent its
// budget, the fastest configs the log holds for its workload and target (the decided best, the
// incumbent, among them; at least two, else there is nothing to choose) and the fastest config
// of a library template the job may use (gemm.cuda.cublas, conv2d.cpu.dnnl, ...: re-measured
// even when it is not among the fastest, so that tune's kernels and the library are compared on
// figures measured side by side) are measured again in kFinalPasses interleaved passes (A B C L,
// A B C L, ...) with more rounds than a search trial (FinalTiming), so that a drift of the
// machine touches every finalist alike. The best then rests on those figures: the finalist with
// the lowest median over all its re-measured rounds, except that a challenger replaces the
// incumbent only when it is faster beyond the noise, i.e. when the upper end of its median's
// 95% confidence interval lies below the lower end of the incumbent's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/measurement.h"
#include "db/record.h"

namespace tune::tuner {

/// The fastest configs re-measured at a job's end (the library's best comes beside them), and
/// passes over them.
inline constexpr int kFinalists = 3;
inline constexpr int kFinalPasses = 3;

/// The timing of a re-measurement: the job's, with at least 5 and at most 20 rounds, stopping
/// once the median is known to within 1%.
TimingOptions FinalTiming(const TimingOptions& job);

/// One finalist and what its re-measurements gave.
struct Finalist {
  ConfigKey key;
  std::vector<double> rounds;  // seconds per call, every round of every successful pass
  int64_t record_id = 0;       // its latest successful re-measurement
  std::string record_uid;
};

struct Verdict {
  size_t winner = 0;       // index into the finalists
  double median_secs = 0;  // the median of the winner's rounds
  double relative_ci = 0;  // the relative half-width of its 95% confidence interval
  bool incumbent_kept = false;
  std::string summary;  // for people, e.g. "{..} stays best: {..} is 0.4% faster, within noise"
};

/// The best of `finalists` (those without rounds take no part); `incumbent` is the index of the
/// earlier decided best among them, if it is one. nullopt when no finalist has rounds.
std::optional<Verdict> Decide(const std::vector<Finalist>& finalists,
                              std::optional<size_t> incumbent);

}  // namespace tune::tuner
