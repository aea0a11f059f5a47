// Small statistics over measured times.
#pragma once

#include <vector>

namespace tune {

/// The median of `values`: the middle value, or the mean of the two middle values when their
/// count is even; 0 when `values` is empty.
double Median(std::vector<double> values);

}  // namespace tune
