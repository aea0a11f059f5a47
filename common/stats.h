// Small statistics over measured times.
#pragma once

#include <vector>

namespace tune {

/// The median of `values`: the middle value, or the mean of the two middle values when their
/// count is even; 0 when `values` is empty.
double Median(std::vector<double> values);

/// The half-width of a distribution-free 95% confidence interval of the median of `values`,
/// relative to the median: from the order statistics around the middle (ranks n/2 -+ 0.98
/// sqrt(n)) when there are at least 6 values, else half the range. Infinity for fewer than 2
/// values or a median of 0.
double MedianRelativeCi(std::vector<double> values);

/// True when the medians of `a` and `b` differ by more than the sum of their 95% confidence
/// half-widths (MedianRelativeCi times each median): the two readings disagree beyond their
/// noise. False when either is empty or has an infinite interval (fewer than 2 values).
bool MediansDiffer(const std::vector<double>& a, const std::vector<double>& b);

/// The value at rank p (0..1) of `values`, nearest rank (p 0.5 of an even count takes the upper
/// middle); 0 when `values` is empty.
double Percentile(std::vector<double> values, double p);

}  // namespace tune
