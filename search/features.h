// Features of configs for a cost model. A FeatureFn maps a config of one space to a fixed-width
// row of floats; the daemon supplies one that describes the kernel the config would build (its
// workload, its knobs, its lowered loop nest), and a strategy given none uses KnobFeatures.
#pragma once

#include <functional>
#include <vector>

#include "search/config_space.h"

namespace tune {

/// Features of one config: the same width for every config of the space it was made for.
using FeatureFn = std::function<std::vector<float>(const Config&)>;

/// The knob values in knob order. Tree models split on thresholds, so raw values serve as well
/// as any monotone transform of them.
std::vector<float> KnobFeatures(const ConfigSpace& space, const Config& config);

}  // namespace tune
