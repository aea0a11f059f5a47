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

/// The value at rank p (0..1) of `values`, nearest rank (p 0.5 of an even count takes the upper
/// middle); 0 when `values` is empty.
double Percentile(std::vector<double> values, double p);

}  // namespace tune
