#include "tuner/scheduler/finalists.h"

#include <algorithm>
#include <cmath>

#include "common/stats.h"
#include "common/strings.h"

namespace tune::tuner {
namespace {

constexpr int kFinalMinRounds = 5;
constexpr int kFinalMaxRounds = 20;
constexpr double kFinalTargetCi = 0.01;

struct Figure {
  double median = 0;
  double ci = 0;  // relative; infinite with fewer than two rounds
};

Figure FigureOf(const Finalist& f) { return Figure{Median(f.rounds), MedianRelativeCi(f.rounds)}; }

std::string Name(const Finalist& f) { return StrCat(f.key.template_name, " ", f.key.config); }

}  // namespace

TimingOptions FinalTiming(const TimingOptions& job) {
  TimingOptions t = job;
  t.repeat = std::max(t.repeat, kFinalMinRounds);
  t.max_repeat = std::max({t.max_repeat, t.repeat, kFinalMaxRounds});
  t.target_ci = t.target_ci > 0 ? std::min(t.target_ci, kFinalTargetCi) : kFinalTargetCi;
  return t;
}

std::optional<Verdict> Decide(const std::vector<Finalist>& finalists,
                              std::optional<size_t> incumbent) {
  std::optional<size_t> fastest;
  for (size_t i = 0; i < finalists.size(); ++i) {
    if (!finalists[i].rounds.empty() &&
        (!fastest || FigureOf(finalists[i]).median < FigureOf(finalists[*fastest]).median)) {
      fastest = i;
    }
  }
  if (!fastest) {
    return std::nullopt;
  }
  const Figure best = FigureOf(finalists[*fastest]);
  Verdict verdict{*fastest, best.median, best.ci, false, ""};
  if (incumbent && *incumbent != *fastest && !finalists[*incumbent].rounds.empty()) {
    const Figure held = FigureOf(finalists[*incumbent]);
    const double gain = 1 - best.median / held.median;
    // Faster beyond the noise: the intervals of the two medians do not overlap.
    const bool beyond_noise = best.median * (1 + best.ci) < held.median * (1 - held.ci);
    if (!beyond_noise) {
      verdict = Verdict{*incumbent, held.median, held.ci, true,
                        fmt::format("{} stays best: {} is {:.1f}% faster, within the noise "
                                    "(±{:.1f}% and ±{:.1f}%)",
                                    Name(finalists[*incumbent]), Name(finalists[*fastest]),
                                    gain * 100, best.ci * 100, held.ci * 100)};
      return verdict;
    }
    verdict.summary = fmt::format("{} replaces {}: {:.1f}% faster, beyond the noise (±{:.1f}%)",
                                  Name(finalists[*fastest]), Name(finalists[*incumbent]),
                                  gain * 100, std::max(best.ci, held.ci) * 100);
    return verdict;
  }
  verdict.incumbent_kept = incumbent.has_value() && *incumbent == *fastest;
  verdict.summary = fmt::format("{} is best on re-measurement ({:.4g} s ±{:.1f}%)",
                                Name(finalists[*fastest]), best.median, best.ci * 100);
  return verdict;
}

}  // namespace tune::tuner
