// The planner of the model-based searches: simulated annealing over a ConfigSpace under a fitted
// cost model, which turns the model's scores into a ranked list of configs worth measuring (a
// plan). Used inside search/ only (model_strategy.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "common/measurement.h"
#include "search/config_space.h"

namespace tune::search_internal {

/// A verdict on a config of the space, as a model-based search keeps it.
struct Observation {
  uint64_t index = 0;  // raw index of the config
  ErrorKind error = ErrorKind::kNone;
  double secs = 0;  // LearnedSecs
  bool ok() const { return error == ErrorKind::kNone; }
};

/// The model's scores of configs, one per config in order (higher = faster).
using ScoreFn = std::function<std::vector<double>(const std::vector<Config>&)>;

/// How many candidates a plan keeps.
inline constexpr size_t kPlanSize = 128;

/// Simulated annealing under `score`: 64 walkers, started at the 16 fastest of `observations`
/// (successes only), at the `suggested` configs (raw indices) and at random points, take 32
/// steps each (one knob changed per step), accepting a worse neighbour with the Metropolis
/// probability at a temperature falling linearly to zero. Returns the best kPlanSize configs
/// visited that are not among `observations`, best first, each with its rank key: the score in
/// standard deviations of the visited configs' scores, plus a bonus of 1 for a config holding a
/// knob value that no observation holds. A function of (`seed`, `batch`, `observations`,
/// `suggested`, `score`) only, so that a resumed search rebuilds the plan it saved.
std::vector<std::pair<double, Config>> AnnealPlan(const ConfigSpace& space, uint64_t seed,
                                                  uint64_t batch,
                                                  std::span<const Observation> observations,
                                                  std::span<const uint64_t> suggested,
                                                  const ScoreFn& score);

}  // namespace tune::search_internal
