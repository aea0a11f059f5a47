// The config space of gemm.cpu.c_codegen for one GEMM: four knobs, each clipped to the shape,
// so that every combination of values is a valid config.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workload_text.h"

namespace c_codegen_plugin {

struct Knob {
  std::string name;
  std::vector<int64_t> values;  // ascending
  std::string doc;
  int64_t preferred = 0;  // the default is the largest value <= preferred, else the smallest
};

/// One point of the space.
struct GemmConfig {
  int64_t mb = 0;       // rows of C per register block
  int64_t nb = 0;       // columns of C per register block (the vectorized loop)
  int64_t kb = 0;       // reduction block (rows of B per pass over C)
  bool unroll = false;  // `#pragma GCC unroll 4` on the k loop
};

std::vector<Knob> GemmKnobs(const GemmWorkload& gemm);

std::map<std::string, int64_t> DefaultConfig(const std::vector<Knob>& knobs);

/// The config when it has exactly the knobs of `knobs`, each with one of its values; else
/// nullopt and *error names the offending knob.
std::optional<GemmConfig> CheckConfig(const std::vector<Knob>& knobs,
                                      const std::map<std::string, int64_t>& config,
                                      std::string* error);

}  // namespace c_codegen_plugin
