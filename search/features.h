// Features of configs for a cost model. A FeatureFn maps configs of one space to fixed-width
// rows of floats, many at a time (the daemon computes them in a builder process, one exchange
// per call); the daemon supplies one that describes the kernel each config would build (its
// workload, its knobs, its lowered loop nest), and a strategy given none uses KnobFeatures.
#pragma once

#include <functional>
#include <vector>

#include "search/config_space.h"

namespace tune {

/// Features of configs, one row per config in order: the same width for every config of the
/// space it was made for.
using FeatureFn = std::function<std::vector<std::vector<float>>(const std::vector<Config>&)>;

/// The knob values in knob order. Tree models split on thresholds, so raw values serve as well
/// as any monotone transform of them.
std::vector<float> KnobFeatures(const ConfigSpace& space, const Config& config);

/// KnobFeatures as a FeatureFn over `space` (which must outlive it).
FeatureFn KnobFeatureFn(const ConfigSpace& space);

}  // namespace tune
