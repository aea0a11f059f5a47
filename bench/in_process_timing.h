// TVM's timing rule in the benchmark's own process, for the baselines it calls directly: one
// warm-up, `number` doubled until a round lasts min_repeat_ms, then the median of `repeat`
// rounds, in seconds per call.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/measurement.h"
#include "common/stats.h"

namespace tune::bench {

template <typename Fn>
double TimeInProcess(Fn fn, const TimingOptions& timing) {
  using Clock = std::chrono::steady_clock;
  fn();
  int number = std::max(1, timing.number);
  std::vector<double> rounds;
  while (static_cast<int>(rounds.size()) < timing.repeat) {
    auto start = Clock::now();
    for (int i = 0; i < number; ++i) {
      fn();
    }
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    if (secs * 1e3 < timing.min_repeat_ms && number < (1 << 24)) {
      number *= 2;
      continue;
    }
    rounds.push_back(secs / number);
  }
  return Median(rounds);
}

}  // namespace tune::bench
