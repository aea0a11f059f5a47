// Finalists: what makes a job's best survive a second measurement. When a job has spent its
// budget, its finals run in kFinalPasses interleaved passes (A B C L, L C B A, ...) with more
// rounds than a search trial (FinalTiming), so that a drift of the machine touches every
// finalist alike: between passes, and within them (a GPU slows as it heats), since each pass
// reaches the workers in its order and the finalists' passes alternate it. Each pass goes to
// another worker of the job's device key when the fleet has one, so that the figures are not
// one machine's.
//   - The first pass screens: the kScreened fastest configs the log holds for the job's workload
//     and target by their search readings (the decided best, the incumbent, among them) and the
//     fastest config of a library template the job may use (gemm.cuda.cublas, conv2d.cpu.dnnl,
//     ...: re-measured even when it is not among the fastest, so that tune's kernels and the
//     library are compared on figures measured side by side). A search reading is one trial's,
//     taken while builds and other trials ran: on a host whose local workers share their cores
//     with the build pool, a job's first trials read up to twice their time. The true best must
//     not miss the finals for one unlucky reading, so the screen is wide.
//   - The finalists are then chosen by the screen's figures: the kFinalists fastest, any within
//     kFinalistWindow of the kFinalists-th up to kMaxFinalists, the incumbent and the library's
//     fastest config (a library's other configs compete like tune's);
//     the other passes measure them alone. With fewer than two configs to screen, or no
//     finalist left (every screen measurement failed), the job ends on its search's best.
// The best then rests on the finalists' figures (every pass after the screen), decided by a rule
// that gives the same answer from the same log everywhere:
//   - the incumbent stays unless a challenger is faster beyond the noise, i.e. the upper end of
//     the challenger's median's 95% confidence interval lies below the lower end of the
//     incumbent's. A median's interval is the wider of two: the one its rounds give, and half
//     the spread of its passes' medians. Rounds of one pass share a process, a worker and a
//     moment, so they agree more closely than two passes (or two runs) do; the passes' spread
//     is what the next run will see;
//   - otherwise, among the finalists within the noise of the fastest (and, when there is an
//     incumbent, faster than it beyond the noise), the first in a stable order wins (template
//     name, version, canonical config): noise never decides between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/measurement.h"
#include "db/record.h"

namespace tune::tuner {

/// The configs the first pass screens, the finalists it leaves (finalists.h above), and the
/// passes in all.
inline constexpr size_t kScreened = 16;
inline constexpr size_t kFinalists = 3;
inline constexpr size_t kMaxFinalists = 6;
inline constexpr double kFinalistWindow = 0.10;
inline constexpr int kFinalPasses = 3;

/// Where a search job's finalist phase stands (finalist_phase.h).
struct FinalsProgress {
  enum class Stage : uint8_t { kSearching, kPlanning, kMeasuring, kDeciding, kDecided };
  Stage stage = Stage::kSearching;
  size_t finalists = 0;   // the configs of the pass being measured
  int pass = 0;           // the pass being measured, from 0
  bool screened = false;  // the first pass (the screen) is over: `finalists` are finalists
};

/// The timing of a re-measurement: the job's, with at least 5 and at most 20 rounds, stopping
/// once the median is known to within 1%.
TimingOptions FinalTiming(const TimingOptions& job);

/// One finalist and what its re-measurements gave.
struct Finalist {
  ConfigKey key;
  std::vector<double> rounds;  // seconds per call, every round of every successful pass
  int64_t record_id = 0;       // its latest successful re-measurement
  std::string record_uid;
  std::vector<double> pass_medians;  // the median of each successful pass's rounds
};

/// The relative half-width of the 95% interval of a finalist's median: the wider of the rounds'
/// (MedianRelativeCi) and half the spread of its pass medians over their median.
double FinalistRelativeCi(const Finalist& f);

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
