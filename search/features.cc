#include "search/features.h"

namespace tune {

std::vector<float> KnobFeatures(const ConfigSpace& space, const Config& config) {
  std::vector<float> row;
  row.reserve(space.knobs().size());
  for (const Knob& knob : space.knobs()) {
    auto it = config.find(knob.name);
    row.push_back(it == config.end() ? 0.0f : static_cast<float>(it->second));
  }
  return row;
}

FeatureFn KnobFeatureFn(const ConfigSpace& space) {
  return [&space](const std::vector<Config>& configs) {
    std::vector<std::vector<float>> rows;
    rows.reserve(configs.size());
    for (const Config& config : configs) {
      rows.push_back(KnobFeatures(space, config));
    }
    return rows;
  };
}

}  // namespace tune
