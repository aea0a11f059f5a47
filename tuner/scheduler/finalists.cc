#include "tuner/scheduler/finalists.h"

#include <algorithm>
#include <cmath>
#include <tuple>

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

Figure FigureOf(const Finalist& f) { return Figure{Median(f.rounds), FinalistRelativeCi(f)}; }

std::string Name(const Finalist& f) { return StrCat(f.key.template_name, " ", f.key.config); }

// Whether `a` is faster than `b` beyond the noise: the intervals of the two medians do not
// overlap.
bool FasterBeyondNoise(const Figure& a, const Figure& b) {
  return a.median * (1 + a.ci) < b.median * (1 - b.ci);
}

// The order that decides between finalists within the noise of one another: template name,
// version, then the canonical config text. It depends on nothing measured.
bool StableOrder(const Finalist& a, const Finalist& b) {
  return std::tie(a.key.template_name, a.key.template_version, a.key.config) <
         std::tie(b.key.template_name, b.key.template_version, b.key.config);
}

}  // namespace

double FinalistRelativeCi(const Finalist& f) {
  double ci = MedianRelativeCi(f.rounds);
  const double median = Median(f.rounds);
  if (f.pass_medians.size() >= 2 && median > 0) {
    auto [lo, hi] = std::minmax_element(f.pass_medians.begin(), f.pass_medians.end());
    ci = std::max(ci, (*hi - *lo) / 2 / median);
  }
  return ci;
}

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
  // An incumbent that failed its re-measurement holds nothing.
  const bool has_incumbent = incumbent.has_value() && !finalists[*incumbent].rounds.empty();
  const size_t held_at = has_incumbent ? *incumbent : 0;
  const Figure best = FigureOf(finalists[*fastest]);
  if (has_incumbent && held_at != *fastest &&
      !FasterBeyondNoise(best, FigureOf(finalists[held_at]))) {
    const Figure held = FigureOf(finalists[held_at]);
    return Verdict{
        held_at, held.median, held.ci, true,
        fmt::format("{} stays best: {} is {:.1f}% faster, within the noise "
                    "(±{:.1f}% and ±{:.1f}%)",
                    Name(finalists[held_at]), Name(finalists[*fastest]),
                    (1 - best.median / held.median) * 100, best.ci * 100, held.ci * 100)};
  }
  if (has_incumbent && held_at == *fastest) {
    return Verdict{*fastest, best.median, best.ci, true,
                   fmt::format("{} stays best on re-measurement ({:.4g} s ±{:.1f}%)",
                               Name(finalists[*fastest]), best.median, best.ci * 100)};
  }
  // Among the finalists the fastest is not faster than beyond the noise (and that beat the
  // incumbent beyond it, when there is one), the first in the stable order wins, so that the
  // same log picks the same config on every host and run.
  size_t winner = *fastest;
  for (size_t i = 0; i < finalists.size(); ++i) {
    if (finalists[i].rounds.empty() || FasterBeyondNoise(best, FigureOf(finalists[i])) ||
        (has_incumbent &&
         !FasterBeyondNoise(FigureOf(finalists[i]), FigureOf(finalists[held_at])))) {
      continue;
    }
    if (StableOrder(finalists[i], finalists[winner])) {
      winner = i;
    }
  }
  const Figure won = FigureOf(finalists[winner]);
  Verdict verdict{winner, won.median, won.ci, false, ""};
  std::string how =
      winner == *fastest
          ? fmt::format("{:.4g} s ±{:.1f}%", won.median, won.ci * 100)
          : fmt::format(
                "{:.4g} s ±{:.1f}%; within the noise of {} ({:.4g} s ±{:.1f}%), first in "
                "the stable order",
                won.median, won.ci * 100, Name(finalists[*fastest]), best.median, best.ci * 100);
  verdict.summary =
      has_incumbent
          ? fmt::format("{} replaces {}, faster beyond the noise ({})", Name(finalists[winner]),
                        Name(finalists[held_at]), how)
          : fmt::format("{} is best on re-measurement ({})", Name(finalists[winner]), how);
  return verdict;
}

}  // namespace tune::tuner
