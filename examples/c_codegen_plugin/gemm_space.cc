#include "gemm_space.h"

#include <algorithm>

namespace c_codegen_plugin {
namespace {

// The values <= limit; when every value exceeds it, the limit itself (a block of the whole
// dimension).
std::vector<int64_t> Clip(std::vector<int64_t> values, int64_t limit) {
  std::erase_if(values, [limit](int64_t v) { return v > limit; });
  if (values.empty()) {
    values.push_back(limit);
  }
  return values;
}

std::string Join(const std::vector<int64_t>& values) {
  std::string s;
  for (int64_t v : values) {
    s += (s.empty() ? "" : ", ") + std::to_string(v);
  }
  return s;
}

}  // namespace

std::vector<Knob> GemmKnobs(const GemmWorkload& gemm) {
  return {
      {.name = "mb",
       .values = Clip({1, 2, 4, 8}, gemm.m),
       .doc = "rows of C per register block",
       .preferred = 4},
      {.name = "nb",
       .values = Clip({8, 16, 32, 64}, gemm.n),
       .doc = "columns of C per register block, in floats (the loop the C compiler vectorizes)",
       .preferred = 32},
      {.name = "kb",
       .values = Clip({64, 128, 256, 512}, gemm.k),
       .doc = "reduction block: rows of B per pass over C",
       .preferred = 256},
      {.name = "unroll",
       .values = {0, 1},
       .doc = "1: `#pragma GCC unroll 4` on the k loop",
       .preferred = 1},
  };
}

std::map<std::string, int64_t> DefaultConfig(const std::vector<Knob>& knobs) {
  std::map<std::string, int64_t> config;
  for (const Knob& knob : knobs) {
    int64_t value = knob.values.front();
    for (int64_t v : knob.values) {
      if (v <= knob.preferred) {
        value = v;
      }
    }
    config[knob.name] = value;
  }
  return config;
}

std::optional<GemmConfig> CheckConfig(const std::vector<Knob>& knobs,
                                      const std::map<std::string, int64_t>& config,
                                      std::string* error) {
  std::map<std::string, int64_t> values;
  for (const Knob& knob : knobs) {
    auto it = config.find(knob.name);
    if (it == config.end()) {
      *error = "config has no value for knob '" + knob.name + "'";
      return std::nullopt;
    }
    if (std::find(knob.values.begin(), knob.values.end(), it->second) == knob.values.end()) {
      *error = "knob '" + knob.name + "' = " + std::to_string(it->second) +
               " is not in the space for this workload (" + Join(knob.values) + ")";
      return std::nullopt;
    }
    values[knob.name] = it->second;
  }
  for (const auto& [name, value] : config) {
    if (!values.contains(name)) {
      *error = "config has unknown knob '" + name + "'";
      return std::nullopt;
    }
  }
  return GemmConfig{.mb = values.at("mb"),
                    .nb = values.at("nb"),
                    .kb = values.at("kb"),
                    .unroll = values.at("unroll") != 0};
}

}  // namespace c_codegen_plugin
