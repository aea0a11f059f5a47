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

}  // namespace tune
