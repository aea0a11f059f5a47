// What a composite search takes from other workloads' trials of a space: samples for its cost
// model and the best config of each of the nearest workloads. Used inside search/ only
// (composite_search.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "search/search_space.h"
#include "search/strategy.h"

namespace tune::search_internal {

/// Other workloads by canonical text, as a space's LendingWorkloadFn describes them (nullopt: a
/// workload that lends nothing).
using Lenders = std::map<std::string, std::optional<LendingWorkload>, std::less<>>;

/// The lending workloads numbered 1, 2, ... in order of first sight (0 is the search's own).
using TransferGroups = std::map<std::string, uint32_t, std::less<>>;

/// The number of `workload` in `groups`, numbering it when it is new.
uint32_t GroupOf(TransferGroups& groups, std::string_view workload);

/// The description of `workload` in `lenders`, asking `lending` (empty: nothing lends) at its
/// first sight.
const std::optional<LendingWorkload>& LenderOf(Lenders& lenders, const LendingWorkloadFn& lending,
                                               std::string_view workload);

/// The cost-model features of configs of a lending workload, one row per config.
std::vector<std::vector<float>> LenderRows(const LendingWorkload& lender,
                                           const std::vector<Config>& configs);

struct SpaceTransfer {
  std::vector<TransferSample> samples;  // for the cost model (empty unless asked for)
  std::vector<Config> nearest_best;     // best configs of the nearest workloads, valid here
};

/// Reads `trials` of `desc` on other workloads: when `for_model`, every trial of a config valid
/// for its workload becomes a sample (numbered by `groups`, workloads in text order); the
/// fastest config of each of the kNearestWorkloads workloads nearest `shape` that is valid in
/// `desc.space` is lent, nearest first.
SpaceTransfer PrepareTransfer(const SearchSpace& desc, std::span<const float> shape,
                              const std::vector<LentTrial>& trials, bool for_model,
                              Lenders& lenders, TransferGroups& groups);

}  // namespace tune::search_internal
