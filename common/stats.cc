#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tune {

double Median(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) {
    return upper;
  }
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

double MedianRelativeCi(std::vector<double> values) {
  const double median = Median(values);
  if (values.size() < 2 || median <= 0) {
    return std::numeric_limits<double>::infinity();
  }
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  size_t lo = 0, hi = values.size() - 1;
  if (values.size() >= 6) {
    const double spread = 0.98 * std::sqrt(n);
    lo = static_cast<size_t>(std::max(0.0, std::floor((n - 1) / 2 - spread)));
    hi = static_cast<size_t>(std::min(n - 1, std::ceil((n - 1) / 2 + spread)));
  }
  return (values[hi] - values[lo]) / 2 / median;
}

bool MediansDiffer(const std::vector<double>& a, const std::vector<double>& b) {
  const double ci_a = MedianRelativeCi(a);
  const double ci_b = MedianRelativeCi(b);
  if (!std::isfinite(ci_a) || !std::isfinite(ci_b)) {
    return false;
  }
  const double median_a = Median(a);
  const double median_b = Median(b);
  return std::abs(median_a - median_b) > ci_a * median_a + ci_b * median_b;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(i, values.size() - 1)];
}

}  // namespace tune
