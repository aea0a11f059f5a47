// Hand-made spaces for the composite search's tests, described as a caller would describe a
// template's (SearchSpace), and a fixed verdict per config. Their features are the knob values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/workload.h"
#include "search/composite_search.h"

namespace tune::synthetic {

// 6 * 8 * 2 = 96 points, 88 valid.
inline ConfigSpace SpaceA() {
  ConfigSpace space;
  space.AddKnob("x", {1, 2, 4, 8, 16, 32});
  space.AddKnob("y", {1, 2, 3, 4, 5, 6, 7, 8});
  space.AddKnob("z", {0, 1});
  space.AddConstraint("x * y <= 128", [](const Config& c) { return c.at("x") * c.at("y") <= 128; });
  return space;
}

// 12 * 3 = 36 points, all valid.
inline ConfigSpace SpaceB() {
  ConfigSpace space;
  space.AddKnob("u", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  space.AddKnob("v", {16, 32, 64});
  return space;
}

// The size of a GEMM: M, N and K.
inline std::vector<float> Shape(const Workload& workload) {
  return {static_cast<float>(workload.gemm().m), static_cast<float>(workload.gemm().n),
          static_cast<float>(workload.gemm().k)};
}

// Every GEMM lends its trials in `space` (the same knobs for every shape); other operators and
// malformed workloads lend nothing.
inline LendingWorkloadFn GemmLending(const ConfigSpace& space) {
  return [space](std::string_view text) -> std::optional<LendingWorkload> {
    absl::StatusOr<Workload> workload = Workload::Parse(text);
    if (!workload.ok() || workload->op() != OpKind::kGemm) {
      return std::nullopt;
    }
    return LendingWorkload{space, {}, Shape(*workload)};
  };
}

inline SearchSpace DescribeA() {
  return SearchSpace{.name = "synthetic.a",
                     .version = 3,
                     .space = SpaceA(),
                     .default_config = {{"x", 4}, {"y", 2}, {"z", 0}},
                     .seeds = {{{"x", 8}, {"y", 4}, {"z", 1}},
                               {{"x", 16}, {"y", 2}, {"z", 0}},
                               {{"x", 2}, {"y", 8}, {"z", 1}}},
                     .features = {},
                     .lending = GemmLending(SpaceA())};
}

inline SearchSpace DescribeB() {
  return SearchSpace{.name = "synthetic.b",
                     .version = 1,
                     .space = SpaceB(),
                     .default_config = {{"u", 1}, {"v", 32}},
                     .seeds = {{{"u", 4}, {"v", 64}}},
                     .features = {},
                     .lending = GemmLending(SpaceB())};
}

// A fixed verdict per config: a time that depends on every knob, and some wrong answers.
inline TrialOutcome Outcome(const Config& config) {
  int64_t sum = 0, k = 0;
  for (const auto& [name, value] : config) {
    sum += value * (2 * k++ + 3);
  }
  if (sum % 11 == 0) {
    return TrialOutcome{config, ErrorKind::kWrongAnswer, 0};
  }
  return TrialOutcome{config, ErrorKind::kNone, 1e-3 * static_cast<double>(1 + sum % 17)};
}

}  // namespace tune::synthetic
